#!/usr/bin/env bash
# GCN benchmarks: rewrites the "## GCN" section of docs/benchmarks.md with (1) Cora accuracy over 10 seeds at the
# paper settings, (2) full-batch Cora epoch time against the named baseline tools/bench/pygcn_baseline.py (a
# pygcn-style PyTorch GCN on Debian's python3-torch) in the same run, (3) sampled mini-batch vs full-batch
# accuracy and throughput on Cora and Facebook page-page, (4) the sampler alone on a 1M-node generated graph
# against a naive serial sampler, (5) peak RSS of full-batch training on a 1M-node / 10M-edge / 128-feature
# generated graph. Builds nothing.
#
# Usage: tools/bench/gcn_bench.sh BUILD_DIR [SEEDS (10)] [FACEBOOK_SEEDS (3)]
set -euo pipefail
# shellcheck source=tools/bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start 9 "tessel tessel_gcn_sampler_bench" "$@"
seeds=${2:-10}
fb_seeds=${3:-3}
tessel="$build/tools/tessel"
sampler_bench="$build/tools/bench/tessel_gcn_sampler_bench"
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "error: python3-torch missing (apt-get install -y python3-torch)" >&2; exit 1; }
shared=${TESSEL_SHARED_DATA:-$repo/../shared/data}
work=$(mktemp -d)
section=$(mktemp)
trap 'rm -rf "$work" "$section"' EXIT
cora=$repo/tests/data/cora/cora
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
stats() {  # mean and sample std of numbers on stdin, as percentages "81.23 ± 0.45"
  /usr/bin/python3 -c 'import sys,statistics as s; v=[100*float(x) for x in sys.stdin.read().split()]; print(f"{s.mean(v):.2f} ± {s.stdev(v) if len(v)>1 else 0:.2f}")'
}
field() { /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
T() { "$tessel" --log-level warn train gcn --threads 2 --json "$@"; }

echo "== Cora, full batch, paper settings, $seeds seeds" >&2
: >"$work/cora_full"
for s in $(seq 0 $((seeds - 1))); do T --dataset "$cora" --normalize-features l1 --seed "$s" >>"$work/cora_full"; done
cora_acc=$(while read -r l; do echo "$l" | field "['test']['accuracy']"; done <"$work/cora_full" | stats)
cora_f1=$(while read -r l; do echo "$l" | field "['test']['macro_f1']"; done <"$work/cora_full" | stats)
tessel_wall=$(while read -r l; do echo "$l" | field "['median_epoch_seconds']"; done <"$work/cora_full" | sort -g | sed -n "$(((seeds + 1) / 2))p")
tessel_cpu=$(while read -r l; do echo "$l" | field "['mean_epoch_cpu_seconds']"; done <"$work/cora_full" | sort -g | sed -n "$(((seeds + 1) / 2))p")

echo "== Cora, baseline pygcn_baseline.py (50 epochs, 2 threads)" >&2
base=$(/usr/bin/python3 "$repo/tools/bench/pygcn_baseline.py" "$cora" --epochs 50 --threads 2 --seed 0)
base_wall=$(echo "$base" | field "['median_epoch_seconds']")
base_cpu=$(echo "$base" | field "['mean_epoch_cpu_seconds']")
base_acc=$(echo "$base" | field "['test_accuracy']" | xargs printf "%.3f")
torch_version=$(echo "$base" | field "['torch']")

echo "== Cora, sampled mini-batch" >&2
: >"$work/cora_mini"
for s in $(seq 0 $((seeds - 1))); do
  T --dataset "$cora" --normalize-features l1 --seed "$s" --batch-size 64 --fanouts 10,10 >>"$work/cora_mini"
done
cora_mini_acc=$(while read -r l; do echo "$l" | field "['test']['accuracy']"; done <"$work/cora_mini" | stats)

echo "== Facebook page-page, random 60/20/20 split, $fb_seeds seeds" >&2
fb="$work/fb"
ln -s "$shared/graphs/facebook_page_page/facebook_edges.csv" "$fb.edges.txt"
ln -s "$shared/graphs/facebook_page_page/facebook.features.txt" "$fb.features.txt"
ln -s "$shared/graphs/facebook_page_page/facebook.labels.txt" "$fb.labels.txt"
: >"$work/fb_full"
: >"$work/fb_mini"
for s in $(seq 0 $((fb_seeds - 1))); do
  T --dataset "$fb" --random-split 0.6,0.2,0.2 --seed "$s" --epochs 400 >>"$work/fb_full"
  T --dataset "$fb" --random-split 0.6,0.2,0.2 --seed "$s" --epochs 30 --batch-size 512 --fanouts 10,10 >>"$work/fb_mini"
done
fb_full_acc=$(while read -r l; do echo "$l" | field "['test']['accuracy']"; done <"$work/fb_full" | stats)
fb_mini_acc=$(while read -r l; do echo "$l" | field "['test']['accuracy']"; done <"$work/fb_mini" | stats)
fb_full_epoch=$(head -1 "$work/fb_full" | field "['mean_epoch_seconds']")
fb_seeds_s=$(head -1 "$work/fb_mini" | field "['train_seed_nodes_per_second']")
fb_edges_s=$(head -1 "$work/fb_mini" | field "['sampled_edges_per_second']")
cora_seeds_s=$(head -1 "$work/cora_mini" | field "['train_seed_nodes_per_second']")
cora_edges_s=$(head -1 "$work/cora_mini" | field "['sampled_edges_per_second']")

echo "== sampler alone, 1M-node generated graph" >&2
sampler_row=$("$sampler_bench" --nodes 1000000 --edges 10000000 --batch-size 1024 --batches 50 --fanouts 10,25 --threads 2)

echo "== peak RSS, full batch on a 1M-node / 10M-edge / 128-feature generated graph" >&2
"$tessel" --log-level warn generate csbm --nodes 1000000 --avg-degree 20 --features 128 --classes 8 --seed 1 \
  --output "$work/big" --force >/dev/null
rss_json=$(/usr/bin/time -f '{"max_rss_kb": %M, "wall": %e, "user": %U, "sys": %S}' -o "$work/time.json" \
  "$tessel" --log-level warn train gcn --dataset "$work/big" --epochs 3 --threads 2 --json)
rss_kb=$(field "['max_rss_kb']" <"$work/time.json")
big_epoch=$(echo "$rss_json" | field "['mean_epoch_seconds']")
big_entries=$("$tessel" --log-level warn info "$work/big" --json 2>/dev/null | field "['num_entries']" 2>/dev/null || echo "?")
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
ratio_wall=$(/usr/bin/python3 -c "print(f'{$base_wall/$tessel_wall:.1f}')")
ratio_cpu=$(/usr/bin/python3 -c "print(f'{$base_cpu/$tessel_cpu:.1f}')")
ms() { /usr/bin/python3 -c "print(f'{1e3*$1:.2f}')"; }

cat >"$section" <<EOF
## GCN

Single-process GCN training (train/gcn, sampling/), every number from one run of
\`tools/bench/gcn_bench.sh $build $seeds $fb_seeds\`.

- Machine: $(nproc) CPUs (\`nproc\`), ${cpu_model}; load average $load_before before and $load_after after the
  run (the cores are shared with other jobs, so wall times are noisy; CPU seconds are the steadier measure).
- Commit: $commit (plus uncommitted changes, if any), $(date -u +%Y-%m-%d). tessel and the baseline use 2 threads.

### Cora accuracy (Planetoid public split, paper settings)

2 layers, hidden 16, dropout 0.5, lr 0.01, weight decay 5e-4 (first layer, as Kipf & Welling), 200 epochs,
L1-normalised features, test accuracy of the best-validation-accuracy epoch, seeds 0..$((seeds - 1)):
\`tessel train gcn --dataset tests/data/cora/cora --normalize-features l1 --seed S\`.

| model | test accuracy % (mean ± std, $seeds seeds) | test macro-F1 % |
|---|---:|---:|
| tessel GCN, full batch | $cora_acc | $cora_f1 |
| tessel GCN, mini-batch 64, fanouts 10,10 | $cora_mini_acc | |
| paper (Kipf & Welling 2017) | 81.5 | |

### Cora epoch time against pygcn

Baseline: \`tools/bench/pygcn_baseline.py\` (pygcn's model: dense 2708 x 1433 features, \`torch.spmm\` with the
normalised adjacency, Adam, an eval forward after each step; torch $torch_version from Debian's python3-torch with
OpenBLAS as the system BLAS, 2 threads, 50 epochs; its test accuracy $base_acc). tessel: the same epoch (train step
plus an eval forward), sparse input features. Median epoch wall time (tessel: median over the seeds of each run's
median) and mean process CPU time per epoch.

| | epoch wall ms | epoch CPU ms |
|---|---:|---:|
| pygcn_baseline.py (torch $torch_version) | $(ms "$base_wall") | $(ms "$base_cpu") |
| tessel train gcn | $(ms "$tessel_wall") | $(ms "$tessel_cpu") |
| speed-up | ${ratio_wall}x | ${ratio_cpu}x |

### Sampled mini-batch vs full batch

| dataset | full batch test % | mini-batch test % | mini-batch seed nodes/s | sampled edges/s |
|---|---:|---:|---:|---:|
| Cora ($seeds seeds; batch 64, fanouts 10,10, 200 epochs) | $cora_acc | $cora_mini_acc | $(printf '%.0f' "$cora_seeds_s") | $(printf '%.3g' "$cora_edges_s") |
| Facebook page-page ($fb_seeds seeds, random 60/20/20 split by seed; full 400 epochs, mini-batch 512, fanouts 10,10, 30 epochs) | $fb_full_acc | $fb_mini_acc | $(printf '%.0f' "$fb_seeds_s") | $(printf '%.3g' "$fb_edges_s") |

Facebook full batch: $(ms "$fb_full_epoch") ms per epoch. Throughput counts the training seed nodes and the block
entries built per second of training time (sampling, gathering, forward, backward, update).

### Sampler alone (1M-node generated graph)

\`tessel_gcn_sampler_bench --nodes 1000000 --edges 10000000 --batch-size 1024 --batches 50 --fanouts 10,25 --threads 2\`:
NeighborSampler (without replacement) against the named baseline, a serial sampler with \`std::sample\` and
\`std::unordered_map\` relabelling, on the same seeds. Edges exclude the GCN self terms.

| graph | batch | fanouts | tessel s | tessel seeds/s | tessel edges/s | naive s | naive seeds/s | naive edges/s | speed-up |
|---|---:|---|---:|---:|---:|---:|---:|---:|---:|
$sampler_row

### Peak memory, full batch on a 1M-node graph

\`tessel generate csbm --nodes 1000000 --avg-degree 20 --features 128 --classes 8 --seed 1\` (about 10M
undirected edges, $big_entries adjacency entries; dense float32 features), then
\`/usr/bin/time tessel train gcn --dataset DIR --epochs 3 --threads 2\`: peak RSS **$((rss_kb / 1024)) MiB**,
$(/usr/bin/python3 -c "print(f'{$big_epoch:.2f}')") s per epoch. What the arrays must hold (n = 1M, E = adjacency
entries, d = 128, h = 16, 4-byte floats/ids, 8-byte offsets):

| array | size |
|---|---:|
| features as loaded (mmap) n·d·4 | 512 MB |
| L1-normalised copy n·d·4 | 512 MB |
| dropout output of the input n·d·4 + mask n·d·1 | 640 MB |
| graph CSR (E·4 + n·8) and Â (with n self-loops: (E+n)·8 + n·8) | ~0.27 GB at E = 20M |
| per-layer activations, gradients (a few n·h·4 = 64 MB each) | ~0.4 GB |

EOF
write_bench_section "## GCN" "$section"
