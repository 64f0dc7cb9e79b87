#!/usr/bin/env bash
# Distributed mini-batch training, tessel against DistDGL on one host: rewrites the "## Distributed mini-batch:
# tessel vs DistDGL" section of docs/benchmarks.md. For each graph and K: both sides partition the same native
# dataset folder into K parts with METIS (`tessel partition -k K`; dgl.distributed.partition_graph, part_method
# "metis", DistDGL's example balance: train mask and edges), then, seed by seed and interleaved, `mpirun -np K
# tessel train gcn --partitions` and DistDGL (K graph servers + K trainers, one mount namespace with a private
# /dev/shm per machine: tools/bench/distdgl_run.py). Same model: GraphSAGE-mean, 2 layers, hidden 128, dropout 0.5,
# Adam lr 0.01, weight decay 5e-4 on the first layer; batch 1024 seeds per trainer and step, fanouts 10,10; THREADS
# per trainer (and per DGL server). Reported: median epoch seconds over epochs 2..E, test accuracy after the last
# epoch (full-neighbour inference) averaged over SEEDS seeds, peak RSS per process polled from /proc
# (tools/bench/proc_peak.py), bytes sent between ranks per epoch, partitioning seconds and peak RSS.
#
# DGL: tools/bench/setup-dgl.sh makes /opt/dgl-venv (DGL_PYTHON=path/to/python to override). Needs root (unshare
# -m, mount). Builds nothing. Settings (environment): GRAPHS="csbm200k facebook" PARTS="2 4" SEEDS=3 EPOCHS=10
# THREADS=1 DATA=../shared/data KEEP_RESULTS= (a file each result line is also appended to; the table:
# tools/bench/distdgl_table.py) DGL_PARTS= (1: tessel also trains on DistDGL's own parts, `tessel partition --method
# file --assignment` of DGL's node map, checked to cut the same entries, to separate the partition's effect from the
# engine's; its rows are system "tessel-dglparts"). --quick: Cora (tests/data), K = 2, 1 seed, 3 epochs, the
# section printed to stdout and docs/benchmarks.md left alone (a smoke run, about two minutes).
# Usage: tools/bench/distdgl_bench.sh [--quick] BUILD_DIR
set -euo pipefail
# shellcheck source=tools/bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
quick=0
if [[ "${1:-}" == "--quick" ]]; then quick=1; shift; fi
bench_start 18 tessel "$@"
tessel="$build/tools/tessel"
bench_need_tool mpirun "apt-get install openmpi-bin"
bench_need_tool unshare "util-linux"
bench_need_tool ss "iproute2"
dgl_python=${DGL_PYTHON:-/opt/dgl-venv/bin/python}
if ! "$dgl_python" -c 'import dgl' >/dev/null 2>&1; then
  echo "error: DGL is not importable by $dgl_python; install it with tools/bench/setup-dgl.sh" \
    "(a virtual environment with torch 2.2.1 and dgl 2.1.0) or set DGL_PYTHON" >&2
  exit 1
fi
[[ $(id -u) == 0 ]] || { echo "error: DistDGL's machines need their own /dev/shm (unshare -m, mount): run as root" >&2; exit 1; }
export DGLBACKEND=pytorch
if [[ $quick == 1 ]]; then
  GRAPHS=cora PARTS=2 SEEDS=1 EPOCHS=3
fi
GRAPHS=${GRAPHS:-csbm200k facebook}
PARTS=${PARTS:-2 4}
SEEDS=${SEEDS:-3}
EPOCHS=${EPOCHS:-10}
THREADS=${THREADS:-1}
DGL_PARTS=${DGL_PARTS:-}
bench_mpi_workspace distdgl
peak="/usr/bin/python3 $repo/tools/bench/proc_peak.py"
driver="$repo/tools/bench/distdgl_run.py"
# shellcheck disable=SC2054  # 10,10 is one argument
model=(--model sage --layers 2 --hidden 128 --dropout 0.5 --lr 0.01 --weight-decay 5e-4 --batch-size 1024
  --fanouts 10,10)

dataset() {  # name -> native folder (csbm200k as tools/bench/minibatch_bench.sh makes it)
  local dir="$work/$1"
  case $1 in
    csbm200k) [[ -d $dir ]] || "$tessel" --log-level warn generate csbm --nodes 200000 --classes 8 --features 128 \
      --avg-degree 20 --degree-exponent 2.5 --seed 1 --output "$dir" >/dev/null ;;
    cora) [[ -d $dir ]] || "$tessel" --log-level warn convert --from nodetable "$repo/tests/data/cora/cora" \
      -o "$dir" >/dev/null ;;
    *) dir=$(bench_dataset "$1") ;;
  esac
  echo "$dir"
}

