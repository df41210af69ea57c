#!/usr/bin/env python3
"""Communication stragglers under STRET (issue 31): probes and the hybrid relay.

Usage: check_stret.py MPIRUN PACER_SCENARIO [--report=PACER_REPORT] [--bench] [--json=FILE]

4 workers, 2 servers, softmax regression on Fashion-MNIST with a 1 MB model beside it (S3's
default), every worker's links to the servers at 5 MB/s (S3's default), 20 ms of emulated compute. S3 caps
worker 0's links to the servers at a quarter of that; S3-all caps its links to the other workers
too; S3-two (6 workers) caps workers 0 and 1's server links.

The test (default) runs S3, S3-all, S6 and S1 under stret, 20 iterations each, and checks what
does not depend on timing: in S3 the scheduler probes worker 0's links once it is flagged and
relays it through another worker within 3 iterations of the flag (its first relayed iteration,
from the metrics log), the model is BSP's (final accuracy equal to S6's, where STRET decides
nothing), and every key of every server received one push per worker and iteration but one per
relayed iteration (the servers' counts against the metrics log's), all of the gradients; in
S3-all the probe finds no faster path, so nothing is relayed, and with progress checks every 10
iterations that always find too little, worker 0 is withheld at the first; in S1 (compute-bound:
open links, no ballast) the batch sizes are tuned once, worker 0 running a smaller batch than the
others from then on. With --report, pacer-report's table of the S3 run names worker 0's partner.

The benchmark (--bench, `make bench-stret`) measures the targets against t0, S6's BSP median
iteration in the same run (S6 under bsp and stret twice each, alternated): S3 bsp >= 2.5 t0; S3
stret <= 1.3 t0 once the relay is in place, within 3 iterations of the slowdown; S3-two stret
gives each straggler its own partner and stays within 1.4 t0; S3-all stret within 3% of bsp; S6
stret within 3% of bsp; S3 stret's accuracy within 0.5 points of S6 bsp's; S1 (compute-bound,
against its own S6 t0) under the batch tuning alone at most 1.3 t0 once tuned, its accuracy
within 0.5 points of BSP's after as many samples. It prints the worker-seconds to the target
accuracy of every row.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

from scenario_runs import run_harness

COMMON = ["--compute-ms=20", "--link-mb-s=5", "--model-mb=1", "--eval-every=5"]
# S1's batch tuning is judged where compute is the iteration's cost: open links, no model beside
# the softmax's, its own t0.
COMPUTE_BOUND = ["--compute-ms=20", "--eval-every=5"]
BATCH = 64
# The sizes a worker can run are multiples of the scenario's 8 tasks. Tuning keeps a worker at
# BATCH only while its measured iteration is within 5% of the fastest's: on a loaded 2-core VM,
# a worker as fast as the others sometimes measures 5% slower and gets one size below.
SIZE_STEP = 8
TARGET_ACC = 0.7
TEST_ITERS, BENCH_ITERS = 20, 100
WARMUP_ITERS = 3


def run(mpirun, harness, scenario, policy, iters, tmp, workers=4, extra=(), tag="",
        common=COMMON):
    name = f"{scenario}-{policy}{tag}".replace(":", "_")
    metrics, summary_path = (os.path.join(tmp, name + ext) for ext in (".jsonl", ".json"))
    out = run_harness(mpirun, harness, scenario, policy,
                ["--servers", "2", f"--iters={iters}", f"--target-acc={TARGET_ACC}",
                 f"--metrics={metrics}", f"--json={summary_path}"] + common + list(extra),
                np=workers + 3)
    with open(summary_path) as f:
        summary = json.load(f)
    with open(metrics) as f:
        records = [json.loads(line) for line in f]
    starts = sorted((r["iter"], r["t_start_s"]) for r in records
                    if r["type"] == "iter" and r["index"] == 0)
    summary["lengths"] = [(i, starts[n + 1][1] - t) for n, (i, t) in enumerate(starts[:-1])]
    summary["metrics"] = metrics
    iterations = [r for r in records if r["type"] == "iter"]
    summary["samples"] = sum(r["batch"] for r in iterations)
    summary["batches"] = {}  # by worker: the sizes it ran, from its first iteration at each
    for r in sorted(iterations, key=lambda r: r["iter"]):
        summary["batches"].setdefault(r["index"], {}).setdefault(r["batch"], r["iter"])
    relayed = [r for r in records if r["type"] == "iter" and r["partner_rank"] >= 0]
    summary["relayed_iterations"] = len(relayed)
    summary["first_relayed"], summary["relayed_last"] = {}, {}
    for r in sorted(relayed, key=lambda r: r["iter"]):
        summary["first_relayed"].setdefault(r["index"], r["iter"])
        summary["relayed_last"][r["index"]] = r["iter"]
    summary["servers"] = [tuple(int(x) for x in m.groups()) for m in re.finditer(
        r"^server \d+: (\d+) keys, pushes per key (\d+)\.\.(\d+), gradients per key "
        r"(\d+)\.\.(\d+)$", out, re.M)]
    summary["stret"] = [r for r in records if r["type"] == "decision" and r["policy"] == "stret"]
    summary["flags"] = [r for r in records if r["type"] == "decision" and
                        r["policy"] == "detector" and r["action"] == "flag" and
                        r["kind"] in ("communication", "both")]
    print(f"{scenario:6s} {policy:5s} p50 {summary['iter_p50_ms']:7.2f} ms  accuracy "
          f"{summary['accuracy']:.4f}  to {TARGET_ACC} {summary['time_to_target_s']} s  "
          f"worker-s {summary['worker_seconds']}  relayed from {summary['first_relayed']}  STRET "
          + ", ".join(f"{d['iter']}:{d['kind']}:{d['target_index']}->{d['partner_index']}"
                      f":{d['action']}" for d in summary["stret"]), flush=True)
    return summary


def relays(summary):
    return [d for d in summary["stret"] if d["kind"] == "relay" and d["action"] == "order"]


def push_failures(summary):
    """Whether every key of every server received one push per worker and iteration but one per
    relayed worker's iteration, and every worker's gradient of every iteration."""
    expected = summary["workers"] * summary["iters"]
    pushes = expected - summary["relayed_iterations"]
    if len(summary["servers"]) != 2 or any(
            (pmin, pmax, gmin, gmax) != (pushes, pushes, expected, expected)
            for _, pmin, pmax, gmin, gmax in summary["servers"]):
        return [f"{summary['scenario']} {summary['policy']}: servers counted (keys, pushes, "
                f"gradients per key) {summary['servers']}, expected {pushes} pushes and "
                f"{expected} gradients per key ({summary['relayed_iterations']} relayed)"]
    return []


def relay_failures(summary, stragglers):
    """What is wrong with the relays of `summary` for each of `stragglers` (worker indices)."""
    failures = []
    ordered = relays(summary)
    partners = {}
    for s in stragglers:
        flags = [f["iter"] for f in summary["flags"] if f["target_index"] == s]
        mine = [d for d in ordered if d["target_index"] == s]
        if not flags or not mine:
            failures.append(f"{summary['scenario']}: worker {s} was flagged at {flags} and "
                            f"relayed {len(mine)} times")
            continue
        in_place = summary["first_relayed"].get(s)
        if in_place is None or in_place - flags[0] > 3:
            failures.append(f"{summary['scenario']}: worker {s} flagged at iteration {flags[0]}, "
                            f"relayed from iteration {in_place}")
        partners[s] = mine[0]["partner_index"]
        if partners[s] in stragglers or partners[s] == s:
            failures.append(f"{summary['scenario']}: worker {s} relayed through worker "
                            f"{partners[s]}, a straggler")
    if len(set(partners.values())) != len(partners):
        failures.append(f"{summary['scenario']}: partners {partners} are not distinct")
    return failures


def batch_failures(summary):
    """What is wrong with S1's batch tuning: one decision, worker 0 at half of BATCH or less
    (it computes 3 times as long), the others at BATCH or one size below, each worker running the
    size it was given from then on."""
    tunes = [d for d in summary["stret"] if d["kind"] == "batch_tune"]
    if len(tunes) != 1 or tunes[0]["action"] != "order":
        return [f"S1: batch tuning decisions {tunes}, expected one order"]
    given = {int(w): int(b) for w, b in re.findall(r"worker (\d+) (\d+)", tunes[0]["detail"])}
    failures = []
    if not (0 < given.get(0, 0) <= BATCH // 2) or any(
            not BATCH - SIZE_STEP <= given.get(w, 0) <= BATCH for w in (1, 2, 3)):
        failures.append(f"S1: batch sizes {given}: expected worker 0 at most {BATCH // 2}, "
                        f"the rest at {BATCH} or one size below")
    for w, size in given.items():
        ran = summary["batches"].get(w, {})
        last = max(ran, key=ran.get) if ran else None
        if last != size or ran[size] > tunes[0]["iter"] + 3:
            failures.append(f"S1: worker {w} was given batches of {size} at iteration "
                            f"{tunes[0]['iter']} and ran {ran} (size: first iteration)")
    return failures


def check_test(s3, s6, s3_all, s1):
    """S6 under stret decides nothing, so it trains BSP's model: S3's relayed run must match it.
    S3-all runs with progress checks, which withhold worker 0 only after the probe found no
    faster path."""
    failures = relay_failures(s3, [0]) + push_failures(s3) + push_failures(s6)
    if not any(d["kind"] == "probe" and d["action"] == "done" and d["target_index"] == 0
               for d in s3["stret"]):
        failures.append("S3: worker 0's links were never probed")
    if s6["stret"]:
        failures.append(f"S6: STRET decided {s6['stret']} without a straggler")
    elif abs(s3["accuracy"] - s6["accuracy"]) > 0.002:
        failures.append(f"S3: stret trained to {s3['accuracy']:.4f}, bsp (S6) to "
                        f"{s6['accuracy']:.4f}: the relay changed the model")
    if not any(d["kind"] == "probe" and d["target_index"] == 0 for d in s3_all["stret"]):
        failures.append("S3-all: worker 0's links were never probed")
    if relays(s3_all):
        failures.append(f"S3-all: relayed {relays(s3_all)} though no path is faster")
    # No relay helps in S3-all: at the first progress check that finds too little progress
    # (every 10 iterations, any gain is too little here), worker 0's gradients are withheld.
    withholds = [(d["iter"], d["target_index"]) for d in s3_all["stret"]
                 if d["kind"] == "withhold" and d["action"] == "order"]
    if withholds != [(10, 0)]:
        failures.append(f"S3-all: withheld {withholds}, expected worker 0 at iteration 10")
    return failures + batch_failures(s1)


# Worker 0's links to the servers at a quarter of the others' for the first 4 s (a second bw cap
# on top of --link-mb-s, so the two rates combine: 1 / (1/5 + 1/1.67) = 1.25 MB/s), then at theirs.
RECOVERING = [f"--inject=link:{a}->{b}:bw=1666667B/s@window=0s:4s"
              for s in ("s0", "s1") for a, b in (("w0", s), (s, "w0"))]
RECOVERY_ITERS = 25


def recovery_failures(summary):
    """Worker 0, relayed while its links are slow, is probed on its links to the servers every
    10 iterations; once they recover the relay ends, and it pushes on its own again."""
    ends = [d for d in summary["stret"] if d["kind"] == "end_relay" and d["action"] == "order"]
    probes = [d["iter"] for d in summary["stret"] if d["kind"] == "probe" and
              d["action"] == "done" and d["detail"].startswith("server 0")]
    if not relays(summary) or len(ends) != 1 or "recovered" not in ends[0]["detail"]:
        return [f"recovering link: relays {relays(summary)} and ends {ends}: expected worker 0 "
                "relayed, then the relay ended once its link recovered"]
    end, last = ends[0]["iter"], summary["relayed_last"].get(0, -1)
    # The order takes hold at the straggler's next iteration or the one after.
    if not probes or probes[-1] > end or last > end + 2 or len(relays(summary)) != 1:
        return [f"recovering link: server links probed at {probes}, the relay ended at {end}, "
                f"worker 0 last relayed at {last}, {len(relays(summary))} relay orders"]
    return []


def report_failures(report, summary):
    """What pacer-report's table of `summary`'s run misses about worker 0's relay."""
    partner = relays(summary)[0]["partner_index"] if relays(summary) else None
    out = subprocess.run([report, summary["metrics"], "-o", summary["metrics"] + ".png"],
                         capture_output=True, text=True, timeout=120)
    row = next((line for line in out.stdout.splitlines() if line.startswith("worker 0 ")), "")
    if out.returncode != 0 or not row.rstrip().endswith(f"worker {partner}"):
        return [f"pacer-report's row for worker 0 does not name its partner, worker {partner}: "
                f"{row!r} {out.stderr[-500:]}"]
    return []


