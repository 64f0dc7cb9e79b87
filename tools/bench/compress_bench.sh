#!/usr/bin/env bash
# Compressed exchange in distributed GCN training (issue 15): `mpirun -np RANKS tessel train gcn --partitions`
# on METIS parts of Facebook page-page (and optionally a generated CSBM graph) with each --grad-compress /
# --feature-compress pair of CONFIGS; mean over SEEDS of test accuracy, remote-feature and gradient bytes per epoch
# (wire and raw), encode+decode seconds. Baselines in the same run: "none none" (float32) and "fp16 fp16".
# Writes a Markdown table to stdout (and OUT when set); progress to stderr. Builds nothing.
#
# Usage: tools/bench/compress_bench.sh BUILD_DIR
# Settings (environment):
#   GRAPHS=facebook (or "facebook csbm")  SEEDS=3  EPOCHS=10  RANKS=4  BATCH=512  FANOUTS=10,10  CACHE=0
#   HIDDEN=16  LAYERS=2 (HIDDEN=256 LAYERS=3 FANOUTS=10,10,10 = the wide model, where gradients are large)
#   CONFIGS="fp16/fp16 none/int8 int8/int8 topk:0.01/int8 none/qsgd:7 ..." (GRAD/FEATURE, each METHOD[:PARAM])
#   SKEW="" (e.g. "--skew-variance 2": added to every row but the first baseline, which stays s = 1)
#   CSBM_NODES=100000  THREADS=1  DATA=../shared/data  OUT=  JSONL= (a copy of every run's JSON line)
set -euo pipefail
# shellcheck source=tools/bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start 15 tessel "$@"
tessel="$build/tools/tessel"
bench_need_tool mpirun "apt-get install openmpi-bin"
GRAPHS=${GRAPHS:-facebook}
SEEDS=${SEEDS:-3}
EPOCHS=${EPOCHS:-10}
RANKS=${RANKS:-4}
BATCH=${BATCH:-512}
FANOUTS=${FANOUTS:-10,10}
CACHE=${CACHE:-0}
HIDDEN=${HIDDEN:-16}
LAYERS=${LAYERS:-2}
CONFIGS=${CONFIGS:-fp16/fp16 none/int8 int8/int8 qsgd/qsgd topk:0.01/int8 cltk:0.01/int8 powersgd:1/int8 randk:0.01/int8}
SKEW=${SKEW:-}
CSBM_NODES=${CSBM_NODES:-100000}
THREADS=${THREADS:-1}
bench_mpi_workspace compress_bench

first=1
for graph in $GRAPHS; do
  data=$(bench_dataset "$graph")
  parts="$work/$graph-metis"
  "$tessel" --log-level warn partition "$data" -k "$RANKS" --method metis --seed 1 -o "$parts" >/dev/null
  rows=("plain")
  for cfg in $CONFIGS; do
    [[ $cfg == */* ]] || { echo "error: configuration '$cfg' is not GRAD/FEATURE" >&2; exit 1; }
    [[ -z "$SKEW" && $cfg == none/none ]] || rows+=("$cfg")  # without SKEW the baseline row is that run
  done
  for cfg in "${rows[@]}"; do
    skew=$SKEW
    [[ $cfg == plain ]] && { cfg=none/none; skew=""; }
    grad=${cfg%%/*}
    feat=${cfg#*/}
    label="$grad / $feat"
    [[ -z "$skew" && $cfg == none/none ]] && label="none / none (s = 1)"
    for seed in $(seq 0 $((SEEDS - 1))); do
      echo "== $graph grad=$grad feature=$feat $skew seed $seed" >&2
      json=$(mpirun -np "$RANKS" --oversubscribe "$tessel" --log-level warn train gcn --partitions "$parts" \
        --epochs "$EPOCHS" --batch-size "$BATCH" --fanouts "$FANOUTS" --feature-cache "$CACHE" --hidden "$HIDDEN" \
        --layers "$LAYERS" --threads "$THREADS" --seed "$seed" --grad-compress "$grad" --feature-compress "$feat" \
        $skew --json)
      echo "{\"graph\": \"$graph\", \"label\": \"$label${skew:+, $skew}\", \"seed\": $seed, \"result\": $json}" >>"$results"
    done
  done
done

table=$(/usr/bin/python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
groups = {}
for r in rows:
    groups.setdefault((r["graph"], r["label"]), []).append(r["result"])
def per_epoch(res, key):
    return statistics.mean(x["totals"][key] / x["epochs_run"] for x in res)
out = ["| graph | gradients / features | test accuracy % | feature MB/epoch | feature ÷ | gradient MB/epoch | gradient ÷ | "
       "all remote MB/epoch | ÷ vs float32 s=1 | ÷ vs fp16 | encode+decode s/epoch | seeds |",
       "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
for graph in dict.fromkeys(g for g, _ in groups):
    base = groups[(graph, "none / none (s = 1)")]
    half = next((v for (g, l), v in groups.items() if g == graph and l.startswith("fp16 / fp16")), None)
    remote = lambda res: per_epoch(res, "feature_bytes") + per_epoch(res, "gradient_bytes") + per_epoch(res, "sample_bytes")
    for (g, label), res in groups.items():
        if g != graph: continue
        acc = [100 * x["test"]["accuracy"] for x in res]
        f, fr = per_epoch(res, "feature_bytes"), per_epoch(res, "feature_raw_bytes")
        gb, gr = per_epoch(res, "gradient_bytes"), per_epoch(res, "gradient_raw_bytes")
        codec = per_epoch(res, "compress_seconds") + per_epoch(res, "decompress_seconds")
        out.append(f"| {g} | {label} | {statistics.mean(acc):.2f} ± {statistics.pstdev(acc):.2f} | {f/1e6:.3f} | "
                   f"{fr/f if f else 0:.2f}× | {gb/1e6:.3f} | {gr/gb if gb else 0:.1f}× | {remote(res)/1e6:.3f} | "
                   f"{remote(base)/remote(res):.2f}× | {(f'{remote(half)/remote(res):.2f}×') if half else '–'} | "
                   f"{codec:.3f} | {len(res)} |")
print("\n".join(out))
PY
)
cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
report=$(cat <<EOF2
$table

$RANKS METIS ranks (\`mpirun -np $RANKS --oversubscribe\`, $THREADS thread(s) each), $EPOCHS epochs, batch $BATCH seeds per
rank and step, fanouts $FANOUTS, --feature-cache $CACHE, $LAYERS layers of $HIDDEN, $SEEDS seed(s)${SKEW:+, every row but the first with $SKEW}.
"÷" columns: raw (float32) bytes over wire bytes of the same run. "All remote" = feature + gradient + sampling bytes per
epoch summed over ranks. Machine: $cpu_model, $(nproc) cores; commit $commit.
EOF2
)
echo "$report"
[[ -n "${OUT:-}" ]] && echo "$report" >"$OUT"
[[ -n "${JSONL:-}" ]] && cp "$results" "$JSONL"
exit 0
