#!/usr/bin/env python3
"""Predicted stragglers under SMS's batch shrink (issue 32).

Usage: check_sms.py MPIRUN PACER_SCENARIO [--report=PACER_REPORT] [--bench] [--json=FILE]
                    [--resnet=PACER_RESNET]

4 workers, 1 server, softmax regression on Fashion-MNIST, one task of 16 ms of emulated compute
per iteration at the full batch of 64 (a smaller batch computes proportionally less). S5 slows
worker 0's compute 3x in the last 50 of every 200 iterations.

The test (default) runs S5 (800 iterations) and S6 (200) under sms and checks what does not depend on
timing: from the third slow phase on (550-599, 750-799: the predictor needs two periods to find
the period), worker 0 already runs a shrunk batch at the first slow iteration of each phase (the
order left at a boundary before it), at most 0.4 x 64 (b' = 64 / 3, within the policy's 5%), and
runs the full batch again within 5 iterations after the phase (it goes back once measured fast,
the median of its last 3 computes, and the order holds 2 iterations later); every order names worker 0 and
weights its gradient batch / 64; no other worker is ever shrunk; in S6 SMS orders nothing. With
--report, pacer-report's phases of the S5 run list worker 0's measured slow phases exactly
(150-199, 350-399, 550-599, 750-799), nobody else's, and its shrunk iterations as the metrics
log has them.

The benchmark (--bench, `make bench-sms`) measures the targets against t0, S6's BSP mean
iteration over the same iterations in the same run: the mean iteration over periods 2 and later
(iterations 200 on) is at most 1.1 t0 under sms (BSP's is printed beside it, about 1.5 t0); S6
under sms is within 3% of bsp by median iteration (2 runs each, alternated); the same shrink
timing as the test; and from iteration 200, worker 0's shrunk iterations against its slow ones,
precision and recall at least 0.8 (a shrunk iteration was ordered at a boundary before it, so
this is the prediction's one step ahead, as SMS acted on it).

The skip (both modes) runs S3 with worker 0's server links at a third of the others' 5 MB/s
(--slow-link-share), 2 servers, 20 ms of compute and a 1 MB tensor beside the softmax whose
gradient repeats the softmax weights' (communication-bound; STRET's S3 settings). A skipping
worker's pushes and pulls both cross its slow links: the gradients it sends within --skip_eps of
the last ones go as "same as last", and the parameters the servers would send it within
--skip_pull_eps (default 0.05) of the ones they last sent it go as "unchanged". The test runs it
under sms for 24 iterations at --skip_eps=1.5, a distance real gradients fall within (at the
default 0.05 they never do: the mean gradients of two batches of 64 differ by about 1.4 x their
norm): SMS orders worker 0, and only it, to skip within 4 iterations (the detector flags it a
communication straggler), and the order holds (the detector judges a skipping worker's links by
the time its whole gradient would take); from 2 iterations after the order worker 0 sends and
receives fewer bytes than a full gradient in some iterations and the others always a full one;
every key of every server counts a push per worker and iteration (a skip is a push without
values). The benchmark measures, against BSP in the same run over 100 iterations, worker 0's bytes
sent and received, the mean iteration, the time to 0.7 accuracy and the final accuracy, at the
default eps and at --skip_eps=1.5; its targets, judged at 1.5: at least 30% fewer bytes sent,
iterations at least 25% shorter, time to accuracy no worse.

With --resnet, the benchmark also trains pacer-resnet (4 workers) for one epoch with no shrink,
and with worker 0 at 8 of its 32 images (--shrink=0:8) picked by dedup (SelectSamples on the
images and their last losses) and by random drop; targets: dedup's accuracy within 0.3 points of
no shrink's and above random's (medians of 2 runs each, alternated).
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

from scenario_runs import run_harness

BATCH, PERIOD, SLOW = 64, 200, 50
TEST_ITERS = 800
COMMON = ["--servers", "1", "--tasks=1", "--compute-ms=16", f"--batch={BATCH}"]


def run(mpirun, harness, scenario, policy, iters, tmp, tag=""):
    name = f"{scenario}-{policy}{tag}"
    metrics = os.path.join(tmp, name + ".jsonl")
    run_harness(mpirun, harness, scenario, policy,
                COMMON + [f"--iters={iters}", f"--metrics={metrics}"], np=6)
    with open(metrics) as f:
        records = [json.loads(line) for line in f]
    iterations = [r for r in records if r["type"] == "iter"]
    batch = {}  # [worker][iteration]
    for r in iterations:
        batch.setdefault(r["index"], {})[r["iter"]] = r["batch"]
    starts = sorted((r["iter"], r["t_start_s"]) for r in iterations if r["index"] == 0)
    lengths = {i: starts[n + 1][1] - t for n, (i, t) in enumerate(starts[:-1])}
    orders = [r for r in records if r["type"] == "decision" and r["policy"] == "sms"]
    print(f"{scenario} {policy}: median iteration {1e3 * statistics.median(lengths.values()):.2f}"
          f" ms, {len(orders)} SMS orders: " +
          ", ".join(f"{d['iter']}:w{d['target_index']}:{d['batch']}:{d['action']}"
                    for d in orders[:16]), flush=True)
    return {"batch": batch, "lengths": lengths, "orders": orders, "iters": iters,
            "metrics": metrics}


def shrink_failures(s5):
    failures = []
    batch = s5["batch"]
    for start in range(2 * PERIOD + PERIOD - SLOW, s5["iters"], PERIOD):
        first = batch[0].get(start)
        if first is None or first > 0.4 * BATCH:
            failures.append(f"S5: worker 0 ran a batch of {first} at iteration {start}, the "
                            "first of a predicted slow phase")
        end = start + SLOW
        if end + 5 < s5["iters"] and batch[0].get(end + 5) != BATCH:
            failures.append(f"S5: worker 0 ran {batch[0].get(end + 5)} at iteration {end + 5}, "
                            f"5 after the phase ended")
    for w in range(1, 4):
        shrunk = {i: b for i, b in batch.get(w, {}).items() if b != BATCH}
        if shrunk:
            failures.append(f"S5: worker {w}, never slow, ran {dict(list(shrunk.items())[:5])}")
    for d in s5["orders"]:
        if (d["target_index"] != 0 or d["action"] != "order" or
                abs(d["weight"] - d["batch"] / BATCH) > 1e-9 or not 0 < d["batch"] <= BATCH):
            failures.append(f"S5: order {d}")
    return failures


def report_failures(report, s5):
    """What pacer-report's phases of the S5 run get wrong."""
    out = subprocess.run([report, s5["metrics"], "-o", s5["metrics"] + ".png"],
                         capture_output=True, text=True, timeout=120)
    lines = dict(line.split(": ", 1) for line in out.stdout.splitlines()
                 if line.startswith("worker ") and ": " in line)
    def ranges(kind):
        """The report's ranges ("150-199, 350") for `kind` of a worker, as (first, last)."""
        found = []
        for text in lines.get(kind, "").split(", "):
            if text:
                first, _, last = text.partition("-")
                found.append((int(first), int(last or first)))
        return found

    def iterations(found):
        return {i for first, last in found for i in range(first, last + 1)}

    def maximal(found):  # in order, and no two that touch
        return all(b[0] > a[1] + 1 for a, b in zip(found, found[1:]))

    slow = ", ".join(f"{start}-{min(start + SLOW, s5['iters']) - 1}"
                     for start in range(PERIOD - SLOW, s5["iters"], PERIOD))
    shrunk = ranges("worker 0 shrunk")
    measured = {k: v for k, v in lines.items() if "slow (measured)" in k}
    if (out.returncode != 0 or measured != {"worker 0 slow (measured)": slow} or
            iterations(shrunk) != {i for i, b in s5["batch"][0].items() if b < BATCH} or
            not maximal(shrunk) or
            any("shrunk" in k for k in lines if not k.startswith("worker 0 "))):
        return [f"pacer-report's phases {lines}: expected worker 0's slow phases {slow} alone, "
                f"and its shrunk ranges those of the log {out.stderr[-500:]}"]
    return []


