#!/usr/bin/env python3
"""A bad option ends every rank at once, each naming the option, its value and what is expected
(issue 30): on every rank's command line, in one rank's PACER_ environment twin only, a spec
naming a node the job does not have, and an option that differs between ranks.

usage: check_fail_fast.py MPIEXEC APP

Each job runs 4 ranks with --timeout_s=60: a rank left waiting for the others would take that
long. The job must fail with the message, far sooner than the timeout (the times are printed;
docs/RELIABILITY.md records them). Every rank throws it (the in-process test
ConfigurationAgreement checks each one); here mpirun ends the ranks that have not printed it yet
once the first one exits, so the message is counted at least once.
"""
import subprocess
import sys
import time

RANKS = 4
TIMEOUT_S = 60


def run(mpiexec, app, flags, one_rank_env=None):
    common = ["--timeout_s=%d" % TIMEOUT_S] + flags
    if one_rank_env:
        command = [mpiexec, "--oversubscribe", "-np", str(RANKS - 1), app] + common + [
            ":", "-np", "1", "-x", one_rank_env, app] + common
    else:
        command = [mpiexec, "--oversubscribe", "-np", str(RANKS), app] + common
    start = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, timeout=3 * TIMEOUT_S)
    return command, result, time.monotonic() - start


def main():
    mpiexec, app = sys.argv[1], sys.argv[2]
    cases = [
        ("bad --sync on every rank", ["--sync=ssp:x"], None,
         "--sync=ssp:x: 'x' is not an integer >= 0"),
        ("bad --optimizer on every rank", ["--optimizer=adam:lr=abc"], None,
         "--optimizer=adam:lr=abc: lr=abc is not a number"),
        ("--inject naming a worker the job lacks", ["--inject=worker:9:compute=3x"], None,
         "--inject=worker:9:compute=3x: names worker 9, but the job has 2 workers (0..1)"),
        ("--inject naming a link end the job lacks", ["--inject=link:w0->s4:delay=1ms"], None,
         "--inject=link:w0->s4:delay=1ms: names server 4, but the job has 1 server (0..0)"),
        ("bad PACER_SYNC on rank 3 only", [], "PACER_SYNC=ssp:x",
         "rank 3: --sync=ssp:x: 'x' is not an integer >= 0"),
        ("PACER_SCHEDULING_CREDIT not a number on rank 3 only", [],
         "PACER_SCHEDULING_CREDIT=eight", "rank 3: PACER_SCHEDULING_CREDIT=eight: expected an integer"),
        ("--sync differing on rank 3", [], "PACER_SYNC=asp",
         "--sync differs between ranks: rank 0 has 'bsp', rank 3 has 'asp'"),
        ("a negative --partition_bytes", ["--partition_bytes=-5"], None,
         "--partition_bytes=-5: expected > 0"),
    ]
    failures = []
    for name, flags, env, expected in cases:
        command, result, seconds = run(mpiexec, app, flags, env)
        output = result.stdout + result.stderr
        lines = sum(1 for line in output.splitlines() if expected in line)
        print(f"{name}: exit {result.returncode} after {seconds:.2f} s, {lines} ranks said it")
        if result.returncode == 0:
            failures.append(f"{name}: the job succeeded")
        if lines == 0:
            failures.append(f"{name}: no rank printed '{expected}':\n{output}")
        if seconds > TIMEOUT_S / 4:
            failures.append(f"{name}: took {seconds:.1f} s, as if a rank waited out --timeout_s")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
