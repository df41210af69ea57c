#!/usr/bin/env python3
"""--policy=auto (issue 33): every mitigation composed, on S7 (STRAGGLERS.md section 9).

Usage: check_auto.py MPIRUN PACER_SCENARIO

4 workers, 4 servers, softmax regression on Fashion-MNIST, --stage_s=3, --auto_window=10: worker
0 computes 3x slower in [0 s, 3 s), while STRN profiles; worker 1's links to the servers run at 1.25 MB/s in
[2.25 s, 5.25 s); server 0 serves 3x slower in [6 s, 9 s). --policy=auto runs STRN's --sync=auto, STRET, SMS and SAS at once.
Checked in the metrics log, each kind of straggler met by its own mitigation, in order:
- STRN decides once its profile is done (a finite noise scale), and neither STRET nor SMS orders a
  batch size before that decision: the profile holds the sizes (BatchOwner);
- the compute straggler: the detector flags worker 0 in its window, and SMS or STRET orders it a
  smaller batch before the window ends; after a STRET tuning the fastest workers still run the
  full batch (64), and SMS orders nothing more;
- the slow link: the detector flags worker 1 for communication in its window, and STRET probes its
  links or relays it before the window ends;
- the slow server: the detector flags server 0 in its window, and SAS plans moves off server 0
  before the window ends.
The timed target (each window's median iteration against t0) is make bench-auto's.
"""
import os
import sys
import tempfile

from scenario_runs import records, run_harness

STAGE_S = 3.0
# A profile of --auto_window=10 (decided near iteration 18): at the default 20 it ends near
# iteration 33, at the straggler's pace 3.0 to 3.5 s in, and worker 0's window closes at 3 s.
ARGS = ["--servers", "4", f"--stage_s={STAGE_S}", "--iters=500", "--auto_window=10"]
FULL_BATCH = 64


def first(decisions, what, start, end, test):
    """The first decision within [start, end) seconds that passes `test`; exits naming `what`."""
    for d in decisions:
        if start <= d["t_s"] < end and test(d):
            return d
    sys.exit(f"{what}: nothing in [{start}, {end}) s")


def main():
    mpirun, harness = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "s7.jsonl")
        run_harness(mpirun, harness, "S7", "auto", ARGS + [f"--metrics={metrics}"], np=9)
        log = records(metrics)
    decisions = [r for r in log if r["type"] == "decision"]
    iters = [r for r in log if r["type"] == "iter"]
    for d in decisions:
        if d["policy"] != "sas" or d["kind"] == "plan":
            print(f"{d['t_s']:7.2f} s  iter {d['iter']:4d}  {d['policy']:8s} {d['kind']:22s} "
                  f"{d['action']:6s} {d.get('target_index')}  {d.get('detail', '')[:80]}")

    profile = [d for d in decisions if d["policy"] == "strn" and d["why"] == "profile"]
    if len(profile) != 1 or not (profile[0]["noise_scale"] and profile[0]["noise_scale"] > 0):
        sys.exit(f"expected one STRN decision after its profile, with a noise scale: {profile}")
    batch_orders = [d for d in decisions if (d["policy"], d["kind"]) in
                    (("sms", "batch"), ("stret", "batch_tune"))]
    early = [d for d in batch_orders if d["iter"] <= profile[0]["iter"]]
    if early:
        sys.exit(f"batch orders before STRN's profile ended (iteration {profile[0]['iter']}): "
                 f"{early}")

    flag = first(decisions, "the detector flagging worker 0's compute", 0, STAGE_S,
                 lambda d: d["policy"] == "detector" and d["action"] == "flag" and
                 d["target_index"] == 0 and "compute" in d["kind"])
    first(decisions, "a smaller batch for worker 0", flag["t_s"], STAGE_S,
          lambda d: (d["policy"] == "sms" and d["target_index"] == 0 and d["action"] == "order")
          or (d["policy"] == "stret" and d["kind"] == "batch_tune" and d["action"] == "order"))
    tunes = [d for d in batch_orders if d["policy"] == "stret" and d["action"] == "order"]
    if tunes:
        tuned = tunes[0]
        full = {r["index"] for r in iters if r["iter"] > tuned["iter"] + 2 and
                r["batch"] == FULL_BATCH}
        if not full:
            sys.exit("after STRET's tuning no worker runs the full batch: it tuned to a batch "
                     "that was not the job's")
        late = [d for d in batch_orders if d["policy"] == "sms" and d["iter"] > tuned["iter"]]
        if late:
            sys.exit(f"SMS ordered batches after STRET tuned them: {late}")

    link = first(decisions, "the detector flagging worker 1's link", 0.75 * STAGE_S,
                 1.75 * STAGE_S,
                 lambda d: d["policy"] == "detector" and d["action"] == "flag" and
                 d["target_index"] == 1 and "communication" in d["kind"])
    first(decisions, "STRET probing or relaying worker 1", link["t_s"], 1.75 * STAGE_S,
          lambda d: d["policy"] == "stret" and d["target_index"] == 1 and
          d["kind"] in ("probe", "relay"))

    server = first(decisions, "the detector flagging server 0", 2 * STAGE_S, 3 * STAGE_S,
                   lambda d: d["policy"] == "detector" and d["action"] == "flag" and
                   d["kind"] == "server" and d["target_index"] == 0)
    first(decisions, "SAS moving ranges off server 0", server["t_s"] - 0.5, 3 * STAGE_S,
          lambda d: d["policy"] == "sas" and d["kind"] == "plan" and d["target_index"] == 0)
    print("ok")


if __name__ == "__main__":
    main()
