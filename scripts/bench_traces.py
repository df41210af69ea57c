#!/usr/bin/env python3
"""make bench-traces: every policy on real stragglers, measured in one sitting.

Scenarios: S8 (PAI's job 1 replayed, 10 workers), S8-job2 (job 2), and spread jobs K (each
worker's compute drawn per iteration with job K's recorded coefficient of variation,
--inject=spread:...:job=K). Policies: bsp, asp, ssp:2, backup:1, dynsgd, epsp:0, sms, stret. For
each pair, pacer-scenario (1 server, 10 workers, --compute-ms=20) reports its mean iteration and
its time to the harness's target accuracy; the table shows them against S6's t0 (BSP, no
straggler, the same sitting) and, for the replays, against the trace's two floors
(apps/report/trace_floors.py: BSP's, the slowest worker's scaled time; work-sharing's, N / sum
1/t_i; a worker's unslowed compute read from the first policy's run). Medians of TURNS turns, the
policies taking turns.

Environment: TURNS (default 3), SPREAD_JOBS (default 0-9, e.g. "0,3"), POLICIES (comma-separated,
default all), ITERS (default 200), TRACES (default ../shared/traces beside the repository).
Exits 77 where the traces are absent.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "apps", "report"))
import trace_floors  # noqa: E402

BUILD = os.environ.get("BUILD", "build")
SCENARIO = os.path.join(BUILD, "bin", "pacer-scenario")
TRACES = os.environ.get("TRACES", os.path.join(os.path.dirname(ROOT), "shared", "traces"))
TURNS = int(os.environ.get("TURNS", "3"))
ITERS = int(os.environ.get("ITERS", "200"))
WORKERS, COMPUTE_MS = 10, 20
POLICIES = os.environ.get(
    "POLICIES", "bsp,asp,ssp:2,backup:1,dynsgd,epsp:0,sms,stret").split(",")
SPREAD_JOBS = [int(k) for k in os.environ.get("SPREAD_JOBS", ",".join(map(str, range(10))))
               .split(",") if k]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMP_NUM_THREADS="1")


def run(scenario_args, policy, tmp):
    """One pacer-scenario run: (its summary, its metrics log's path)."""
    summary, metrics = os.path.join(tmp, "summary.json"), os.path.join(tmp, "metrics.jsonl")
    cmd = ["mpirun", "--oversubscribe", "-np", str(WORKERS + 2), SCENARIO, "--servers", "1",
           f"--policy={policy}", f"--iters={ITERS}", f"--compute_ms={COMPUTE_MS}",
           f"--traces={TRACES}", f"--json={summary}", f"--metrics={metrics}"] + scenario_args
    out = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=1200)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stdout[-2000:]}\n"
                 f"{out.stderr[-3000:]}")
    with open(summary) as f:
        return json.load(f), metrics


def floors_of(metrics):
    iters, job = {}, {}
    with open(metrics) as f:
        for line in f:
            r = json.loads(line)
            if r.get("type") == "iter":
                iters.setdefault(r["index"], []).append(r)
            elif r.get("type") == "job":
                job = r
    return trace_floors.floors(job, iters)


def main():
    if not os.path.isdir(os.path.join(TRACES, "pai-2020-minibatch")):
        print(f"SKIP: no traces at {TRACES}")
        return 77
    cv = os.path.join(TRACES, "pai-2020-minibatch", "coefficient_variation.csv")
    scenarios = [("job 1", ["--scenario=S8"]), ("job 2", ["--scenario=S8-job2"])] + [
        (f"spread {k}", [f"--inject=spread:{cv}:job={k}"]) for k in SPREAD_JOBS]
    results = {}  # (scenario, policy) -> [(mean ms, time to target s or None, floors)]
    t0_turns, floors = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for turn in range(TURNS):
            summary, _ = run(["--scenario=S6"], "bsp", tmp)
            t0_turns.append(summary["iter_mean_ms"])
            for name, args in scenarios:
                for policy in POLICIES:
                    summary, metrics = run(args, policy, tmp)
                    # The floors take a worker's unslowed compute from the scenario's first
                    # policy (BSP by default): under task transfer a worker's compute includes
                    # others' tasks.
                    if policy == POLICIES[0]:
                        floors[name] = floors_of(metrics)
                    results.setdefault((name, policy), []).append(
                        (summary["iter_mean_ms"], summary["time_to_target_s"], floors[name]))
            print(f"# turn {turn + 1} of {TURNS} done (S6's t0 {t0_turns[-1]:.1f} ms)", flush=True)
    t0 = statistics.median(t0_turns)
    print(f"# {WORKERS} workers, 1 server, --compute-ms={COMPUTE_MS}, {ITERS} iterations, "
          f"medians of {TURNS} turns; S6's t0 (BSP, no straggler) {t0:.1f} ms")
    print(f"# {'scenario':<10} {'policy':<9} {'mean ms':>8} {'/ t0':>6} {'/ BSP floor':>11} "
          f"{'/ sharing':>9} {'to target s':>11}")
    for (name, policy), turns in results.items():
        mean = statistics.median(m for m, _, _ in turns)
        reached = [t for _, t, _ in turns if t is not None]
        to_target = f"{statistics.median(reached):.1f}" if len(reached) == len(turns) else "-"
        known = [f for _, _, f in turns if f]
        bsp = statistics.median(f["bsp_floor_ms"] for f in known) if known else None
        sharing = statistics.median(f["sharing_floor_ms"] for f in known) if known else None
        print(f"  {name:<10} {policy:<9} {mean:>8.1f} {mean / t0:>6.2f} "
              f"{(f'{mean / bsp:.2f}' if bsp else '-'):>11} "
              f"{(f'{mean / sharing:.2f}' if sharing else '-'):>9} {to_target:>11}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
