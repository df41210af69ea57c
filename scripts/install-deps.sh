#!/usr/bin/env bash
# Installs the Debian packages Pacer builds and tests against, only those missing.
# Every entry point (make demo, make test, .ci/run) calls this, so a fresh machine needs no manual step.
set -euo pipefail

packages=(
  cmake make g++ pkg-config ccache clang-format python3
  doxygen                           # the API reference (make docs)
  libopenmpi-dev openmpi-bin
  libucx-dev ucx-utils
  libprotobuf-dev protobuf-compiler
  libgoogle-glog-dev libgflags-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  dataset-fashion-mnist zlib1g-dev python3-matplotlib
  libtorch-dev libopenblas0-openmp  # the ResNet and BERT apps (OpenBLAS: 20x faster products)
  fortunes                          # BERT's English text
  slurm-wlm munge                   # the batch-submission test
  iproute2                          # several hosts as network namespaces (scripts/pacer_hosts.py)
  clang-14 libclang-rt-14-dev       # libFuzzer (make fuzz)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
