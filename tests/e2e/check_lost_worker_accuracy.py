#!/usr/bin/env python3
"""A job that loses a worker ends as accurate as one started with a worker fewer (issue 30).

usage: check_lost_worker_accuracy.py MPIEXEC RESNET_APP

For each rule that can spare a worker, trains pacer-resnet on Fashion-MNIST for 500 iterations
twice: with 4 workers, worker 2 frozen (SIGSTOP) once the job is past its first 100 iterations,
and with 3 workers from the start. The first job goes on without worker 2 (its live workers
share the training set between them from then on) and ends with the summary of its 3 live
workers; its test accuracy must be no more than 1 point below the second's (it may be higher:
the first job had a fourth worker's gradients for a while). Both run the same iterations
under the same learning-rate schedule, given in clocks: a run's length is planned in iterations
when it starts, and a lost worker does not stretch it.
"""
import json
import pathlib
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from check_lost_worker import run_losing_worker  # noqa: E402

RULES = ("bsp --on_worker_loss=continue", "asp", "epsp:0", "backup:1")
TOLERANCE = 0.01
ITERS = 500
# The app's optimizer, its schedule in clocks. Under asp every push is an update, so its step is
# about bsp's (the mean of the workers' gradients) over the workers: at bsp's, asp ends 3 to 4
# points lower, with 3 workers or 4, lost worker or not.
OPTIMIZER = "sgd:lr={lr},momentum=0.9,lr_steps=250/375"
LEARNING_RATE = {"asp": 0.015}
VICTIM_RANK, VICTIM = 4, 2  # rank 0 the scheduler, rank 1 the server, workers from rank 2


def command(mpiexec, app, rule, workers, summary):
    return [mpiexec, "--oversubscribe", "-np", str(2 + workers), app, "--servers", "1",
            f"--sync={rule.split()[0]}", *rule.split()[1:], f"--max-iters={ITERS}", "--epochs=2",
            "--optimizer=" + OPTIMIZER.format(lr=LEARNING_RATE.get(rule, 0.05)), "--progress=lines",
            "--heartbeat_timeout_s=3", "--timeout_s=60", f"--json={summary}"]


def past_iteration_100(lines):
    return any(int(m.group(1)) > 100 for line in lines[-5:]
               for m in [re.search(r" iter (\d+)/", line)] if m)


def summary_of(path, output):
    try:
        return json.loads(pathlib.Path(path).read_text()), None
    except (OSError, ValueError) as e:
        return None, f"no summary ({e}):\n{output[-4000:]}"


def compare(mpiexec, app, rule, folder):
    """What is wrong with `rule`'s pair of jobs, or None; prints the two accuracies."""
    lost_json, fewer_json = folder / "lost.json", folder / "fewer.json"
    output, problem = run_losing_worker(command(mpiexec, app, rule, 4, lost_json), 6,
                                        VICTIM_RANK, VICTIM, past_iteration_100)
    if problem:
        return f"{problem}:\n{output[-4000:]}"
    lost, problem = summary_of(lost_json, output)
    if problem:
        return problem
    fewer_run = subprocess.run(command(mpiexec, app, rule, 3, fewer_json), capture_output=True,
                               text=True, timeout=300)
    fewer, problem = summary_of(fewer_json, fewer_run.stdout + fewer_run.stderr)
    if problem:
        return problem
    print(f"--sync={rule}: lost worker 2: accuracy {lost['accuracy']:.4f} over "
          f"{lost['iters']} iterations; 3 workers from the start: {fewer['accuracy']:.4f} over "
          f"{fewer['iters']}", flush=True)
    if lost["workers"] != 3:
        return f"the summary of the job that lost a worker counts {lost['workers']} workers, not 3"
    if lost["accuracy"] < fewer["accuracy"] - TOLERANCE:
        return (f"accuracy {lost['accuracy']:.4f} after losing worker 2, but "
                f"{fewer['accuracy']:.4f} with 3 workers from the start")
    return None


def main():
    mpiexec, app = sys.argv[1], sys.argv[2]
    failures = []
    for rule in RULES:
        with tempfile.TemporaryDirectory() as tmp:
            problem = compare(mpiexec, app, rule, pathlib.Path(tmp))
        if problem:
            failures.append(f"--sync={rule}: {problem}")
    if failures:
        sys.exit("\n\n".join(failures))


if __name__ == "__main__":
    main()
