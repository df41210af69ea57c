#!/usr/bin/env python3
"""The scenario harness against the analytic expectations of STRAGGLERS.md section 9.

Usage: check_scenarios.py MPIRUN PACER_SCENARIO

With 4 workers and 2 servers, emulated compute t0:
- S1 (worker 0 at 3x): BSP's median iteration is 3 t0 (+-15%); backup:1's is about t0 (<= 1.3 t0);
- S6 (no straggler): no baseline's median iteration is more than 5% above BSP's.
t0 is BSP's median iteration in S6, measured in the same run.
"""
import sys
import tempfile

from scenario_runs import run_summary

COMPUTE_MS, ITERS = 30, 40
BASELINES = ["asp", "ssp:2", "backup:1", "dynsgd", "consgd"]


def run(mpirun, harness, scenario, policy, tmp):
    summary = run_summary(mpirun, harness, scenario, policy, tmp,
                          [f"--iters={ITERS}", f"--compute-ms={COMPUTE_MS}"], timeout=300)
    print(f"{scenario} {policy:9s} p50 {summary['iter_p50_ms']:7.2f} ms  p99 "
          f"{summary['iter_p99_ms']:7.2f} ms  blocked {summary['blocked_frac']:.3f}")
    return summary


def main():
    mpirun, harness = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        t0 = run(mpirun, harness, "S6", "bsp", tmp)["iter_p50_ms"]
        s1_bsp = run(mpirun, harness, "S1", "bsp", tmp)["iter_p50_ms"] / t0
        s1_backup = run(mpirun, harness, "S1", "backup:1", tmp)["iter_p50_ms"] / t0
        print(f"S1: bsp {s1_bsp:.2f} t0, backup:1 {s1_backup:.2f} t0")
        if abs(s1_bsp - 3) > 0.45:
            failures.append(f"S1 bsp is {s1_bsp:.2f} t0, expected 3 +- 15%")
        if s1_backup > 1.3:
            failures.append(f"S1 backup:1 is {s1_backup:.2f} t0, expected about t0")
        for policy in BASELINES:
            ratio = run(mpirun, harness, "S6", policy, tmp)["iter_p50_ms"] / t0
            if ratio > 1.05:
                failures.append(f"S6 {policy} is {ratio:.3f}x BSP's iteration time")
    if failures:
        sys.exit("; ".join(failures))


if __name__ == "__main__":
    main()
