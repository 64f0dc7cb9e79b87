#!/usr/bin/env bash
# Where the GPU time goes, in one short call on the GPU machine (after gpu_bench.sh has shown what is slow): the gpu
# tests, tessel's phase timers with every launch synchronous (CUDA_LAUNCH_BLOCKING=1, so each phase's host timer
# holds its own GPU time), and Nsight Compute's per-kernel time summary (gpu__time_duration, one metric, one replay
# pass) of the full-batch and mini-batch GCN on the CSBM graph; then compute-sanitizer over the test programs not
# already covered. With --before OLD_TESSEL it first times the full-batch and mini-batch epochs of that binary and
# of this build side by side (a change's before/after on the same GPU, same call), with PyG's full-batch epoch, and
# runs the kernel benchmark (tessel's SpMM against cuSPARSE). Everything lands in OUT/gpu_profile.tgz; a summary is
# printed.
#
# Usage: tools/bench/gpu_profile.sh [--carry DIR (.gpu-carry)] [--build DIR (.gpu-carry/build)] [--out DIR ($OUT)]
#        [--nodes N (1000000)] [--budget SECONDS (240)] [--before OLD_TESSEL] [--no-ncu]
#        [--sanitize PROGRAM[:GTEST_FILTER]]...
# On the device tool: run(command="bash tools/bench/gpu_profile.sh", carry=[".gpu-carry"], timeout_s=300)
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
carry=$repo/.gpu-carry
build=$repo/.gpu-carry/build
out=${OUT:-$repo/out/gpu}
nodes=1000000
budget=240
sanitize=()
before=""
ncu=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --carry) carry=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --sanitize) sanitize+=("$2"); shift 2 ;;
    --before) before=$2; shift 2 ;;
    --no-ncu) ncu=0; shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$budget" =~ ^[0-9]+$ && "$nodes" =~ ^[0-9]+$ ]] || { echo "error: --budget and --nodes take whole numbers" >&2; exit 2; }
