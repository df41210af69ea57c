#!/usr/bin/env python3
"""STRN's --sync=auto (issue 33) in pacer-scenario: --policy=strn.

Usage: check_strn.py MPIRUN PACER_SCENARIO [--report=PACER_REPORT]

4 workers, 1 server, softmax regression on Fashion-MNIST, 16 ms of emulated compute per
iteration at the full batch of 64 (a smaller batch computes proportionally less), --auto_window=20.
The job starts under bsp; the scheduler profiles 20 iterations at the full batch after 3 of
warm-up, orders workers 0 and 2 to half the batch for 10 more while 1 and 3 keep the full one
(the gradient noise scale, from both sizes in the same iterations), orders the full batch back and
decides. Checked, in each scenario's metrics log: workers 0 and 2 ran batches of 32 in at least
10 iterations and of 64 in every iteration after them, workers 1 and 3 only 64, in the same
iterations; exactly one decision came
after the profile, with a finite positive noise scale and a table of bsp, backup:1-3, ssp:1,2,4
and consgd (and groups only where the workers split at a 50 ms gap: never here, 3 x 16 ms).
- in both, the decision follows the rule: a switch exactly when the pick predicts at most 0.9 x
  bsp's time (in S6 the model may prefer an on-arrival mode: the softmax's noise scale, about 49
  samples, is below the 256 of a BSP update, so 4 updates of 64 are worth more than one of 256);
- S1 (worker 0 3x slow): the chooser predicts bsp's update at the straggler's pace (at least twice
  backup:1's) and switches from bsp to a mode that does not wait for worker 0; the servers take it
  (the switch names its first clock).
Worker 0's accuracy every 10 iterations reaches the metrics log, stamped with the start of its
next iteration. With --report, pacer-report draws the S1 switch and states each run's time to
the other's best accuracy as the logs give it.
"""
import json
import os
import subprocess
import sys
import tempfile

from scenario_runs import records, run_harness

ITERS, EVAL_EVERY = 90, 10
ARGS = ["--servers", "1", "--tasks=1", "--compute-ms=16", "--batch=64", "--auto_window=20",
        f"--iters={ITERS}", f"--eval_every={EVAL_EVERY}"]
EXPECTED_ROWS = ["bsp", "backup:1", "backup:2", "backup:3", "ssp:1", "ssp:2", "ssp:4", "consgd"]


def check(scenario, metrics):
    log = records(metrics)
    iters = [r for r in log if r["type"] == "iter"]
    decisions = [r for r in log if r["type"] == "decision" and r["policy"] == "strn"]
    if len(decisions) != 1:
        sys.exit(f"{scenario}: {len(decisions)} STRN decisions, expected 1: {decisions}")
    d = decisions[0]
    print(f"{scenario}: iteration {d['iter']}: {d['action']} {d['mode']} (from {d['from']}), "
          f"noise scale {d['noise_scale']}; " + ", ".join(
              f"{row['mode']} {row['time_to_target']:.4g}" for row in d["table"]))
    if d["why"] != "profile" or not (d["noise_scale"] and d["noise_scale"] > 0):
        sys.exit(f"{scenario}: expected the profile's decision with a positive noise scale: {d}")
    if [row["mode"] for row in d["table"]] != EXPECTED_ROWS:
        sys.exit(f"{scenario}: the table's rows are {[row['mode'] for row in d['table']]}")
    halved = {}
    for w in range(4):
        mine = sorted((r for r in iters if r["index"] == w), key=lambda r: r["iter"])
        halved[w] = [r["iter"] for r in mine if r["batch"] == 32]
        if any(r["batch"] not in (32, 64) for r in mine):
            sys.exit(f"{scenario}: worker {w} ran batches other than 32 and 64")
    for w in (0, 2):
        if len(halved[w]) < 10:
            sys.exit(f"{scenario}: worker {w} ran {len(halved[w])} iterations at half the batch")
    if halved[1] or halved[3]:
        sys.exit(f"{scenario}: workers 1 and 3 ran half batches at {halved[1]}, {halved[3]}")
    # The halves came in the same iterations (the orders take within an iteration or two).
    both = set(halved[0]) & set(halved[2])
    if len(both) < 8 or max(halved[0] + halved[2]) - min(halved[0] + halved[2]) > 14:
        sys.exit(f"{scenario}: half batches at {halved[0]} and {halved[2]}, not together")
    check_accuracy(scenario, log, iters)
    return d


