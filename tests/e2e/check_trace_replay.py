#!/usr/bin/env python3
"""A short replay of a production trace: each worker's compute follows it.

Usage: check_trace_replay.py MPIRUN TRAIN_EXAMPLE TRACE.csv

Runs the training example with 4 workers, --compute_ms=20 and --inject=trace:TRACE:from=FROM
(PAI's job 2, where workers differ steadily by up to 1.3x), and reads the metrics log. The
trace, read here on its own, gives each worker's slowdown at each clock: its time over the
fastest trace worker's at trace iteration FROM + clock, the last sample at or before it. Each
worker's measured compute over that slowdown, at the median over the run, must be the same for
every worker within 5% (what is left is the example's own compute), and the slowest worker by the
trace must be the slowest measured. Skips (exit 77) where the trace is absent.
"""
import bisect
import collections
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

WORKERS, ITERATIONS, FROM, COMPUTE_MS = 4, 40, 100, 20


def trace_samples(path):
    samples = collections.defaultdict(list)
    with open(path) as f:
        for row in csv.DictReader(f):
            samples[int(row["worker"])].append((int(row["time"]), float(row["batch_time_norm"])))
    return {w: sorted(s) for w, s in samples.items()}


def time_at(samples, iteration):
    i = bisect.bisect_right([t for t, _ in samples], iteration)
    return samples[max(i - 1, 0)][1]


def main():
    mpirun, example, trace = sys.argv[1:4]
    if not os.path.exists(trace):
        print(f"skipped: no trace at {trace}")
        sys.exit(77)
    samples = trace_samples(trace)
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "metrics.jsonl")
        run = subprocess.run(
            [mpirun, "--oversubscribe", "-np", str(2 + WORKERS), example, "--servers", "1",
             f"--iterations={ITERATIONS}", f"--compute_ms={COMPUTE_MS}", "--min_accuracy=0",
             f"--inject=trace:{trace}:from={FROM}", f"--metrics={metrics}"],
            capture_output=True, text=True, timeout=300)
        print(run.stdout[-2000:], run.stderr[-2000:])
        if run.returncode != 0:
            sys.exit(f"the job failed with {run.returncode}")
        with open(metrics) as f:
            records = [json.loads(line) for line in f]
    per_worker = collections.defaultdict(list)
    for r in records:
        if r["type"] == "iter":
            at = FROM + r["clock"]
            fastest = min(time_at(s, at) for s in samples.values())
            slowdown = time_at(samples[r["index"] % len(samples)], at) / fastest
            per_worker[r["index"]].append((r["t_comp_ms"], slowdown))
    base = {w: statistics.median(ms / slowdown for ms, slowdown in rows)
            for w, rows in per_worker.items()}
    print("compute over the trace's slowdown, by worker (ms):",
          {w: round(b, 2) for w, b in sorted(base.items())})
    if len(base) != WORKERS or max(base.values()) > 1.05 * min(base.values()):
        sys.exit("the workers' compute does not follow the trace")
    slowest_by_trace = max(range(WORKERS), key=lambda w: statistics.median(
        s for _, s in per_worker[w]))
    slowest_measured = max(range(WORKERS), key=lambda w: statistics.median(
        ms for ms, _ in per_worker[w]))
    if slowest_by_trace != slowest_measured:
        sys.exit(f"worker {slowest_by_trace} is the slowest by the trace, but worker "
                 f"{slowest_measured} measured slowest")
    print(f"every worker's compute follows the trace; worker {slowest_measured} slowest")


if __name__ == "__main__":
    main()