[[ "$build" == /* ]] || build=$repo/$build
mkdir -p "$out"
logs=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$work" "$logs"' EXIT
start=$SECONDS
step() { echo "== [$((SECONDS - start)) s] $*" >&2; }
pack() { tar czf "$out/gpu_profile.tgz" -C "$logs" . 2>/dev/null; }
timed() {  # WANT cmd... under timeout(min(WANT, budget left - 10)); 125 when under 15 s are left
  local left=$((budget - (SECONDS - start) - 10)) t=$1
  shift
  [[ $left -lt 15 ]] && return 125
  [[ $left -lt $t ]] && t=$left
  timeout -k 5 "$t" "$@"
}
source "$repo/tools/bench/gpu_env.sh"
gpu_env_packages "$carry" || exit 1
# A carried build (no CMakeCache.txt) is checked and its source folder name linked; a build made here is used as is.
[[ -f "$build/CMakeCache.txt" ]] || gpu_env_prebuilt "$build" "$repo" || exit 1
tessel=$build/tools/tessel
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$logs/machine.txt"

step "gpu tests"
for t in kernels_gpu_tests sampling_gpu_tests train_gpu_tests; do
  timed 60 "$build/tests/$t" --gtest_color=no >"$logs/$t.log" 2>&1
  echo "$t: status $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) *\] [0-9]+ tests?[,.]|^\[  FAILED  \] [A-Z]' "$logs/$t.log" | tr '\n' ' ')"
done
pack

step "datasets"
timed 60 "$tessel" --log-level warn generate csbm --nodes "$nodes" --avg-degree 20 --features 128 --classes 8 --seed 1 \
  -o "$work/csbm" >"$logs/generate.log" 2>&1 || tail -3 "$logs/generate.log"

timing() {  # label binary flags... : "label: median epoch X ms (mean Y), acc A" from tessel's --json
  local label=$1 bin=$2 tag=${1//[^a-zA-Z0-9]/_}
  shift 2
  timed 90 "$bin" --log-level warn train gcn --device cuda --json "$@" >"$logs/time_$tag.json" 2>"$logs/time_$tag.log" \
    || { echo "$label: failed: $(tail -1 "$logs/time_$tag.log")"; return; }
  python3 -c "
import json; j = json.load(open('$logs/time_$tag.json'))
print('$label: median epoch', round(j['median_epoch_seconds'] * 1e3, 2), 'ms (mean', round(j['mean_epoch_seconds'] * 1e3, 2), 'ms), test acc', round(j['test']['accuracy'], 4))"
}
if [[ -n "$before" ]]; then
  [[ "$before" == /* ]] || before=$repo/$before
  step "before / after, same GPU"
  timed 60 "$tessel" --log-level warn convert --from nodetable "$repo/tests/data/cora/cora" -o "$work/cora" \
    >"$logs/convert.log" 2>&1 || tail -3 "$logs/convert.log"
  for who in before after; do
    bin=$tessel
    [[ $who == before ]] && bin=$before
    timing "full batch cora, $who" "$bin" --dataset "$work/cora" --epochs 20
    timing "full batch csbm, $who" "$bin" --dataset "$work/csbm" --epochs 20
    timing "mini-batch csbm (1024; 10,5), $who" "$bin" --dataset "$work/csbm" --epochs 5 --batch-size 1024 --fanouts 10,5
  done
  for ds in cora csbm; do
    timed 60 python3 "$repo/tools/bench/gcn_peers.py" "$work/$ds" --impl pyg --device cuda --epochs 20 \
      >"$logs/pyg_$ds.json" 2>"$logs/pyg_$ds.log" \
      && python3 -c "import json; j = json.load(open('$logs/pyg_$ds.json')); print('full batch $ds, PyG: median epoch', round(j['median_epoch_ms'], 2), 'ms (mean', round(j['mean_epoch_ms'], 2), 'ms), test acc', round(j['test_accuracy'], 4))" \
      || echo "PyG $ds: failed: $(tail -1 "$logs/pyg_$ds.log")"
  done
  pack
  step "kernel benchmark: SpMM, tessel against cuSPARSE"
  timed 60 "$build/tools/bench/tessel_gpu_kernels_bench" --nodes "$nodes" >"$logs/gpu_kernels.md" 2>"$logs/gpu_kernels.log"
  echo "gpu_kernels_bench: status $?"
  grep -E '^\| [0-9]+ \|' "$logs/gpu_kernels.md"
  pack
fi

phases() {  # tag flags... : one line of per-epoch milliseconds by phase from tessel's --json
  local tag=$1
  shift
  timed 60 env CUDA_LAUNCH_BLOCKING=1 "$tessel" --log-level warn train gcn --dataset "$work/csbm" --device cuda --json "$@" \
    >"$logs/phases_$tag.json" 2>"$logs/phases_$tag.log" || { echo "$tag: failed: $(tail -1 "$logs/phases_$tag.log")"; return; }
  python3 -c "
import json; j = json.load(open('$logs/phases_$tag.json')); t = j['totals']; n = j['epochs_run']
keys = ('sample_seconds', 'fetch_seconds', 'forward_seconds', 'backward_seconds', 'optimizer_seconds', 'train_seconds', 'eval_seconds', 'epoch_seconds')
print('$tag (launch blocking, ms per epoch, mean of', n, '):', ', '.join(f'{k[:-8]} {t.get(k, 0) / n * 1e3:.2f}' for k in keys), '| median epoch', round(j['median_epoch_seconds'] * 1e3, 2))"
}
step "phases with synchronous launches"
phases full --epochs 6
phases minibatch --epochs 2 --batch-size 1024 --fanouts 10,5
pack

kernels() {  # tag want flags... : ncu's per-kernel summary, the top kernels by total time
  local tag=$1 want=$2
  shift 2
  timed "$want" ncu --metrics gpu__time_duration.sum --print-summary per-kernel --csv "$@" \
    >"$logs/ncu_$tag.csv" 2>"$logs/ncu_$tag.log"
  echo "$tag: ncu status $?"
  python3 - "$logs/ncu_$tag.csv" <<'PY' 2>&1 | tee "$logs/ncu_${tag}_top.txt"
import csv, sys
rows = []
with open(sys.argv[1]) as f:
    lines = [l for l in f if l.startswith('"')]
for r in csv.DictReader(lines):
    try:
        n = int(r.get("Invocations") or r.get("invocations") or 0)
        avg = float(str(r.get("Average") or r.get("Avg") or "0").replace(",", ""))
    except ValueError:
        continue
    unit = r.get("Metric Unit", "")
    scale = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0}.get(unit, 1e-6)
    rows.append((n * avg * scale, n, avg * scale, (r.get("Kernel Name") or r.get("Function Name") or "?")[:110]))
if not rows:
    print("no per-kernel rows read; the file begins:")
    print("".join(lines[:4]) or open(sys.argv[1]).read()[:800])
    sys.exit(0)
rows.sort(reverse=True)
total = sum(r[0] for r in rows)
print(f"total kernel time {total:.2f} ms over {sum(r[1] for r in rows)} launches")
for t, n, a, name in rows[:25]:
    print(f"{t:9.3f} ms {n:6d} x {a * 1e3:9.2f} us  {name}")
PY
  pack
}
step "per-kernel times (Nsight Compute)"
[[ $ncu -eq 1 ]] && kernels full 70 "$tessel" --log-level warn train gcn --dataset "$work/csbm" --device cuda --epochs 3
[[ $ncu -eq 1 ]] && kernels minibatch 50 --launch-skip 3000 --launch-count 1500 "$tessel" --log-level warn train gcn \
  --dataset "$work/csbm" --device cuda --epochs 1 --batch-size 1024 --fanouts 10,5

for spec in "${sanitize[@]}"; do
  prog=${spec%%:*}
  filter=${spec#*:}
  [[ "$filter" == "$spec" ]] && filter='*'
  for tool in memcheck racecheck; do
    step "compute-sanitizer $tool $prog ($filter)"
    timed 90 compute-sanitizer --tool "$tool" --error-exitcode 99 "$build/tests/$prog" --gtest_color=no \
      --gtest_filter="$filter" >"$logs/sanitizer_${tool}_$prog.log" 2>&1
    echo "$tool $prog: status $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/sanitizer_${tool}_$prog.log" | tail -1) $(grep -c '^\[       OK \]' "$logs/sanitizer_${tool}_$prog.log") tests ok"
  done
  pack
done
step "done"
pack
