#!/usr/bin/env bash
# Compressed input, streamed against inflated whole: `tessel convert` of large .gz/.bz2 files by TESSEL and by
# BASELINE_TESSEL (a build from before the streaming readers, e.g. commit 7f1b4b7), with `gzip -dc`/`bzip2 -dc` to
# /dev/null as the named floor (decompression alone), in one run. Reports wall seconds and peak resident memory
# (/usr/bin/time), checks that both builds write identical datasets, and rewrites the "## Compressed input"
# section of docs/benchmarks.md.
#
# Usage: tools/bench/stream_bench.sh TESSEL BASELINE_TESSEL [EDGES_MILLIONS=20] [LIBSVM_COPIES=80]
# Inputs are made in a temporary folder: a random edge list (EDGES_MILLIONS million "u<TAB>v" lines over 2M nodes,
# awk seed 1) and LIBSVM rows (w8a from $TESSEL_SHARED_DATA, default ../shared/data, repeated LIBSVM_COPIES times).
set -euo pipefail

if [[ $# -lt 2 || "$1" == "-h" || "$1" == "--help" ]]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
tessel=$(realpath "$1")
baseline=$(realpath "$2")
edges_m=${3:-20}
copies=${4:-80}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
shared=${TESSEL_SHARED_DATA:-$repo/../shared/data}
w8a="$shared/svm/w8a/w8a"
[[ -f "$w8a" ]] || { echo "error: $w8a not found (set TESSEL_SHARED_DATA)" >&2; exit 1; }
for t in "$tessel" "$baseline"; do [[ -x "$t" ]] || { echo "error: $t is not an executable" >&2; exit 1; }; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "making inputs in $work ..." >&2
awk -v n="$edges_m" 'BEGIN { srand(1); for (i = 0; i < n * 1000000; ++i) printf "%d\t%d\n", int(rand() * 2000000), int(rand() * 2000000) }' >"$work/edges.txt"
for ((i = 0; i < copies; ++i)); do cat "$w8a"; done >"$work/rows.svm"
gzip -1 -c "$work/edges.txt" >"$work/edges.txt.gz"
gzip -6 -c "$work/rows.svm" >"$work/rows.svm.gz"
bzip2 -9 -c "$work/rows.svm" >"$work/rows.svm.bz2"
text_mb() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.0f", b / 1e6 }'; }

# measure LABEL CMD... -> appends "label|seconds|peak MB" to $work/rows
measure() {
  local label=$1
  shift
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  read -r secs kb <"$work/time"
  echo "$label|$secs|$(awk -v k="$kb" 'BEGIN { printf "%.0f", k / 1024 }')" >>"$work/rows"
}

table="| input | text | compressed | run | seconds | peak resident memory |
|---|---:|---:|---|---:|---:|"
for spec in "edges.txt.gz edgelist gzip" "rows.svm.gz libsvm gzip" "rows.svm.bz2 libsvm bzip2"; do
  read -r file format codec <<<"$spec"
  input="$work/$file"
  : >"$work/rows"
  echo "timing $file ..." >&2
  measure "\`$codec -dc\` (floor: decompression only)" "$codec" -dc "$input"
  measure "tessel convert, inflated whole (baseline)" "$baseline" --log-level warn convert --from "$format" "$input" -o "$work/old"
  measure "tessel convert, streamed" "$tessel" --log-level warn convert --from "$format" "$input" -o "$work/new"
  same=$(diff -r "$work/old" "$work/new" >/dev/null && echo "identical datasets" || echo "DATASETS DIFFER")
  rm -rf "$work/old" "$work/new"
  first=1
  while IFS='|' read -r label secs mb; do
    if ((first)); then
      table+=$'\n'"| $format ($same) | $(text_mb "${input%.*}") MB | $(text_mb "$input") MB | $label | $secs | $mb MB |"
      first=0
    else
      table+=$'\n'"| | | | $label | $secs | $mb MB |"
    fi
  done <"$work/rows"
done

cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
section=$(mktemp)
trap 'rm -rf "$work" "$section"' EXIT
cat >"$section" <<SECTION
## Compressed input

\`tessel convert\` of large compressed files, streamed (datasets/text_input.h \`TextStream\`: 16 MiB windows, the
next inflated on a second thread while the current one is parsed) against the same command of a build that
inflates the whole file before parsing (the named baseline), and \`gzip -dc\`/\`bzip2 -dc\` to /dev/null as the
floor. Both builds wrote identical dataset folders (\`diff -r\`) where the table says so. *Peak resident memory* is
the maximum RSS (/usr/bin/time %M); the parsed arrays and the written dataset are the same in both runs, so the
difference is the inflated text the baseline holds, where the peak falls while reading (LIBSVM: the parsed blocks
and then the dataset's arrays). An edge list's peak comes later, while the graph is built from the edges, after both
builds have released the text, so streaming leaves it unchanged. Both builds are Clang builds without CUDA (a CUDA
build maps the CUDA libraries at start-up: about 250 MB resident before any work).

- Machine: $(nproc) CPUs (\`nproc\`), ${cpu_model}.
- Commit: $commit (plus uncommitted changes, if any), $(date -u +%Y-%m-%d).
- Command: \`tools/bench/stream_bench.sh $1 $2 $edges_m $copies\`.
- Inputs: $edges_m million random edges over 2M nodes (gzip -1); w8a repeated $copies times (gzip -6 and bzip2 -9).

$table

SECTION

# shellcheck source=tools/bench/lib.sh
source "$repo/tools/bench/lib.sh"
write_bench_section "## Compressed input" "$section"
printf '%s\n' "$table"
