#!/usr/bin/env bash
# SVM benchmarks against Debian's svm-train/svm-predict 3.24 in the same run: conformance (heart_scale, a9a, w8a,
# usps, letter), speed (a9a, w8a, usps, mnist10k, letter: time ratios), sample elimination (a9a, w8a at 100/1000
# MB) and distributed training (a9a, w8a, Fashion-MNIST T-shirt/Shirt at K = 1, 2, 4 under mpirun, with and without
# elimination; needs Open MPI and dataset-fashion-mnist, both installed by tools/setup-deps.sh), every formulation
# (-s 0..4) on every solver at K = 1, 2, 4 against svm-train's objective (solvers).
# Rewrites the "## SVM: ..." sections of docs/benchmarks.md. Builds nothing.
#
# Usage: tools/bench/svm_bench.sh BUILD_DIR [conformance,speed,elimination,distributed,types,solvers]
#   e.g. tools/bench/svm_bench.sh build-svm speed
# Data comes from $TESSEL_SHARED_DATA/svm (default: ../shared/data beside the checkout). Takes tens of minutes.
# TESSEL_SVM_ELIMINATION_SETS=a9a limits the elimination study to some data sets, TESSEL_SVM_TYPES_SETS=friedman1
# the types rows.
set -euo pipefail

if [[ $# -lt 1 || "$1" == "-h" || "$1" == "--help" ]]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
build_dir=$1
parts=${2:-conformance,speed,elimination,distributed,types,solvers}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tessel="$build_dir/tools/tessel"
if [[ ! -x "$tessel" ]]; then
  echo "error: $tessel not found; build it first: ninja -C $build_dir tessel" >&2
  exit 1
fi
for prog in svm-train svm-predict python3; do
  command -v "$prog" >/dev/null || { echo "error: $prog is not on PATH (apt-get install libsvm-tools)" >&2; exit 1; }
done
shared=${TESSEL_SHARED_DATA:-$repo/../shared/data}
[[ -d "$shared/svm" ]] || { echo "error: $shared/svm not found; set TESSEL_SHARED_DATA" >&2; exit 1; }

exec python3 "$repo/tools/bench/svm_bench.py" --tessel "$(realpath "$tessel")" --shared "$(realpath "$shared/svm")" \
  --doc "$repo/docs/benchmarks.md" --parts "$parts" --cmdline "tools/bench/svm_bench.sh $build_dir $parts" \
  --elimination-sets "${TESSEL_SVM_ELIMINATION_SETS:-a9a,w8a}" --types-sets "${TESSEL_SVM_TYPES_SETS:-}"
