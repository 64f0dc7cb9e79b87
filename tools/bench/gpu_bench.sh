#!/usr/bin/env bash
# The GPU check in one call, for a machine with CUDA, CMake and ninja but no Debian packages and no network:
# unpacks the carried .debs (tools/bench/gpu_bench_prepare.sh made them) into a private prefix (never into /),
# builds tessel with CUDA and without MPI (or takes the build carried with --prebuilt), runs the tests labelled gpu
# (and, with --all-tests, every test), compute-sanitizer over the gpu tests, then the GPU benchmarks in order of
# importance, each under a time limit drawn from --budget, and prints one markdown table (also written to
# OUT/gpu_bench.md; every log and --json result goes into OUT/gpu_logs.tgz, refreshed after each step).
#
# Usage: tools/bench/gpu_bench.sh [--carry DIR (.gpu-carry)] [--out DIR ($OUT or ./out/gpu)] [--build DIR
#        (build-gpu)] [--prebuilt] [--budget SECONDS (0: none)] [--quick] [--all-tests] [--no-bench] [--no-sanitizer]
#   --prebuilt   the build folder was built elsewhere (gpu_bench_prepare.sh --build): skip configure and build
#   --budget S   end within S seconds: each step gets at most what is left, steps that no longer fit are skipped
#   --quick      smaller graphs and fewer repetitions (a smoke run of the whole script)
#   --all-tests  run the whole ctest suite, not only label gpu
# On the device tool: run(command="bash tools/bench/gpu_bench.sh --prebuilt --build .gpu-carry/build --budget 480",
#                         carry=[".gpu-carry"], timeout_s=540)
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
carry=$repo/.gpu-carry
out=${OUT:-$repo/out/gpu}
build=$repo/build-gpu
prebuilt=0
budget=0
quick=0
all_tests=0
bench=1
sanitizer=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --carry) carry=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --prebuilt) prebuilt=1; shift ;;
    --budget) budget=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --all-tests) all_tests=1; shift ;;
    --no-bench) bench=0; shift ;;
    --no-sanitizer) sanitizer=0; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$budget" =~ ^[0-9]+$ ]] || { echo "error: --budget takes whole seconds, got '$budget'" >&2; exit 2; }
