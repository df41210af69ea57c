#!/usr/bin/env python3
"""pacer-report on a recorded pair of runs states figures that the metrics bear out.

Usage: check_report.py PACER_REPORT RUN.jsonl REFERENCE.jsonl

The pair (tests/data/report/): pacer-resnet, 60 iterations, worker 0 slowed 3x (--scenario=S1),
under EPSP(0) with 4 tasks per worker and under BSP. From the logs alone this computes what the
report must state: the slowed worker, each run's iteration time (p50 and p99 of the times between a
worker's consecutive starts, over every worker), samples per second (samples per iteration over
the mean iteration time), the time of the run's iterations (the reference's extrapolated to the
run's count), the time saved, and the no-straggler iteration (the other workers' median compute
plus the slowed worker's median wait, in the reference); then checks the report's --json, its
headline's rounded figures, its PNG, and that it measures worker 0 slow over the whole run (compute
per sample of the micro-batches it computed, as the job ran tasks).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile


def records(path):
    with open(path) as f:
        lines = [json.loads(line) for line in f]
    job = next(r for r in lines if r["type"] == "job")
    workers = {}
    for r in lines:
        if r["type"] == "iter":
            workers.setdefault(r["index"], []).append(r)
    return job, {w: sorted(rs, key=lambda r: r["iter"]) for w, rs in workers.items()}


def expected(workers, count=None):
    times = []
    for rs in workers.values():
        times += [(b["t_start_s"] - a["t_start_s"]) * 1e3 for a, b in zip(rs, rs[1:])]
    times.sort()
    iterations = max(r["iter"] for rs in workers.values() for r in rs) + 1
    mean = sum(times) / len(times)
    samples = sum(r["batch"] for rs in workers.values() for r in rs) / iterations
    return {"iterations": iterations, "iter_p50_ms": statistics.median(times),
            "iter_p99_ms": times[min(len(times) - 1, int(0.99 * len(times)))],
            "iter_mean_ms": mean, "samples_per_s": samples * 1e3 / mean,
            "time_s": mean * (count or iterations) / 1e3}


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


def main():
    report, run_path, reference_path = sys.argv[1:4]
    run_job, run = records(run_path)
    reference_job, reference = records(reference_path)
    if run_job["inject"] != ["worker:0:compute=3x"] or reference_job["inject"] != run_job["inject"]:
        sys.exit(f"the pair is not the recorded S1 pair: {run_job}, {reference_job}")
    want_run = expected(run)
    want_reference = expected(reference, want_run["iterations"])
    others = [r["t_comp_ms"] for w, rs in reference.items() if w != 0 for r in rs]
    want_t0 = statistics.median(others) + statistics.median(r["t_wait_ms"] for r in reference[0])
    with tempfile.TemporaryDirectory() as tmp:
        picture, figures = os.path.join(tmp, "report.png"), os.path.join(tmp, "figures.json")
        drawn = subprocess.run([report, run_path, f"--against={reference_path}", "-o", picture,
                                f"--json={figures}"], capture_output=True, text=True, timeout=120)
        print(drawn.stdout, drawn.stderr)
        if drawn.returncode != 0:
            sys.exit(f"pacer-report failed with {drawn.returncode}")
        with open(picture, "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                sys.exit("pacer-report did not draw a PNG")
        with open(figures) as f:
            stated = json.load(f)
    if stated["slowed"] != [0]:
        sys.exit(f"the report names workers {stated['slowed']} as slowed, not worker 0")
    for name, want, got in (("run", want_run, stated["run"]),
                            ("reference", want_reference, stated["reference"])):
        for field, value in want.items():
            if not close(got[field], value):
                sys.exit(f"{name}'s {field}: the report states {got[field]}, the log gives {value}")
    saved = want_reference["time_s"] - want_run["time_s"]
    if not close(stated["saved_s"], saved) or not close(stated["no_straggler_ms"], want_t0):
        sys.exit(f"saved {stated['saved_s']} s and no-straggler {stated['no_straggler_ms']} ms "
                 f"stated; the logs give {saved} s and {want_t0} ms")
    headline = stated["headline"]
    words = [f"epsp:0: iteration p50 {want_run['iter_p50_ms']:.0f} ms",
             f"{want_run['iter_p50_ms'] / want_t0:.1f}x the no-straggler iteration",
             f"bsp: {want_reference['iter_p50_ms']:.0f} ms",
             f"{saved:.1f} s ({saved / want_reference['time_s']:.0%}) saved"]
    missing = [w for w in words if w not in headline]
    if missing or not drawn.stdout.startswith(headline):
        sys.exit(f"the headline {headline!r} lacks {missing} or was not printed first")
    if "slowed on purpose: worker 0: compute 3x from the start" not in drawn.stdout:
        sys.exit("the report does not say worker 0 was slowed 3x from the start")
    if f"worker 0 slow (measured): 0-{want_run['iterations'] - 1}" not in drawn.stdout:
        sys.exit("the report does not measure worker 0 slow (per sample of its tasks) over the whole run")
    print(f"the report's figures match the logs: {headline}")


if __name__ == "__main__":
    main()
