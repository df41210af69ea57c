#!/usr/bin/python3
"""pacer-report: a picture of a run from its metrics log (--metrics).

Usage: pacer-report METRICS.jsonl [--against=REFERENCE.jsonl] [-o report.png] [--json=FIGURES.json]

States the run's result first: its iteration time (p50, p99), throughput and the time of its
iterations, and with --against the same of a reference run (the same job under another rule, such
as BSP, measured in the same sitting), how much the run saved, and both against the no-straggler
iteration (estimated from the reference: the other workers' compute plus the slowed worker's
wait). Where the runs reported test accuracy, it states both runs' time to the reference's best
accuracy and draws their accuracy over time (accuracy_curve.py). The top panel draws the iteration time of each iteration for both runs, with the nodes slowed
on purpose (the job's --inject) named; a panel draws each worker's tasks per iteration (where the
job ran tasks), so a policy's transfer from a straggler shows. Below: each worker's compute and
iteration times over the run with every detection marked where it happened (one line style per
kind; clears faint) and STRET's relays as bands, each worker's slow phases as measured beside those
predicted and those it ran shrunk (SMS), and a per-worker table, also printed. A run that replayed
a production trace (--inject=trace:...) states the trace's floors (trace_floors.py) and draws each
worker's scaled trace time behind its compute. --json writes the stated figures. Uses Debian's
python3-matplotlib.
"""
import argparse
import collections
import json
import re
import statistics
import sys

import matplotlib

import accuracy_curve
import trace_floors

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    """The worker iterations by worker index, the decisions, the job's record ({} if none) and the
    accuracy curve (accuracy_curve.py)."""
    iters, decisions, job, evaluations = collections.defaultdict(list), [], {}, []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{number}: not JSON ({e})")
            if record.get("type") == "iter":
                iters[record["index"]].append(record)
            elif record.get("type") == "decision":
                decisions.append(record)
            elif record.get("type") == "job":
                job = record
            elif record.get("type") == "accuracy":
                evaluations.append(record)
    if not iters:
        sys.exit(f"{path}: no iteration records")
    for records in iters.values():
        records.sort(key=lambda r: r["iter"])
    return iters, decisions, job, accuracy_curve.curve(evaluations, iters)


def iteration_times(records):
    """(start, milliseconds) of each iteration: the time to the next one's start."""
    return [(a["t_start_s"], (b["t_start_s"] - a["t_start_s"]) * 1e3)
            for a, b in zip(records, records[1:])]


def relay_spans(decisions, end_s):
    """(straggler, partner, start s, end s) of each relay STRET ordered."""
    spans, open_relays = [], {}
    for d in decisions:
        if d.get("policy") != "stret" or d["action"] != "order":
            continue
        straggler = d["target_index"]
        if straggler in open_relays:
            partner, begin = open_relays.pop(straggler)
            spans.append((straggler, partner, begin, d["t_s"]))
        if d["kind"] == "relay":
            open_relays[straggler] = (d["partner_index"], d["t_s"])
    spans += [(s, p, begin, end_s) for s, (p, begin) in open_relays.items()]
    return spans


# A worker's iteration is slow, as measured, when its compute per sample (with tasks, per sample of
# the micro-batches it computed) is this many times the median worker's; a phase is a run of at least PHASE_ITERATIONS of them (a
# lone stall is not).
SLOW_RATIO, PHASE_ITERATIONS = 1.5, 3


def spans(iterations, min_length=1):
    """The runs of consecutive iterations in `iterations` as (first, last), at least
    `min_length` long."""
    runs = []
    for i in sorted(iterations):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return [(a, b) for a, b in runs if b - a + 1 >= min_length]


