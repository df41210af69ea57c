"""Runs of the scenario harness (pacer-scenario) for the e2e checks: 7 ranks, 2 servers."""
import json
import os
import subprocess
import sys


def run_summary(mpirun, harness, scenario, policy, tmp, args, timeout=600):
    """Runs `scenario` under `policy` with `args`; returns the harness's JSON summary. Exits,
    printing the job's output, if the job fails."""
    path = os.path.join(tmp, f"{scenario}-{policy}.json".replace(":", "_"))
    command = [mpirun, "--oversubscribe", "-np", "7", harness, "--servers", "2",
               f"--scenario={scenario}", f"--policy={policy}", f"--json={path}"] + args
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        print(result.stdout[-2000:], result.stderr[-3000:])
        sys.exit(f"{scenario} {policy} failed with {result.returncode}")
    with open(path) as f:
        return json.load(f)
