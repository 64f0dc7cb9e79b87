#!/usr/bin/env python3
"""Test accuracy against remote bytes per epoch for the runs of tools/bench/compress_bench.sh (its JSONL files):
one point per (graph, configuration), mean over seeds, error bars = standard deviation of the accuracy.

Usage: compress_plot.py OUT.png RESULTS.jsonl [RESULTS.jsonl ...]
"""
import json
import statistics
import sys

from plot_common import plt, save_figure


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
    fig, ax = plt.subplots(figsize=(9, 6))
    points = []
    for (graph, label), res in sorted(groups.items()):
        mb = statistics.mean(
            (x["totals"]["feature_bytes"] + x["totals"]["gradient_bytes"] + x["totals"]["sample_bytes"])
            / x["epochs_run"] / 1e6 for x in res)
        acc = [100 * x["test"]["accuracy"] for x in res]
        points.append((mb, statistics.mean(acc), statistics.pstdev(acc), label))
    # The y range follows the best runs; a point far below is drawn on the lower edge with its value written.
    top = max(p[1] for p in points)
    floor = top - 4.0
    for i, (mb, acc, sd, label) in enumerate(sorted(points)):
        skewed = "--skew-variance" in label
        short = label.split(", --")[0] + (" (ε=2)" if skewed else "")
        shown = max(acc, floor + 0.15)
        ax.errorbar(mb, shown, yerr=sd if acc == shown else 0, fmt="s" if skewed else "o",
                    color="tab:orange" if skewed else "tab:blue", capsize=3)
        text = short if acc == shown else f"{short}: {acc:.1f}% (off scale)"
        ax.annotate(text, (mb, shown), fontsize=7, xytext=(5, 6 if i % 2 == 0 else -10), textcoords="offset points")
    ax.set_ylim(floor, top + 0.6)
    ax.plot([], [], "o", color="tab:blue", label="uniform sampling (s = 1)")
    ax.plot([], [], "s", color="tab:orange", label="skewed sampling, variance budget ε = 2")
    ax.legend(loc="lower right", fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("remote bytes per epoch, all ranks (MB: features + gradients + sampling; log scale)")
    ax.set_ylabel("test accuracy (%)")
    graphs = sorted({g for g, _ in groups})
    ax.set_title(f"Compressed exchange, {', '.join(graphs)}: accuracy against bytes")
    ax.grid(True, which="both", alpha=0.3)
    save_figure(fig, out, 120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
