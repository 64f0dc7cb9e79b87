#!/usr/bin/env python3
# Summarises tools/bench/dist_gcn_bench.sh results (one JSON line per run: graph, method, mode, value, seed and
# `tessel train gcn --json`'s result) into the Markdown table of docs/benchmarks.md: mean ± std over seeds.
import json
import statistics
import sys
from collections import OrderedDict


def mean_std(values):
    if not values:
        return 0.0, 0.0
    return statistics.mean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def main(path):
    groups = OrderedDict()
    for line in open(path):
        if not line.strip():
            continue
        r = json.loads(line)
        key = (r["graph"], r["method"], r["mode"], r["value"])
        groups.setdefault(key, []).append(r["result"])
    rows = []
    base = {}
    for (graph, method, mode, value), runs in groups.items():
        acc = [100.0 * x["test"]["accuracy"] for x in runs]
        mb = [x["feature_bytes_per_epoch"] / 1e6 for x in runs]
        share = [x["remote_share"] for x in runs]
        epoch_s = [x["mean_epoch_seconds"] for x in runs]
        entry = (mean_std(acc), mean_std(mb), statistics.mean(share), statistics.mean(epoch_s), len(runs))
        if mode == "skew" and float(value) == 1.0:
            base[(graph, method)] = entry
        rows.append(((graph, method, mode, value), entry))
    print("| graph | partition | sampling | test accuracy % | remote features MB/epoch | remote share of picks |"
          " Δ bytes vs s=1 | Δ accuracy vs s=1 (points) | epoch s | seeds |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (graph, method, mode, value), ((am, asd), (bm, bsd), share, es, n) in rows:
        label = f"s = {value:g}" if mode == "skew" else f"variance budget ε = {value:g}"
        b = base.get((graph, method))
        if b is not None and b[1][0] > 0:
            dbytes = f"{100.0 * (bm - b[1][0]) / b[1][0]:+.1f}%"
            dacc = f"{am - b[0][0]:+.2f}"
        else:
            dbytes = dacc = "—"
        print(f"| {graph} | {method} | {label} | {am:.2f} ± {asd:.2f} | {bm:.3f} ± {bsd:.3f} | {share:.3f} |"
              f" {dbytes} | {dacc} | {es:.2f} | {n} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: dist_gcn_table.py RESULTS.jsonl")
    main(sys.argv[1])
