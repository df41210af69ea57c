#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: builds Pacer with the CUDA back end, runs the CUDA reducer's
# tests (with PACER_REQUIRE_CUDA set they fail, rather than skip, where no device answers) and
# the CUDA reduce benchmark, which prints the fused kernel's, cuBLAS's and copy GB/s.
# Usage: cuda/check.sh [build-dir]   (default: build-cuda)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-cuda}

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPACER_CUDA=ON
cmake --build "$build" -j "$(nproc)" --target pacer-cuda-tests pacer-reduce-bench
PACER_REQUIRE_CUDA=1 "$build/bin/pacer-cuda-tests"
"$build/bin/pacer-reduce-bench" --device=cuda --inputs=2,4,8 --sizes=1MB,16MB,256MB \
  --json="$build/reduce_bench_cuda.json"
echo "benchmark points: $build/reduce_bench_cuda.json"
