#!/usr/bin/env bash
# Prepares what tools/bench/gpu_bench.sh needs on a GPU machine that has CUDA, CMake and ninja but no Debian
# packages and no network: downloads the Debian 12 packages of the build into CARRY/debs and copies a9a and w8a
# (from ../shared/data) into CARRY/data/svm (the layout of ../shared/data). Run here (with network), then carry CARRY along (under 64 MiB).
#
# Usage: tools/bench/gpu_bench_prepare.sh [CARRY (.gpu-carry)]
set -euo pipefail
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
carry=${1:-$repo/.gpu-carry}
shared=${TESSEL_SHARED_DATA:-$repo/../shared/data}

# The build's libraries without MPI (one GPU, one rank) and their runtime libraries; svm-train for the SVM baseline.
# Header-only and static packages are enough for the rest (googletest ships static libraries).
packages=(
  libtbb-dev libtbb12 libtbbmalloc2 libtbbbind-2-5 libhwloc15
  libmetis-dev libmetis5
  libgtest-dev libgmock-dev
  libcli11-dev nlohmann-json3-dev
  libfmt-dev libfmt9 libspdlog-dev libspdlog1.10
  libopenblas-dev libopenblas0 libopenblas0-pthread libopenblas-pthread-dev libgfortran5
  zlib1g-dev zlib1g libbz2-dev libbz2-1.0 libxxhash-dev libxxhash0 libquadmath0
  libsvm-tools libsvm3
)
mkdir -p "$carry/debs" "$carry/data/svm/a9a" "$carry/data/svm/w8a"
(
  cd "$carry/debs"
  rm -f ./*.deb
  apt-get download "${packages[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true
)
for f in a9a/a9a a9a/a9a.t w8a/w8a; do
  if [[ -f "$shared/svm/$f" ]]; then
    cp "$shared/svm/$f" "$carry/data/svm/$f"
  else
    echo "warning: $shared/svm/$f not found; the SVM benchmark will skip it" >&2
  fi
done
count=$(ls "$carry/debs"/*.deb | wc -l)
echo "prepared $carry: $count packages, $(du -sh "$carry" | cut -f1) in all" >&2
[[ $count -eq ${#packages[@]} ]] || { echo "error: expected ${#packages[@]} packages, got $count" >&2; exit 1; }
