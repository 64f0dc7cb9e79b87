#!/usr/bin/env bash
# Sampled mini-batch training on the CPU, tessel against DGL side by side: rewrites the "## Mini-batch GCN on the
# CPU: tessel vs DGL" section of docs/benchmarks.md. Same native dataset folder, same model (GraphSAGE-mean, two
# layers, hidden 16, dropout 0.5 before each layer, Adam lr 0.01, weight decay 5e-4 on the first layer),
# NeighborSampler fanouts 10,10, batch 512, same thread count; timed: each epoch's sampling + training (tessel's
# train_seconds, DGL's loader loop), the median over epochs 2..E (the first warms caches and allocators); test
# accuracy of the best-validation epoch. Datasets: CSBM 200k (generated: 200000 nodes, 8 classes, 128 features,
# mean degree 20, degree exponent 2.5, seed 1), Cora (tests/data) and Facebook page-page (../shared/data; skipped
# when absent). With BASELINE_TESSEL=path, also that tessel binary (an earlier commit, named by BASELINE_LABEL) on
# the same runs.
#
# DGL: tools/bench/setup-dgl.sh makes /opt/dgl-venv (override with DGL_PYTHON=path/to/python). Builds nothing.
# Usage: tools/bench/minibatch_bench.sh BUILD_DIR [EPOCHS (5)] [THREADS (2; a list: "1 2")]
set -euo pipefail
# shellcheck source=tools/bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start 13 tessel "$@"
epochs=${2:-5}
threads_list=${3:-2}
tessel="$build/tools/tessel"
dgl_python=${DGL_PYTHON:-/opt/dgl-venv/bin/python}
if ! "$dgl_python" -c 'import dgl' >/dev/null 2>&1; then
  echo "error: DGL is not importable by $dgl_python; install it with tools/bench/setup-dgl.sh" \
    "(a virtual environment with torch 2.2.1 and dgl 2.1.0) or set DGL_PYTHON" >&2
  exit 1
fi
epochs=$((epochs < 2 ? 2 : epochs))
shared=${TESSEL_SHARED_DATA:-$repo/../shared/data}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
results="$work/results.jsonl"
: >"$results"

"$tessel" --log-level warn generate csbm --nodes 200000 --classes 8 --features 128 --avg-degree 20 \
  --degree-exponent 2.5 --seed 1 --output "$work/csbm200k" >/dev/null
"$tessel" --log-level warn convert --from nodetable "$repo/tests/data/cora/cora" -o "$work/cora" >/dev/null
datasets=(csbm200k cora)
if [[ -f "$shared/graphs/facebook_page_page/facebook_edges.csv" ]]; then
  p="$work/fb"
  ln -s "$shared/graphs/facebook_page_page/facebook_edges.csv" "$p.edges.txt"
  ln -s "$shared/graphs/facebook_page_page/facebook.features.txt" "$p.features.txt"
  ln -s "$shared/graphs/facebook_page_page/facebook.labels.txt" "$p.labels.txt"
  "$tessel" --log-level warn convert --from nodetable "$p" --name facebook --split 0.6,0.2,0.2 --seed 1 \
    -o "$work/facebook" >/dev/null
  datasets+=(facebook)
else
  echo "note: no Facebook page-page data under $shared; skipped" >&2
fi

common=(--model sage --layers 2 --hidden 16 --batch-size 512 --fanouts 10,10 --epochs "$epochs")
run_tessel() {  # system binary dataset threads
  local system=$1 bin=$2 ds=$3 t=$4 metrics="$work/$1_$3_$4.jsonl"
  "$bin" --log-level warn train gcn --dataset "$work/$ds" "${common[@]}" --threads "$t" --metrics "$metrics" \
    --json >"$work/out.json"
  /usr/bin/python3 - "$system" "$ds" "$t" "$metrics" "$work/out.json" >>"$results" <<'PY'
import json, statistics, sys
system, ds, t, metrics, out = sys.argv[1:]
epochs = [json.loads(l) for l in open(metrics) if '"epoch"' in l]
epochs = [e for e in epochs if "epoch" in e]
train = [e["train_seconds"] for e in epochs]
r = json.load(open(out))
print(json.dumps({"system": system, "dataset": ds, "threads": int(t), "epoch_seconds": train,
                  "median_epoch_seconds": statistics.median(train[1:]),
                  "phases": {k: statistics.median(e.get(k, 0.0) for e in epochs[1:]) for k in
                             ("sample_seconds", "fetch_seconds", "forward_seconds", "backward_seconds",
                              "optimizer_seconds")},
                  "test_accuracy": r["test"]["accuracy"]}))
PY
}
for t in $threads_list; do
  for ds in "${datasets[@]}"; do
    echo "== $ds, $t threads" >&2
    run_tessel tessel "$tessel" "$ds" "$t"
    if [[ -n "${BASELINE_TESSEL:-}" ]]; then run_tessel tessel_baseline "$BASELINE_TESSEL" "$ds" "$t"; fi
    "$dgl_python" "$repo/tools/bench/dgl_minibatch.py" "$work/$ds" --epochs "$epochs" --threads "$t" \
      --batch-size 512 --fanouts 10,10 --hidden 16 2>/dev/null |
      /usr/bin/python3 -c '
