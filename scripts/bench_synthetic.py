#!/usr/bin/env python3
"""Scaling of the synthetic apps (issue 9): pacer-resnet --synthetic --arch=resnet50 (25.6M
parameters) and pacer-bert --synthetic --arch=base (BERT-base, 110M), zero gradients and
--compute-ms of sleep per iteration, with 1 and with 4 workers, 2 servers each; the scaling
efficiency of each: images/s (tokens/s) with 4 workers over 4 x that with 1.

Usage: bench_synthetic.py BIN_DIR [--iters=N] [--compute-ms=MS] [--json=FILE]
"""
import json
import os
import subprocess
import sys
import tempfile


def flag(name, default):
    return next((a.split("=", 1)[1] for a in sys.argv[2:] if a.startswith(f"--{name}=")), default)


# (program, its --arch, what its throughput counts)
MODELS = [("pacer-resnet", "resnet50", "images"), ("pacer-bert", "base", "tokens")]


def run(bin_dir, model, workers, iters, compute_ms, tmp):
    program, arch, unit = model
    path = os.path.join(tmp, f"{program}-w{workers}.json")
    command = ["mpirun", "--oversubscribe", "-np", str(3 + workers),
               os.path.join(bin_dir, program), "--servers", "2", "--synthetic",
               f"--arch={arch}", f"--max-iters={iters}", f"--compute-ms={compute_ms}",
               "--progress=lines", f"--json={path}"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMP_NUM_THREADS="1")
    result = subprocess.run(command, capture_output=True, text=True, timeout=1200, env=env)
    if result.returncode != 0:
        print(result.stdout[-2000:], result.stderr[-3000:])
        sys.exit(f"{workers} workers failed with {result.returncode}")
    with open(path) as f:
        summary = json.load(f)
    print(f"{summary['model']} synthetic, {workers} workers: iteration p50 "
          f"{summary['iter_p50_ms']:.1f} ms, {summary['samples_per_s']:.1f} {unit}/s, "
          f"{summary['bytes'] / 1e9:.2f} GB moved", flush=True)
    return summary


def main():
    bin_dir = sys.argv[1]
    iters, compute_ms = int(flag("iters", "12")), float(flag("compute-ms", "100"))
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for model in MODELS:
            one = run(bin_dir, model, 1, iters, compute_ms, tmp)
            four = run(bin_dir, model, 4, iters, compute_ms, tmp)
            efficiency = four["samples_per_s"] / (4 * one["samples_per_s"])
            print(f"{one['model']}: scaling efficiency, 4 workers against 1: {efficiency:.3f}",
                  flush=True)
            results[one["model"]] = {"one": one, "four": four, "efficiency": efficiency}
    out = flag("json", None)
    if out:
        with open(out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
