"""What a replayed production trace (--inject=trace:...) allows a run: pacer-report's floors.

The job record names the trace spec; the trace alone gives each worker's slowdown at each clock
(its time over the fastest trace worker's there, or over the trace's median with to=median, as the
library's FaultSpec computes it). A worker's unslowed compute (the base) is read from the run: the
median of every iteration's compute over its slowdown. Then for each iteration that ran:
- BSP's floor: the slowest worker's scaled time, base x max_i m_i(t);
- the work-sharing floor: N / sum_i 1 / (base x m_i(t)), what perfect task transfer reaches.
Their means over the iterations that ran are the figures; the scaled times are drawn behind the
measured compute.
"""
import bisect
import collections
import csv
import statistics


def parse_spec(spec):
    """{'path', 'from', 'scale', 'median', 'workers'} of a trace:... spec, or None."""
    if not spec.startswith("trace:"):
        return None
    parts = spec[len("trace:"):].split(":")
    parsed = {"path": parts[0], "from": 0, "scale": 1.0, "median": False, "workers": []}
    for part in parts[1:]:
        key, _, value = part.partition("=")
        if key == "from":
            parsed["from"] = int(value)
        elif key == "scale":
            parsed["scale"] = float(value)
        elif key == "to":
            parsed["median"] = value == "median"
        elif key == "workers":
            parsed["workers"] = [int(w) for w in value.split("+")]
    return parsed


class Trace:
    """A trace's samples by worker: each worker keeps its last sample between two."""

    def __init__(self, path):
        samples = collections.defaultdict(list)
        with open(path) as f:
            for row in csv.DictReader(f):
                samples[int(row["worker"])].append((int(row["time"]),
                                                    float(row["batch_time_norm"])))
        self.samples = [sorted(samples[w]) for w in range(max(samples) + 1)]
        self.median = statistics.median(t for s in self.samples for _, t in s)

    def time_at(self, worker, iteration):
        s = self.samples[worker]
        i = bisect.bisect_right([t for t, _ in s], iteration)
        return s[max(i - 1, 0)][1]


def slowdowns(spec, trace, workers, clock):
    """Each worker's slowdown at `clock`, as FaultSpec::MultiplierAt gives it."""
    at = spec["from"] + clock
    reference = trace.median if spec["median"] else min(
        trace.time_at(w, at) for w in range(len(trace.samples)))
    listed = spec["workers"] or list(range(len(trace.samples)))
    return [spec["scale"] * trace.time_at(listed[i % len(listed)], at) / reference
            for i in range(workers)]


def floors(job, iters):
    """The floors of a run that replayed a trace, or None: {'base_ms', 'bsp_floor_ms',
    'sharing_floor_ms', 'scaled': {worker: [(t_start_s, ms)]}}."""
    specs = [parse_spec(s) for s in job.get("inject", [])]
    specs = [s for s in specs if s]
    if len(specs) != 1:
        return None
    spec = specs[0]
    trace = Trace(spec["path"])
    workers = len(iters)
    by_clock = {}
    ratios = []
    for index, records in iters.items():
        for r in records:
            m = by_clock.setdefault(r["clock"], slowdowns(spec, trace, workers, r["clock"]))
            ratios.append(r["t_comp_ms"] / m[index])
    base = statistics.median(ratios)
    bsp = [base * max(m) for m in by_clock.values()]
    sharing = [workers / sum(1 / (base * x) for x in m) for m in by_clock.values()]
    scaled = {index: [(r["t_start_s"], base * by_clock[r["clock"]][index]) for r in records]
              for index, records in iters.items()}
    return {"base_ms": base, "bsp_floor_ms": statistics.fmean(bsp),
            "sharing_floor_ms": statistics.fmean(sharing), "scaled": scaled}
