#!/usr/bin/env python3
"""Test accuracy against remote bytes per epoch for the runs of tools/bench/compress_bench.sh (its JSONL files):
one point per (graph, configuration), mean over seeds, error bars = standard deviation of the accuracy.

Usage: compress_plot.py OUT.png RESULTS.jsonl [RESULTS.jsonl ...]
"""
import json
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    out, files = sys.argv[1], sys.argv[2:]
    groups = {}
    for f in files:
        for line in open(f):
            r = json.loads(line)
            groups.setdefault((r["graph"], r["label"]), []).append(r["result"])
    fig, ax = plt.subplots(figsize=(8, 5))
    for (graph, label), res in sorted(groups.items()):
        mb = statistics.mean(
            (x["totals"]["feature_bytes"] + x["totals"]["gradient_bytes"] + x["totals"]["sample_bytes"])
            / x["epochs_run"] / 1e6 for x in res)
        acc = [100 * x["test"]["accuracy"] for x in res]
        ax.errorbar(mb, statistics.mean(acc), yerr=statistics.pstdev(acc), fmt="o", capsize=3)
        ax.annotate(f"{label}", (mb, statistics.mean(acc)), fontsize=7, xytext=(4, 2), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_xlabel("remote bytes per epoch, all ranks (MB: features + gradients + sampling; log scale)")
    ax.set_ylabel("test accuracy (%)")
    graphs = sorted({g for g, _ in groups})
    ax.set_title(f"Compressed exchange, {', '.join(graphs)}: accuracy against bytes")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
