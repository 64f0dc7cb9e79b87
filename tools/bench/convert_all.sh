#!/usr/bin/env bash
# Converts every dataset under ../shared/data (graphs and SVM sets) with `tessel convert`, checks the counts of
# `tessel info --json` against the READMEs, and prints a Markdown table (dataset, nodes/rows, edges/nnz, ...).
#
# Usage: tools/bench/convert_all.sh BUILD_DIR [DATA_DIR]
#   BUILD_DIR  a build folder holding tools/tessel (e.g. build-native)
#   DATA_DIR   the shared data (default: ../shared/data beside the checkout, or $TESSEL_SHARED_DATA)
# Needs jq. Exits 1 when a conversion fails or a count differs from the README. Outputs go to a temporary folder
# that is removed at the end. Seconds = wall time of one `tessel convert` (process start, read, build, write,
# checksums); the named baseline in the same run is `zcat -f INPUTS | wc -l`, the time to merely read every input
# line once (the same files the conversion reads). CPU seconds = user + system time of the conversion (all its
# threads), from /usr/bin/time: on a shared machine wall time also counts waiting for a core and for fsync.
set -euo pipefail

if [[ $# -lt 1 || ! -x "$1/tools/tessel" ]]; then
  echo "usage: $0 BUILD_DIR [DATA_DIR]   (BUILD_DIR/tools/tessel must exist: ninja -C BUILD_DIR tessel)" >&2
  exit 2
fi
command -v jq >/dev/null || { echo "convert_all.sh needs jq (apt-get install jq)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "convert_all.sh needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
TESSEL="$(cd "$1" && pwd)/tools/tessel"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DATA="${2:-${TESSEL_SHARED_DATA:-$HERE/../../../shared/data}}"
[[ -d "$DATA/graphs" && -d "$DATA/svm" ]] || { echo "no shared data at $DATA" >&2; exit 2; }
G="$DATA/graphs"
S="$DATA/svm"
OUT="$(mktemp -d "${TMPDIR:-/tmp}/tessel_convert_all.XXXXXX")"
trap 'rm -rf "$OUT"' EXIT

failures=0
echo "| dataset | format | nodes / rows | edges / nnz | features | classes | split | seconds | CPU seconds | wc -l seconds | README |"
echo "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- |"

# The input files a conversion reads: file arguments, and the files behind a LINQS or node-table prefix.
inputs() {
  local format="$1" arg ext
  shift
  for arg in "$@"; do
    if [[ -f "$arg" ]]; then
      echo "$arg"
    elif [[ "$format" == linqs && -f "$arg.content" ]]; then
      printf '%s\n' "$arg.content" "$arg.cites"
    elif [[ "$format" == nodetable ]]; then
      for ext in edges.txt features.txt labels.txt train.txt val.txt test.txt; do
        [[ -f "$arg.$ext" ]] && echo "$arg.$ext"
      done
    fi
  done
  return 0
}

elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# run NAME FORMAT "EXPECTED nodes edges features classes" CONVERT-ARGS...
# EXPECTED fields may be '-' (not stated in the README); edges = undirected edges (graphs) or non-zeros (rows).
run() {
  local name="$1" format="$2" expected="$3"
  shift 3
  local dir="$OUT/$name" start end json
  start=$(date +%s.%N)
  if ! /usr/bin/time -o "$OUT/$name.time" -f "%U %S" "$TESSEL" --log-level warn convert --from "$format" "$@" --output "$dir" >"$OUT/$name.log" 2>&1; then
    echo "| $name | $format | conversion failed: $(tail -1 "$OUT/$name.log") | | | | | | | | FAIL |"
    failures=$((failures + 1))
    return
  fi
  end=$(date +%s.%N)
  local base_start base_end
  local -a files
  mapfile -t files < <(inputs "$format" "$@")
  base_start=$(date +%s.%N)
  zcat -f "${files[@]}" | wc -l >/dev/null
  base_end=$(date +%s.%N)
  json=$("$TESSEL" --log-level warn info --json "$dir")
  local got
  got=$(jq -r '[(.num_nodes // .num_rows), (.num_edges // .nnz), (.features.dim // .num_features),
                 .num_classes, (if .split then "\(.split.train)/\(.split.val)/\(.split.test)" else "-" end),
                 .checksums.ok] | @tsv' <<<"$json")
  local nodes edges features classes split ok
  IFS=$'\t' read -r nodes edges features classes split ok <<<"$got"
  [[ "$split" == "0/0/0" ]] && split="-"
  local verdict="ok" i=0 want have
  local -a wants=($expected) haves=("$nodes" "$edges" "$features" "$classes")
  for want in "${wants[@]}"; do
    have="${haves[$i]}"
    if [[ "$want" != "-" && "$want" != "$have" ]]; then
      verdict="MISMATCH (README: ${wants[*]})"
    fi
    i=$((i + 1))
  done
  [[ "$ok" == "true" ]] || verdict="CHECKSUM FAILED"
  [[ "$verdict" == "ok" ]] || failures=$((failures + 1))
  local cpu
  cpu=$(awk '{ printf "%.2f", $1 + $2 }' "$OUT/$name.time")
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$format" "$nodes" "$edges" \
    "$features" "$classes" "$split" "$(elapsed "$start" "$end")" "$cpu" "$(elapsed "$base_start" "$base_end")" \
    "$verdict"
}

run cora-linqs linqs "2708 5278 1433 7" "$G/cora/cora"
run cora-planetoid nodetable "2708 5278 1433 7" "$G/cora/cora"
run pubmed nodetable "19717 44324 0 3" "$G/pubmed/pubmed"
run facebook nodetable "22470 170823 4714 4" "$G/facebook_page_page/facebook" \
  --edges "$G/facebook_page_page/facebook_edges.csv" --split 0.6,0.2,0.2 --seed 1
run soc-slashdot0902 edgelist "82168 504230 0 0" "$G/snap_soc_slashdot0902/soc-slashdot0902.edges.txt"
run ego-twitter edgelist "81306 1342296 0 0" "$G/snap_ego_twitter/ego-twitter.edges.txt"
run 4elt metis "7434 43031 0 0" "$G/metis_examples/4elt.graph"
run copter2 metis "55476 352238 0 0" "$G/metis_examples/copter2.graph"
run mdual metis "258569 513132 0 0" "$G/metis_examples/mdual.graph"
run heart_scale libsvm "270 - 13 2" "$S/heart_scale/heart_scale"
run a9a libsvm "32561 - 123 2" "$S/a9a/a9a"
run w8a libsvm "49749 - 300 2" "$S/w8a/w8a"
run letter libsvm "15000 - 16 26" "$S/letter/letter.scale"
run usps libsvm "7291 - 256 10" "$S/usps/usps.esl.gz"
run mnist-test libsvm "10000 - 784 10" "$S/mnist/mnist.t.gz" --num-features 784

if [[ $failures -gt 0 ]]; then
  echo "$failures dataset(s) failed or disagree with their README" >&2
  exit 1
fi
