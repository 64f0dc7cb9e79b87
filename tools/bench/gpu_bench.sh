#!/usr/bin/env bash
# The GPU check in one call, for a machine with CUDA, CMake and ninja but no Debian packages and no network:
# unpacks the carried .debs (tools/bench/gpu_bench_prepare.sh made them) into a private prefix (never into /),
# builds tessel with CUDA and without MPI, runs the tests labelled gpu (and, with --all-tests, every test), then the
# GPU benchmarks, and prints one markdown table (also written to OUT/gpu_bench.md with every log beside it).
#
# Usage: tools/bench/gpu_bench.sh [--carry DIR (.gpu-carry)] [--out DIR ($OUT or ./out/gpu)] [--build DIR
#        (build-gpu)] [--quick] [--all-tests] [--no-bench]
#   --quick      smaller graphs and fewer repetitions (a smoke run of the whole script)
#   --all-tests  run the whole ctest suite, not only label gpu
# On the device tool:  run(command="bash tools/bench/gpu_bench.sh", carry=[".gpu-carry"])
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
carry=$repo/.gpu-carry
out=${OUT:-$repo/out/gpu}
build=$repo/build-gpu
quick=0
all_tests=0
bench=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --carry) carry=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --all-tests) all_tests=1; shift ;;
    --no-bench) bench=0; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
table=$out/gpu_bench.md
: >"$table"
row() { echo "| $1 | $2 | $3 |" | tee -a "$table"; }
step() { echo "== $*" >&2; }
fail=0

# ---- 1. Machine.
step "machine"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader \
  | tee "$out/machine.txt"
nvcc --version | tail -1 | tee -a "$out/machine.txt"
cmake --version | head -1 | tee -a "$out/machine.txt"
echo "cores: $(nproc)" | tee -a "$out/machine.txt"

