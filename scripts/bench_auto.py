#!/usr/bin/env python3
"""make bench-auto: --policy=auto (every mitigation composed) on S7, against BSP, in one sitting.

S7 (STRAGGLERS.md section 9, --stage_s=T): worker 0 computes 3x slower in [0, T), worker 1's links
to the servers run at 1.25 MB/s in [0.75T, 1.75T), server 0 serves 3x slower in [2T, 3T).
pacer-scenario, 4 servers and 4 workers, ITERS iterations; S6 under bsp gives t0 (the median
iteration with no straggler) and the reference accuracy, S7 runs under bsp and auto. An iteration
is the time from one of a worker's iterations to its next, every worker's counted, and falls in
the window it starts in. Medians of TURNS turns, the runs taking turns. The targets: auto's median
iteration in every window is at most 1.3 t0, and its final accuracy (the same iterations as S6's)
is within 0.5 points of S6 bsp's. Writes build/auto-bench.json; exits 1 when a target is missed.

Environment: TURNS (default 3), ITERS (default 1300), STAGE_S (default 8: STRN profiles for
about 2.5 s of the first window, at the straggler's pace under bsp).
"""
import json
import os
import statistics
import sys
import tempfile

from scenario_job import run_scenario

BUILD = os.environ.get("BUILD", "build")
SCENARIO = os.path.join(BUILD, "bin", "pacer-scenario")
TURNS = int(os.environ.get("TURNS", "3"))
ITERS = int(os.environ.get("ITERS", "1300"))
STAGE_S = float(os.environ.get("STAGE_S", "8"))
WINDOWS = {"compute": (0, 1), "link": (0.75, 1.75), "server": (2, 3)}  # in units of STAGE_S
RUNS = [("S6", "bsp"), ("S7", "bsp"), ("S7", "auto")]


def iteration_times(records):
    """(start in seconds, milliseconds to the worker's next iteration) for every iteration."""
    by_worker = {}
    for r in records:
        if r.get("type") == "iter":
            by_worker.setdefault(r["index"], []).append(r)
    out = []
    for rows in by_worker.values():
        rows.sort(key=lambda r: r["iter"])
        out += [(a["t_start_s"], 1e3 * (b["t_start_s"] - a["t_start_s"]))
                for a, b in zip(rows, rows[1:])]
    return out


def run(scenario, policy, tmp):
    """One run: its accuracy, median iteration overall and in each of S7's windows (ms)."""
    summary, records = run_scenario(
        SCENARIO, 9, ["--servers", "4", f"--iters={ITERS}", f"--stage_s={STAGE_S}",
                      f"--scenario={scenario}", f"--policy={policy}"], tmp)
    result = {"accuracy": summary["accuracy"]}
    times = iteration_times(records)
    result["all"] = statistics.median(ms for _, ms in times)
    if scenario != "S7":
        return result
    for name, (a, b) in WINDOWS.items():
        inside = [ms for start, ms in times if a * STAGE_S <= start < b * STAGE_S]
        if not inside:
            sys.exit(f"{scenario} {policy}: no iteration in the {name} window: raise ITERS")
        result[name] = statistics.median(inside)
    return result


def main():
    turns = {}
    with tempfile.TemporaryDirectory() as tmp:
        for turn in range(TURNS):
            for scenario, policy in RUNS:
                turns.setdefault((scenario, policy), []).append(run(scenario, policy, tmp))
            print(f"# turn {turn + 1} of {TURNS} done", flush=True)
    medians = {key: {field: statistics.median(r[field] for r in rows) for field in rows[0]}
               for key, rows in turns.items()}
    t0 = medians[("S6", "bsp")]["all"]
    reference = medians[("S6", "bsp")]["accuracy"]
    print(f"t0 (S6 bsp's median iteration): {t0:.2f} ms; S6 bsp's accuracy {reference:.4f}")
    print("| run | " + " | ".join(f"{w} window (ms, x t0)" for w in WINDOWS) + " | accuracy |")
    print("|---|" + "---|" * (len(WINDOWS) + 1))
    for (scenario, policy), m in medians.items():
        cells = " | ".join(f"{m[w]:.1f}, {m[w] / t0:.2f}" if w in m else "-" for w in WINDOWS)
        print(f"| {scenario} {policy} | {cells} | {m['accuracy']:.4f} |")
    auto = medians[("S7", "auto")]
    missed = [f"the {w} window's median is {auto[w] / t0:.2f} t0 (limit 1.3)"
              for w in WINDOWS if auto[w] > 1.3 * t0]
    if auto["accuracy"] < reference - 0.005:
        missed.append(f"accuracy {auto['accuracy']:.4f}, more than 0.5 points below S6 bsp's "
                      f"{reference:.4f}")
    with open(os.path.join(BUILD, "auto-bench.json"), "w") as f:
        json.dump({"t0_ms": t0, "turns": TURNS, "iters": ITERS, "stage_s": STAGE_S,
                   "medians": {f"{s} {p}": m for (s, p), m in medians.items()},
                   "runs": {f"{s} {p}": rows for (s, p), rows in turns.items()},
                   "missed": missed}, f, indent=1)
    for line in missed:
        print("missed: S7 auto: " + line)
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
