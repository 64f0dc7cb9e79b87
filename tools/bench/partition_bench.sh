#!/usr/bin/env bash
# Partition quality and speed: converts the real graphs of ../shared/data and generates a 1M-node CSBM graph into a
# temporary folder, runs `tessel partition` for K = 2, 4, 8, 16 with METIS and the random and hash baselines, and
# rewrites the "## Partitioning" section of docs/benchmarks.md (quality table + 1M-node speed/memory lines).
#
# Usage: tools/bench/partition_bench.sh BUILD_DIR [DATA_DIR]
#   BUILD_DIR  a build folder holding tools/tessel (ninja -C BUILD_DIR tessel)
#   DATA_DIR   the shared data (default: $TESSEL_SHARED_DATA or ../shared/data beside the checkout)
# Needs jq and /usr/bin/time; gpmetis (Debian metis) is the named baseline for METIS's own time on the meshes.
set -euo pipefail

if [[ $# -lt 1 || "$1" == "-h" || "$1" == "--help" || ! -x "$1/tools/tessel" ]]; then
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
build_dir=$1
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TESSEL="$(cd "$build_dir" && pwd)/tools/tessel"
DATA="${2:-${TESSEL_SHARED_DATA:-$repo/../shared/data}}"
G="$DATA/graphs"
[[ -d "$G" ]] || { echo "no shared data at $DATA" >&2; exit 2; }
command -v jq >/dev/null || { echo "partition_bench.sh needs jq (apt-get install jq)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "partition_bench.sh needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
OUT="$(mktemp -d "${TMPDIR:-/tmp}/tessel_partition_bench.XXXXXX")"
trap 'rm -rf "$OUT"' EXIT
T() { "$TESSEL" --log-level warn "$@"; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "converting and generating datasets in $OUT" >&2
T convert --from nodetable "$G/cora/cora" -o "$OUT/cora" >/dev/null
T convert --from nodetable "$G/facebook_page_page/facebook" --edges "$G/facebook_page_page/facebook_edges.csv" \
  --split 0.6,0.2,0.2 --seed 1 -o "$OUT/facebook" >/dev/null
T convert --from edgelist "$G/snap_soc_slashdot0902/soc-slashdot0902.edges.txt" -o "$OUT/slashdot" >/dev/null
T convert --from edgelist "$G/snap_ego_twitter/ego-twitter.edges.txt" -o "$OUT/twitter" >/dev/null
for m in 4elt copter2 mdual; do T convert --from metis "$G/metis_examples/$m.graph" -o "$OUT/$m" >/dev/null; done
gen_args=(generate csbm -n 1000000 --avg-degree 20 --classes 16 --features 16 --degree-exponent 2.5 --seed 1)
T "${gen_args[@]}" -o "$OUT/csbm1m" >/dev/null

# part NAME K METHOD [extra options]: runs one partition under /usr/bin/time, leaves $OUT/r-NAME-K-METHOD.json
# (the command's --json) and .time (peak RSS KiB, wall seconds).
part() {
  local name=$1 k=$2 method=$3
  shift 3
  local base="$OUT/r-$name-$k-$method"
  /usr/bin/time -f "%M %e" -o "$base.time" "$TESSEL" --log-level warn partition "$OUT/$name" -k "$k" \
    --method "$method" --seed 1 "$@" -o "$base.dir" --json >"$base.json"
  rm -rf "$base.dir"
}
q() { jq -r "$2" "$OUT/r-$1.json"; }

rows=""
for name in cora facebook slashdot twitter 4elt copter2 mdual csbm1m; do
  for k in 2 4 8 16; do
    echo "partitioning $name into $k parts" >&2
    for method in metis random hash; do part "$name" "$k" "$method"; done
    m="$name-$k-metis"
    rows+=$(printf '| %s | %s | %s | %s | %s (%.1f%%) | %s (%.1f%%) | %s (%.1f%%) | %.3f | %.3f | %.3f | %s | %s | %.2f |' \
      "$name" "$(q "$m" .dataset.num_nodes)" "$(q "$m" '.dataset.num_entries / 2 | floor')" "$k" \
      "$(q "$m" .edge_cut)" "$(q "$m" '.cut_fraction * 100')" \
      "$(q "$name-$k-random" .edge_cut)" "$(q "$name-$k-random" '.cut_fraction * 100')" \
      "$(q "$name-$k-hash" .edge_cut)" "$(q "$name-$k-hash" '.cut_fraction * 100')" \
      "$(q "$m" .halo_replication)" "$(q "$name-$k-random" .halo_replication)" "$(q "$name-$k-hash" .halo_replication)" \
      "$(q "$m" '.balance | join(",")')" \
      "$(q "$m" '[.imbalance | to_entries[] | "\(.key) \(.value * 1000 | round / 1000)"] | join(", ")')" \
      "$(q "$m" .seconds.partition_total)")
    rows+=$'\n'
  done
done

# Speed and memory on the 1M-node graph, K = 16: METIS (default options) and the hash run as the named baseline
# (the same pipeline without METIS: load, stats, build, write).
s="csbm1m-16-metis"
h="csbm1m-16-hash"
speed=$(printf -- '- METIS, K = 16: %.1f s wall for `tessel partition` (load %.2f s, METIS input %.2f s, **METIS %.1f s = %.0f%% of the partitioning wall time, %.0f%% of its CPU time**, stats %.2f s, build %.2f s, write %.2f s); peak RSS %.0f MiB (`/usr/bin/time`), of which the METIS run itself accounts for most.\n- Baseline in the same run, `--method hash`, K = 16 (everything but METIS): %.1f s wall (build %.2f s, write %.2f s); peak RSS %.0f MiB.\n' \
  "$(q "$s" .seconds.total)" "$(q "$s" .seconds.load)" "$(q "$s" .seconds.prepare_metis_input)" \
  "$(q "$s" .seconds.metis)" "$(q "$s" '.metis_share * 100')" "$(q "$s" '.metis_cpu_share * 100')" \
  "$(q "$s" .seconds.stats)" "$(q "$s" .seconds.build)" "$(q "$s" .seconds.write)" \
  "$(awk '{print $1 / 1024}' "$OUT/r-$s.time")" \
  "$(q "$h" .seconds.total)" "$(q "$h" .seconds.build)" "$(q "$h" .seconds.write)" \
  "$(awk '{print $1 / 1024}' "$OUT/r-$h.time")")

# gpmetis (METIS's own program, k-way, 5% imbalance, one constraint) against tessel with the same settings.
gp=""
if command -v gpmetis >/dev/null; then
  for mesh in 4elt copter2 mdual; do
    cp "$G/metis_examples/$mesh.graph" "$OUT/$mesh.graph"
    gp_out=$(gpmetis -ptype=kway -ufactor=50 -seed=1 "$OUT/$mesh.graph" 16)
    gp_cut=$(grep -o 'Edgecut: *[0-9]*' <<<"$gp_out" | grep -o '[0-9]*$')
    gp_time=$(grep -E '^ *Partitioning:' <<<"$gp_out" | grep -oE '[0-9]+\.[0-9]+' | head -1)
    part "$mesh" 16 metis --balance nodes --metis-algorithm kway
    gp+=$(printf '| %s | %s | %s | %s | %.3f | %.3f |' "$mesh" "$gp_cut" "$(q "$mesh-16-metis" .edge_cut)" "$gp_time" \
      "$(q "$mesh-16-metis" .seconds.metis)" "$(q "$mesh-16-metis" .seconds.partition_total)")
    gp+=$'\n'
  done
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')

section=$(mktemp)
trap 'rm -rf "$OUT" "$section"' EXIT
cat >"$section" <<EOF
## Partitioning

\`tessel partition\` (partition/, [partition.md](partition.md)) with METIS (\`--method metis\`, default options:
recursive bisection for K <= 8, k-way above, edge-cut objective, imbalance 1.05, balance nodes,edges plus train
when the dataset has a training split) against the two baselines of the same command, \`--method random\`
(balanced random) and \`--method hash\`, all with \`--seed 1\`. *edge cut* = undirected edges whose ends are in
different parts (share of adjacency entries that cross parts); *halo repl.* = sum over parts of (owned + halo
nodes) / nodes, the copies of node data a full-graph step needs (1 = no communication); *METIS imbalance* = largest
part weight / average per constraint (at most 1.05 asked); *s* = wall seconds of the partitioning, METIS included.
Datasets: Cora (Planetoid split), Facebook page-page (random 0.6/0.2/0.2 split), SNAP soc-Slashdot0902 and
ego-Twitter (symmetrised), the METIS example meshes 4elt, copter2, mdual, and \`tessel ${gen_args[*]}\` (csbm1m).

- Machine: $(nproc) CPUs (\`nproc\`), ${cpu_model}, shared with other jobs: load average $load_before before and
  $load_after after the run, so wall times are inflated and noisy; CPU-time shares are steadier.
- Commit: $commit (plus uncommitted changes, if any), $(date -u +%Y-%m-%d).
- Command: \`tools/bench/partition_bench.sh $build_dir\`.

| dataset | nodes | edges | K | METIS edge cut | random edge cut | hash edge cut | METIS halo repl. | random halo repl. | hash halo repl. | balanced | METIS imbalance | s |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|
$rows
### 1M-node graph: time and memory

csbm1m: $(q "$s" .dataset.num_nodes) nodes, $(q "$s" '.dataset.num_entries / 2 | floor') undirected edges, 16 dense features, 16 classes.

$speed

### METIS's own program as a baseline

\`gpmetis -ptype=kway -ufactor=50 -seed=1 MESH.graph 16\` (its reported partitioning time) against
\`tessel partition --method metis --balance nodes --metis-algorithm kway -k 16 --seed 1\` on the converted mesh
(time inside METIS, and the whole partitioning: METIS input, METIS, stats, build, write).

| mesh | gpmetis edge cut | tessel edge cut | gpmetis s | tessel METIS s | tessel partitioning s |
|---|---:|---:|---:|---:|---:|
$gp
EOF

# shellcheck source=tools/bench/lib.sh
source "$repo/tools/bench/lib.sh"
write_bench_section "## Partitioning" "$section"
cat "$section"