def check_accuracy(scenario, log, iters):
    """Worker 0 evaluates every EVAL_EVERY iterations; each accuracy reaches the metrics log with
    the iteration report after it (the last evaluation, after the last iteration, has none)."""
    evaluations = [r for r in log if r["type"] == "accuracy"]
    starts = {r["iter"]: r["t_start_s"] for r in iters if r["index"] == 0}
    after = [r["after_iters"] for r in evaluations]
    if after != list(range(EVAL_EVERY, ITERS, EVAL_EVERY)):
        sys.exit(f"{scenario}: accuracy records after iterations {after}")
    for r in evaluations:
        if r["index"] != 0 or r["rank"] != 2 or not 0 < r["accuracy"] <= 1 or \
                r["t_s"] != starts[r["after_iters"]]:
            sys.exit(f"{scenario}: accuracy record {r} (worker 0's iteration {r['after_iters']} "
                     f"started at {starts.get(r['after_iters'])})")


def time_to_accuracy(run, reference):
    """What pacer-report must state: the first of each log's evaluations at the reference's best
    accuracy, in seconds since worker 0's first iteration began."""
    points = []
    for path in (run, reference):
        log = records(path)
        start = min(r["t_start_s"] for r in log if r["type"] == "iter" and r["index"] == 0)
        points.append([(r["t_s"] - start, r["accuracy"]) for r in log if r["type"] == "accuracy"])
    target = max(a for _, a in points[1])
    first = [next((t for t, a in p if a >= target), None) for p in points]
    return {"target": target, "run_s": first[0], "reference_s": first[1]}


def check_report(report, runs, tmp):
    """pacer-report draws the S1 switch, and states S1's and S6's time to each other's best
    accuracy as the logs give it (both ways round: one run reaches the other's best, the other
    need not)."""
    for run, reference in (("S1", "S6"), ("S6", "S1")):
        png, figures = os.path.join(tmp, f"{run}.png"), os.path.join(tmp, f"{run}.json")
        out = subprocess.run([report, runs[run], f"--against={runs[reference]}", "-o", png,
                              f"--json={figures}"], capture_output=True, text=True, timeout=120)
        if out.returncode != 0 or not os.path.getsize(png):
            sys.exit(f"pacer-report failed: {out.stderr[-2000:]}")
        with open(figures) as f:
            stated = json.load(f)
        want, got = time_to_accuracy(runs[run], runs[reference]), stated["time_to_accuracy"]
        if got is None or set(got) != set(want) or any(
                (want[k] is None) != (got[k] is None) or
                (want[k] is not None and abs(got[k] - want[k]) > 1e-9) for k in want):
            sys.exit(f"{run} against {reference}: the report states {got}, the logs give {want}")
        if f"time to {want['target']:.3f} accuracy" not in stated["headline"]:
            sys.exit(f"the headline {stated['headline']!r} does not state the time to accuracy")
        print(f"{run} against {reference}: time to accuracy {want}")


def main():
    mpirun, harness = sys.argv[1], sys.argv[2]
    report = next((a.split("=", 1)[1] for a in sys.argv[3:] if a.startswith("--report=")), None)
    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for scenario in ("S6", "S1"):
            metrics = os.path.join(tmp, f"{scenario}.jsonl")
            run_harness(mpirun, harness, scenario, "strn", ARGS + [f"--metrics={metrics}"],
                        np=6)
            runs[scenario] = metrics
        decided = {}
        for scenario in ("S6", "S1"):
            d = decided[scenario] = check(scenario, runs[scenario])
            rows = {row["mode"]: row for row in d["table"]}
            gains = rows[d["mode"]]["time_to_target"] <= 0.9 * rows["bsp"]["time_to_target"]
            if (d["action"] == "switch") != gains or d["action"] not in ("switch", "keep"):
                sys.exit(f"{scenario}: {d['action']} {d['mode']} against the rule")
        s1 = decided["S1"]
        rows = {row["mode"]: row for row in s1["table"]}
        if rows["bsp"]["update_ms"] < 2 * rows["backup:1"]["update_ms"]:
            sys.exit("S1: bsp's predicted update is not at the straggler's pace")
        if s1["action"] != "switch" or s1["from"] != "bsp" or s1["mode"] == "bsp" or \
                s1["mode"].startswith("ssp") or not s1["detail"].startswith("from clock "):
            sys.exit(f"S1: expected a switch from bsp to a mode that leaves worker 0 behind: {s1}")
        if report:
            check_report(report, runs, tmp)
    print("ok")


if __name__ == "__main__":
    main()
