#!/usr/bin/env bash
# Runs tessel_parse_bench (ReadEdgeList on one thread vs `wc -l`) and rewrites the "## Text parsing" section of
# docs/benchmarks.md with the table, the machine and the exact command. Builds nothing.
#
# Usage: tools/bench/parse_bench.sh BUILD_DIR [extra tessel_parse_bench options...]
#   e.g. tools/bench/parse_bench.sh build-graphreaders
# The SNAP ego-Twitter file is taken from $TESSEL_SHARED_DATA (default: ../shared/data beside the checkout);
# when it is absent only the generated 10M-edge file is timed.
set -euo pipefail
# shellcheck source=tools/bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start 8 tessel_parse_bench "$@"
shift
bench="$build/tools/bench/tessel_parse_bench"
shared=${TESSEL_SHARED_DATA:-$repo/../shared/data}
twitter="$shared/graphs/snap_ego_twitter/ego-twitter.edges.txt"
args=(--markdown)
if [[ -f "$twitter" ]]; then
  args+=(--input "$(realpath "$twitter")")
else
  echo "warning: $twitter is absent; timing only the generated file" >&2
fi
args+=("$@")

cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "running: $bench ${args[*]}" >&2
table=$("$bench" "${args[@]}")
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)

section=$(mktemp)
trap 'rm -f "$section"' EXIT
cat >"$section" <<EOF
## Text parsing

\`ReadEdgeList\` (datasets/edgelist_reader.cc) on one thread (\`tessel::ThreadLimit(1)\`), best of 3 runs per
file, against the named baseline \`wc -l\` on the same file in the same run (best of 3; its time includes
starting the process). Inputs: SNAP ego-Twitter (\`ego-twitter.edges.txt\`, "u v" lines after two comment lines)
and a generated file of 10M random "u v" lines over 1M nodes (seeded xoshiro256**, written to a temporary folder).
*seconds* is wall-clock time, *edges/s* and *MB/s* derive from it; *CPU seconds* is user + system CPU time of the
parse (this process, one thread) and of \`wc -l\` (the child), and *edges per CPU second* derives from it: it
stays meaningful when other jobs share the cores (the load average below), while wall-clock time then includes
waiting for a core. The target is at least 20M edges/s on one core.

- Machine: $(nproc) CPUs (\`nproc\`), ${cpu_model}; load average $load_before before and $load_after after the run.
- Commit: $commit (plus uncommitted changes, if any), $(date -u +%Y-%m-%d).
- Command: \`tools/bench/parse_bench.sh $build\`, which ran
  \`$(basename "$bench") ${args[*]}\`.

$table

EOF

write_bench_section "## Text parsing" "$section"
printf '%s\n' "$table"
