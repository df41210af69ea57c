#!/usr/bin/python3
"""pacer-report: a picture of a run from its metrics log (--metrics).

Usage: pacer-report METRICS.jsonl -o report.png

Draws each worker's compute and iteration times over the run (a straggler stands out in the
first: under BSP every worker's iteration takes as long as the slowest's), marks every detection
where it happened (one line style per kind; clears faint) and STRET's relays as bands over the
iteration times, draws each worker's slow phases as measured beside those predicted (the
detector's predicted flags) and those it ran shrunk (SMS's smaller batches), and prints a
per-worker summary table, also drawn under the plots, and the phases. Uses Debian's
python3-matplotlib.
"""
import argparse
import collections
import json
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    iters, decisions = collections.defaultdict(list), []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{number}: not JSON ({e})")
            if record.get("type") == "iter":
                iters[record["index"]].append(record)
            elif record.get("type") == "decision":
                decisions.append(record)
    if not iters:
        sys.exit(f"{path}: no iteration records")
    for records in iters.values():
        records.sort(key=lambda r: r["iter"])
    return iters, decisions


def iteration_times(records):
    """(start, milliseconds) of each iteration: the time to the next one's start."""
    return [(a["t_start_s"], (b["t_start_s"] - a["t_start_s"]) * 1e3)
            for a, b in zip(records, records[1:])]


def relay_spans(decisions, end_s):
    """(straggler, partner, start s, end s) of each relay STRET ordered."""
    spans, open_relays = [], {}
    for d in decisions:
        if d.get("policy") != "stret" or d["action"] != "order":
            continue
        straggler = d["target_index"]
        if straggler in open_relays:
            partner, begin = open_relays.pop(straggler)
            spans.append((straggler, partner, begin, d["t_s"]))
        if d["kind"] == "relay":
            open_relays[straggler] = (d["partner_index"], d["t_s"])
    spans += [(s, p, begin, end_s) for s, (p, begin) in open_relays.items()]
    return spans


# A worker's iteration is slow, as measured, when its compute per sample is this many times the
# median worker's; a phase is a run of at least PHASE_ITERATIONS of them (a lone stall is not).
SLOW_RATIO, PHASE_ITERATIONS = 1.5, 3


def spans(iterations, min_length=1):
    """The runs of consecutive iterations in `iterations` as (first, last), at least
    `min_length` long."""
    runs = []
    for i in sorted(iterations):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return [(a, b) for a, b in runs if b - a + 1 >= min_length]


def phases(iters, decisions):
    """By worker: its slow phases as measured, as the detector predicted them (a prediction at
    boundary i is for iteration i + 1, until the clear) and as it ran shrunk (a batch below its
    largest), each a list of (first, last) iterations."""
    per_sample = collections.defaultdict(dict)  # iteration -> worker -> compute ms per sample
    for index, records in iters.items():
        for r in records:
            if r["batch"] > 0:
                per_sample[r["iter"]][index] = r["t_comp_ms"] / r["batch"]
    slow = collections.defaultdict(set)
    for i, workers in per_sample.items():
        if len(workers) < 2:
            continue
        median = statistics.median(workers.values())
        for index, value in workers.items():
            if value > SLOW_RATIO * median:
                slow[index].add(i)
    predicted = collections.defaultdict(set)
    last = max(r["iter"] for records in iters.values() for r in records)
    for index in iters:
        changes = sorted((d["iter"], d["action"]) for d in decisions
                         if d.get("kind") == "predicted" and d["target_index"] == index)
        for (i, action), following in zip(changes, changes[1:] + [(last, "clear")]):
            if action == "flag":
                predicted[index].update(range(i + 1, following[0] + 1))
    result = {}
    for index, records in sorted(iters.items()):
        full = max(r["batch"] for r in records)
        result[index] = {"slow": spans(slow[index], PHASE_ITERATIONS),
                         "predicted": spans(predicted[index]),
                         "shrunk": spans(r["iter"] for r in records if r["batch"] < full)}
    return result


