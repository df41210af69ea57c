#!/usr/bin/env python3
"""A rank that stops answering ends a bsp job on every other rank, each naming it (issue 30).

usage: check_liveness.py MPIEXEC SCENARIO_APP

Runs pacer-scenario (1 scheduler, 1 server, 4 workers, bsp, an endless run) with
--heartbeat_timeout_s=3, freezes one rank with SIGSTOP once the job trains, and checks that
mpirun ends non-zero, that every live rank logged that the job failed naming the frozen rank
(its role, index, rank and host), and that it took about the heartbeat timeout: past it, and far
short of --timeout_s (60), which a rank waiting on the frozen one would have waited out. Frozen
in turn: a worker, the server, the scheduler. The times are printed; docs/RELIABILITY.md
records them.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HEARTBEAT_S = 3
TIMEOUT_S = 60
RANKS = 6


def ranks_of(mpirun_pid):
    """The job's processes, by their MPI rank (from OMPI_COMM_WORLD_RANK)."""
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if parent != mpirun_pid:
            continue
        for entry in env:
            if entry.startswith(b"OMPI_COMM_WORLD_RANK="):
                found[int(entry.split(b"=")[1])] = int(pid)
    return found


def started_ranks(mpirun_pid, count, seconds=30):
    """The job's processes by rank once all `count` have started, or the fewer that did."""
    pids = {}
    deadline = time.monotonic() + seconds
    while len(pids) < count and time.monotonic() < deadline:
        time.sleep(0.1)
        pids = ranks_of(mpirun_pid)
    return pids


def logged(metrics, text):
    """Whether the scheduler's metrics log (written in blocks) holds `text` yet."""
    return os.path.exists(metrics) and text in open(metrics).read()


def trains(metrics, seconds=30):
    """Whether the metrics log shows an iteration within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if logged(metrics, '"type":"iter"'):
            return True
        time.sleep(0.05)
    return False


def freeze(mpiexec, app, victim, description, metrics):
    command = [mpiexec, "--oversubscribe", "-np", str(RANKS), app, "--servers", "1",
               "--scenario=S6", "--policy=bsp", "--iters=1000000", "--compute-ms=5",
               f"--timeout_s={TIMEOUT_S}", f"--heartbeat_timeout_s={HEARTBEAT_S}",
               f"--metrics={metrics}"]
    job = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    pids = {}
    try:
        pids = started_ranks(job.pid, RANKS)
        if len(pids) < RANKS:
            return f"only {len(pids)} of {RANKS} ranks started"
        if not trains(metrics):
            return "the job did not train within 30 s"
        if job.poll() is not None:
            return f"the job ended before the freeze:\n{job.stdout.read()}"
        os.kill(pids[victim], signal.SIGSTOP)
        frozen = time.monotonic()
        try:
            output, _ = job.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            job.kill()
            return f"the job still ran {TIMEOUT_S} s after rank {victim} froze"
        seconds = time.monotonic() - frozen
    finally:
        if victim in pids:
            try:
                os.kill(pids[victim], signal.SIGKILL)
            except ProcessLookupError:
                pass
        if job.poll() is None:
            job.kill()
    print(f"rank {victim} ({description}) frozen: exit {job.returncode} after {seconds:.2f} s")
    problems = []
    if job.returncode == 0:
        problems.append("the job exited 0")
    if not HEARTBEAT_S - 0.5 <= seconds <= HEARTBEAT_S + 5:
        problems.append(f"it ended {seconds:.1f} s after the freeze, not about "
                        f"--heartbeat_timeout_s={HEARTBEAT_S} later")
    named = re.escape(f"{description} (rank {victim} on host ") + r"\S+\) stopped answering"
    for rank in range(RANKS):
        if rank == victim:
            continue
        if not re.search(rf"\(rank {rank}\): the job failed: {named}", output):
            problems.append(f"rank {rank} did not log that the job failed naming {description}")
    if problems:
        return "\n".join(problems) + "\n" + output
    return None


def main():
    mpiexec, app = sys.argv[1], sys.argv[2]
    failures = []
    for victim, description in ((4, "worker 2"), (1, "server 0"), (0, "scheduler 0")):
        with tempfile.TemporaryDirectory() as tmp:
            problem = freeze(mpiexec, app, victim, description,
                             os.path.join(tmp, "metrics.jsonl"))
        if problem:
            failures.append(f"rank {victim} ({description}) frozen: {problem}")
    if failures:
        sys.exit("\n\n".join(failures))


if __name__ == "__main__":
    main()
