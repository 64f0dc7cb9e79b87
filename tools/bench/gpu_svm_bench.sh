#!/usr/bin/env bash
# SVM on the GPU: the CUDA batched solver vs the CPU SMO solver vs svm-train, and the host batched solver,
# on a9a and w8a at the same eps; prints a markdown table (objective, seconds, test accuracy where a test file exists).
#
# Usage: tools/bench/gpu_svm_bench.sh BUILD_DIR [solvers] [sets]
#   solvers: comma list of cuda,smo,batch,libsvm (default: all; without a GPU use smo,batch,libsvm)
#   sets:    comma list of a9a,w8a (default both)
#   e.g. tools/bench/gpu_svm_bench.sh build-gpusvm smo,batch,libsvm a9a
# Data: $TESSEL_SHARED_DATA/svm (default ../shared/data beside the checkout). a9a: -c 1 -g 0.05; w8a: -c 16 -g 0.03125
# (the ThunderSVM paper's settings), eps 1e-3, 1000 MB cache, shrinking on (periodic) for every solver.
set -euo pipefail

if [[ $# -lt 1 || "$1" == "-h" || "$1" == "--help" ]]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
build_dir=$1
solvers=${2:-cuda,smo,batch,libsvm}
sets=${3:-a9a,w8a}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tessel="$build_dir/tools/tessel"
[[ -x "$tessel" ]] || { echo "error: $tessel not found; build it first: ninja -C $build_dir tessel" >&2; exit 1; }
if [[ ",$solvers," == *",libsvm,"* ]]; then
  for prog in svm-train svm-predict; do
    command -v "$prog" >/dev/null || { echo "error: $prog is not on PATH (apt-get install libsvm-tools)" >&2; exit 1; }
  done
fi
shared=${TESSEL_SHARED_DATA:-$repo/../shared/data}
[[ -d "$shared/svm" ]] || { echo "error: $shared/svm not found; set TESSEL_SHARED_DATA" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
# obj of a LIBSVM-style "obj = ..." line (first pair), from a log file.
objective() { grep -m1 -o 'obj = [-0-9.e+]*' "$1" | awk '{print $3}'; }
accuracy() { grep -m1 -o 'Accuracy = [0-9.]*%' "$1" | awk '{print $3}'; }

echo "| data | solver | device | objective | rel. diff vs smo | train s | test accuracy | command |"
echo "|---|---|---|---|---|---|---|---|"
for set in ${sets//,/ }; do
  case $set in
    a9a) train="$shared/svm/a9a/a9a"; test="$shared/svm/a9a/a9a.t"; flags="-c 1 -g 0.05" ;;
    w8a) train="$shared/svm/w8a/w8a"; test=""; flags="-c 16 -g 0.03125" ;;
    *) echo "error: unknown data set '$set' (use a9a or w8a)" >&2; exit 1 ;;
  esac
  smo_obj=""
  for solver in ${solvers//,/ }; do
    model="$work/$set.$solver.model"
    log="$work/$set.$solver.log"
    case $solver in
      smo) cmd="$tessel train svm --data $train $flags -e 0.001 -m 1000 --solver smo --force --model $model"; device=cpu ;;
      batch) cmd="$tessel train svm --data $train $flags -e 0.001 -m 1000 --solver batch --force --model $model"; device=cpu ;;
      cuda) cmd="$tessel train svm --data $train $flags -e 0.001 -m 1000 --device cuda --force --model $model"; device=cuda ;;
      libsvm) cmd="svm-train $flags -e 0.001 -m 1000 $train $model"; device=cpu ;;
      *) echo "error: unknown solver '$solver' (use cuda, smo, batch, libsvm)" >&2; exit 1 ;;
    esac
    t0=$(now)
    $cmd >"$log" 2>&1 || { echo "error: '$cmd' failed:" >&2; tail -5 "$log" >&2; exit 1; }
    t1=$(now)
    obj=$(objective "$log")
    [[ $solver == smo ]] && smo_obj=$obj
    rel="-"
    [[ -n "$smo_obj" && -n "$obj" ]] && rel=$(awk -v a="$obj" -v b="$smo_obj" 'BEGIN { d = (a - b) / b; if (d < 0) d = -d; printf "%.2e", d }')
    acc="-"
    if [[ -n "$test" ]]; then
      if [[ $solver == libsvm ]]; then
        svm-predict "$test" "$model" "$work/pred" >"$work/acc" 2>&1
      else
        pdev=$device
        "$tessel" predict svm --device "$pdev" --model "$model" --data "$test" >"$work/acc" 2>&1
      fi
      acc=$(accuracy "$work/acc")
    fi
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    echo "| $set | $solver | $device | $obj | $rel | $secs | $acc | \`${cmd//$work\//}\` |"
  done
done
echo
echo "Machine: $(nproc) CPU cores; GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo none)."
echo "Seconds include reading the data file (wall clock of the whole command). The relative difference is against"
echo "tessel's SMO; both solve the same dual to the same eps, so it is bounded by eps * sum(C) / |obj|."
