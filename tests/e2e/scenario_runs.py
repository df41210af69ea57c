"""Runs of the scenario harness (pacer-scenario) for the e2e checks: 7 ranks unless told."""
import json
import os
import subprocess
import sys


def run_harness(mpirun, harness, scenario, policy, args, timeout=600, np=7):
    """Runs `scenario` under `policy` with `args` on `np` ranks; returns its standard output.
    Exits, printing the job's output, if it fails."""
    command = [mpirun, "--oversubscribe", "-np", str(np), harness, f"--scenario={scenario}",
               f"--policy={policy}"] + args
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        print(result.stdout[-2000:], result.stderr[-3000:])
        sys.exit(f"{scenario} {policy} failed with {result.returncode}")
    return result.stdout


def run_summary(mpirun, harness, scenario, policy, tmp, args, timeout=600):
    """Runs `scenario` under `policy` on 2 servers with `args`; returns the JSON summary."""
    path = os.path.join(tmp, f"{scenario}-{policy}.json".replace(":", "_"))
    run_harness(mpirun, harness, scenario, policy, ["--servers", "2", f"--json={path}"] + args,
                timeout)
    with open(path) as f:
        return json.load(f)


def records(path):
    """Every record of a metrics log (--metrics), in order."""
    with open(path) as f:
        return [json.loads(line) for line in f]
