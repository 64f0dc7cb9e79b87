# Shared by the benchmark scripts (sourced, not run): native dataset folders of the benchmark graphs (bench_dataset
# needs $tessel, $work and $DATA; CSBM settings from CSBM_NODES, CSBM_DEGREE, CSBM_FEATURES and CSBM_SPLIT), and
# the rewrite of one section of docs/benchmarks.md (replace_doc_section).

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