import json, statistics, sys
d = json.loads(sys.stdin.read())
print(json.dumps({"system": "dgl", "dataset": d["dataset"] if d["dataset"] != "csbm" else "csbm200k",
                  "threads": d["threads"], "epoch_seconds": d["epoch_seconds"],
                  "median_epoch_seconds": statistics.median(d["epoch_seconds"][1:]),
                  "test_accuracy": d["test_accuracy"], "dgl": d["dgl"], "torch": d["torch"]}))' >>"$results"
  done
done
cat "$results"

commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
cores=$(nproc)
/usr/bin/python3 - "$work/section.md" "$results" "$commit" "$cpu" "$cores" "$epochs" "$threads_list" \
  "${BASELINE_TESSEL:+${BASELINE_LABEL:-an earlier build}}" <<'PY'
import json, sys
section_file, results, commit, cpu, cores, epochs, threads, baseline = sys.argv[1:9]
rows = [json.loads(l) for l in open(results)]
def get(system, ds, t):
    for r in rows:
        if r["system"] == system and r["dataset"] == ds and r["threads"] == t:
            return r
names = {"csbm200k": "CSBM 200k (128 dense features)", "cora": "Cora (1433 sparse features, 140 seeds: 1 step)",
         "facebook": "Facebook page-page (4714 sparse features)"}
def sec(x):
    return f"{x:.3f}" if x >= 0.1 else f"{1000 * x:.2f} ms"
out = ["## Mini-batch GCN on the CPU: tessel vs DGL", "",
       f"`tools/bench/minibatch_bench.sh build {epochs} \"{threads}\"` at commit {commit}"
       + (f" (with `BASELINE_TESSEL`: the tessel of {baseline} on the same runs)" if baseline else "")
       + f", on {cpu}, {cores} cores. GraphSAGE-mean, 2 layers, hidden 16, dropout 0.5, Adam 0.01, batch 512, "
       "fanouts 10,10, the same native folder for both; seconds per epoch of sampling + training (median of "
       f"epochs 2..{epochs}), test accuracy of the best-validation epoch. DGL runs from the virtual environment "
       "of tools/bench/setup-dgl.sh.", ""]
head = "| dataset | threads | tessel s/epoch | " + (f"tessel {baseline} s/epoch | " if baseline else "") + \
       "DGL s/epoch | tessel speed-up over DGL | tessel test % | DGL test % |"
out += [head, "|" + "---|" * (head.count("|") - 1)]
for t in sorted({r["threads"] for r in rows}):
    for ds in ["csbm200k", "cora", "facebook"]:
        a, d, b = get("tessel", ds, t), get("dgl", ds, t), get("tessel_baseline", ds, t)
        if not a or not d:
            continue
        cells = [names[ds], str(t), sec(a['median_epoch_seconds'])]
        if baseline:
            cells.append(sec(b['median_epoch_seconds']) if b else "-")
        cells += [sec(d['median_epoch_seconds']), f"{d['median_epoch_seconds'] / a['median_epoch_seconds']:.2f}x",
                  f"{100 * a['test_accuracy']:.2f}", f"{100 * d['test_accuracy']:.2f}"]
        out.append("| " + " | ".join(cells) + " |")
out += ["", "Where tessel's epoch goes (median seconds per epoch; sampling runs on the main thread while the worker "
        "computes, so the phases overlap; dense inputs are gathered inside the forward pass):", "",
        "| dataset | threads | sampling | gather | forward | backward | optimiser |", "|---|---|---|---|---|---|---|"]
for r in rows:
    if r["system"] == "tessel":
        p = r["phases"]
        out.append(f"| {names[r['dataset']]} | {r['threads']} | {sec(p['sample_seconds'])} | {sec(p['fetch_seconds'])} | "
                   f"{sec(p['forward_seconds'])} | {sec(p['backward_seconds'])} | {sec(p['optimizer_seconds'])} |")
dgl = next((r for r in rows if r["system"] == "dgl"), None)
if dgl:
    out += ["", f"DGL {dgl['dgl']} on torch {dgl['torch']}."]
open(section_file, "w").write("\n".join(out) + "\n\n")
PY
write_bench_section "## Mini-batch GCN on the CPU: tessel vs DGL" "$work/section.md"
