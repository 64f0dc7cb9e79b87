# Shared by the benchmark scripts (sourced, not run; sourcing sets repo, the checkout that holds it): the common
# start of a script (bench_start, bench_need_tool, bench_mpi_workspace), native dataset folders of the benchmark
# graphs (bench_dataset needs $tessel, $work and $DATA; CSBM settings from CSBM_NODES, CSBM_DEGREE, CSBM_FEATURES
# and CSBM_SPLIT), and the rewrite of one section of docs/benchmarks.md (replace_doc_section, write_bench_section).

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# bench_start LAST TARGETS ARGS...: with no ARGS, or -h/--help first, prints the script's header comment (lines 2 to
# LAST of $0, without the leading "# ") and exits 2. Otherwise sets build to the first of ARGS (the build folder)
# and checks that each of the space-separated TARGETS is built there (tessel: BUILD/tools/tessel; any other:
# BUILD/tools/bench/TARGET), exiting 1 with the ninja command that builds them when one is missing.
bench_start() {
  local last=$1 targets=$2 target exe
  shift 2
  if [[ $# -lt 1 || "$1" == "-h" || "$1" == "--help" ]]; then
    sed -n "2,${last}p" "$0" | sed 's/^# \{0,1\}//'
    exit 2
  fi
  build=$1
  for target in $targets; do
    if [[ $target == tessel ]]; then exe="$build/tools/tessel"; else exe="$build/tools/bench/$target"; fi
    [[ -x "$exe" ]] || { echo "error: $exe not found; build it: ninja -C $build $targets" >&2; exit 1; }
  done
}

# bench_mpi_workspace NAME: what the mpirun benchmarks set up before their runs: DATA (default $TESSEL_SHARED_DATA,
# else ../shared/data beside the checkout), Open MPI allowed to run as root (containers), a temporary folder $work
# (tessel_NAME.XXXXXX, removed on exit) and in it an empty $results file (results.jsonl).
bench_mpi_workspace() {
  DATA=${DATA:-${TESSEL_SHARED_DATA:-$repo/../shared/data}}
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  work=$(mktemp -d "${TMPDIR:-/tmp}/tessel_$1.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  results="$work/results.jsonl"
  : >"$results"
}

# bench_need_tool TOOL HINT: exits 1 with "error: TOOL not found (HINT)" unless TOOL is on the PATH.
bench_need_tool() {
  command -v "$1" >/dev/null || { echo "error: $1 not found ($2)" >&2; exit 1; }
}

# replace_doc_section DOC HEADING SECTION_FILE: DOC with the section from the line HEADING ("## Name") up to the next
# "## " heading replaced by SECTION_FILE's text, or that text appended when DOC has no such section.
replace_doc_section() {
  local doc=$1 heading=$2 section_file=$3
  local tmp="$doc.tmp.$$"
  awk -v section_file="$section_file" -v heading="$heading" '
    BEGIN { while ((getline line < section_file) > 0) sec = sec line "\n" }
    /^## / {
      if (skipping) skipping = 0
      if ($0 == heading) { printf "%s", sec; skipping = 1; done = 1; next }
    }
    !skipping { print }
    END { if (!done) printf "%s", sec }
  ' "$doc" >"$tmp"
  mv "$tmp" "$doc"
}

# bench_dataset NAME -> prints a native dataset folder under $work with a split (Facebook page-page from
# $DATA/graphs/facebook_page_page: random 60/20/20, seed 1, as tools/bench/gcn_bench.sh; csbm: generated, seed 1).
bench_dataset() {
  local name=$1 dir="$work/$1"
  if [[ ! -d "$dir" ]]; then
    case $name in
      facebook)
        local src="$DATA/graphs/facebook_page_page" p="$work/fb"
        [[ -f "$src/facebook_edges.csv" ]] || { echo "error: no Facebook data at $src" >&2; exit 1; }
        ln -s "$src/facebook_edges.csv" "$p.edges.txt"
        ln -s "$src/facebook.features.txt" "$p.features.txt"
        ln -s "$src/facebook.labels.txt" "$p.labels.txt"
        "$tessel" --log-level warn convert --from nodetable "$p" --name facebook --split 0.6,0.2,0.2 --seed 1 \
          -o "$dir" >/dev/null ;;
      csbm)
        "$tessel" --log-level warn generate csbm --nodes "${CSBM_NODES:-1000000}" --avg-degree "${CSBM_DEGREE:-20}" \
          --features "${CSBM_FEATURES:-128}" --classes 8 --split "${CSBM_SPLIT:-0.6,0.2,0.2}" --seed 1 \
          --output "$dir" >/dev/null ;;
      *) echo "error: unknown graph '$name' (facebook or csbm)" >&2; exit 1 ;;
    esac
  fi
  echo "$dir"
}

# write_bench_section HEADING SECTION_FILE: replace_doc_section on $repo/docs/benchmarks.md (made, with its
# introduction, when there is none yet), and says so on stderr.
write_bench_section() {
  local doc="$repo/docs/benchmarks.md"
  if [[ ! -f "$doc" ]]; then
    mkdir -p "$(dirname "$doc")"
    # shellcheck disable=SC2016  # the backquotes are Markdown's
    printf '# Benchmarks\n\nMeasured results of the benchmarks under `tools/bench/`; each section is rewritten by its own\nscript and names the machine and the exact command. Every benchmark times a named baseline in the same run.\n\n' >"$doc"
  fi
  replace_doc_section "$doc" "$1" "$2"
  echo "updated the '$1' section of $doc" >&2
}
