#!/usr/bin/env bash
# A real single-node Slurm (munge, slurmctld, slurmd), configured in a temporary folder: submits
# apps/slurm/resnet.sbatch in a short configuration, waits for it, checks that it completed and
# that its test accuracy passed a floor random guessing (0.1) cannot reach, and stops the daemons.
#
# Usage: check_slurm.sh REPO_ROOT BIN_DIR
set -euo pipefail
repo=$1
bin=$2
floor=0.5  # test accuracy after 40 iterations of 4 workers (about 0.6), above random guessing (0.1)
tmp=$(mktemp -d /tmp/pacer-slurm.XXXXXX)
host=$(hostname -s)
started_munge=0

# Ends the daemon whose pid file is $1 and waits (up to 10 s) until it has exited: a run straight
# after this one (ctest --repeat) would otherwise find munged still exiting, or the ports taken.
stop() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
}

cleanup() {
  for daemon in slurmd slurmctld; do
    stop "$tmp/$daemon.pid"
  done
  [ $started_munge = 1 ] && stop /run/munge/pacer-test.pid
  rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$tmp/state" "$tmp/spool" "$tmp/log"
cat > "$tmp/slurm.conf" <<CONF
ClusterName=pacer-test
SlurmctldHost=$host
SlurmctldPort=26817
SlurmdPort=26818
AuthType=auth/munge
SlurmUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MailProg=/bin/true
SlurmdParameters=config_overrides
NodeName=$host CPUs=8 RealMemory=2000 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$tmp/slurm.conf

if ! pgrep -x munged >/dev/null; then
  install -d -o munge -g munge /run/munge
  runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/pacer-test.pid
  started_munge=1
fi
slurmctld -c
slurmd
for _ in $(seq 100); do
  sinfo -h -o %T 2>/dev/null | grep -q idle && break
  sleep 0.2
done
sinfo -h -o "%N %T" | grep -q idle || { cat "$tmp/log/"*.log; echo "check_slurm: node not idle"; exit 1; }

job=$(cd "$repo" && sbatch --parsable --ntasks=6 --output="$tmp/job-%j.out" \
  --export=ALL,PACER_BIN="$bin",OMPI_ALLOW_RUN_AS_ROOT=1,OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  apps/slurm/resnet.sbatch --max-iters=40 --eval-images=1000 --json="$tmp/summary.json")
echo "check_slurm: submitted job $job"
for _ in $(seq 600); do
  [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
  sleep 0.5
done
cat "$tmp/job-$job.out"
state=$(scontrol show job "$job" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
[ "$state" = COMPLETED ] || { echo "check_slurm: job $job ended $state"; exit 1; }
[ -f "$tmp/summary.json" ] || { echo "check_slurm: no summary written"; exit 1; }
python3 - "$tmp/summary.json" "$floor" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
floor = float(sys.argv[2])
print(f"check_slurm: {summary['workers']} workers, accuracy {summary['accuracy']:.4f}")
if summary["workers"] != 4 or summary["accuracy"] < floor:
    sys.exit(f"expected 4 workers and accuracy >= {floor}: {summary}")
PY
