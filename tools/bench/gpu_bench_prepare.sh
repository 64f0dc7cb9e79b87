#!/usr/bin/env bash
# Prepares what tools/bench/gpu_bench.sh needs on a GPU machine that has CUDA, CMake and ninja but no Debian
# packages and no network: downloads the Debian 12 packages of the build into CARRY/debs and copies a9a and w8a
# (from ../shared/data) into CARRY/data/svm (the layout of ../shared/data). Run here (with network), then carry CARRY along (under 64 MiB).
# With --build BUILD_DIR it also copies what gpu_bench.sh --prebuilt runs (tessel, the gpu test programs, the GPU
# benchmarks; stripped) from a CUDA build made here into CARRY/build, so the GPU machine's minutes go to tests and
# measurements, not to compiling. That build must be MPI-free and use the GPU machine's CUDA major version:
#   cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_CUDA=ON -DTESSEL_MPI=OFF -DTESSEL_BENCH=ON
#   ninja -C build-gpu tessel kernels_gpu_tests sampling_gpu_tests train_gpu_tests tessel_gpu_kernels_bench \
#     tessel_gpu_sampler_bench tessel_svm_loop_bench
#
# Usage: tools/bench/gpu_bench_prepare.sh [--build BUILD_DIR] [CARRY (.gpu-carry)]
set -euo pipefail
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=""
if [[ "${1:-}" == "--build" ]]; then
  build=$(cd "${2:?--build needs a folder}" && pwd)
  shift 2
fi
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
if [[ -n "$build" ]]; then
  grep -q '^TESSEL_MPI:BOOL=OFF' "$build/CMakeCache.txt" \
    || { echo "error: $build is not an MPI-free build (configure it with -DTESSEL_MPI=OFF)" >&2; exit 1; }
  rm -rf "$carry/build"
  for f in tools/tessel tests/kernels_gpu_tests tests/sampling_gpu_tests tests/train_gpu_tests \
           tools/bench/tessel_gpu_kernels_bench tools/bench/tessel_gpu_sampler_bench tools/bench/tessel_svm_loop_bench; do
    [[ -x "$build/$f" ]] || { echo "error: $build/$f is not built (see --help for the targets)" >&2; exit 1; }
    mkdir -p "$carry/build/$(dirname "$f")"
    strip -o "$carry/build/$f" "$build/$f"
  done
  # The tests were compiled with the source folder's absolute path to tests/data: gpu_bench.sh --prebuilt links it.
  echo "$repo" >"$carry/build/SOURCE_DIR"
  echo "prebuilt binaries in $carry/build: $(du -sh "$carry/build" | cut -f1)" >&2
fi
echo "$carry in all: $(du -sh "$carry" | cut -f1)" >&2