def quiet_failures(s6):
    shrunk = [(w, i, b) for w, runs in s6["batch"].items() for i, b in runs.items() if b != BATCH]
    if s6["orders"] or shrunk:
        return [f"S6: SMS ordered {s6['orders'][:3]} and workers ran {shrunk[:3]} without a "
                "straggler"]
    return []


SKIP = ["--servers", "2", "--compute-ms=20", "--link-mb-s=5", "--slow-link-share=0.3333333",
        "--model-mb=1", "--eval-every=5", "--target-acc=0.7"]
SKIP_TEST_ITERS, SKIP_BENCH_ITERS, SKIP_EPS = 24, 100, 1.5


def run_skip(mpirun, harness, policy, iters, tmp, eps=None):
    name = f"S3-{policy}-{eps}"
    metrics, summary_path = (os.path.join(tmp, name + ext) for ext in (".jsonl", ".json"))
    out = run_harness(mpirun, harness, "S3", policy,
                      SKIP + [f"--iters={iters}", f"--metrics={metrics}", f"--json={summary_path}"] +
                      ([f"--skip_eps={eps}"] if eps is not None else []))
    with open(summary_path) as f:
        summary = json.load(f)
    with open(metrics) as f:
        records = [json.loads(line) for line in f]
    summary["bytes_out"], summary["bytes_in"] = {}, {}  # [worker][iteration]
    for r in records:
        if r["type"] == "iter":
            for way in ("bytes_out", "bytes_in"):
                summary[way].setdefault(r["index"], {})[r["iter"]] = r[way]
    summary["orders"] = [r for r in records if r["type"] == "decision" and r["policy"] == "sms"]
    summary["pushes"] = [(int(a), int(b)) for a, b in
                         re.findall(r"pushes per key (\d+)\.\.(\d+)", out)]
    print(f"S3 (1/3) {policy} eps {eps}: worker 0 sent {sum(summary['bytes_out'][0].values()) / 1e6:.1f}"
          f" MB, received {sum(summary['bytes_in'][0].values()) / 1e6:.1f} MB, mean iteration {summary['iter_mean_ms']:.1f} ms, time to 0.7 accuracy "
          f"{summary['time_to_target_s']} s, SMS orders: " +
          ", ".join(f"{d['iter']}:w{d['target_index']}:skip={d['skip']}"
                    for d in summary["orders"][:8]), flush=True)
    return summary