def phases(iters, decisions):
    """By worker: its slow phases as measured, as the detector predicted them (a prediction at
    boundary i is for iteration i + 1, until the clear) and as it ran shrunk (a batch below its
    largest), each a list of (first, last) iterations."""
    # iteration -> worker -> compute ms per sample. With tasks, a worker computed `tasks`
    # micro-batches of its batch over the tasks per worker (the iteration's tasks over the workers:
    # each is computed once), whoever's they were.
    tasks_per_worker = collections.defaultdict(list)
    for records in iters.values():
        for r in records:
            tasks_per_worker[r["iter"]].append(r.get("tasks", 0))
    per_sample = collections.defaultdict(dict)
    for index, records in iters.items():
        for r in records:
            share = statistics.fmean(tasks_per_worker[r["iter"]])
            samples = r["batch"] * r["tasks"] / share if r.get("tasks", 0) else r["batch"]
            if samples > 0:
                per_sample[r["iter"]][index] = r["t_comp_ms"] / samples
    slow = collections.defaultdict(set)
    for i, workers in per_sample.items():
        if len(workers) < 2:
            continue
        median = statistics.median(workers.values())
        for index, value in workers.items():
            if value > SLOW_RATIO * median:
                slow[index].add(i)
    predicted = collections.defaultdict(set)
    last = max(r["iter"] for records in iters.values() for r in records)
    for index in iters:
        changes = sorted((d["iter"], d["action"]) for d in decisions
                         if d.get("kind") == "predicted" and d["target_index"] == index)
        for (i, action), following in zip(changes, changes[1:] + [(last, "clear")]):
            if action == "flag":
                predicted[index].update(range(i + 1, following[0] + 1))
    result = {}
    for index, records in sorted(iters.items()):
        full = max(r["batch"] for r in records)
        result[index] = {"slow": spans(slow[index], PHASE_ITERATIONS),
                         "predicted": spans(predicted[index]),
                         "shrunk": spans(r["iter"] for r in records if r["batch"] < full)}
    return result


def summary(iters, decisions):
    rows = []
    for index, records in sorted(iters.items()):
        times = [ms for _, ms in iteration_times(records)] or [0]
        flags = [d for d in decisions if d["target_index"] == index and d["action"] == "flag"
                 and d["kind"] != "server"]
        partners = sorted({p for s, p, _, _ in relay_spans(decisions, 0) if s == index})
        kinds = sorted({d["kind"] for d in flags})
        rows.append([f"worker {index} (rank {records[0]['rank']})", f"{len(records)}",
                     f"{statistics.median(times):.1f}",
                     f"{statistics.median(r['t_comp_ms'] for r in records):.1f}",
                     f"{statistics.median(r['t_wait_ms'] for r in records):.1f}",
                     f"{len(flags)}", ", ".join(kinds) or "-",
                     ", ".join(f"worker {p}" for p in partners) or "-"])
    return ["node", "iterations", "iteration ms (p50)", "compute ms (p50)", "wait ms (p50)",
            "flags", "kinds", "relayed through"], rows


INJECT = re.compile(r"^(worker|server|link):([^:@]+):(\w+)=([^@]+)(?:@(.*))?$")


def injected(job):
    """(worker indices slowed on purpose, a line per --inject spec in words)."""
    workers, lines = set(), []
    for spec in job.get("inject", []):
        m = INJECT.match(spec)
        if not m:
            lines.append(spec)
            continue
        target, nodes, effect, value, schedule = m.groups()
        if target == "worker" and nodes.isdigit():
            workers.add(int(nodes))
        lines.append(f"{target} {nodes}: {effect} {value} " +
                     (f"({schedule})" if schedule else "from the start"))
    return workers, lines


def figures(iters, iterations=None):
    """A run's stated figures. Iteration times are the times between a worker's consecutive
    starts, pooled over the workers (p50, p99); the mean gives the time of `iterations`
    iterations (the run's own count by default: for a shorter reference, extrapolated)."""
    times = [ms for records in iters.values() for _, ms in iteration_times(records)]
    count = 1 + max(r["iter"] for records in iters.values() for r in records)
    samples = sum(r["batch"] for records in iters.values() for r in records) / count
    mean_ms = statistics.fmean(times)
    return {"iterations": count, "iter_p50_ms": statistics.median(times),
            "iter_p99_ms": percentile(times, 0.99), "iter_mean_ms": mean_ms,
            "samples_per_s": samples / (mean_ms / 1e3),
            "time_s": mean_ms * (iterations or count) / 1e3}