def median_iteration(summary, after=WARMUP_ITERS):
    return statistics.median(d for i, d in summary["lengths"] if i >= after)


def bench(mpirun, harness, tmp, json_path):
    s6 = {"bsp": [], "stret": []}
    for _ in range(2):
        for policy in s6:
            s6[policy].append(run(mpirun, harness, "S6", policy, BENCH_ITERS, tmp))
    t0 = statistics.median(median_iteration(r) for r in s6["bsp"])
    table = {(scenario, policy): run(mpirun, harness, scenario, policy, BENCH_ITERS, tmp)
             for scenario in ("S3", "S3-all") for policy in ("bsp", "stret")}
    table[("S3-two", "stret")] = run(mpirun, harness, "S3-two", "stret", BENCH_ITERS, tmp,
                                     workers=6)
    failures = relay_failures(table[("S3", "stret")], [0])
    failures += relay_failures(table[("S3-two", "stret")], [0, 1])
    failures += push_failures(table[("S3", "stret")]) + push_failures(table[("S3-two", "stret")])
    # S1 under the batch tuning alone, against its own t0 (S6 bsp, compute-bound), and its
    # accuracy against BSP's after as many samples (BSP run for the iterations that make them).
    s1_t0 = median_iteration(run(mpirun, harness, "S6", "bsp", BENCH_ITERS, tmp, tag="-compute",
                                 common=COMPUTE_BOUND))
    s1 = {p: run(mpirun, harness, "S1", p, BENCH_ITERS, tmp, common=COMPUTE_BOUND)
          for p in ("bsp", "stret")}
    failures += batch_failures(s1["stret"])
    equal_iters = round(s1["stret"]["samples"] / (4 * BATCH))
    s1_equal = run(mpirun, harness, "S6", "bsp", equal_iters, tmp, tag="-equal-samples",
                   common=COMPUTE_BOUND)
    tunes = [d["iter"] for d in s1["stret"]["stret"] if d["kind"] == "batch_tune"]
    s1_ratio = {"bsp": median_iteration(s1["bsp"]) / s1_t0,
                "stret": median_iteration(s1["stret"], tunes[0] + 2 if tunes else 0) / s1_t0}
    s1_gap = abs(s1["stret"]["accuracy"] - s1_equal["accuracy"])

    def after_relay(summary):
        ordered = relays(summary)
        return median_iteration(summary, ordered[-1]["iter"] + 1 if ordered else 0)

    rows = [("S6", "bsp", statistics.median(median_iteration(r) for r in s6["bsp"]) / t0),
            ("S6", "stret", statistics.median(median_iteration(r) for r in s6["stret"]) / t0)]
    rows += [(s, p, (after_relay(r) if p == "stret" else median_iteration(r)) / t0)
             for (s, p), r in table.items()]
    ratio = {(s, p): x for s, p, x in rows}
    print(f"\nt0 = {1e3 * t0:.2f} ms (S6 bsp, median iteration, median of 2 runs)\n")
    print("| scenario | policy | median iteration | accuracy | worker-s to "
          f"{TARGET_ACC} |")
    print("|---|---|---|---|---|")
    for s, p, x in rows:
        r = s6[p][0] if s == "S6" else table[(s, p)]
        to_target = (r["time_to_target_s"] * r["workers"]
                     if r["time_to_target_s"] is not None else None)
        print(f"| {s} | {p} | {x:.3f} t0 | {r['accuracy']:.4f} | "
              f"{'-' if to_target is None else f'{to_target:.1f}'} |")
    limits = [(("S3", "bsp"), ">=", 2.5), (("S3", "stret"), "<=", 1.3),
              (("S3-two", "stret"), "<=", 1.4), (("S6", "stret"), "<=", 1.03)]
    for key, op, limit in limits:
        if (op == ">=" and ratio[key] < limit) or (op == "<=" and ratio[key] > limit):
            failures.append(f"{key[0]} {key[1]} is {ratio[key]:.3f} t0, not {op} {limit}")
    all_slow = ratio[("S3-all", "stret")] / ratio[("S3-all", "bsp")]
    if all_slow > 1.03:
        failures.append(f"S3-all stret is {all_slow:.3f} x bsp, more than 3% worse")
    print(f"\nS1 (compute-bound, t0 = {1e3 * s1_t0:.2f} ms): bsp {s1_ratio['bsp']:.3f} t0, stret "
          f"(batch tuning) {s1_ratio['stret']:.3f} t0 once tuned; accuracy "
          f"{s1['stret']['accuracy']:.4f} after {s1['stret']['samples']} samples, bsp "
          f"{s1_equal['accuracy']:.4f} after {equal_iters} iterations of as many")
    if s1_ratio["stret"] > 1.3:
        failures.append(f"S1 stret is {s1_ratio['stret']:.3f} t0 once tuned, above 1.3")
    if s1_gap > 0.005:
        failures.append(f"S1 stret's accuracy is {100 * s1_gap:.2f} points from bsp's at equal "
                        "samples")
    gap = abs(table[("S3", "stret")]["accuracy"] - s6["bsp"][0]["accuracy"])
    if gap > 0.005:
        failures.append(f"S3 stret's accuracy is {100 * gap:.2f} points from S6 bsp's")
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"t0_ms": 1e3 * t0, "rows": [{"scenario": s, "policy": p, "t0": x}
                                                   for s, p, x in rows],
                       "s1": {"t0_ms": 1e3 * s1_t0, "ratio": s1_ratio,
                              "accuracy": s1["stret"]["accuracy"],
                              "bsp_accuracy_equal_samples": s1_equal["accuracy"]}}, f, indent=1)
    return failures


def main():
    mpirun, harness = sys.argv[1], sys.argv[2]
    option = {a.split("=", 1)[0]: a.split("=", 1)[1] for a in sys.argv[3:] if "=" in a}
    json_path, report = option.get("--json"), option.get("--report")
    with tempfile.TemporaryDirectory() as tmp:
        if "--bench" in sys.argv[3:]:
            failures = bench(mpirun, harness, tmp, json_path)
        else:
            runs = [run(mpirun, harness, s, "stret", TEST_ITERS, tmp) for s in ("S3", "S6")]
            runs.append(run(mpirun, harness, "S3-all", "stret", TEST_ITERS, tmp,
                            extra=["--withhold_every=10", "--withhold_threshold=100"]))
            runs.append(run(mpirun, harness, "S1", "stret", TEST_ITERS, tmp,
                            common=COMPUTE_BOUND))
            failures = check_test(*runs)
            failures += recovery_failures(run(mpirun, harness, "S6", "stret", RECOVERY_ITERS, tmp,
                                              extra=RECOVERING, tag="-recovering"))
            if report:
                failures += report_failures(report, runs[0])
    if failures:
        sys.exit("; ".join(failures))
    print("ok")


if __name__ == "__main__":
    main()