[[ "$build" == /* ]] || build=$repo/$build
mkdir -p "$out"
logs=$(mktemp -d)  # every log; packed into OUT/gpu_logs.tgz after each step (the device tool returns 8 files at most)
work=$(mktemp -d)
trap 'rm -rf "$work" "$logs"' EXIT
table=$out/gpu_bench.md
: >"$table"
start=$SECONDS
row() { echo "| $1 | $2 | $3 |" | tee -a "$table"; }
step() { echo "== [$((SECONDS - start)) s] $*" >&2; }
pack() { tar czf "$out/gpu_logs.tgz" -C "$logs" . 2>/dev/null; }
fail=0

# limit WANT -> the seconds a step may take: WANT, or what is left of the budget less 10 s; 0 when under 15 s are left.
limit() {
  if [[ $budget -eq 0 ]]; then echo "$1"; return; fi
  local left=$((budget - (SECONDS - start) - 10))
  if [[ $left -lt 15 ]]; then echo 0; elif [[ $left -lt $1 ]]; then echo "$left"; else echo "$1"; fi
}
# timed WANT cmd... : runs cmd under timeout(limit WANT); status 124 when stopped, 125 when skipped for the budget.
timed() {
  local t
  t=$(limit "$1")
  shift
  [[ $t -eq 0 ]] && return 125
  timeout -k 5 "$t" "$@"
}

# ---- 1. Machine.
step "machine"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm \
  --format=csv,noheader | tee "$logs/machine.txt"
nvcc --version | tail -1 | tee -a "$logs/machine.txt"
echo "cores: $(nproc)" | tee -a "$logs/machine.txt"

# ---- 2. Packages into a prefix, the CUDA libraries on the loader's path (gpu_env.sh).
source "$repo/tools/bench/gpu_env.sh"
gpu_env_packages "$carry" || exit 1

# ---- 3. Build (CUDA on, MPI off: one GPU, one rank; warnings not fatal on an unknown compiler version).
if [[ $prebuilt -eq 1 ]]; then
  step "prebuilt binaries in $build"
  gpu_env_prebuilt "$build" "$repo" || exit 1
else
  step "configure and build in $build"
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_CUDA=ON -DTESSEL_MPI=OFF \
    -DTESSEL_WERROR=OFF -DTESSEL_BENCH=ON "${cmake_extra[@]}" >"$logs/configure.log" 2>&1 \
    || { tail -40 "$logs/configure.log"; pack; echo "error: configure failed (log: gpu_logs.tgz)" >&2; exit 1; }
  ninja -C "$build" >"$logs/build.log" 2>&1 \
    || { grep -m20 -B2 -A6 'error' "$logs/build.log"; pack; echo "error: build failed (log: gpu_logs.tgz)" >&2; exit 1; }
  step "built"
fi
tessel=$build/tools/tessel
"$tessel" --version 2>&1 | tee -a "$logs/machine.txt"
ldd "$tessel" | grep 'not found' >&2
export PYTHONUNBUFFERED=1
echo "| what | result | command |" >>"$table"
echo "| --- | --- | --- |" >>"$table"

# ---- 4. Tests: ctest where the build is this machine's, else the gpu test programs themselves.
step "tests"
gpu_tests=(kernels_gpu_tests sampling_gpu_tests train_gpu_tests)
if [[ $prebuilt -eq 0 ]]; then
  labels=(-L gpu)
  [[ $all_tests -eq 1 ]] && labels=()
  timed 300 ctest --test-dir "$build" "${labels[@]}" --output-on-failure -j 4 >"$logs/ctest.log" 2>&1
  rc=$?
  summary=$(grep -E 'tests passed|tests failed' "$logs/ctest.log" | tail -1)
  row "ctest ${labels[*]:-(all)}" "${summary:-no summary (status $rc)}" "ctest --test-dir build-gpu ${labels[*]}"
  [[ $rc -eq 0 ]] || { fail=1; grep -E 'Failed|\*\*\*' "$logs/ctest.log" | head -20; }
else
  for t in "${gpu_tests[@]}"; do
    timed 120 "$build/tests/$t" --gtest_color=no >"$logs/$t.log" 2>&1
    rc=$?
    summary=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) *\] [0-9]+ tests?[,.]|^\[  FAILED  \] [A-Z]' "$logs/$t.log" | tr '\n' ' ')
    row "$t" "${summary:-no summary} (status $rc)" "$t"
    [[ $rc -eq 0 ]] || { fail=1; grep -E '^\[  FAILED  \]|Failure|error' "$logs/$t.log" | head -20; }
  done
fi
pack

# ---- 5. compute-sanitizer (memcheck, then racecheck) over the gpu test programs: after the main benchmarks when
# they run (the sanitizers take minutes), else right after the tests.
sanitize() {
  [[ $sanitizer -eq 1 ]] || return 0
  command -v compute-sanitizer >/dev/null || { row "compute-sanitizer" "not installed" "-"; return 0; }
  local tool t rc summary filter
  # Left out: the test that makes cudaMalloc fail on purpose (memcheck counts its out-of-memory as API errors), and
  # under racecheck the two SVM tests that run thousands of rounds (over 60 s each there on an H200).
  local deliberate=DeviceErrors.AFailingCudaCallBecomesAnError
  local slow=SvmGpuTest.BatchSolverMatchesHostTwinForEveryKernelAndPolicy:SvmGpuTest.DeviceLoopRoundsAllocateNothing
  for tool in memcheck racecheck; do
    filter="-$deliberate"
    [[ $tool == racecheck ]] && filter="$filter:$slow"
    for t in "${gpu_tests[@]}"; do
      [[ -x "$build/tests/$t" ]] || continue
      step "compute-sanitizer --tool $tool $t"
      timed 60 compute-sanitizer --tool "$tool" --error-exitcode 99 "$build/tests/$t" --gtest_color=no \
        --gtest_filter="$filter" >"$logs/sanitizer_${tool}_$t.log" 2>&1
      rc=$?
      summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/sanitizer_${tool}_$t.log" | tail -1)
      case $rc in
        124) summary="stopped at its time limit; $(grep -c '^\[       OK \]' "$logs/sanitizer_${tool}_$t.log") tests done; $summary" ;;
        125) summary="skipped (budget)" ;;
      esac
      row "compute-sanitizer $tool, $t" "${summary:-no summary} (status $rc)" \
        "compute-sanitizer --tool $tool $t --gtest_filter=$filter"
      [[ $rc -eq 0 || $rc -eq 124 || $rc -eq 125 ]] || fail=1
    done
    pack
  done
}
[[ $bench -eq 1 ]] || { sanitize; cat "$table"; exit $fail; }

# ---- 6. Benchmarks, most important first. Each prints its own markdown table; the summary rows go into the table.
nodes=1000000
epochs=20
mb_epochs=5
[[ $quick -eq 1 ]] && { nodes=100000; epochs=5; mb_epochs=2; }

step "datasets: Cora (bundled) and a ${nodes}-node CSBM graph"
timed 120 "$tessel" --log-level warn generate csbm --nodes "$nodes" --avg-degree 20 --features 128 --classes 8 \
  --seed 1 -o "$work/csbm" >"$logs/generate.log" 2>&1 || { fail=1; tail "$logs/generate.log"; }
timed 60 "$tessel" --log-level warn convert --from nodetable "$repo/tests/data/cora/cora" -o "$work/cora" \
  >"$logs/convert.log" 2>&1 || { fail=1; tail "$logs/convert.log"; }

# tessel train gcn with --json: "X ms/epoch (phases), acc A (device counters of the last epoch)" or why not.
gcn_epoch() {  # want_s dataset device tag [extra flags]
  local want=$1 ds=$2 dev=$3 tag=$4
  shift 4
  timed "$want" "$tessel" --log-level warn train gcn --dataset "$ds" --device "$dev" --json "$@" \
    >"$logs/gcn_${tag}_${dev}.json" 2>"$logs/gcn_${tag}_${dev}.log"
  local rc=$?
  case $rc in
    0) python3 -c "
import json; j = json.load(open('$logs/gcn_${tag}_${dev}.json')); e = j['device_last_epoch']; t = j['totals']; n = j['epochs_run']
ph = ', '.join(f\"{k[:-8]} {t[k] / n * 1e3:.1f}\" for k in ('sample_seconds', 'fetch_seconds', 'forward_seconds', 'backward_seconds', 'optimizer_seconds', 'eval_seconds') if t.get(k))
print(f\"{j['mean_epoch_seconds']*1e3:.2f} ms/epoch (median {j['median_epoch_seconds']*1e3:.2f}; ms: {ph}), acc {j['test']['accuracy']:.4f} (last epoch: {e['runtime_allocations']} cudaMalloc, {e['h2d_copies']} uploads, {e['d2h_copies']} downloads)\")" \
         2>>"$logs/gcn_${tag}_${dev}.log" || echo "failed (unreadable json)" ;;
    124) echo "stopped at its time limit" ;;
    125) echo "skipped (budget)" ;;
    *) echo "failed (status $rc: $(tail -1 "$logs/gcn_${tag}_${dev}.log"))" ;;
  esac
}
peer_epoch() {  # want_s impl dataset device tag -> "X ms/epoch, acc A" or why not
  local want=$1 impl=$2 ds=$3 dev=$4 tag=$5
  timed "$want" python3 "$repo/tools/bench/gcn_peers.py" "$ds" --impl "$impl" --device "$dev" --epochs "$epochs" \
    >"$logs/peer_${impl}_${tag}_$dev.json" 2>"$logs/peer_${impl}_${tag}_$dev.log"
  local rc=$?
  case $rc in
    0) python3 -c "
import json; j = json.load(open('$logs/peer_${impl}_${tag}_$dev.json'))
print(f\"{j['mean_epoch_ms']:.2f} ms/epoch, acc {j['test_accuracy']:.4f}\")" || echo "failed (unreadable json)" ;;
    124) echo "stopped at its time limit" ;;
    125) echo "skipped (budget)" ;;
    *) echo "failed (status $rc: $(tail -1 "$logs/peer_${impl}_${tag}_$dev.log"))" ;;
  esac
}
pyg_minibatch() {  # want_s dataset device -> "X ms/epoch, acc A (sampler)" or why not: PyG's SAGEConv mini-batch
  local want=$1 ds=$2 dev=$3 out="$logs/pyg_minibatch_$dev"
  timed "$want" python3 "$repo/tools/bench/pyg_minibatch.py" "$ds" --device "$dev" --batch-size 1024 --fanouts 10,5 \
    --epochs "$mb_epochs" >"$out.json" 2>"$out.log"
  local rc=$?
  case $rc in
    0) python3 -c "
import json; j = json.load(open('$out.json'))
print(f\"{j['mean_epoch_ms']:.1f} ms/epoch, acc {j['test_accuracy']:.4f} (sampler: {j['sampler']})\")" ||
      echo "failed (unreadable json)" ;;
    124) echo "stopped at its time limit" ;;
    125) echo "skipped (budget)" ;;
    *) echo "failed (status $rc: $(tail -1 "$out.log"))" ;;
  esac
}
gcn_row() {  # want_s dataset device tag label [extra flags]
  local want=$1 ds=$2 dev=$3 tag=$4 label=$5
  shift 5
  local got
  got=$(gcn_epoch "$want" "$work/$ds" "$dev" "$tag" "$@")
  row "$label, tessel $dev" "$got" "tessel train gcn --dataset $ds --device $dev $*"
  [[ $dev == cuda && $got == failed* ]] && fail=1
}

# Full-batch GCN epoch (training step + evaluation): tessel on the GPU against PyG's GCNConv on the same GPU, then
# tessel's CPU path on all cores and a plain PyTorch sparse GCN (tools/bench/gcn_peers.py) on the same folders.
for ds in cora csbm; do
  step "GCN full batch on $ds"
  gcn_row 90 "$ds" cuda "$ds" "GCN full-batch epoch, $ds" --epochs "$epochs"
  row "GCN full-batch epoch, $ds, pyg cuda" "$(peer_epoch 120 pyg "$work/$ds" cuda "$ds")" \
    "gcn_peers.py $ds --impl pyg --device cuda --epochs $epochs"
  gcn_row 90 "$ds" cpu "$ds" "GCN full-batch epoch, $ds" --epochs "$epochs"
  pack
done
step "GCN mini-batch on csbm"
gcn_row 120 csbm cuda csbm_mb "GCN mini-batch epoch, csbm (batch 1024, fanouts 10,5)" --batch-size 1024 \
  --fanouts 10,5 --epochs "$mb_epochs"
gcn_row 150 csbm cpu csbm_mb "GCN mini-batch epoch, csbm (batch 1024, fanouts 10,5)" --batch-size 1024 \
  --fanouts 10,5 --epochs "$mb_epochs"
# PyG's GraphSAGE on the same graph and GPU (NeighborLoader when pyg-lib or torch-sparse is there, else plain
# PyTorch sampling on the GPU, named in the row), issue 49's peer of the sampled rows.
row "GCN mini-batch epoch, csbm (batch 1024, fanouts 10,5), pyg cuda" "$(pyg_minibatch 150 "$work/csbm" cuda)" \
  "pyg_minibatch.py csbm --device cuda --batch-size 1024 --fanouts 10,5 --epochs $mb_epochs"
pack

run_bench() {  # want_s name file command... : runs a benchmark if `file` exists, keeps its output
  local want=$1 name=$2 file=$3
  shift 3
  if [[ ! -e "$file" ]]; then
    row "$name" "not built ($file)" "-"
    return
  fi
  step "$name"
  timed "$want" "$@" >"$logs/$name.md" 2>"$logs/$name.log"
  local rc=$?
  case $rc in
    0) row "$name" "see $name.md" "$(basename "$1") ${*:2}" ;;
    124) row "$name" "stopped at its time limit" "$(basename "$1") ${*:2}" ;;
    125) row "$name" "skipped (budget)" "$(basename "$1") ${*:2}" ;;
    *) row "$name" "FAILED (see $name.log)" "$(basename "$1") ${*:2}"; fail=1 ;;
  esac
  pack
}
# SVM on a9a: the CUDA batched solver against the CPU SMO solver on all cores (same objective).
run_bench 150 gpu_svm "$repo/tools/bench/gpu_svm_bench.sh" env TESSEL_SHARED_DATA="$carry/data" \
  bash "$repo/tools/bench/gpu_svm_bench.sh" "$build" smo,cuda a9a
sanitize

step "the rest: CPU full batch, PyTorch, the other mini-batch paths, kernel and sampler benchmarks"
for ds in cora csbm; do
  row "GCN full-batch epoch, $ds, torch cuda" "$(peer_epoch 90 torch "$work/$ds" cuda "$ds")" \
    "gcn_peers.py $ds --impl torch --device cuda --epochs $epochs"
done
pack
# The blocks sampled on the CPU and uploaded every step (the pipeline's baseline), and the features in mapped host
# memory, each step's rows read over the bus by the gathers (the path for features larger than the GPU).
gcn_row 120 csbm cuda csbm_mb_host "GCN mini-batch epoch, csbm, CPU sampling (--no-device-sampling)" \
  --batch-size 1024 --fanouts 10,5 --no-device-sampling --epochs "$mb_epochs"
gcn_row 120 csbm cuda csbm_mb_mapped "GCN mini-batch epoch, csbm, features in mapped host memory" \
  --batch-size 1024 --fanouts 10,5 --features-on host --epochs "$mb_epochs"
pack
kb=$build/tools/bench/tessel_gpu_kernels_bench
sb=$build/tools/bench/tessel_gpu_sampler_bench
run_bench 90 gpu_kernels "$kb" "$kb" --nodes "$nodes"
run_bench 90 gpu_sampler "$sb" "$sb" --nodes "$nodes" --edges "$((nodes * 10))"
# The SVM device loop on the GPU beside the host solvers and its simulated twin (copies, allocations, cache hits).
lb=$build/tools/bench/tessel_svm_loop_bench
run_bench 120 svm_loop "$lb" env TESSEL_SHARED_DATA="$carry/data" bash "$repo/tools/bench/svm_loop_bench.sh" \
  "$build" --cuda a9a

step "done"
pack
echo
cat "$table"
exit $fail