def percentile(values, q):
    """The nearest-rank percentile, as the apps' summaries compute it."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def no_straggler_ms(iters, slowed):
    """The iteration time had nobody been slowed, from a run that kept its workers in step (BSP):
    the other workers' compute (median) plus the slowed workers' wait (median), which is the
    communication left once the last gradient is in."""
    others = [r["t_comp_ms"] for i, records in iters.items() if i not in slowed for r in records]
    waits = [r["t_wait_ms"] for i, records in iters.items() if i in slowed for r in records]
    if not others or not waits:
        return None
    return statistics.median(others) + statistics.median(waits)


def statement(name, run, reference_name=None, reference=None, t0_ms=None):
    """The result in words: the line at the top of the picture."""
    def ratio(ms):
        return f", {ms / t0_ms:.1f}x the no-straggler iteration" if t0_ms else ""
    text = f"{name}: iteration p50 {run['iter_p50_ms']:.0f} ms{ratio(run['iter_p50_ms'])}"
    if reference is None:
        return text + f"; {run['samples_per_s']:.0f} samples/s"
    saved = reference["time_s"] - run["time_s"]
    return (f"{text}; {reference_name}: {reference['iter_p50_ms']:.0f} ms"
            f"{ratio(reference['iter_p50_ms']).replace(' the no-straggler iteration', '')}\n"
            f"{run['iterations']} iterations in {run['time_s']:.1f} s, {reference_name} "
            f"{reference['time_s']:.1f} s (extrapolated): {saved:.1f} s ({saved / reference['time_s']:.0%})"
            f" saved; {run['samples_per_s']:.0f} samples/s against {reference['samples_per_s']:.0f}")


def per_iteration(iters):
    """(iteration, median over the workers of its time in ms) of each iteration."""
    by_iteration = collections.defaultdict(list)
    for records in iters.values():
        for a, b in zip(records, records[1:]):
            by_iteration[a["iter"]].append((b["t_start_s"] - a["t_start_s"]) * 1e3)
    return sorted((i, statistics.median(v)) for i, v in by_iteration.items())


def draw_story(axis, runs, slowed_lines, t0_ms):
    """Iteration time per iteration of each run (name, iters), the slowdowns named."""
    last = max(i for i, _ in per_iteration(runs[0][1]))
    for name, iters in runs:
        points = per_iteration(iters)
        line, = axis.plot([i for i, _ in points], [ms for _, ms in points], linewidth=1.2,
                          label=name)
        if points[-1][0] < last:  # a shorter reference: its mean over the rest of the run
            axis.hlines(statistics.fmean(ms for _, ms in points), points[-1][0], last,
                        color=line.get_color(), linestyle=":", label=f"{name}: mean, extrapolated")
    if t0_ms:
        axis.axhline(t0_ms, color="gray", linestyle="--", linewidth=1,
                     label=f"no-straggler iteration (estimated) {t0_ms:.0f} ms")
    if slowed_lines:
        axis.text(0.01, 0.97, "slowed on purpose: " + "; ".join(slowed_lines),
                  transform=axis.transAxes, va="top", fontsize=9,
                  bbox={"facecolor": "mistyrose", "alpha": 0.8, "edgecolor": "none"})
    axis.set_ylabel("iteration time (ms)")
    axis.set_xlabel("iteration")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=8, loc="upper right")


def draw_tasks(axis, iters, colors):
    """Each worker's tasks per iteration: a policy moving a straggler's tasks shows here."""
    for index, records in sorted(iters.items()):
        axis.plot([r["iter"] for r in records], [r.get("tasks", 0) for r in records],
                  linewidth=1, color=colors[index], label=f"worker {index}")
    axis.set_ylabel("tasks computed")
    axis.set_xlabel("iteration")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=8, loc="upper right", ncol=4)


def draw_workers(axes, iters, decisions, title):
    """The detailed panels: each worker's compute and iteration times with the detections and
    relays, the slow phases, and the table. Returns the workers' colors."""
    compute, iteration, phase_axis, table = axes
    header, rows = summary(iters, decisions)
    worker_phases = phases(iters, decisions)
    colors = {}
    for index, records in sorted(iters.items()):
        line, = compute.plot([r["t_start_s"] for r in records], [r["t_comp_ms"] for r in records],
                             marker=".", linewidth=1, label=f"worker {index}")
        colors[index] = line.get_color()
        points = iteration_times(records)
        iteration.plot([t for t, _ in points], [ms for _, ms in points], marker=".", linewidth=1,
                       color=colors[index], label=f"worker {index}")
    # Each kind of detection its own line style; flags solid-ish, clears faint.
    styles = {"compute": "-", "communication": "--", "compute+communication": "-.",
              "predicted": ":"}
    seen = set()
    for d in decisions:
        if d["kind"] in ("server", "migration") or d.get("policy") in ("stret", "sms", "strn"):
            continue
        label = f"{d['action']} worker {d['target_index']}: {d['kind']} (iteration {d['iter']})"
        key = (d["action"], d["target_index"], d["kind"])
        for axis in (compute, iteration):
            axis.axvline(d["t_s"], color=colors.get(d["target_index"], "black"),
                         linestyle=styles.get(d["kind"], "-"),
                         alpha=0.9 if d["action"] == "flag" else 0.3,
                         label=None if key in seen or axis is iteration else label)
        seen.add(key)
    # STRN's switches of the sync mode (--sync=auto).
    for d in decisions:
        if d.get("policy") == "strn" and d["action"] == "switch":
            iteration.axvline(d["t_s"], color="black", linestyle=(0, (1, 3)),
                              label=f"sync {d['from']} to {d['mode']} (iteration {d['iter']})")
    # STRET's relays: a band over the iteration times while a straggler's gradients went through
    # its partner.
    end_s = max((r["t_start_s"] for records in iters.values() for r in records), default=0)
    for straggler, partner, begin, end in relay_spans(decisions, end_s):
        iteration.axvspan(begin, end, color=colors.get(straggler, "gray"), alpha=0.12,
                          label=f"worker {straggler} relayed through worker {partner}")
    # The phases: per worker a row each for measured, predicted and shrunk, over the iterations.
    labels = []
    for index, kinds in worker_phases.items():
        for kind, alpha in (("slow", 0.9), ("predicted", 0.5), ("shrunk", 0.25)):
            row = len(labels)
            phase_axis.broken_barh([(a, b - a + 1) for a, b in kinds[kind]], (row - 0.4, 0.8),
                                   color=colors[index], alpha=alpha)
            labels.append(f"worker {index} {kind}")
    phase_axis.set_yticks(range(len(labels)), labels, fontsize=7)
    phase_axis.set_xlabel("iteration")
    phase_axis.grid(alpha=0.3)
    compute.set_ylabel("compute time (ms)")
    compute.set_title(f"{title}: per-worker times; vertical lines: detections")
    iteration.set_ylabel("iteration time (ms)")
    iteration.set_xlabel("time since start (s)")
    for axis in (compute, iteration):
        axis.grid(alpha=0.3)
    compute.legend(fontsize=8, loc="upper left", ncol=2)
    table.axis("off")
    drawn = table.table(cellText=rows, colLabels=header, loc="center")
    drawn.auto_set_font_size(False)
    drawn.set_fontsize(8)
    return colors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("metrics")
    parser.add_argument("--against", help="a reference run's metrics log, to compare with")
    parser.add_argument("-o", "--output", default="report.png")
    parser.add_argument("--json", help="write the stated figures here")
    args = parser.parse_args()
    iters, decisions, job, points = load(args.metrics)
    slowed, slowed_lines = injected(job)
    name = job.get("sync", args.metrics)
    run = figures(iters)
    runs, reference, reference_name, t0_ms = [(name, iters)], None, None, None
    curves, compared = [(name, points)] if points else [], None
    if args.against:
        reference_iters, _, reference_job, reference_points = load(args.against)
        reference_name = reference_job.get("sync", args.against)
        if reference_name == name:
            reference_name += " (reference)"
        reference = figures(reference_iters, run["iterations"])
        t0_ms = no_straggler_ms(reference_iters, slowed | injected(reference_job)[0])
        runs.append((reference_name, reference_iters))
        if reference_points:
            curves.append((reference_name, reference_points))
        compared = accuracy_curve.compare(points, reference_points)
    headline = statement(name, run, reference_name, reference, t0_ms)
    if compared:
        headline += "\n" + accuracy_curve.statement(name, reference_name, compared)

    panels = ["story"] + (["accuracy"] if curves else [])
    if any(r.get("tasks", 0) for records in iters.values() for r in records):
        panels.append("tasks")
    panels += ["compute", "iteration", "phases", "table"]
    heights = {"story": 3, "accuracy": 2, "tasks": 2, "compute": 3, "iteration": 3, "phases": 1.6, "table": 1.4}
    figure, axes = plt.subplots(len(panels), 1, figsize=(11, 1.2 * sum(heights[p] for p in panels)),
                                gridspec_kw={"height_ratios": [heights[p] for p in panels]})
    axis = dict(zip(panels, axes))
    colors = draw_workers([axis[p] for p in ("compute", "iteration", "phases", "table")], iters,
                          decisions, args.metrics)
    floors = trace_floors.floors(job, iters)
    if floors:
        for index, points in floors["scaled"].items():
            axis["compute"].plot([t for t, _ in points], [ms for _, ms in points], linewidth=4,
                                 alpha=0.25, color=colors[index], zorder=0)
        floors.pop("scaled")
    draw_story(axis["story"], runs, slowed_lines, t0_ms)
    if "accuracy" in axis:
        accuracy_curve.draw(axis["accuracy"], curves)
    if "tasks" in axis:
        draw_tasks(axis["tasks"], iters, colors)
    figure.suptitle(headline, fontsize=11, fontweight="bold")
    figure.tight_layout(rect=(0, 0, 1, 0.985 - 0.012 * headline.count("\n")))
    figure.savefig(args.output, dpi=100)

    print(headline)
    for line in slowed_lines:
        print(f"slowed on purpose: {line}")
    if floors:
        print(f"the trace's floors: BSP {floors['bsp_floor_ms']:.1f} ms, work-sharing "
              f"{floors['sharing_floor_ms']:.1f} ms (a worker's unslowed compute "
              f"{floors['base_ms']:.1f} ms); mean iteration {run['iter_mean_ms']:.1f} ms, "
              f"{run['iter_mean_ms'] / floors['bsp_floor_ms']:.2f}x BSP's floor")
    header, rows = summary(iters, decisions)
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]
    for row in [header] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))
    names = {"slow": "slow (measured)", "predicted": "slow (predicted)", "shrunk": "shrunk"}
    for index, kinds in phases(iters, decisions).items():
        for kind, phase_name in names.items():
            if kinds[kind]:
                print(f"worker {index} {phase_name}: " +
                      ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in kinds[kind]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"headline": headline, "slowed": sorted(slowed), "run": dict(run, name=name),
                       "reference": reference and dict(reference, name=reference_name),
                       "no_straggler_ms": t0_ms, "trace_floors": floors,
                       "time_to_accuracy": compared,
                       "saved_s": reference and reference["time_s"] - run["time_s"]}, f, indent=1)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
