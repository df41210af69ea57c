#!/usr/bin/env bash
# Launches a Pacer app over a Slurm allocation (called by the .sbatch scripts): APP ARGS...
set -euo pipefail
app=$1
shift
bin=${PACER_BIN:-${PACER_HOME:-$SLURM_SUBMIT_DIR}/build/bin}
[ -x "$bin/$app" ] || { echo "run_app: no $bin/$app (set PACER_BIN)" >&2; exit 2; }
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
launcher=${PACER_LAUNCHER:-auto}
if [ "$launcher" = auto ]; then
  launcher=mpirun
  srun --mpi=list 2>&1 | grep -q pmix && launcher=srun
fi
args=(--servers "${PACER_SERVERS:-1}" --progress=lines "$@")
echo "run_app: $app on ${SLURM_NTASKS:-?} tasks (${SLURM_JOB_NUM_NODES:-?} nodes) by $launcher"
case $launcher in
  srun) command=(srun --mpi=pmix "$bin/$app" "${args[@]}") ;;
  mpirun) command=(mpirun "$bin/$app" "${args[@]}") ;;
  *) echo "run_app: PACER_LAUNCHER=$launcher: expected srun, mpirun or auto" >&2; exit 2 ;;
esac
# With a checkpoint folder, a failed step is relaunched from its last checkpoint (PACER_RETRIES
# times, default 2), and a requeued job resumes.
case " $* " in
  *" --checkpoint-dir"* | *" --checkpoint_dir"*)
    exec "$(dirname "$0")/../../scripts/pacer-relaunch" --retries "${PACER_RETRIES:-2}" -- \
      "${command[@]}" ;;
  *) exec "${command[@]}" ;;
esac
