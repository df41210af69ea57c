#!/usr/bin/env python3
"""Runs every libFuzzer target of a PACER_FUZZ build for a time box each (make fuzz).

usage: run_fuzzers.py BIN_DIR SEED_DIR SECONDS [--runs=N] [--json=PATH]

Each target pacer-fuzz-NAME starts from the committed seeds in SEED_DIR/NAME and keeps what it
finds in BIN_DIR/../corpus/NAME. A crash, a sanitizer report, a leak, an allocation over
-malloc_limit_mb (a length field believed) or a timeout fails the run; the reproducer is left in
BIN_DIR/.. as libFuzzer names it. Prints the executions per target. --runs=N: N executions per
target instead of the time box (the record of docs/RELIABILITY.md: make fuzz-record).
"""
import json
import pathlib
import re
import subprocess
import sys
import time

MALLOC_LIMIT_MB = 512  # far above any decoder's need: a claimed 2^40 bytes would cross it


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    options = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--"))
    out, runs = options.get("json"), options.get("runs")
    bin_dir, seed_dir = pathlib.Path(args[0]).resolve(), pathlib.Path(args[1]).resolve()
    seconds = int(args[2])
    build = bin_dir.parent
    results, failures = {}, []
    for binary in sorted(bin_dir.glob("pacer-fuzz-*")):
        name = binary.name[len("pacer-fuzz-"):]
        if name == "seeds":
            continue
        corpus = build / "corpus" / name
        corpus.mkdir(parents=True, exist_ok=True)
        budget = f"-runs={runs}" if runs else f"-max_total_time={seconds}"
        command = [str(binary), budget, f"-malloc_limit_mb={MALLOC_LIMIT_MB}",
                   "-rss_limit_mb=2048", "-timeout=10", "-print_final_stats=1",
                   f"-artifact_prefix={build}/{name}-", str(corpus), str(seed_dir / name)]
        start = time.monotonic()
        result = subprocess.run(command, capture_output=True, text=True, cwd=build)
        elapsed = time.monotonic() - start
        executed = re.search(r"stat::number_of_executed_units:\s*(\d+)", result.stderr)
        executions = int(executed.group(1)) if executed else 0
        results[name] = {"executions": executions, "seconds": round(elapsed, 1),
                         "exit": result.returncode}
        print(f"{name}: {executions} executions in {elapsed:.0f} s, exit {result.returncode}",
              flush=True)
        if result.returncode != 0:
            failures.append(f"{name} failed:\n{result.stderr[-4000:]}")
    if out:
        pathlib.Path(out).write_text(json.dumps(results, indent=1) + "\n")
    if not results:
        failures.append(f"no pacer-fuzz-* target in {bin_dir}")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
