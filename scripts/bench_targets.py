"""The targets table the benchmark scripts end with: one row per target, judged in the same run."""


def print_targets(rows):
    """Prints rows of (figure, ours, reference, ratio, target text, met); returns how many were
    missed."""
    width = max(len(r[0]) for r in rows)
    print("\n# targets (ratios from this run)")
    print(f"# {'figure':<{width}} {'pacer':>9} {'reference':>10} {'ratio':>7}  {'target':<24} "
          "verdict")
    for figure, ours, ref, ratio, target, met in rows:
        print(f"  {figure:<{width}} {ours:>9.2f} {ref:>10.2f} {ratio:>7.2f}  {target:<24} "
              f"{'met' if met else 'MISSED'}")
    missed = sum(not r[-1] for r in rows)
    print(f"# {len(rows) - missed} of {len(rows)} targets met")
    return missed
