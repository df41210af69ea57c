"""What a replayed production trace (--inject=trace:... or spread:...) allows a run:
pacer-report's floors.

The job record names the spec; the trace alone gives each worker's slowdown at each clock (its
time over the fastest trace worker's there, or over the trace's median with to=median, as the
library's FaultSpec computes it); a spread's slowdowns are the library's draws, repeated here from
the job's --inject_seed (the same hash, Box-Muller and lognormal). A worker's unslowed compute (the base) is read from the run: the
median of every iteration's compute over its slowdown. Then for each iteration that ran:
- BSP's floor: the slowest worker's scaled time, base x max_i m_i(t);
- the work-sharing floor: N / sum_i 1 / (base x m_i(t)), what perfect task transfer reaches.
Their means over the iterations that ran are the figures; the scaled times are drawn behind the
measured compute.
"""
import bisect
import collections
import csv
import math
import statistics


def parse_spec(spec):
    """{'kind', 'path', 'from', 'scale', 'median', 'workers', 'job'} of a trace:... or spread:...
    spec, or None."""
    kind = spec.split(":", 1)[0]
    if kind not in ("trace", "spread"):
        return None
    parts = spec[len(kind) + 1:].split(":")
    parsed = {"kind": kind, "path": parts[0], "from": 0, "scale": 1.0, "median": False,
              "workers": [], "job": 0}
    for part in parts[1:]:
        key, _, value = part.partition("=")
        if key == "from":
            parsed["from"] = int(value)
        elif key == "job":
            parsed["job"] = int(value)
        elif key == "scale":
            parsed["scale"] = float(value)
        elif key == "to":
            parsed["median"] = value == "median"
        elif key == "workers":
            parsed["workers"] = [int(w) for w in value.split("+")]
    return parsed


MASK = (1 << 64) - 1


def uniform(seed, node, iteration):
    """FaultSpec's Uniform: a hash of (seed, node, iteration) in [0, 1)."""
    z = (seed ^ (node * 0x9E3779B97F4A7C15) ^ (iteration * 0xD1B54A32D192ED03)) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    z ^= z >> 31
    return (z >> 11) / 9007199254740992.0


class Spread:
    """Row `job` of a table of coefficients of variation (JobVariation), and its draws."""

    def __init__(self, path, job):
        with open(path) as f:
            rows = [line.rstrip("\r\n").split(",") for line in f][1:]
        cells = rows[job][1:]
        while cells and not cells[-1]:
            cells.pop()
        self.cv = []
        for cell in cells:
            self.cv.append(float(cell) if cell else self.cv[-1])

    def slowdown(self, seed, worker, clock, start):
        cv = self.cv[min(max(start + clock, 0), len(self.cv) - 1)]
        sigma2 = math.log1p(cv * cv)
        u1 = 1 - uniform(seed, worker, clock)
        u2 = uniform(~seed & MASK, worker, clock)
        z = math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)
        return math.exp(math.sqrt(sigma2) * z - sigma2 / 2)


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
    """The floors of a run that replayed a trace, or None: {'base_ms', 'worker_base_ms':
    {worker: its own median}, 'bsp_floor_ms', 'sharing_floor_ms', 'scaled': {worker:
    [(t_start_s, ms)]}}."""
    specs = [parse_spec(s) for s in job.get("inject", [])]
    specs = [s for s in specs if s]
    if len(specs) != 1:
        return None
    spec = specs[0]
    workers = len(iters)
    if spec["kind"] == "trace":
        trace = Trace(spec["path"])

        def at(clock):
            return slowdowns(spec, trace, workers, clock)
    else:
        spread, seed = Spread(spec["path"], spec["job"]), job.get("inject_seed", 1) & MASK

        def at(clock):
            return [spread.slowdown(seed, w, clock, spec["from"]) for w in range(workers)]
    by_clock = {}
    ratios = {}
    for index, records in iters.items():
        for r in records:
            m = by_clock.setdefault(r["clock"], at(r["clock"]))
            ratios.setdefault(index, []).append(r["t_comp_ms"] / m[index])
    base = statistics.median(x for r in ratios.values() for x in r)
    bsp = [base * max(m) for m in by_clock.values()]
    sharing = [workers / sum(1 / (base * x) for x in m) for m in by_clock.values()]
    scaled = {index: [(r["t_start_s"], base * by_clock[r["clock"]][index]) for r in records]
              for index, records in iters.items()}
    return {"base_ms": base,
            "worker_base_ms": {index: statistics.median(r) for index, r in ratios.items()},
            "bsp_floor_ms": statistics.fmean(bsp),
            "sharing_floor_ms": statistics.fmean(sharing), "scaled": scaled}
