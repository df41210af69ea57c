#!/usr/bin/env python3
"""A short replay of a production trace: each worker's compute follows it.

Usage: check_trace_replay.py MPIRUN TRAIN_EXAMPLE TRACE.csv
       check_trace_replay.py --s8-small MPIRUN PACER_SCENARIO TRACES_DIR PACER_REPORT

Runs the training example with 4 workers, --compute_ms=20 and --inject=trace:TRACE:from=FROM
(PAI's job 2, where workers differ steadily by up to 1.3x), and reads the metrics log. The
trace, read here on its own, gives each worker's slowdown at each clock: its time over the
fastest trace worker's at trace iteration FROM + clock, the last sample at or before it. Each
worker's measured compute over that slowdown, at the median over the run, must be the same for
every worker within 5% (what is left is the example's own compute), and the slowest worker by the
trace must be the slowest measured. Skips (exit 77) where the trace is absent.

With --s8-small, pacer-scenario runs the preset S8-small (4 workers replaying PAI job 1's workers
3 to 6 from its iteration 1780, scaled so that the trace's median is --compute-ms), and each
worker's measured compute must be within 5% of the trace's scaled time at the median over the
run (the issue's fidelity target), and worker 3 (trace worker 6) must be slower after the trace's
straggler emerges (iteration 1811) than before. pacer-report's floors from the trace (BSP's: the
slowest worker's scaled time; work-sharing's: N / sum 1/t_i; means over the clocks that ran) must
be those computed here, and the run's mean iteration at least 0.95 x BSP's floor. Then a spread
(--inject=spread:...coefficient_variation.csv:job=0, --inject_seed=7): the draws, repeated here
from the seed, must account for each worker's compute (9 of 10 iterations within 5% of the run's
median compute over the draw; another seed's draws scatter by about 10%), and pacer-report's
floors for it must be those computed here.
"""
import bisect
import collections
import csv
import json
import math
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


def metrics_of(command, tmp):
    metrics = os.path.join(tmp, "metrics.jsonl")
    run = subprocess.run(command + [f"--metrics={metrics}"], capture_output=True, text=True,
                         timeout=300)
    print(run.stdout[-2000:], run.stderr[-2000:])
    if run.returncode != 0:
        sys.exit(f"the job failed with {run.returncode}")
    with open(metrics) as f:
        return [json.loads(line) for line in f]


def s8_small(mpirun, scenario, traces, report):
    trace = os.path.join(traces, "pai-2020-minibatch", "job_1_norm.csv")
    if not os.path.exists(trace):
        print(f"skipped: no trace at {trace}")
        sys.exit(77)
    samples = trace_samples(trace)
    every = sorted(t for s in samples.values() for _, t in s)
    half = len(every) // 2
    median = every[half] if len(every) % 2 else (every[half - 1] + every[half]) / 2
    replayed, start = [3, 4, 5, 6], 1780
    with tempfile.TemporaryDirectory() as tmp:
        records = metrics_of([mpirun, "--oversubscribe", "-np", str(2 + WORKERS), scenario,
                              "--servers", "1", "--scenario=S8-small", f"--traces={traces}",
                              f"--iters={ITERATIONS + 20}", f"--compute_ms={COMPUTE_MS}"], tmp)
        figures = os.path.join(tmp, "figures.json")
        subprocess.run([report, os.path.join(tmp, "metrics.jsonl"), "-o",
                        os.path.join(tmp, "report.png"), f"--json={figures}"], check=True,
                       timeout=120)
        with open(figures) as f:
            stated = json.load(f)
    ratios, slow = collections.defaultdict(list), collections.defaultdict(list)
    scaled = collections.defaultdict(dict)  # clock -> worker -> the trace's slowdown
    for r in records:
        if r["type"] == "iter":
            at = start + r["clock"]
            expected = COMPUTE_MS * time_at(samples[replayed[r["index"]]], at) / median
            scaled[r["clock"]][r["index"]] = expected / COMPUTE_MS
            ratios[r["index"]].append(r["t_comp_ms"] / expected)
            if r["index"] == 3:
                slow[at >= 1811].append(r["t_comp_ms"])
    base = COMPUTE_MS * statistics.median(x for v in ratios.values() for x in v)
    bsp, sharing = floors_of({c: {w: base * x for w, x in m.items()} for c, m in scaled.items()})
    floors = stated["trace_floors"]
    print(f"floors: BSP {bsp:.3f} ms, work-sharing {sharing:.3f} ms; pacer-report: "
          f"{floors['bsp_floor_ms']:.3f}, {floors['sharing_floor_ms']:.3f}; mean iteration "
          f"{stated['run']['iter_mean_ms']:.2f} ms")
    if (abs(floors["bsp_floor_ms"] - bsp) > 1e-6 * bsp or
            abs(floors["sharing_floor_ms"] - sharing) > 1e-6 * sharing):
        sys.exit("pacer-report's floors are not the trace's")
    if stated["run"]["iter_mean_ms"] < 0.95 * bsp:
        sys.exit("the mean iteration is below 0.95 x BSP's floor")
    fidelity = {w: statistics.median(v) for w, v in sorted(ratios.items())}
    print("measured compute over the trace's scaled time, medians by worker:",
          {w: round(f, 3) for w, f in fidelity.items()})
    if len(fidelity) != WORKERS or any(abs(f - 1) > 0.05 for f in fidelity.values()):
        sys.exit("a worker's compute is not within 5% of the trace's scaled time")
    before, after = statistics.median(slow[False]), statistics.median(slow[True])
    print(f"worker 3 (trace worker 6): {before:.1f} ms before iteration 1811, {after:.1f} after")
    if not after > 1.3 * before:
        sys.exit("worker 3 did not turn slow where the trace's worker 6 does")


