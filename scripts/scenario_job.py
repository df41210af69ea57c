"""One run of pacer-scenario under mpirun, for the benches that judge policies on scenarios."""
import json
import os
import subprocess
import sys

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMP_NUM_THREADS="1")


def run_scenario(scenario_binary, ranks, args, tmp):
    """Runs pacer-scenario on `ranks` ranks with `args`; returns its JSON summary and its metrics
    log's records. Exits, naming the command and printing the job's output, if it fails."""
    summary, metrics = os.path.join(tmp, "summary.json"), os.path.join(tmp, "metrics.jsonl")
    cmd = ["mpirun", "--oversubscribe", "-np", str(ranks), scenario_binary] + args + [
        f"--json={summary}", f"--metrics={metrics}"]
    out = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=1200)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stdout[-2000:]}\n"
                 f"{out.stderr[-3000:]}")
    with open(summary) as f:
        result = json.load(f)
    with open(metrics) as f:
        return result, [json.loads(line) for line in f]
