#!/usr/bin/env bash
# The distributed-GCN headline experiment: `mpirun -np RANKS tessel train gcn --partitions` on Facebook
# page-page and a generated CSBM graph, METIS vs random partitions, skew s in SKEWS and the variance-budget mode;
# mean over SEEDS training seeds of test accuracy, remote-feature bytes per epoch and the remote share of picks.
# The baseline of every row is s = 1 (uniform sampling) on the same partition in the same run. Writes a Markdown
# table to stdout (and to OUT when set); progress goes to stderr. Builds nothing.
#
# Usage: tools/bench/dist_gcn_bench.sh BUILD_DIR
# Settings (environment, defaults = the full experiment):
#   GRAPHS="facebook csbm"  METHODS="metis random"  SKEWS="1 2 4 8"  VARIANCE=2 (empty = skip the budget mode)
#   SEEDS=5  EPOCHS=20  RANKS=4  BATCH=512 (seeds per rank and step)  FANOUTS=10,10
#   CACHE=0 (--feature-cache: 0 = every remote row is fetched, as in Jiang & Rumi; -1 caches the 1-hop halo)
#   CSBM_NODES=1000000  CSBM_DEGREE=20  CSBM_FEATURES=128  CSBM_SPLIT=0.6,0.2,0.2  THREADS=1 (per rank)  OUT=
#   DATA=../shared/data  EXTRA="" (more `train gcn` flags for every run, e.g. --normalize-features l1 --lr 0.02)
# Reduced smoke run: GRAPHS=facebook METHODS=metis SKEWS="1 4" SEEDS=1 EPOCHS=2 tools/bench/dist_gcn_bench.sh B
set -euo pipefail
# shellcheck source=tools/bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start 15 tessel "$@"
tessel="$build/tools/tessel"
bench_need_tool mpirun "apt-get install openmpi-bin"
GRAPHS=${GRAPHS:-facebook csbm}
METHODS=${METHODS:-metis random}
SKEWS=${SKEWS:-1 2 4 8}
VARIANCE=${VARIANCE-2}
SEEDS=${SEEDS:-5}
EPOCHS=${EPOCHS:-20}
RANKS=${RANKS:-4}
BATCH=${BATCH:-512}
FANOUTS=${FANOUTS:-10,10}
CACHE=${CACHE:-0}
CSBM_NODES=${CSBM_NODES:-1000000}
CSBM_DEGREE=${CSBM_DEGREE:-20}
CSBM_FEATURES=${CSBM_FEATURES:-128}
CSBM_SPLIT=${CSBM_SPLIT:-0.6,0.2,0.2}
THREADS=${THREADS:-1}
EXTRA=${EXTRA:-}
bench_mpi_workspace dist_bench

for graph in $GRAPHS; do
  data=$(bench_dataset "$graph")
  for method in $METHODS; do
    parts="$work/$graph-$method"
    echo "== $graph: $method partition into $RANKS parts" >&2
    "$tessel" --log-level warn partition "$data" -k "$RANKS" --method "$method" --seed 1 -o "$parts" >/dev/null
    modes=()
    for s in $SKEWS; do modes+=("skew $s"); done
    [[ -n "$VARIANCE" ]] && modes+=("variance $VARIANCE")
    for mode in "${modes[@]}"; do
      read -r kind value <<<"$mode"
      flag=--skew
      [[ $kind == variance ]] && flag=--skew-variance
      for seed in $(seq 0 $((SEEDS - 1))); do
        echo "   $mode, seed $seed" >&2
        json=$(mpirun -np "$RANKS" --oversubscribe "$tessel" --log-level warn train gcn --partitions "$parts" \
          --epochs "$EPOCHS" --batch-size "$BATCH" --fanouts "$FANOUTS" --feature-cache "$CACHE" \
          --threads "$THREADS" --seed "$seed" "$flag" "$value" $EXTRA --json)
        echo "{\"graph\": \"$graph\", \"method\": \"$method\", \"mode\": \"$kind\", \"value\": $value, \"seed\": $seed, \"result\": $json}" >>"$results"
      done
    done
  done
done

table=$(/usr/bin/python3 "$repo/tools/bench/dist_gcn_table.py" "$results")
cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
report=$(cat <<EOF
$table

$RANKS ranks (\`mpirun -np $RANKS --oversubscribe\`, $THREADS thread(s) each), $EPOCHS epochs, batch $BATCH seeds per
rank and step, fanouts $FANOUTS, --feature-cache $CACHE${EXTRA:+, $EXTRA}, $SEEDS seed(s); graphs: $GRAPHS (csbm: $CSBM_NODES nodes,
average degree $CSBM_DEGREE, $CSBM_FEATURES features, split $CSBM_SPLIT). Bytes are remote input-feature bytes per epoch summed over
ranks ("features" purpose: ids and rows); Δ columns compare with s = 1 on the same partition. Machine: $cpu_model,
$(nproc) cores; commit $commit.
EOF
)
echo "$report"
[[ -n "${OUT:-}" ]] && echo "$report" >"$OUT"
exit 0
