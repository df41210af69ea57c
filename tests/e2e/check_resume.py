#!/usr/bin/env python3
"""A training app (pacer-resnet, pacer-bert) stopped at a checkpoint and resumed ends as an
uninterrupted run (issue 9).

usage: check_resume.py MPIEXEC APP [FLAGS...]

Runs APP with a scheduler, 1 server and 2 workers three times: 40 iterations straight; 20, then
stop; resume to 40. Two workers' gradients sum alike in either order, so the servers' state
(values and momentum) and the workers' models must match byte for byte, and the summaries'
accuracy and loss exactly. The resumed run must have trained 20 iterations, not 40 from scratch.
"""
import json
import pathlib
import subprocess
import sys
import tempfile


def run(mpiexec, app, flags, folder, iters, resume=False):
    summary = folder / f"summary-{iters}{'-resumed' if resume else ''}.json"
    command = [mpiexec, "--oversubscribe", "-np", "4", app, "--servers", "1",
               f"--max-iters={iters}", "--eval-every=20", "--progress=lines",
               f"--checkpoint-dir={folder}", f"--json={summary}"] + flags
    if resume:
        command.append("--resume")
    result = subprocess.run(command, capture_output=True, text=True, timeout=500)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}\n"
                 f"{result.stderr}")
    return json.loads(summary.read_text())


def main():
    mpiexec, app, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
    with tempfile.TemporaryDirectory() as tmp:
        whole, parts = pathlib.Path(tmp) / "whole", pathlib.Path(tmp) / "parts"
        straight = run(mpiexec, app, flags, whole, 40)
        first = run(mpiexec, app, flags, parts, 20)
        resumed = run(mpiexec, app, flags, parts, 40, resume=True)
        print(json.dumps({"straight": straight, "first": first, "resumed": resumed}, indent=1))
        failures = []
        if resumed["bytes"] != first["bytes"] or straight["bytes"] != 2 * first["bytes"]:
            failures.append(f"the resumed run moved {resumed['bytes']} bytes, the first half "
                            f"{first['bytes']}, the straight run {straight['bytes']}: it did not "
                            "take up at iteration 20")
        for field in ("iters", "accuracy", "loss"):
            if resumed[field] != straight[field]:
                failures.append(f"{field}: resumed {resumed[field]}, straight {straight[field]}")
        for name in ("parameters.ckpt", "worker-0-at-40.state", "worker-1-at-40.state"):
            if (whole / name).read_bytes() != (parts / name).read_bytes():
                failures.append(f"{name} differs between the straight and the resumed run")
        states = sorted(path.name for path in parts.glob("worker-*.state"))
        if states != ["worker-0-at-40.state", "worker-1-at-40.state"]:
            failures.append(f"worker states left in the checkpoint folder: {states} (the states "
                            "of clock 40 alone expected)")
        if failures:
            sys.exit("\n".join(failures))
        print(f"resumed at 20: accuracy {resumed['accuracy']}, loss {resumed['loss']} at 40, "
              "as the straight run; servers' state and workers' models byte-equal")


if __name__ == "__main__":
    main()
