#!/usr/bin/env python3
"""A lost worker is the worst straggler: the job goes on without it (issue 30).

usage: check_lost_worker.py MPIEXEC LOST_WORKER_JOB

Runs pacer-lost-worker-job (1 scheduler, 1 server, 4 workers, --heartbeat_timeout_s=3) under
each rule that can spare a worker, freezes worker 2 with SIGSTOP once the metrics log shows it
training, and checks that every live rank logs that the job goes on without it, that the
scheduler's metrics log holds the decision, that the three live workers finish with the same
values, and that those values are what the rule gives when worker 2 stopped pushing after some
clock k, 0 < k < the iterations:

  asp, ssp:2 (each push applied as it comes):  -(7 T + 3 k)          (gradients 1, 2, 4 and 3)
  bsp with --on_worker_loss=continue, epsp:0:  -(2.5 k + 7/3 (T - k)) (the mean of who pushed)
  backup:1 (the first 3 of each clock):        a third of an integer, -3 T..-2 T

Under --sync=auto (with --on_worker_loss=continue) the mode may change, so instead of the value
it checks that STRN's profile, under way at the loss, completes over the workers left.

Then it resumes worker 2, which learns that it was excluded and exits naming why. Under bsp
without the option, a lost worker still ends the job (frozen_rank_ends_the_job_naming_it).

mpirun's own policy is to end the whole job once one rank exits non-zero or without
MPI_Finalize (the live ranks leave without it: it would wait for the frozen one); the test turns
both off, so that the resumed worker's exit does not end the live ones.
"""
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from check_liveness import logged, started_ranks  # noqa: E402

RANKS, VICTIM, ITERS = 6, 4, 150
LIVE_WORKERS = (0, 1, 3)
RULES = ("asp", "ssp:2", "bsp --on_worker_loss=continue", "epsp:0", "backup:1",
         "auto --on_worker_loss=continue")


def lost_after(rule, value):
    """The clocks worker 2 pushed, from the final value ("some" under backup, where the value does
    not tell); None where the value fits no k."""
    v = -value
    if rule in ("asp", "ssp:2"):
        k = (v - 7 * ITERS) / 3
    elif rule.startswith("bsp") or rule == "epsp:0":
        k = (v - 7 / 3 * ITERS) * 6
    else:  # backup: not which clock, only that every update was a mean of 3 of the gradients
        return "some" if 2 * ITERS <= v <= 3 * ITERS and abs(3 * v - round(3 * v)) < 0.01 \
            else None
    return round(k) if abs(k - round(k)) < 0.05 else None