def draw(seed, worker, clock, cv):
    """The library's spread draw (FaultSpec::MultiplierAt): a lognormal of mean 1 and `cv`, its
    normal from two splitmix hashes of (seed, worker, clock) by Box-Muller."""
    def uniform(seed):
        mask = (1 << 64) - 1
        z = (seed ^ (worker * 0x9E3779B97F4A7C15) ^ (clock * 0xD1B54A32D192ED03)) & mask
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return ((z ^ (z >> 31)) >> 11) / 2.0 ** 53
    sigma2 = math.log(1 + cv * cv)
    normal = (math.sqrt(-2 * math.log(1 - uniform(seed))) *
              math.cos(2 * math.pi * uniform(seed ^ ((1 << 64) - 1))))
    return math.exp(math.sqrt(sigma2) * normal - sigma2 / 2)


def floors_of(scaled):
    """BSP's and work-sharing's floors, means over the clocks, of {clock: {worker: ms}}."""
    return (statistics.fmean(max(m.values()) for m in scaled.values()),
            statistics.fmean(len(m) / sum(1 / x for x in m.values()) for m in scaled.values()))


def spread(mpirun, scenario, traces, report):
    table = os.path.join(traces, "pai-2020-minibatch", "coefficient_variation.csv")
    with open(table) as f:
        cv = [float(x) for x in f.read().splitlines()[1].split(",")[1:] if x]
    with tempfile.TemporaryDirectory() as tmp:
        records = metrics_of([mpirun, "--oversubscribe", "-np", str(2 + WORKERS), scenario,
                              "--servers", "1", f"--inject=spread:{table}:job=0",
                              "--inject_seed=7", f"--iters={ITERATIONS}",
                              f"--compute_ms={COMPUTE_MS}"], tmp)
        figures = os.path.join(tmp, "figures.json")
        subprocess.run([report, os.path.join(tmp, "metrics.jsonl"), "-o",
                        os.path.join(tmp, "report.png"), f"--json={figures}"], check=True,
                       timeout=120)
        with open(figures) as f:
            stated = json.load(f)["trace_floors"]
    iterations = [r for r in records if r["type"] == "iter"]
    def ratios(seed):
        return [r["t_comp_ms"] / draw(seed, r["index"], r["clock"], cv[r["clock"]])
                for r in iterations]
    base = statistics.median(ratios(7))
    close = sum(abs(x / base - 1) <= 0.05 for x in ratios(7)) / len(iterations)
    other = sum(abs(x / statistics.median(ratios(8)) - 1) <= 0.05 for x in ratios(8))
    print(f"spread job 0, seed 7: {close:.0%} of iterations within 5% of the median compute over "
          f"the draw ({base:.2f} ms); with seed 8's draws {other / len(iterations):.0%}")
    if close < 0.9:
        sys.exit("the workers' compute does not follow the spread's draws")
    scaled = collections.defaultdict(dict)
    for r in iterations:
        scaled[r["clock"]][r["index"]] = base * draw(7, r["index"], r["clock"], cv[r["clock"]])
    bsp, sharing = floors_of(scaled)
    print(f"spread floors: BSP {bsp:.3f} ms, work-sharing {sharing:.3f} ms; pacer-report: "
          f"{stated['bsp_floor_ms']:.3f}, {stated['sharing_floor_ms']:.3f}")
    if (abs(stated["bsp_floor_ms"] - bsp) > 1e-6 * bsp or
            abs(stated["sharing_floor_ms"] - sharing) > 1e-6 * sharing):
        sys.exit("pacer-report's floors are not the spread's")


def main():
    if sys.argv[1] == "--s8-small":
        s8_small(*sys.argv[2:6])
        return spread(*sys.argv[2:6])
    mpirun, example, trace = sys.argv[1:4]
    if not os.path.exists(trace):
        print(f"skipped: no trace at {trace}")
        sys.exit(77)
    samples = trace_samples(trace)
    with tempfile.TemporaryDirectory() as tmp:
        records = metrics_of(
            [mpirun, "--oversubscribe", "-np", str(2 + WORKERS), example, "--servers", "1",
             f"--iterations={ITERATIONS}", f"--compute_ms={COMPUTE_MS}", "--min_accuracy=0",
             f"--inject=trace:{trace}:from={FROM}"], tmp)
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
