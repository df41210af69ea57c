#!/usr/bin/env python3
"""A real Slurm of two nodes on one machine: munge, slurmctld, and one slurmd on each of two hosts
made by scripts/pacer_hosts.py (network namespaces with host names h1 and h2), configured in the
hosts' temporary folder. Submits apps/slurm/resnet.sbatch with --nodes=2 in a short
configuration (8 tasks, 2 servers), waits for it, and checks that it COMPLETED, that its ranks
ran on both nodes with a server on each (the scheduler's "2 hosts: h1 ranks 0..3 (1 server); h2
ranks 4..7 (1 server)" line), and that its test accuracy passed a floor random guessing (0.1)
cannot reach. Stops the daemons and removes the hosts.

Usage: check_slurm.py REPO_ROOT BIN_DIR (exits 77, skipped, where namespaces cannot be made)
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

REPO, BIN = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(REPO, "scripts"))
import pacer_hosts  # noqa: E402

# Test accuracy after 40 iterations of 5 workers read 0.48-0.60: three times random guessing (0.1)
# is far enough from both.
FLOOR = 0.3
MUNGE_PID = "/run/munge/pacer-test.pid"


def config(tmp, hosts):
    controller = socket.gethostname().split(".")[0]
    nodes = "\n".join(f"NodeName={name} NodeAddr={address} CPUs=8 RealMemory=2000 State=UNKNOWN"
                      for name, address in zip(hosts.names, hosts.addresses))
    return f"""ClusterName=pacer-test
SlurmctldHost={controller}({hosts.subnet}.1)
SlurmctldPort=26817
SlurmdPort=26818
AuthType=auth/munge
SlurmUser=root
StateSaveLocation={tmp}/state
SlurmdSpoolDir={tmp}/spool-%n
SlurmctldPidFile={tmp}/slurmctld.pid
SlurmdPidFile={tmp}/slurmd-%n.pid
SlurmctldLogFile={tmp}/slurmctld.log
SlurmdLogFile={tmp}/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MailProg=/bin/true
SlurmdParameters=config_overrides
{nodes}
PartitionName=debug Nodes={",".join(hosts.names)} Default=YES MaxTime=INFINITE State=UP
"""


def stop(pid_file):
    """Ends the daemon whose pid file this is and waits (up to 10 s) for it to exit."""
    try:
        pid = int(open(pid_file).read())
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError):
        return
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except OSError:
            return
        time.sleep(0.1)


def logs(tmp):
    for name in sorted(os.listdir(tmp)):
        if name.endswith(".log"):
            print(f"--- {name}\n{open(os.path.join(tmp, name)).read()[-3000:]}")


def run_job(hosts, tmp, env):
    subprocess.run(["slurmctld", "-c"], env=env, check=True)
    for name, address in zip(hosts.names, hosts.addresses):
        subprocess.Popen([pacer_hosts.AGENT, address, f"exec slurmd -D -N {name}"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(150):
        states = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %T"], env=env,
                                capture_output=True, text=True).stdout.split("\n")
        if sum(" idle" in s for s in states) == len(hosts.names):
            break
        time.sleep(0.2)
    else:
        logs(tmp)
        sys.exit(f"check_slurm: the nodes are not idle: {states}")

    summary = os.path.join(tmp, "summary.json")
    job = subprocess.run(
        ["sbatch", "--parsable", "--nodes=2", "--ntasks=8", "--ntasks-per-node=4",
         f"--output={tmp}/job-%j.out",
         f"--export=ALL,PACER_BIN={BIN},PACER_SERVERS=2,OMPI_ALLOW_RUN_AS_ROOT=1,"
         "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
         "apps/slurm/resnet.sbatch", "--max-iters=40", "--eval-images=1000",
         f"--json={summary}"], cwd=REPO, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    print(f"check_slurm: submitted job {job}")
    for _ in range(600):
        if not subprocess.run(["squeue", "-h", "-j", job], env=env, capture_output=True,
                              text=True).stdout.strip():
            break
        time.sleep(0.5)
    output = open(os.path.join(tmp, f"job-{job}.out")).read()
    print(output)
    shown = subprocess.run(["scontrol", "show", "job", job], env=env, capture_output=True,
                           text=True).stdout
    state = re.search(r"JobState=([A-Z_]+)", shown)
    if not state or state.group(1) != "COMPLETED":
        logs(tmp)
        sys.exit(f"check_slurm: job {job} ended {state.group(1) if state else 'unknown'}")
    # Two servers spread: one on each node.
    spread = re.search(r"2 hosts: (h\d) ranks [\d.]+ \(1 server\); (h\d) ranks [\d.]+ \(1 server\)",
                       output)
    if not spread or {spread.group(1), spread.group(2)} != {"h1", "h2"}:
        sys.exit("check_slurm: the job's ranks and servers were not on both nodes (no '2 hosts: h1 "
                 "ranks ... (1 server); h2 ranks ... (1 server)' line)")
    with open(summary) as f:
        result = json.load(f)
    print(f"check_slurm: {spread.group(0)}; {result['workers']} workers, accuracy "
          f"{result['accuracy']:.4f}")
    if result["workers"] != 5 or result["accuracy"] < FLOOR:
        sys.exit(f"check_slurm: expected 5 workers and accuracy >= {FLOOR}: {result}")


def main():
    try:
        hosts = pacer_hosts.Hosts(2)
        hosts.__enter__()
    except pacer_hosts.Unavailable as e:
        print(f"SKIP: cannot make hosts: {e}")
        return pacer_hosts.SKIP
    started_munge = False
    tmp = hosts.dir
    try:
        for folder in ["state"] + [f"spool-{name}" for name in hosts.names]:
            os.makedirs(os.path.join(tmp, folder))
        with open(os.path.join(tmp, "slurm.conf"), "w") as f:
            f.write(config(tmp, hosts))
        # Open MPI inside the job reads the allocation, not the harness's hostfile; between the
        # nodes it speaks TCP over the hosts' subnet.
        env = {k: v for k, v in hosts.environment().items()
               if k not in ("OMPI_MCA_plm_rsh_agent", "OMPI_MCA_orte_default_hostfile")}
        env["SLURM_CONF"] = os.path.join(tmp, "slurm.conf")
        if subprocess.run(["pgrep", "-x", "munged"], capture_output=True).returncode != 0:
            subprocess.run(["install", "-d", "-o", "munge", "-g", "munge", "/run/munge"],
                           check=True)
            subprocess.run(["runuser", "-u", "munge", "--", "/usr/sbin/munged",
                            f"--pid-file={MUNGE_PID}"], check=True)
            started_munge = True
        run_job(hosts, tmp, env)
    finally:
        stop(os.path.join(tmp, "slurmctld.pid"))
        hosts.remove()  # ends the slurmd daemons and whatever they started
        if started_munge:
            stop(MUNGE_PID)
    return 0


if __name__ == "__main__":
    sys.exit(main())