def run_losing_worker(command, ranks, victim, index, training):
    """Runs `command` (an mpirun of `ranks` ranks), freezes rank `victim` (worker `index`) with
    SIGSTOP once training(output lines so far) holds, resumes it once a rank logged that the job
    goes on without it, and returns (the job's output, None), or (output, what went wrong)."""
    command = [command[0], "--mca", "orte_abort_on_non_zero_status", "0", "--mca",
               "orte_allowed_exit_without_sync", "1", *command[1:]]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    try:
        pids = started_ranks(proc.pid, ranks)
        if len(pids) < ranks:
            return "", f"only {len(pids)} of {ranks} ranks started"
        deadline = time.monotonic() + 120
        while not training(lines):
            if time.monotonic() > deadline or proc.poll() is not None:
                return "".join(lines), "the job did not train"
            time.sleep(0.05)
        os.kill(pids[victim], signal.SIGSTOP)
        deadline = time.monotonic() + 30
        while not any(f"goes on without worker {index}" in line for line in lines):
            if time.monotonic() > deadline or proc.poll() is not None:
                return "".join(lines), f"worker {index} was not excluded"
            time.sleep(0.05)
        time.sleep(0.5)
        os.kill(pids[victim], signal.SIGCONT)
        proc.wait(timeout=300)
        reader.join(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return "".join(lines), None


def run(mpiexec, job, rule, folder):
    metrics = folder / "metrics.jsonl"
    command = [mpiexec, "--oversubscribe", "-np", str(RANKS), job, "--servers", "1",
               f"--sync={rule.split()[0]}", *rule.split()[1:], f"--iterations={ITERS}",
               "--compute_ms=20", "--heartbeat_timeout_s=3", "--timeout_s=60",
               f"--metrics={metrics}"]
    # Worker 2 trains once the scheduler's log holds one of its iterations.
    out, problem = run_losing_worker(command, RANKS, VICTIM, 2,
                                     lambda lines: logged(metrics, '"index":2,'))
    if problem:
        return f"{problem}:\n{out[-4000:]}"
    problems = []
    values = dict(re.findall(r"lost-worker-job: worker (\d) values (\S+)\n", out))
    if sorted(values) != [str(w) for w in LIVE_WORKERS]:
        problems.append(f"the live workers {LIVE_WORKERS} did not all finish: {values}")
    elif len(set(values.values())) != 1:
        problems.append(f"the live workers ended with different values: {values}")
    elif rule.startswith("auto"):
        problems += profile_after_loss(metrics)
    else:
        k = lost_after(rule, float(values["0"]))
        if k is None or (k != "some" and not 0 < k < ITERS):
            problems.append(f"final value {values['0']} is not the rule's for worker 2 lost "
                            f"after any clock 0 < k < {ITERS}")
        print(f"{rule}: worker 2 lost after clock {k}; the live workers ended at {values['0']}")
    for rank in range(RANKS):
        if rank != VICTIM and not re.search(
                rf"\(rank {rank}\): the job goes on without worker 2 \(rank 4 on host \S+\) "
                r"stopped answering", out):
            problems.append(f"rank {rank} did not log that the job goes on without worker 2")
    if not re.search(r"worker 2 \(rank 4\): the job failed: the scheduler excluded this rank",
                     out):
        problems.append("worker 2, resumed, did not say that it was excluded")
    decisions = [json.loads(line) for line in metrics.read_text().splitlines()
                 if '"worker_loss"' in line] if metrics.exists() else []
    if [(d["action"], d["target_rank"], d["target_index"]) for d in decisions] != \
            [("exclude", VICTIM, 2)]:
        problems.append(f"the metrics log's worker-loss decisions: {decisions}")
    return "\n".join(problems + [out[-3000:]]) if problems else None


def profile_after_loss(metrics):
    """Under --sync=auto, STRN's profile (3 warm-up and 20 full-batch iterations) is still under
    way when worker 2 is lost: it must complete over the workers left, after the exclusion, as
    must the detector's boundaries (a boundary that waited for the lost worker stopped them all)."""
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    lost = [r["iter"] for r in records if r.get("kind") == "worker_loss"]
    profile = [r["iter"] for r in records if r.get("policy") == "strn" and r["why"] == "profile"]
    if len(profile) != 1 or not lost or profile[0] <= lost[0]:
        return [f"STRN's profile decisions at iterations {profile}, worker 2 lost at {lost}: "
                "expected one, after the loss"]
    print(f"auto: worker 2 lost at iteration {lost[0]}, STRN decided at {profile[0]}")
    return []


def check_each(rules, check):
    """Runs check(rule), which returns a problem or None, for every rule; exits naming each rule
    that has a problem, with it."""
    failures = [f"--sync={rule}: {problem}" for rule in rules for problem in [check(rule)]
                if problem]
    if failures:
        sys.exit("\n\n".join(failures))


def in_a_folder(mpiexec, job, rule):
    with tempfile.TemporaryDirectory() as tmp:
        return run(mpiexec, job, rule, pathlib.Path(tmp))


def main():
    mpiexec, job = sys.argv[1], sys.argv[2]
    check_each(RULES, lambda rule: in_a_folder(mpiexec, job, rule))


if __name__ == "__main__":
    main()