def skip_failures(run, iters):
    failures = []
    orders = run["orders"]
    full = max(max(b.values()) for b in run["bytes_out"].values())
    if (not orders or orders[0]["iter"] > 4 or not orders[0]["skip"] or
            any(d["target_index"] != 0 for d in orders)):
        return [f"S3 (1/3): SMS orders {orders[:3]}: expected worker 0 ordered to skip by "
                "iteration 4, and nobody else"]
    if len(orders) != 1:
        failures.append(f"S3 (1/3): SMS orders {orders[:4]}: expected the skip to hold (a skipping"
                        " straggler is judged by the time its whole gradient would take)")
    start = orders[0]["iter"] + 2
    for way, verb in (("bytes_out", "sent"), ("bytes_in", "received")):
        skipped = [i for i, b in run[way][0].items() if b < full]
        if not skipped or min(skipped) < start:
            failures.append(f"S3 (1/3): worker 0 {verb} less than {full} bytes in iterations "
                            f"{skipped}: expected some, none before {start}")
        for w in range(1, 4):
            short = {i: b for i, b in run[way][w].items() if b != full}
            if short:
                failures.append(f"S3 (1/3): worker {w}, never ordered, {verb} {short}")
    if len(run["pushes"]) != 2 or any(p != (4 * iters, 4 * iters) for p in run["pushes"]):
        failures.append(f"S3 (1/3): servers' pushes per key {run['pushes']}, expected "
                        f"{4 * iters} on each of 2 servers")
    return failures


