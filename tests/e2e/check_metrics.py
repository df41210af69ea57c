#!/usr/bin/env python3
"""Runs the training example with an injected 3x compute straggler and checks the metrics log.

Usage: check_metrics.py MPIRUN TRAIN_EXAMPLE PACER_REPORT

Checks, from the JSON lines the scheduler wrote:
- every record (the job, worker iterations, server reports, decisions) has exactly the
  documented fields, of the right types, and the job's record comes first, naming the injection;
- every worker has one iteration record per iteration;
- the injected worker's compute time is 3x the others' (median, within 10%) while slowed;
- the detector flags it as a compute straggler within 2 iterations of the slowdown, and flags
  no other worker as a compute or communication straggler;
- pacer-report draws a PNG of the log and its table names the straggler's flags.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ITER_FIELDS = {"type": str, "rank": int, "role": str, "index": int, "iter": int, "clock": int,
               "t_comp_ms": float, "t_push_ms": float, "t_pull_ms": float, "t_wait_ms": float,
               "bytes_out": int, "bytes_in": int, "batch": int, "version": int,
               "partner_rank": int, "tasks": int, "tasks_moved": int, "task_share": int,
               "t_start_s": float}
JOB_FIELDS = {"type": str, "workers": int, "servers": int, "sync": str, "inject": list,
              "inject_seed": int}
SERVER_FIELDS = {"type": str, "rank": int, "index": int, "t_s": float, "service_us_per_mb": float,
                 "queue": int, "bytes_in": int, "bytes_out": int, "keys": int}
DECISION_FIELDS = {"type": str, "iter": int, "t_s": float, "policy": str, "target_rank": int,
                   "target_index": int, "kind": str, "action": str, "detail": str}
ITERATIONS, SLOW_FROM, SLOW_WORKER, COMPUTE_MS = 40, 10, 1, 8.0


def check_fields(record, fields):
    if set(record) != set(fields):
        sys.exit(f"record fields {sorted(record)} differ from {sorted(fields)}: {record}")
    for name, kind in fields.items():
        value = record[name]
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) if kind is float \
            else isinstance(value, kind) and not isinstance(value, bool)
        if not ok:
            sys.exit(f"field {name} of {record} is not a {kind.__name__}")


def main():
    mpirun, example, report = sys.argv[1], sys.argv[2], sys.argv[3]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "metrics.jsonl")
        # Slow during iterations >= SLOW_FROM (the last 990 of every 1000).
        command = [mpirun, "--oversubscribe", "-np", "6", example, "--servers", "2",
                   f"--iterations={ITERATIONS}", f"--compute_ms={COMPUTE_MS}",
                   f"--inject=worker:{SLOW_WORKER}:compute=3x@period=1000:{1000 - SLOW_FROM}",
                   f"--metrics={path}", "--min_accuracy=0"]
        run = subprocess.run(command, capture_output=True, text=True, timeout=300)
        print(run.stdout[-3000:], run.stderr[-3000:])
        if run.returncode != 0:
            sys.exit(f"the job failed with {run.returncode}")
        with open(path) as f:
            records = [json.loads(line) for line in f]
        picture = os.path.join(tmp, "report.png")
        drawn = subprocess.run([report, path, "-o", picture], capture_output=True, text=True,
                               timeout=120)
        print(drawn.stdout, drawn.stderr)
        with open(picture, "rb") as f:
            if drawn.returncode != 0 or f.read(8) != b"\x89PNG\r\n\x1a\n":
                sys.exit("pacer-report did not draw a PNG")
        table = [line for line in drawn.stdout.splitlines() if re.match(r"worker \d+ \(rank", line)]
        if len(table) != 3 or "compute" not in table[SLOW_WORKER]:
            sys.exit(f"the report's table does not show worker {SLOW_WORKER} flagged: {table}")
        phases = [line for line in drawn.stdout.splitlines() if "slow (measured)" in line]
        if [line.split(":")[0] for line in phases] != [f"worker {SLOW_WORKER} slow (measured)"]:
            sys.exit(f"the report's measured slow phases are {phases}: expected worker "
                     f"{SLOW_WORKER}'s alone")
    check_fields(records[0], JOB_FIELDS)
    inject = f"worker:{SLOW_WORKER}:compute=3x@period=1000:{1000 - SLOW_FROM}"
    if records[0] != {"type": "job", "workers": 3, "servers": 2, "sync": "bsp",
                      "inject": [inject], "inject_seed": 1}:
        sys.exit(f"the job's record is {records[0]}")
    iters = [r for r in records if r["type"] == "iter"]
    decisions = [r for r in records if r["type"] == "decision"]
    for r in iters:
        check_fields(r, ITER_FIELDS)
    for r in decisions:
        check_fields(r, DECISION_FIELDS)
    servers = [r for r in records if r["type"] == "server"]
    for r in servers:
        check_fields(r, SERVER_FIELDS)
    if not any(r["bytes_in"] > 0 and r["keys"] >= 1 for r in servers):
        sys.exit(f"no server reported serving anything: {servers[:4]}")
    if 1 + len(iters) + len(decisions) + len(servers) != len(records):
        sys.exit("records of an unknown type")
    for worker in range(3):
        seen = sorted(r["iter"] for r in iters if r["index"] == worker)
        if seen != list(range(ITERATIONS)):
            sys.exit(f"worker {worker} has iteration records {seen}")
        if any(r["rank"] != worker + 3 for r in iters if r["index"] == worker):
            sys.exit(f"worker {worker} is not rank {worker + 3} in its records")

    def compute(worker):
        return statistics.median(r["t_comp_ms"] for r in iters
                                 if r["index"] == worker and r["iter"] >= SLOW_FROM)
    others = statistics.median([compute(w) for w in range(3) if w != SLOW_WORKER])
    ratio = compute(SLOW_WORKER) / others
    print(f"compute: slowed worker {compute(SLOW_WORKER):.2f} ms, others {others:.2f} ms, "
          f"ratio {ratio:.3f}")
    if abs(ratio - 3) > 0.3:
        sys.exit(f"a 3x compute slowdown measured {ratio:.3f}x")

    flags = [d for d in decisions if d["action"] == "flag" and d["kind"] != "predicted"]
    hit = [d for d in flags if d["target_index"] == SLOW_WORKER and d["kind"] == "compute"]
    if not hit or hit[0]["iter"] > SLOW_FROM + 1 or hit[0]["iter"] < SLOW_FROM:
        sys.exit(f"the straggler was not flagged within 2 iterations of {SLOW_FROM}: {hit}")
    if hit[0]["target_rank"] != SLOW_WORKER + 3:
        sys.exit(f"decision names rank {hit[0]['target_rank']}, expected {SLOW_WORKER + 3}")
    wrong = [d for d in flags if d["target_index"] != SLOW_WORKER]
    if wrong:
        sys.exit(f"workers flagged without a slowdown: {wrong}")
    print(f"flagged worker {SLOW_WORKER} at iteration {hit[0]['iter']}; "
          f"{len(iters)} iteration records, {len(decisions)} decisions")


if __name__ == "__main__":
    main()