# ---- 2. Packages into a prefix (dpkg -x does not run maintainer scripts and does not touch /).
prefix=/tmp/tessel-prefix
if ls "$carry"/debs/*.deb >/dev/null 2>&1; then
  step "unpacking $(ls "$carry"/debs/*.deb | wc -l) packages into $prefix"
  rm -rf "$prefix"
  mkdir -p "$prefix"
  for f in "$carry"/debs/*.deb; do dpkg -x "$f" "$prefix" || { echo "error: cannot unpack $f" >&2; exit 1; }; done
  libdir=$prefix/usr/lib/x86_64-linux-gnu
  # Development symlinks that point at /lib/... (zlib, bzip2) must point into the prefix, whose runtime packages
  # were carried too: the machine's own versions may have other file names.
  find "$prefix" -type l | while read -r l; do
    t=$(readlink "$l")
    if [[ "$t" == /* && -e "$prefix$t" ]]; then ln -sf "$prefix$t" "$l"; fi
  done
  # Debian's alternatives symlinks are not made by dpkg -x: point the BLAS names at OpenBLAS ourselves.
  for l in libblas.so libblas.so.3 libopenblas.so libopenblas.so.0; do
    [[ -e "$libdir/openblas-pthread/$l" ]] && ln -sf "openblas-pthread/$l" "$libdir/$l"
  done
  export CMAKE_PREFIX_PATH=$prefix/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
  export LD_LIBRARY_PATH=$libdir:$libdir/openblas-pthread:$prefix/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export PATH=$prefix/usr/bin:$PATH
  cmake_extra=(-DCMAKE_LIBRARY_PATH="$libdir/openblas-pthread;$libdir" -DCMAKE_INCLUDE_PATH="$prefix/usr/include")
else
  step "no packages under $carry/debs: using the system's libraries"
  cmake_extra=()
fi

# ---- 3. Build (CUDA on, MPI off: one GPU, one rank; warnings not fatal on an unknown compiler version).
step "configure and build in $build"
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_CUDA=ON -DTESSEL_MPI=OFF \
  -DTESSEL_WERROR=OFF -DTESSEL_BENCH=ON "${cmake_extra[@]}" >"$out/configure.log" 2>&1 \
  || { tail -40 "$out/configure.log"; echo "error: configure failed (log: $out/configure.log)" >&2; exit 1; }
ninja -C "$build" >"$out/build.log" 2>&1 \
  || { grep -m20 -B2 -A6 'error' "$out/build.log"; echo "error: build failed (log: $out/build.log)" >&2; exit 1; }
tessel=$build/tools/tessel
"$tessel" --version 2>/dev/null | tee -a "$out/machine.txt"

# ---- 4. Tests.
step "tests"
echo "| what | result | command |" >>"$table"
echo "| --- | --- | --- |" >>"$table"
labels=(-L gpu)
[[ $all_tests -eq 1 ]] && labels=()
ctest --test-dir "$build" "${labels[@]}" --output-on-failure -j 4 >"$out/ctest.log" 2>&1
rc=$?
summary=$(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1)
skipped=$(grep -c 'Skipped' "$out/ctest.log" || true)
row "ctest ${labels[*]:-(all)}" "${summary:-no summary} ($skipped skipped)" "ctest --test-dir build-gpu ${labels[*]}"
[[ $rc -eq 0 ]] || { fail=1; grep -E 'Failed|\*\*\*' "$out/ctest.log" | head -20; }
[[ $bench -eq 1 ]] || { cat "$table"; exit $fail; }

# ---- 5. Benchmarks. Each prints its own markdown table into OUT; the summary rows go into the table.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nodes=1000000
epochs=20
[[ $quick -eq 1 ]] && { nodes=100000; epochs=5; }

step "datasets: Cora (bundled) and a ${nodes}-node CSBM graph"
"$tessel" --log-level warn generate csbm --nodes "$nodes" --avg-degree 20 --features 128 --classes 8 --seed 1 \
  -o "$work/csbm" >"$out/generate.log" 2>&1 || { fail=1; tail "$out/generate.log"; }

"$tessel" --log-level warn convert --from nodetable "$repo/tests/data/cora/cora" -o "$work/cora" \
  >"$out/convert.log" 2>&1 || { fail=1; tail "$out/convert.log"; }

# Full-batch GCN epoch (training step + evaluation), tessel on CPU (all cores) and GPU against PyG's GCNConv and a
# plain PyTorch sparse GCN (tools/bench/gcn_peers.py) on the same native folders, settings and devices. tessel's
# row also gives its last epoch's device counters (--json): runtime allocations, uploads and downloads.
gcn_epoch() {  # dataset device tag [extra flags] -> "X ms/epoch, acc A (device counters)" or "failed"
  local ds=$1 dev=$2 tag=$3
  shift 3
  "$tessel" --log-level warn train gcn --dataset "$ds" --device "$dev" --epochs "$epochs" --json "$@" \
    >"$out/gcn_${tag}_${dev}.json" 2>"$out/gcn_${tag}_${dev}.log" \
    && python3 -c "
import json; j = json.load(open('$out/gcn_${tag}_${dev}.json')); e = j['device_last_epoch']
print(f\"{j['mean_epoch_seconds']*1e3:.2f} ms/epoch, acc {j['test']['accuracy']:.4f} (last epoch: {e['runtime_allocations']} cudaMalloc, {e['h2d_copies']} uploads, {e['d2h_copies']} downloads)\")" \
    || echo failed
}
peer_epoch() {  # impl dataset device tag -> "X ms/epoch, acc A" or "failed (reason)"
  python3 "$repo/tools/bench/gcn_peers.py" "$2" --impl "$1" --device "$3" --epochs "$epochs" \
    >"$out/peer_$1_$4_$3.json" 2>"$out/peer_$1_$4_$3.log" \
    && python3 -c "
import json; j = json.load(open('$out/peer_$1_$4_$3.json'))
print(f\"{j['mean_epoch_ms']:.2f} ms/epoch, acc {j['test_accuracy']:.4f}\")" \
    || echo "failed ($(tail -1 "$out/peer_$1_$4_$3.log"))"
}
for ds in cora csbm; do
  path=$work/$ds
  step "GCN full batch on $ds"
  for dev in cpu cuda; do
    got=$(gcn_epoch "$path" "$dev" "$ds")
    row "GCN full-batch epoch, $ds, tessel $dev" "$got" "tessel train gcn --dataset $ds --device $dev --epochs $epochs"
    [[ $dev == cuda && $got == failed ]] && fail=1
    for impl in pyg torch; do
      row "GCN full-batch epoch, $ds, $impl $dev" "$(peer_epoch "$impl" "$path" "$dev" "$ds")" \
        "gcn_peers.py $ds --impl $impl --device $dev --epochs $epochs"
    done
  done
done

# Sampled mini-batch GCN on the CSBM graph: tessel's CPU path on all cores against its GPU path, same accuracy.
step "GCN mini-batch on csbm"
for dev in cpu cuda; do
  row "GCN mini-batch epoch, csbm, tessel $dev (batch 1024, fanouts 10,5)" \
    "$(gcn_epoch "$work/csbm" "$dev" csbm_mb --batch-size 1024 --fanouts 10,5)" \
    "tessel train gcn --dataset csbm --device $dev --batch-size 1024 --fanouts 10,5 --epochs $epochs"
done
# The same on the GPU with the blocks sampled on the CPU and uploaded every step (the pipeline's baseline).
row "GCN mini-batch epoch, csbm, tessel cuda, CPU sampling (--no-device-sampling)" \
  "$(gcn_epoch "$work/csbm" cuda csbm_mb_host --batch-size 1024 --fanouts 10,5 --no-device-sampling)" \
  "tessel train gcn --dataset csbm --device cuda --batch-size 1024 --fanouts 10,5 --no-device-sampling --epochs $epochs"
# The features in mapped host memory, each step's rows read over the bus by the gathers (--features-on host: the
# path for features larger than the GPU).
row "GCN mini-batch epoch, csbm, tessel cuda, features in mapped host memory (--features-on host)" \
  "$(gcn_epoch "$work/csbm" cuda csbm_mb_mapped --batch-size 1024 --fanouts 10,5 --features-on host)" \
  "tessel train gcn --dataset csbm --device cuda --batch-size 1024 --fanouts 10,5 --features-on host --epochs $epochs"

# Where the GPU time goes: an nsys summary of three full-batch epochs on the CSBM graph, when nsys is installed.
if command -v nsys >/dev/null 2>&1; then
  step "nsys profile of the CSBM full-batch epoch"
  nsys profile --stats=true -o "$out/gcn_csbm_cuda" --force-overwrite true \
    "$tessel" --log-level warn train gcn --dataset "$work/csbm" --device cuda --epochs 3 \
    >"$out/nsys_stats.txt" 2>&1 \
    && row "nsys summary, CSBM full batch" "see nsys_stats.txt" "nsys profile --stats=true tessel train gcn ..." \
    || row "nsys summary, CSBM full batch" "failed (see nsys_stats.txt)" "nsys profile"
fi

run_bench() {  # name file command... : runs a benchmark if `file` exists, keeps its output
  local name=$1 file=$2
  shift 2
  if [[ ! -e "$file" ]]; then
    row "$name" "not built ($file)" "-"
    return
  fi
  step "$name"
  if "$@" >"$out/$name.md" 2>"$out/$name.log"; then
    row "$name" "see $name.md" "$(basename "$1") ${*:2}"
  else
    row "$name" "FAILED (see $name.log)" "$(basename "$1") ${*:2}"
    fail=1
  fi
}
kb=$build/tools/bench/tessel_gpu_kernels_bench
sb=$build/tools/bench/tessel_gpu_sampler_bench
svm=$repo/tools/bench/gpu_svm_bench.sh
run_bench gpu_kernels "$kb" "$kb" --nodes "$nodes"
run_bench gpu_sampler "$sb" "$sb" --nodes "$nodes" --edges "$((nodes * 10))"
run_bench gpu_svm "$svm" env TESSEL_SHARED_DATA="$carry/data" bash "$svm" "$build"
# The SVM device loop on the GPU beside the host solvers and its simulated twin (copies, allocations, cache hits).
lb=$build/tools/bench/tessel_svm_loop_bench
run_bench svm_loop "$lb" env TESSEL_SHARED_DATA="$carry/data" bash "$repo/tools/bench/svm_loop_bench.sh" "$build" --cuda

echo
cat "$table"
for f in "$out"/gpu_kernels.md "$out"/gpu_sampler.md "$out"/gpu_svm.md "$out"/svm_loop.md; do
  [[ -s "$f" ]] && { echo; cat "$f"; }
done
exit $fail
