#!/usr/bin/env python3
"""32 ranks on this machine's cores, about 10^4 requests in flight, migrations and a mode switch
during the run: every value exact, no timeout, memory bounded (issue 30).

usage: check_load.py MPIEXEC LOAD_JOB [FLAGS...]

Runs LOAD_JOB (1 scheduler, 4 servers, 27 workers, each worker with 371 tensors of 4 B to 1 MB
in flight at once) under mpirun. Fails unless the job ends normally, every rank reports, every
worker's values are exact, the scheduler switched modes and moved ranges while the workers
trained, and every rank's peak RSS is within its bound, with M the model's size:
  worker:  128 MB + 4 M            (parameters, gradients, staging, and the runtime)
  server:  128 MB + 27 M           (in flight to it: every worker's push of its share and the
                                    response, on a share up to twice an even quarter; the
                                    ranges cut the hashed key space, and a 1 MB tensor is 3 %
                                    of the model)
FLAGS go to LOAD_JOB (make soak passes more iterations). --heartbeat_timeout_s is 60: with 32
ranks on 2 cores a server starved during the initial broadcast was once silent for 10.2 s.
"""
import re
import subprocess
import sys
import time

RANKS, SERVERS, WORKERS = 32, 4, 27
BASE_MB = 128


def main():
    mpiexec, job, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
    command = [mpiexec, "--oversubscribe", "-np", str(RANKS), job, "--servers", str(SERVERS),
               "--scheduling_credit=400", "--heartbeat_timeout_s=60"] + flags
    start = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.monotonic() - start
    out = result.stdout
    failures = []
    if result.returncode != 0:
        failures.append(f"the job failed ({result.returncode}):\n{result.stderr[-4000:]}")
    ranks = re.findall(r"load: rank (\d+) (\w+) (\d+) exact (\d) peak_rss_mb (\d+)", out)
    model = re.search(r"load: (\d+) workers x (\d+) tensors \(([\d.]+) MB\) x (\d+) iterations "
                      r"in ([\d.]+) s", out)
    if len(ranks) != RANKS or not model:
        failures.append(f"{len(ranks)} of {RANKS} ranks reported:\n{out[-4000:]}")
        sys.exit("\n".join(failures))
    model_mb = float(model.group(3))
    bounds = {"worker": BASE_MB + 4 * model_mb,
              "server": BASE_MB + 2 * 2 * WORKERS * model_mb / SERVERS, "scheduler": BASE_MB}
    peaks = {}
    for rank, role, index, exact, rss in ranks:
        peaks.setdefault(role, []).append(int(rss))
        if exact != "1":
            failures.append(f"{role} {index} (rank {rank}): values not exact")
        if int(rss) > bounds[role]:
            failures.append(f"{role} {index} (rank {rank}): peak RSS {rss} MB over its bound "
                            f"{bounds[role]:.0f} MB")
    switched = re.search(r"load: switched to (\S+) from clock (\d+)", out)
    moves = re.findall(r"load: moved range \d+ from server \d+ to \d+ \((\d+) bytes", out)
    if not switched or int(switched.group(2)) >= int(model.group(4)):
        failures.append("the mode switch did not happen while the workers trained")
    if not any(int(b) > 0 for b in moves):
        failures.append(f"no move carried keys' state ({len(moves)} moves)")
    print(f"{RANKS} ranks, {WORKERS} workers x {model.group(2)} tensors in flight "
          f"({WORKERS * int(model.group(2))} requests), model {model_mb} MB, "
          f"{model.group(4)} iterations in {model.group(5)} s ({elapsed:.0f} s with start-up); "
          f"switched to {switched.group(1) if switched else '-'} at clock "
          f"{switched.group(2) if switched else '-'}; {len(moves)} moves")
    for role, values in sorted(peaks.items()):
        print(f"peak RSS of the {len(values)} {role}s: {min(values)}-{max(values)} MB "
              f"(bound {bounds[role]:.0f} MB)")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
