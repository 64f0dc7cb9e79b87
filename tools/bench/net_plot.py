#!/usr/bin/env python3
"""Epoch time against link bandwidth for the GCN runs of tools/bench/net_bench.sh (its JSONL records): one panel per
workload, one line per configuration, measured (solid, median over the epochs) and predicted by tessel's time model
(dashed). The unshaped link is drawn at its probed rate.

Usage: net_plot.py OUT.png RESULTS.jsonl
"""
import json
import statistics
import sys

from plot_common import plt, save_figure


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    out, results = sys.argv[1], sys.argv[2]
    runs = {}  # (workload, config, link) -> (mbit, [measured], [predicted])
    for line in open(results):
        r = json.loads(line)  # one run: its settings and its metrics lines
        if r["workload"].startswith("svm"):
            continue
        key = (r["workload"], r["config"], r["link"])
        mbit = float(r["probed_mbit"]) if r["link"] == "unshaped" else float(r["network"].split(",")[0][:-4])
        entry = runs.setdefault(key, (mbit, [], []))
        for e in r["lines"]:
            if "epoch" in e and "final" not in e:
                entry[1].append(e["epoch_seconds"])
                entry[2].append(e["predicted_epoch_seconds"])
    workloads = sorted({k[0] for k in runs})
    if not workloads:
        print("net_plot: no GCN records", file=sys.stderr)
        return 1
    fig, axes = plt.subplots(1, len(workloads), figsize=(6.5 * len(workloads), 4.8), squeeze=False)
    for ax, wl in zip(axes[0], workloads):
        configs = sorted({k[1] for k in runs if k[0] == wl})
        for i, cfg in enumerate(configs):
            pts = sorted((v[0], statistics.median(v[1]), statistics.median(v[2]))
                         for k, v in runs.items() if k[0] == wl and k[1] == cfg)
            color = f"C{i}"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=color, label=f"{cfg} measured")
            ax.plot([p[0] for p in pts], [p[2] for p in pts], "x--", color=color, alpha=0.7, label=f"{cfg} predicted")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("link bandwidth (Mbit/s; unshaped at its probed rate)")
        ax.set_ylabel("seconds per epoch")
        ax.set_title(wl.replace(":", ", ranks "))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    save_figure(fig, out, 110, "net_plot: ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
