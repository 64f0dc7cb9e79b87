#!/usr/bin/env bash
# The SVM device loop against the host batched solvers (tessel_svm_loop_bench) on a9a and w8a: the baseline is the
# host reference that recomputes every row each round; beside it the host solver with a row cache (`--solver batch`)
# and the device loop on the simulated device (host twins: the CUDA path's own copies, allocations and row-cache
# behaviour, counted), and with --cuda the device loop on the GPU. Rewrites the "## SVM device loop" section of
# docs/benchmarks.md.
#
# Usage: tools/bench/svm_loop_bench.sh BUILD_DIR [--cuda] [sets=a9a,w8a] [q=1024]
# Data: $TESSEL_SHARED_DATA/svm (default ../shared/data beside the checkout). a9a: -c 1 -g 0.05; w8a: -c 16
# -g 0.03125 (the ThunderSVM paper's settings, as gpu_svm_bench.sh), eps 1e-3, 1000 MB row cache.
set -euo pipefail
# shellcheck source=tools/bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start 10 tessel_svm_loop_bench "$@"
shift
cuda=""
if [[ "${1:-}" == "--cuda" ]]; then
  cuda="--cuda"
  shift
fi
sets=${1:-a9a,w8a}
q=${2:-1024}
bench="$build/tools/bench/tessel_svm_loop_bench"
shared=${TESSEL_SHARED_DATA:-$repo/../shared/data}
[[ -d "$shared/svm" ]] || { echo "error: $shared/svm not found; set TESSEL_SHARED_DATA" >&2; exit 1; }

tables=""
for set in ${sets//,/ }; do
  case $set in
    a9a) data="$shared/svm/a9a/a9a"; flags="-c 1 -g 0.05" ;;
    w8a) data="$shared/svm/w8a/w8a"; flags="-c 16 -g 0.03125" ;;
    *) echo "error: unknown data set '$set' (use a9a or w8a)" >&2; exit 1 ;;
  esac
  echo "running $set ..." >&2
  # shellcheck disable=SC2086  # flags are words
  out=$("$bench" --data "$data" $flags -e 0.001 -m 1000 --working-set "$q" $cuda)
  tables+="**$set**: $out"$'\n\n'
done

section=$(mktemp)
trap 'rm -f "$section"' EXIT
cpu_model=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
cat >"$section" <<SECTION
## SVM device loop

\`tessel_svm_loop_bench\` (tools/bench/svm_loop_bench.cc) solves one binary problem four ways: the baseline is the
host batched reference, which recomputes the q rows of every round; then the host batched solver with a kernel-row
cache (what \`train svm --solver batch\` runs); then the device loop (\`--device cuda\`'s solver, svm/device_loop.h)
on the simulated device, whose host twins make the same decisions and whose counters are the CUDA path's copies
and allocations; and, with \`--cuda\` on a GPU machine, the device loop on the GPU. Kernel evaluations count kernel
values computed (the row cache's saving); the loop's uploads, downloads and bytes are per round, and the loop's
allocations are those made after the solve's setup. Seconds on the simulated device are host seconds: they say
nothing about a GPU.

- Machine: $(nproc) CPUs (\`nproc\`), ${cpu_model}${gpu:+; GPU: $gpu}.
- Commit: $(git -C "$repo" rev-parse --short HEAD) (plus uncommitted changes, if any), $(date -u +%Y-%m-%d).
- Command: \`tools/bench/svm_loop_bench.sh $build${cuda:+ $cuda} $sets $q\`.

$tables
SECTION

write_bench_section "## SVM device loop" "$section"
printf '%s' "$tables"
