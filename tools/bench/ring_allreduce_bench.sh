#!/usr/bin/env bash
# Runs tessel_ring_allreduce_bench under mpirun (RingAllreduce at several chunk sizes vs the MPI library's own
# MPI_Allreduce on the same buffer, payloads 1 KB to 256 MB per rank) and rewrites the "## Ring allreduce" section
# of docs/benchmarks.md with the table, the machine and the exact command. Builds nothing.
#
# Usage: tools/bench/ring_allreduce_bench.sh BUILD_DIR [extra tessel_ring_allreduce_bench options...]
#   e.g. tools/bench/ring_allreduce_bench.sh build --reps 5
# NP (default 4) ranks, started with --oversubscribe so they may outnumber the cores.
set -euo pipefail
# shellcheck source=tools/bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start 8 tessel_ring_allreduce_bench "$@"
shift
bench="$build/tools/bench/tessel_ring_allreduce_bench"
mpirun=${MPIRUN:-mpirun}
if ! command -v "$mpirun" >/dev/null; then
  echo "error: $mpirun not found (set MPIRUN)" >&2
  exit 1
fi
np=${NP:-4}
# Open MPI refuses to run as root without these (containers); harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
args=(--markdown "$@")

cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
mpi_version=$("$mpirun" --version 2>/dev/null | head -1)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "running: $mpirun -np $np --oversubscribe $bench ${args[*]}" >&2
start=$(date +%s)
table=$("$mpirun" -np "$np" --oversubscribe "$bench" "${args[@]}")
seconds=$(($(date +%s) - start))
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)

section=$(mktemp)
trap 'rm -f "$section"' EXIT
cat >"$section" <<EOS
## Ring allreduce

\`RingAllreduce\` (comm/ring_allreduce.h: reduce-scatter then allgather on \`SendRecvRaw\`, docs/comm.md) with whole
segments and with chunked segment transfers, against the named baseline \`MPI_Allreduce\` of the MPI library (through
\`comm.Allreduce\` on the MPI backend) on the same float buffer in the same run. Each payload is the buffer size per
rank; after one warm-up per method (which also checks the sums), the methods run interleaved rep by rep. A rep is a
barrier, the allreduce, and the slowest rank's time (a max-allreduce afterwards); the table gives the median and
the minimum over the reps. *algbw* is payload bytes / median time; *busbw* is algbw × 2(P-1)/P, the bytes each
rank must at least send and receive, so it compares with the transport's bandwidth. The last column is the ring's
median over MPI_Allreduce's: below 1, the ring is faster.

- Machine: $(nproc) CPUs (\`nproc\`), ${cpu_model}; ${mpi_version}, shared memory (vader); $np ranks on $(nproc)
  cores (oversubscribed when more ranks than cores: ranks wait for a core, so times are those of a busy node, not of
  a cluster). Load average $load_before before and $load_after after the run ($seconds s).
- Commit: $commit (plus uncommitted changes, if any), $(date -u +%Y-%m-%d).
- Command: \`tools/bench/ring_allreduce_bench.sh $build${*:+ $*}\`, which ran
  \`mpirun -np $np --oversubscribe $(basename "$bench") ${args[*]}\`.

$table

EOS

write_bench_section "## Ring allreduce" "$section"
printf '%s\n' "$table"