# record JSON: one line of results.jsonl (and of $KEEP_RESULTS, when set: a file that outlives the run)
record() {
  echo "$1" >>"$results"
  if [[ -n "${KEEP_RESULTS:-}" ]]; then echo "$1" >>"$KEEP_RESULTS"; fi
}

# train_tessel PARTITION_DIR SYSTEM: one seed of `mpirun -np K tessel train gcn` (graph, k, seed from the loop),
# recorded as SYSTEM.
train_tessel() {
  rm -f "$work/m.jsonl"
  $peak --out "$work/tt.peaks" -- mpirun -np "$k" --oversubscribe "$tessel" --log-level warn train gcn \
    --partitions "$1" "${model[@]}" --epochs "$EPOCHS" --threads "$THREADS" --seed "$seed" \
    --eval-every 0 --metrics "$work/m.jsonl" --json >"$work/tt.json"
  record "$(/usr/bin/python3 - "$2" "$graph" "$k" "$seed" "$work/tt.json" "$work/m.jsonl" "$work/tt.peaks" <<'PY'
import json, statistics, sys
system, graph, k, seed, out, metrics, peaks = sys.argv[1:]
r = json.load(open(out))
epochs = [e for e in (json.loads(l) for l in open(metrics)) if "epoch" in e]
sec = [e["train_seconds"] for e in epochs]
later = epochs[1:] or epochs
ranks = [x for x in json.load(open(peaks)) if " train gcn " in x["cmdline"] and "mpirun" not in x["cmdline"]]
print(json.dumps({"kind": "train", "system": system, "graph": graph, "parts": int(k), "seed": int(seed),
                  "epoch_seconds": sec, "median_epoch_seconds": statistics.median(sec[1:] or sec),
                  "median_epoch_cpu_seconds": statistics.median(e["cpu_seconds"] for e in later),
                  "phases": {k2: statistics.median(e[k2] for e in later) for k2 in
                             ("sample_seconds", "fetch_seconds", "forward_seconds", "backward_seconds",
                              "allreduce_seconds", "comm_seconds")},
                  "test_accuracy": r["test"]["accuracy"], "val_accuracy": r["val"]["accuracy"],
                  "bytes_per_epoch": statistics.median(e["total_bytes"] for e in later),
                  "bytes_by_kind": {k2: statistics.median(e[k2] for e in later)
                                    for k2 in ("feature_bytes", "sample_bytes", "gradient_bytes")},
                  "rank_peak_rss_bytes": [x["peak_rss_bytes"] for x in ranks],
                  "rank_self_peak_rss_bytes": [x["peak_rss_bytes"] for x in r["memory"]["ranks"]]}))
PY
)"
}

for graph in $GRAPHS; do
  data=$(dataset "$graph")
  classes=$(/usr/bin/python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["num_classes"])' \
    "$data/manifest.json")
  name=$(/usr/bin/python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m.get("name") or "graph")' \
    "$data/manifest.json")
  for k in $PARTS; do
    echo "== $graph, K = $k: partitioning" >&2
    $peak --out "$work/tp.peaks" -- "$tessel" --log-level warn partition "$data" -k "$k" --threads "$THREADS" \
      -o "$work/tessel-$graph-$k" --json >"$work/tp.json"
    record "$(/usr/bin/python3 - "$graph" "$k" "$work/tp.json" "$work/tp.peaks" <<'PY'
import json, sys
graph, k, out, peaks = sys.argv[1:]
r, p = json.load(open(out)), json.load(open(peaks))
print(json.dumps({"kind": "partition", "system": "tessel", "graph": graph, "parts": int(k),
                  "seconds": r["seconds"]["total"], "self_peak_rss_bytes": r["peak_rss_bytes"],
                  "seconds_detail": r["seconds"], "cut_entries": r["cut_entries"],
                  "peak_rss_bytes": max(x["peak_rss_bytes"] for x in p)}))
PY
)"
    $peak --out "$work/dp.peaks" -- "$dgl_python" "$driver" partition "$data" "$work/dgl-$graph-$k" --parts "$k" \
      >"$work/dp.json" 2>"$work/dp.log" || { cat "$work/dp.log" >&2; exit 1; }
    record "$(/usr/bin/python3 - "$graph" "$k" "$work/dp.json" "$work/dp.peaks" <<'PY'
