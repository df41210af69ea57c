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
default all), ITERS (default 300), TRACES (default ../shared/traces beside the repository).
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
ITERS = int(os.environ.get("ITERS", "300"))
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


def compute_of(metrics):
    """The median compute (ms) of every worker's iterations in a metrics log."""
    with open(metrics) as f:
        return statistics.median(r["t_comp_ms"] for r in map(json.loads, f)
                                 if r.get("type") == "iter")


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
    t0_turns, s6_compute, floors = [], [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for turn in range(TURNS):
            summary, metrics = run(["--scenario=S6"], "bsp", tmp)
            t0_turns.append(summary["iter_mean_ms"])
            s6_compute.append(compute_of(metrics))
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
    rows = []
    for (name, policy), turns in results.items():
        mean = statistics.median(m for m, _, _ in turns)
        reached = [t for _, t, _ in turns if t is not None]
        known = [f for _, _, f in turns if f]
        row = {"scenario": name, "policy": policy, "mean_ms": mean, "t0_ratio": mean / t0,
               "to_target_s": statistics.median(reached) if len(reached) == len(turns) else None,
               "bsp_floor_ms": statistics.median(f["bsp_floor_ms"] for f in known)
               if known else None,
               "sharing_floor_ms": statistics.median(f["sharing_floor_ms"] for f in known)
               if known else None}
        rows.append(row)
        bsp, sharing, to_target = row["bsp_floor_ms"], row["sharing_floor_ms"], row["to_target_s"]
        print(f"  {name:<10} {policy:<9} {mean:>8.1f} {mean / t0:>6.2f} "
              f"{(f'{mean / bsp:.2f}' if bsp else '-'):>11} "
              f"{(f'{mean / sharing:.2f}' if sharing else '-'):>9} "
              f"{(f'{to_target:.1f}' if to_target is not None else '-'):>11}")
    verdicts = judge(rows, t0, statistics.median(s6_compute), floors)
    with open(os.path.join(BUILD, "traces-bench.json"), "w") as f:
        json.dump({"t0_ms": t0, "s6_compute_ms": statistics.median(s6_compute), "turns": TURNS, "iters": ITERS, "rows": rows,
                   "verdicts": verdicts}, f, indent=1)
    for v in verdicts:
        print(f"{'ok  ' if v['ok'] else 'MISS'} {v['what']}")
    return 0 if all(v["ok"] for v in verdicts) else 1


def judge(rows, t0, s6_compute, floors):
    """The issue's targets on the replays. Fidelity under bsp: each worker's median compute over
    its trace slowdown against S6's median compute (what this machine gives for --compute-ms
    unslowed; the difference from --compute-ms is late wake-ups of 12 ranks on 2 cores, in S6
    too). And the best policy (the least time to target accuracy; the least mean iteration where
    none reached it) against the work-sharing floor plus S6's communication overhead (t0 less the
    emulated compute)."""
    verdicts = []
    overhead = t0 - COMPUTE_MS
    for name in ("job 1", "job 2"):
        mine = {r["policy"]: r for r in rows if r["scenario"] == name}
        if "bsp" in mine and name in floors:
            bases = floors[name]["worker_base_ms"].values()
            worst = max(abs(b / s6_compute - 1) for b in bases)
            print(f"# {name}: each worker's compute over its slowdown, ms: "
                  + " ".join(f"{b:.2f}" for b in bases) + f"; S6's {s6_compute:.2f}")
            verdicts.append({"what": f"{name}: under bsp each worker's compute over its trace "
                             f"slowdown is within {worst:.1%} of S6's (target 5%)",
                             "ok": worst <= 0.05})
            ratio = mine["bsp"]["mean_ms"] / mine["bsp"]["bsp_floor_ms"]
            verdicts.append({"what": f"{name}: bsp's mean iteration is {ratio:.2f} x BSP's "
                             "floor (target >= 0.95)", "ok": ratio >= 0.95})
        reached = [r for r in mine.values() if r["to_target_s"] is not None]
        best = (min(reached, key=lambda r: r["to_target_s"]) if reached
                else min(mine.values(), key=lambda r: r["mean_ms"]))
        limit = 1.15 * (best["sharing_floor_ms"] + overhead)
        gain = ""
        if "bsp" in mine and best["to_target_s"] and mine["bsp"]["to_target_s"]:
            gain = (f"; time to target {best['to_target_s']:.1f} s against bsp's "
                    f"{mine['bsp']['to_target_s']:.1f} s")
        verdicts.append({"what": f"{name}: the best policy, {best['policy']}, "
                         f"{best['mean_ms']:.1f} ms <= 1.15 x (work-sharing floor "
                         f"{best['sharing_floor_ms']:.1f} + S6's overhead {overhead:.1f}) = "
                         f"{limit:.1f} ms{gain}", "ok": best["mean_ms"] <= limit})
    return verdicts


if __name__ == "__main__":
    sys.exit(main())
