#!/usr/bin/env python3
"""A worker killed with SIGKILL mid-run under scripts/pacer-relaunch: the job is relaunched from its
last checkpoint and ends with the parameters of an uninterrupted run (issue 30).

usage: check_restart.py RELAUNCH MPIEXEC APP [FLAGS...]

Runs APP (a scheduler, 1 server, 2 workers, bsp, checkpoints every 10 iterations) for 60
iterations straight, then again under RELAUNCH, killing worker 1 (rank 3) at a random moment after
its first checkpoint. The relaunched job must resume (not start over), finish, and leave the
servers' state and the workers' models byte-equal to the straight run's, with equal accuracy and
loss. Without the wrapper's --resume the relaunch would retrain from scratch and move more bytes;
with a stale worker state it would not be byte-equal.
"""
import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import tempfile
import time

ITERS, EVERY = 60, 10


def app_command(mpiexec, app, flags, folder, summary):
    return [mpiexec, "--oversubscribe", "-np", "4", app, "--servers", "1",
            f"--max-iters={ITERS}", f"--eval-every={EVERY}", "--progress=lines",
            f"--checkpoint-dir={folder}", f"--json={summary}"] + flags


def rank_pid(folder, rank):
    """The pid of the app's process of `rank` whose command line names `folder`."""
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        named = {f"--checkpoint{dash}dir={folder}".encode() for dash in "-_"}  # argv normalized
        if named & set(cmdline) and f"OMPI_COMM_WORLD_RANK={rank}".encode() in environ:
            return int(entry.name)
    return None


def main():
    relaunch, mpiexec, app, flags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    with tempfile.TemporaryDirectory() as tmp:
        whole, killed = pathlib.Path(tmp) / "whole", pathlib.Path(tmp) / "killed"
        straight_summary = pathlib.Path(tmp) / "straight.json"
        result = subprocess.run(app_command(mpiexec, app, flags, whole, straight_summary),
                                capture_output=True, text=True, timeout=500)
        if result.returncode != 0:
            sys.exit(f"the straight run failed ({result.returncode}):\n{result.stderr}")
        straight = json.loads(straight_summary.read_text())

        summary = pathlib.Path(tmp) / "relaunched.json"
        job = subprocess.Popen([relaunch, "--retries", "2", "--"] +
                               app_command(mpiexec, app, flags, killed, summary),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
        try:
            check_relaunch(job, killed, whole, straight, summary)
        finally:
            if job.poll() is None:
                os.killpg(job.pid, signal.SIGKILL)


def check_relaunch(job, killed, whole, straight, summary):
    deadline = time.monotonic() + 300
    while not (killed / "parameters.ckpt").exists():
        if job.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"no checkpoint appeared before the job ended:\n{job.communicate()}")
        time.sleep(0.02)
    time.sleep(random.uniform(0, 0.5))
    victim = rank_pid(killed, 3)
    if victim is None or job.poll() is not None:
        sys.exit("the job ended before worker 1 could be killed: make it longer")
    os.kill(victim, signal.SIGKILL)
    killed_at = time.monotonic()
    out, err = job.communicate(timeout=500)
    print(f"killed worker 1 (pid {victim}); the wrapper said:\n"
          + "\n".join(line for line in err.splitlines() if "pacer-relaunch" in line))
    failures = []
    if job.returncode != 0:
        failures.append(f"the relaunched job failed ({job.returncode}):\n{err[-4000:]}")
    if "relaunch 1 of 2, from the checkpoint" not in err:
        failures.append("the wrapper did not relaunch from the checkpoint")
    if failures:
        sys.exit("\n".join(failures))
    resumed = json.loads(summary.read_text())
    if resumed["bytes"] >= straight["bytes"]:
        failures.append(f"the relaunch moved {resumed['bytes']} bytes, the straight run "
                        f"{straight['bytes']}: it started over instead of resuming")
    for field in ("iters", "accuracy", "loss"):
        if resumed[field] != straight[field]:
            failures.append(f"{field}: relaunched {resumed[field]}, straight {straight[field]}")
    for name in ("parameters.ckpt", f"worker-0-at-{ITERS}.state",
                 f"worker-1-at-{ITERS}.state"):
        if (whole / name).read_bytes() != (killed / name).read_bytes():
            failures.append(f"{name} differs between the straight and the relaunched run")
    if failures:
        sys.exit("\n".join(failures))
    print(f"finished {time.monotonic() - killed_at:.1f} s after the kill, as the "
          f"straight run: accuracy {resumed['accuracy']}, loss {resumed['loss']}, "
          f"{resumed['bytes']} of {straight['bytes']} bytes moved after the resume")


if __name__ == "__main__":
    main()