import json, sys
graph, k, out, peaks = sys.argv[1:]
r, p = json.loads(open(out).read().strip().splitlines()[-1]), json.load(open(peaks))
print(json.dumps({"kind": "partition", "system": "distdgl", "graph": graph, "parts": int(k),
                  "seconds": r["load_seconds"] + r["partition_seconds"], "cut_entries": r["cut_entries"],
                  "peak_rss_bytes": max(x["peak_rss_bytes"] for x in p), "part_config": r["part_config"]}))
PY
)"
    if [[ -n $DGL_PARTS ]]; then  # tessel's folder of DistDGL's assignment (node order, one part id a line)
      "$tessel" --log-level warn partition "$data" -k "$k" --threads "$THREADS" --method file \
        --assignment "$work/dgl-$graph-$k/assignment.txt" -o "$work/tessel-dgl-$graph-$k" --json >"$work/tg.json"
      record "$(/usr/bin/python3 - "$graph" "$k" "$work/tg.json" "$work/dp.json" <<'PY'
import json, sys
graph, k, out, dgl = sys.argv[1:]
r, d = json.load(open(out)), json.loads(open(dgl).read().strip().splitlines()[-1])
if r["cut_entries"] != d["cut_entries"]:
    sys.exit(f"tessel's folder of DistDGL's assignment cuts {r['cut_entries']} entries, DGL's parts "
             f"{d['cut_entries']}: the assignment was not read in node order")
print(json.dumps({"kind": "partition", "system": "tessel-dglparts", "graph": graph, "parts": int(k),
                  "seconds": r["seconds"]["total"], "cut_entries": r["cut_entries"],
                  "peak_rss_bytes": r["peak_rss_bytes"]}))
PY
)"
    fi
    part_config=$(/usr/bin/python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["part_config"])' "$work/dp.json")
    for seed in $(seq 0 $((SEEDS - 1))); do
      echo "== $graph, K = $k, seed $seed: tessel" >&2
      train_tessel "$work/tessel-$graph-$k" tessel
      if [[ -n $DGL_PARTS ]]; then
        echo "== $graph, K = $k, seed $seed: tessel on DistDGL's parts" >&2
        train_tessel "$work/tessel-dgl-$graph-$k" tessel-dglparts
      fi
      echo "== $graph, K = $k, seed $seed: DistDGL" >&2
      "$dgl_python" "$driver" run "$part_config" --parts "$k" --workdir "$work/dglrun" --threads "$THREADS" -- \
        --graph-name "$name" --classes "$classes" --epochs "$EPOCHS" --seed "$seed" --batch-size 1024 \
        --fanouts 10,10 --hidden 128 --dropout 0.5 --lr 0.01 --weight-decay 5e-4 >"$work/dt.json" 2>"$work/dt.log" ||
        { tail -40 "$work/dt.log" >&2; exit 1; }
      record "$(/usr/bin/python3 -c '
import json, sys
r = json.loads(open(sys.argv[4]).read().strip().splitlines()[-1])
r.update({"kind": "train", "graph": sys.argv[1], "parts": int(sys.argv[2]), "seed": int(sys.argv[3])})
print(json.dumps(r))' "$graph" "$k" "$seed" "$work/dt.json")"
    done
  done
done
cat "$results" >&2

commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
mem=$(free -g | awk '/^Mem:/ {print $2 " GiB"}')
load=$(cut -d' ' -f1-3 /proc/loadavg)
cmd="tools/bench/distdgl_bench.sh build"
[[ $quick == 1 ]] && cmd="tools/bench/distdgl_bench.sh --quick build"
/usr/bin/python3 "$repo/tools/bench/distdgl_table.py" "$results" "$work/section.md" \
  --command "GRAPHS=\"$GRAPHS\" PARTS=\"$PARTS\" SEEDS=$SEEDS EPOCHS=$EPOCHS THREADS=$THREADS${DGL_PARTS:+ DGL_PARTS=$DGL_PARTS} $cmd" \
  --machine "$cpu, $(nproc) cores, $mem; load average at the end $load" --commit "$commit" \
  --tessel "$("$tessel" --version 2>/dev/null | head -1)" --mpi "$(mpirun --version 2>/dev/null | head -1)"
if [[ $quick == 1 ]]; then
  cat "$work/section.md"
else
  write_bench_section "## Distributed mini-batch: tessel vs DistDGL" "$work/section.md"
fi
