#!/usr/bin/env python3
"""Trains the example on Fashion-MNIST while the scheduler moves key ranges (--migrate_every).

Usage: check_migrations.py MPIRUN TRAIN_EXAMPLE

For BSP and SSP(2), 3 servers and 3 workers: the job reaches the example's accuracy bar (it
exits non-zero below it), and the metrics log holds one decision per move, epochs 1, 2, 3, ...
in order, each from a server to another, most of them carrying state (values and optimizer
state).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

ITERATIONS, EVERY = 90, 3


def main():
    mpirun, example = sys.argv[1], sys.argv[2]
    for mode in ("bsp", "ssp:2"):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "metrics.jsonl")
            command = [mpirun, "--oversubscribe", "-np", "7", example, "--servers", "3",
                       f"--sync={mode}", f"--iterations={ITERATIONS}", "--partition_bytes=4096",
                       f"--migrate_every={EVERY}", f"--metrics={path}"]
            run = subprocess.run(command, capture_output=True, text=True, timeout=300)
            print(run.stdout[-2000:], run.stderr[-2000:])
            if run.returncode != 0:
                sys.exit(f"{mode}: the job failed with {run.returncode}")
            with open(path) as f:
                records = [json.loads(line) for line in f]
        moves = [r for r in records if r["type"] == "decision" and r["kind"] == "migration"]
        if len(moves) < ITERATIONS // EVERY // 2:
            sys.exit(f"{mode}: {len(moves)} moves in {ITERATIONS} iterations, every {EVERY}")
        if [m["epoch"] for m in moves] != list(range(1, len(moves) + 1)):
            sys.exit(f"{mode}: epochs out of order: {[m['epoch'] for m in moves]}")
        for m in moves:
            if m["from"] == m["to"] or not 0 <= m["to"] < 3 or m["bytes"] < 0:
                sys.exit(f"{mode}: a move to nowhere: {m}")
        # The scheduler picks a random key among as many as the servers reported; a range it picks
        # may hold none of the model's keys, but most hold some.
        carrying = sum(m["bytes"] > 0 for m in moves)
        if carrying < len(moves) / 2:
            sys.exit(f"{mode}: only {carrying} of {len(moves)} moves carried state")
        iters = [r["t_comp_ms"] + r["t_push_ms"] + r["t_pull_ms"] for r in records
                 if r["type"] == "iter"]
        print(f"{mode}: {len(moves)} moves, median {statistics.median(m['bytes'] for m in moves)}"
              f" bytes, pause median {statistics.median(m['pause_ms'] for m in moves):.2f} ms,"
              f" iteration median {statistics.median(iters):.2f} ms")


if __name__ == "__main__":
    main()
