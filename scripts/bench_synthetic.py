#!/usr/bin/env python3
"""Scaling of the synthetic apps (issue 9): pacer-resnet --synthetic --arch=resnet50 (25.6M
parameters, zero gradients, --compute-ms of sleep per iteration) with 1 and with 4 workers, 2
servers each, and the scaling efficiency: images/s with 4 workers over 4 x images/s with 1.

Usage: bench_synthetic.py BIN_DIR [--iters=N] [--compute-ms=MS] [--json=FILE]
"""
import json
import os
import subprocess
import sys
import tempfile


def flag(name, default):
    return next((a.split("=", 1)[1] for a in sys.argv[2:] if a.startswith(f"--{name}=")), default)


def run(bin_dir, workers, iters, compute_ms, tmp):
    path = os.path.join(tmp, f"w{workers}.json")
    command = ["mpirun", "--oversubscribe", "-np", str(3 + workers),
               os.path.join(bin_dir, "pacer-resnet"), "--servers", "2", "--synthetic",
               "--arch=resnet50", f"--max-iters={iters}", f"--compute-ms={compute_ms}",
               "--progress=lines", f"--json={path}"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMP_NUM_THREADS="1")
    result = subprocess.run(command, capture_output=True, text=True, timeout=1200, env=env)
    if result.returncode != 0:
        print(result.stdout[-2000:], result.stderr[-3000:])
        sys.exit(f"{workers} workers failed with {result.returncode}")
    with open(path) as f:
        summary = json.load(f)
    print(f"resnet50 synthetic, {workers} workers: iteration p50 {summary['iter_p50_ms']:.1f} ms, "
          f"{summary['samples_per_s']:.1f} images/s, {summary['bytes'] / 1e9:.2f} GB moved",
          flush=True)
    return summary


def main():
    bin_dir = sys.argv[1]
    iters, compute_ms = int(flag("iters", "12")), float(flag("compute-ms", "100"))
    with tempfile.TemporaryDirectory() as tmp:
        one = run(bin_dir, 1, iters, compute_ms, tmp)
        four = run(bin_dir, 4, iters, compute_ms, tmp)
    efficiency = four["samples_per_s"] / (4 * one["samples_per_s"])
    print(f"scaling efficiency, 4 workers against 1: {efficiency:.3f}")
    out = flag("json", None)
    if out:
        with open(out, "w") as f:
            json.dump({"one": one, "four": four, "efficiency": efficiency}, f, indent=1)


if __name__ == "__main__":
    main()
