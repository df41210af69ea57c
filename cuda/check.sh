#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: builds Pacer with the CUDA back end, runs the CUDA reducer's
# tests (with PACER_REQUIRE_CUDA set they fail, rather than skip, where no device answers) and
# the CUDA reduce benchmark, which prints the fused kernel's, cuBLAS's and copy GB/s and judges
# the target (N-way sum >= 0.8 x device-to-device copy, past the 50 MiB L2 of an H100/H200).
# Usage: cuda/check.sh [build-dir]              (default: build-cuda; configures and builds)
#        cuda/check.sh --run-only build-dir     (binaries built elsewhere, e.g. on a CPU machine
#                                                with the toolkit, carried to the GPU machine)
set -euo pipefail
cd "$(dirname "$0")/.."
run_only=0
if [[ "${1:-}" == "--run-only" ]]; then
  run_only=1
  shift
fi
build=${1:-build-cuda}

if [[ $run_only == 0 ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPACER_CUDA=ON
  cmake --build "$build" -j "$(nproc)" --target pacer-cuda-tests pacer-reduce-bench
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
PACER_REQUIRE_CUDA=1 "$build/bin/pacer-cuda-tests"
"$build/bin/pacer-reduce-bench" --device=cuda --inputs=2,4,8 --sizes=1MB,16MB,256MB \
  --ops=sum,sum_inplace,sgd,momentum,adam --targets --llc_bytes=52428800 \
  --json="$build/reduce_bench_cuda.json"
echo "benchmark points: $build/reduce_bench_cuda.json"