def summary(iters, decisions):
    rows = []
    for index, records in sorted(iters.items()):
        times = [ms for _, ms in iteration_times(records)] or [0]
        flags = [d for d in decisions if d["target_index"] == index and d["action"] == "flag"
                 and d["kind"] != "server"]
        partners = sorted({p for s, p, _, _ in relay_spans(decisions, 0) if s == index})
        kinds = sorted({d["kind"] for d in flags})
        rows.append([f"worker {index} (rank {records[0]['rank']})", f"{len(records)}",
                     f"{statistics.median(times):.1f}",
                     f"{statistics.median(r['t_comp_ms'] for r in records):.1f}",
                     f"{statistics.median(r['t_wait_ms'] for r in records):.1f}",
                     f"{len(flags)}", ", ".join(kinds) or "-",
                     ", ".join(f"worker {p}" for p in partners) or "-"])
    return ["node", "iterations", "iteration ms (p50)", "compute ms (p50)", "wait ms (p50)",
            "flags", "kinds", "relayed through"], rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("metrics")
    parser.add_argument("-o", "--output", default="report.png")
    args = parser.parse_args()
    iters, decisions = load(args.metrics)
    header, rows = summary(iters, decisions)

    worker_phases = phases(iters, decisions)
    figure, (compute, iteration, phase_axis, table) = plt.subplots(
        4, 1, figsize=(11, 12), sharex=False, gridspec_kw={"height_ratios": [3, 3, 1.6, 1.4]})
    colors = {}
    for index, records in sorted(iters.items()):
        line, = compute.plot([r["t_start_s"] for r in records], [r["t_comp_ms"] for r in records],
                             marker=".", linewidth=1, label=f"worker {index}")
        colors[index] = line.get_color()
        points = iteration_times(records)
        iteration.plot([t for t, _ in points], [ms for _, ms in points], marker=".", linewidth=1,
                       color=colors[index], label=f"worker {index}")
    # Each kind of detection its own line style; flags solid-ish, clears faint.
    styles = {"compute": "-", "communication": "--", "compute+communication": "-.",
              "predicted": ":"}
    seen = set()
    for d in decisions:
        if d["kind"] in ("server", "migration") or d.get("policy") in ("stret", "sms"):
            continue
        label = f"{d['action']} worker {d['target_index']}: {d['kind']} (iteration {d['iter']})"
        key = (d["action"], d["target_index"], d["kind"])
        for axis in (compute, iteration):
            axis.axvline(d["t_s"], color=colors.get(d["target_index"], "black"),
                         linestyle=styles.get(d["kind"], "-"),
                         alpha=0.9 if d["action"] == "flag" else 0.3,
                         label=None if key in seen or axis is iteration else label)
        seen.add(key)
    # STRET's relays: a band over the iteration times while a straggler's gradients went through
    # its partner.
    end_s = max((r["t_start_s"] for records in iters.values() for r in records), default=0)
    for straggler, partner, begin, end in relay_spans(decisions, end_s):
        iteration.axvspan(begin, end, color=colors.get(straggler, "gray"), alpha=0.12,
                          label=f"worker {straggler} relayed through worker {partner}")
    # The phases: per worker a row each for measured, predicted and shrunk, over the iterations.
    labels = []
    for index, kinds in worker_phases.items():
        for kind, alpha in (("slow", 0.9), ("predicted", 0.5), ("shrunk", 0.25)):
            row = len(labels)
            phase_axis.broken_barh([(a, b - a + 1) for a, b in kinds[kind]], (row - 0.4, 0.8),
                                   color=colors[index], alpha=alpha)
            labels.append(f"worker {index} {kind}")
    phase_axis.set_yticks(range(len(labels)), labels, fontsize=7)
    phase_axis.set_xlabel("iteration")
    phase_axis.grid(alpha=0.3)
    compute.set_ylabel("compute time (ms)")
    compute.set_title(f"{args.metrics}: per-worker times; vertical lines: detections")
    iteration.set_ylabel("iteration time (ms)")
    iteration.set_xlabel("time since start (s)")
    for axis in (compute, iteration):
        axis.grid(alpha=0.3)
    compute.legend(fontsize=8, loc="upper left", ncol=2)
    table.axis("off")
    drawn = table.table(cellText=rows, colLabels=header, loc="center")
    drawn.auto_set_font_size(False)
    drawn.set_fontsize(8)
    figure.tight_layout()
    figure.savefig(args.output, dpi=100)

    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]
    for row in [header] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))
    names = {"slow": "slow (measured)", "predicted": "slow (predicted)", "shrunk": "shrunk"}
    for index, kinds in worker_phases.items():
        for kind, name in names.items():
            if kinds[kind]:
                print(f"worker {index} {name}: " +
                      ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in kinds[kind]))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