def skip_bench(mpirun, harness, tmp):
    bsp = run_skip(mpirun, harness, "bsp", SKIP_BENCH_ITERS, tmp)
    sms = {eps: run_skip(mpirun, harness, "sms", SKIP_BENCH_ITERS, tmp, eps)
           for eps in (0.05, SKIP_EPS)}
    sent = lambda r: sum(r["bytes_out"][0].values())
    rows, failures = {}, []
    received = lambda r: sum(r["bytes_in"][0].values())
    print("\n| S3, worker 0's links at 1/3 | worker 0's bytes sent | received | mean iteration | "
          "time to 0.7 accuracy | final accuracy |")
    print("|---|---|---|---|---|---|")
    print(f"| bsp | {sent(bsp) / 1e6:.1f} MB | {received(bsp) / 1e6:.1f} MB | "
          f"{bsp['iter_mean_ms']:.1f} ms | {bsp['time_to_target_s']:.2f} s | "
          f"{bsp['accuracy']:.4f} |")
    for eps, r in sms.items():
        rows[eps] = {"bytes": sent(r) / sent(bsp), "received": received(r) / received(bsp),
                     "iteration": r["iter_mean_ms"] / bsp["iter_mean_ms"],
                     "time_to_target": r["time_to_target_s"] / bsp["time_to_target_s"],
                     "accuracy": r["accuracy"]}
        print(f"| sms, --skip_eps={eps} | {rows[eps]['bytes']:.3f} x bsp | "
              f"{rows[eps]['received']:.3f} x bsp | {rows[eps]['iteration']:.3f} x bsp | "
              f"{rows[eps]['time_to_target']:.3f} x bsp | {rows[eps]['accuracy']:.4f} |")
    # Judged where gradients do fall within eps: at the default none does (see the docstring).
    target = rows[SKIP_EPS]
    if target["bytes"] > 0.7 or target["iteration"] > 0.75 or target["time_to_target"] > 1:
        failures.append(f"S3 (1/3) sms at --skip_eps={SKIP_EPS}: bytes {target['bytes']:.3f}, "
                        f"iteration {target['iteration']:.3f}, time to accuracy "
                        f"{target['time_to_target']:.3f} x bsp; targets <= 0.7, <= 0.75, <= 1")
    return rows, failures


def shrink_precision_recall(s5, first):
    """SMS's mitigation against S5's slow iterations of worker 0, from iteration `first`: the
    iterations it ran shrunk that were slow (precision) and the slow ones it ran shrunk (recall).
    A shrunk iteration was ordered at a boundary before it, from the prediction."""
    batch = {i: b for i, b in s5["batch"][0].items() if i >= first}
    shrunk = {i for i, b in batch.items() if b < BATCH}
    slow = {i for i in batch if i % PERIOD >= PERIOD - SLOW}
    right = len(shrunk & slow)
    return right / max(1, len(shrunk)), right / max(1, len(slow))


RESNET_TURNS = 2
# Worker 0 of 4 trains on 8 of its 32 images every iteration: b' = B / 4, as for a 4x straggler.
RESNET = ["--servers", "1", "--epochs=1", "--progress=lines"]


def resnet_bench(mpirun, resnet, tmp):
    """Accuracy after one epoch of pacer-resnet: no shrink, and worker 0 shrunk to 8 of 32 by
    dedup and by random drop, alternated, RESNET_TURNS each; the medians."""
    selections = {"none": [], "dedup": ["--shrink=0:8", "--shrink-select=dedup"],
                  "random": ["--shrink=0:8", "--shrink-select=random"]}
    accuracy = {name: [] for name in selections}
    for turn in range(RESNET_TURNS):
        for name, flags in selections.items():
            path = os.path.join(tmp, f"resnet-{name}-{turn}.json")
            result = subprocess.run([mpirun, "--oversubscribe", "-np", "6", resnet] + RESNET +
                                    flags + [f"--json={path}"], capture_output=True, text=True,
                                    timeout=900)
            if result.returncode != 0:
                sys.exit(f"pacer-resnet {name} failed: {result.stdout[-1000:]} "
                         f"{result.stderr[-2000:]}")
            with open(path) as f:
                accuracy[name].append(json.load(f)["accuracy"])
            print(f"resnet {name}: accuracy {accuracy[name][-1]:.4f}", flush=True)
    median = {name: statistics.median(values) for name, values in accuracy.items()}
    print("\n| pacer-resnet, 1 epoch, worker 0 at 8 of 32 | accuracy (median of "
          f"{RESNET_TURNS}) | runs |")
    print("|---|---|---|")
    for name, values in accuracy.items():
        print(f"| {name} | {median[name]:.4f} | {', '.join(f'{v:.4f}' for v in values)} |")
    failures = []
    if median["dedup"] < median["none"] - 0.003 or median["dedup"] <= median["random"]:
        failures.append(f"resnet: dedup {median['dedup']:.4f}, none {median['none']:.4f}, random "
                        f"{median['random']:.4f}; targets: dedup within 0.3 points of none and "
                        "above random")
    return median, failures


