#!/usr/bin/env python3
"""make bench-strn: STRN's --sync=auto against every fixed mode, in one sitting.

Scenarios S1 (a persistent 3x worker), S2 (transient 3x slowdowns, p = 0.1), S5 (periodic) and
S6 (none); modes bsp, asp, ssp:1, ssp:2, ssp:4, backup:1 and strn (auto). pacer-scenario, 1 server
and 4 workers, 16 ms of emulated compute at the full batch of 64, ITERS iterations. Each run's
time to the harness's target accuracy and mean iteration; medians of TURNS turns, the modes taking
turns. The targets: in every scenario auto's time to target is at most 1.05 x the best fixed
mode's; in S6 auto keeps bsp (its one decision) and is within 5% of bsp's time to target; the
profile (the iterations before auto's first decision) is at most 5% of the run. Writes
build/strn-bench.json; exits 1 when a target is missed.

Environment: TURNS (default 3), ITERS (default 800), SCENARIOS (default S1,S2,S5,S6), MODES.
APP=resnet runs the same comparison on pacer-resnet (ResNet-8 on Fashion-MNIST, 1 server and 4
workers, batch 32, worker 0 evaluating every 10 iterations on 1000 test images): ITERS (default
300) iterations, time to TARGET (default 0.8) accuracy, SCENARIOS S1,S6 and MODES
bsp,asp,ssp:2,backup:1,strn by default; it writes build/strn-resnet-bench.json.
"""
import json
import os
import statistics
import sys
import tempfile

from scenario_job import run_scenario

BUILD = os.environ.get("BUILD", "build")
RESNET = os.environ.get("APP") == "resnet"
TURNS = int(os.environ.get("TURNS", "3"))
ITERS = int(os.environ.get("ITERS", "300" if RESNET else "800"))
TARGET = float(os.environ.get("TARGET", "0.8"))
SCENARIOS = os.environ.get("SCENARIOS", "S1,S6" if RESNET else "S1,S2,S5,S6").split(",")
MODES = os.environ.get("MODES", "bsp,asp,ssp:2,backup:1,strn" if RESNET else
                       "bsp,asp,ssp:1,ssp:2,ssp:4,backup:1,strn").split(",")


def run(scenario, mode, tmp):
    """One run: (its summary, STRN's decisions from its metrics log)."""
    if RESNET:
        result, records = run_scenario(
            os.path.join(BUILD, "bin", "pacer-resnet"), 6,
            ["--servers", "1", f"--max_iters={ITERS}", "--eval_every=10", "--eval_images=1000",
             f"--target_acc={TARGET}", "--progress=lines", f"--scenario={scenario}",
             f"--policy={mode}"], tmp)
        result["iter_mean_ms"] = mean_iteration_ms(records)
    else:
        result, records = run_scenario(
            os.path.join(BUILD, "bin", "pacer-scenario"), 6,
            ["--servers", "1", "--tasks=1", "--compute-ms=16", "--batch=64", f"--iters={ITERS}",
             f"--scenario={scenario}", f"--policy={mode}"], tmp)
    return result, [r for r in records
                    if r.get("type") == "decision" and r.get("policy") == "strn"]


def mean_iteration_ms(records):
    """The mean time between a worker's consecutive iteration starts, over every worker."""
    starts = {}
    for r in records:
        if r.get("type") == "iter":
            starts.setdefault(r["index"], []).append((r["iter"], r["t_start_s"]))
    gaps = [(b - a) * 1e3 for points in starts.values()
            for (_, a), (_, b) in zip(sorted(points), sorted(points)[1:])]
    return statistics.fmean(gaps)


def main():
    results, picks = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for turn in range(TURNS):
            for scenario in SCENARIOS:
                for mode in MODES:
                    summary, decisions = run(scenario, mode, tmp)
                    results.setdefault((scenario, mode), []).append(summary)
                    if mode == "strn":
                        picks.setdefault(scenario, []).append(decisions)
            print(f"# turn {turn + 1} of {TURNS} done", flush=True)
    rows, verdicts = [], []
    if RESNET:
        print(f"# pacer-resnet, 4 workers, 1 server, {ITERS} iterations, time to {TARGET} "
              f"accuracy, medians of {TURNS}")
    else:
        print(f"# 4 workers, 1 server, 16 ms at a batch of 64, {ITERS} iterations, medians of "
              f"{TURNS}")
    print(f"# {'scenario':<8} {'mode':<9} {'mean ms':>8} {'to target s':>11}  auto's decisions")
    for (scenario, mode), runs in results.items():
        reached = [r["time_to_target_s"] for r in runs if r["time_to_target_s"] is not None]
        row = {"scenario": scenario, "mode": mode,
               "mean_ms": statistics.median(r["iter_mean_ms"] for r in runs),
               "to_target_s": statistics.median(reached) if len(reached) == len(runs) else None}
        said = ""
        if mode == "strn":
            row["decisions"] = picks[scenario]
            said = "; ".join(" ".join(f"{d['iter']}:{d['action']} {d['mode']}" for d in turn)
                             for turn in picks[scenario])
        rows.append(row)
        to_target = f"{row['to_target_s']:.2f}" if row["to_target_s"] is not None else "-"
        print(f"  {scenario:<8} {mode:<9} {row['mean_ms']:>8.1f} {to_target:>11}  {said}")
    for scenario in SCENARIOS:
        mine = {r["mode"]: r for r in rows if r["scenario"] == scenario}
        fixed = [r for m, r in mine.items() if m != "strn" and r["to_target_s"] is not None]
        auto = mine.get("strn")
        if not auto or not fixed:
            continue
        best = min(fixed, key=lambda r: r["to_target_s"])
        ok = auto["to_target_s"] is not None and auto["to_target_s"] <= 1.05 * best["to_target_s"]
        verdicts.append({"what": f"{scenario}: auto {auto['to_target_s']} s against the best fixed "
                         f"mode, {best['mode']}, {best['to_target_s']:.2f} s (target 1.05 x)",
                         "ok": ok})
        first = [turn[0]["iter"] for turn in auto["decisions"] if turn]
        share = max(first, default=ITERS) / ITERS
        verdicts.append({"what": f"{scenario}: the profile is {share:.1%} of the run (target 5%)",
                         "ok": share <= 0.05})
        if scenario == "S6" and "bsp" in mine:
            kept = all(all(d["mode"] == "bsp" for d in turn) for turn in auto["decisions"])
            bsp = mine["bsp"]["to_target_s"]
            close = auto["to_target_s"] is not None and bsp and auto["to_target_s"] <= 1.05 * bsp
            verdicts.append({"what": f"S6: auto keeps bsp ({kept}) within 5% of its time to target",
                             "ok": kept and bool(close)})
    name = "strn-resnet-bench.json" if RESNET else "strn-bench.json"
    with open(os.path.join(BUILD, name), "w") as f:
        json.dump({"iters": ITERS, "turns": TURNS, "rows": rows, "verdicts": verdicts}, f,
                  indent=1)
    for v in verdicts:
        print(f"{'ok  ' if v['ok'] else 'MISS'} {v['what']}")
    return 0 if all(v["ok"] for v in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