def mean_after(summary, first):
    return statistics.mean(d for i, d in summary["lengths"].items() if i >= first)


def median_after(summary, first=5):
    return statistics.median(d for i, d in summary["lengths"].items() if i >= first)


def bench(mpirun, harness, tmp, json_path, resnet=None):
    s6 = {"bsp": [], "sms": []}
    for turn in range(2):
        for policy in s6:
            s6[policy].append(run(mpirun, harness, "S6", policy, 400, tmp, tag=f"-{turn}"))
    # S5's rows are means (a slow phase is a tail that a median hides), so their t0 is S6's mean
    # over the same iterations; S6's overhead compares medians.
    t0 = statistics.median(mean_after(r, PERIOD) for r in s6["bsp"])
    t0_median = statistics.median(median_after(r) for r in s6["bsp"])
    s5 = {p: run(mpirun, harness, "S5", p, TEST_ITERS, tmp) for p in ("bsp", "sms")}
    failures = shrink_failures(s5["sms"]) + sum((quiet_failures(r) for r in s6["sms"]), [])
    ratio = {p: mean_after(r, PERIOD) / t0 for p, r in s5.items()}
    overhead = statistics.median(median_after(r) for r in s6["sms"]) / t0_median
    print(f"\nt0 = {1e3 * t0:.2f} ms (S6 bsp, mean iteration from {PERIOD}, median of 2 runs; "
          f"its median iteration {1e3 * t0_median:.2f} ms)\n")
    print("| scenario | policy | iteration | limit |")
    print("|---|---|---|---|")
    print(f"| S5 | bsp | {ratio['bsp']:.3f} t0 (mean from iteration {PERIOD}) | - |")
    print(f"| S5 | sms | {ratio['sms']:.3f} t0 (mean from iteration {PERIOD}) | <= 1.1 |")
    print(f"| S6 | sms | {overhead:.3f} x S6 bsp (median iteration) | <= 1.03 |")
    precision, recall = shrink_precision_recall(s5["sms"], PERIOD)
    print(f"\nS5 sms from iteration {PERIOD}: worker 0 ran shrunk in slow iterations with precision "
          f"{precision:.3f} and recall {recall:.3f} (targets >= 0.8)")
    if precision < 0.8 or recall < 0.8:
        failures.append(f"S5 sms: shrink precision {precision:.3f}, recall {recall:.3f}, below 0.8")
    if ratio["sms"] > 1.1:
        failures.append(f"S5 sms is {ratio['sms']:.3f} t0 from iteration {PERIOD}, above 1.1")
    if overhead > 1.03:
        failures.append(f"S6 sms is {overhead:.3f} x bsp, more than 3% above")
    skip, skip_missed = skip_bench(mpirun, harness, tmp)
    failures += skip_missed
    selection = None
    if resnet:
        selection, selection_missed = resnet_bench(mpirun, resnet, tmp)
        failures += selection_missed
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"t0_ms": 1e3 * t0, "t0_median_ms": 1e3 * t0_median, "s5": ratio,
                       "s6_sms": overhead, "s5_shrink_precision": precision,
                       "s5_shrink_recall": recall, "s3_third_skip": skip,
                       "resnet_shrink_accuracy": selection}, f, indent=1)
    return failures


def main():
    mpirun, harness = sys.argv[1], sys.argv[2]
    option = {a.split("=", 1)[0]: a.split("=", 1)[1] for a in sys.argv[3:] if "=" in a}
    with tempfile.TemporaryDirectory() as tmp:
        if "--bench" in sys.argv[3:]:
            failures = bench(mpirun, harness, tmp, option.get("--json"), option.get("--resnet"))
        else:
            s5 = run(mpirun, harness, "S5", "sms", TEST_ITERS, tmp)
            failures = shrink_failures(s5)
            if "--report" in option:
                failures += report_failures(option["--report"], s5)
            failures += quiet_failures(run(mpirun, harness, "S6", "sms", 200, tmp))
            failures += skip_failures(
                run_skip(mpirun, harness, "sms", SKIP_TEST_ITERS, tmp, SKIP_EPS), SKIP_TEST_ITERS)
    if failures:
        sys.exit("; ".join(failures))
    print("ok")


if __name__ == "__main__":
    main()
