#!/usr/bin/env python3
"""The Markdown section of tools/bench/distdgl_bench.sh from its results.jsonl (one JSON object a line: kind
"partition" or "train", system "tessel" or "distdgl", graph, parts, and the measures).
Usage: distdgl_table.py RESULTS.jsonl SECTION.md --command C --machine M --commit H [--tessel V] [--mpi V]"""
import argparse
import json
import statistics

NAMES = {"csbm200k": "CSBM 200k", "facebook": "Facebook", "cora": "Cora"}


def mib(x):
    return f"{x / 2**20:.0f}"


def mb(x):
    return f"{x / 1e6:.1f}"


def sec(x):
    return f"{x:.3f}" if x >= 0.1 else f"{1000 * x:.1f} ms"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("section")
    for opt in ("--command", "--machine", "--commit", "--tessel", "--mpi"):
        ap.add_argument(opt, default="")
    a = ap.parse_args()
    rows = [json.loads(line) for line in open(a.results) if line.strip()]
    configs = []
    for r in rows:
        if (r["graph"], r["parts"]) not in configs:
            configs.append((r["graph"], r["parts"]))

    def pick(kind, system, graph, k):
        return [r for r in rows if r["kind"] == kind and r["system"] == system and r["graph"] == graph
                and r["parts"] == k]

    dgl_version = next((f"DGL {r['dgl']} on torch {r['torch']}" for r in rows if "dgl" in r), "")
    seeds = max((len(pick("train", "tessel", g, k)) for g, k in configs), default=0)
    out = ["## Distributed mini-batch: tessel vs DistDGL", "",
           f"`{a.command}` at commit {a.commit}: {a.tessel}; {dgl_version}; {a.mpi}. Machine: {a.machine}. "
           "Both sides on this one host, interleaved seed by seed (tessel, then DistDGL, same seed). tessel: `mpirun "
           "-np K tessel train gcn --partitions` on `tessel partition -k K` (METIS, balance nodes, edges, train). "
           "DistDGL: `dgl.distributed.partition_graph(part_method=\"metis\", balance_ntypes=train mask, "
           "balance_edges=True)`, then K machines, each a mount namespace with its own tmpfs at /dev/shm holding "
           "one graph server and one trainer started from DGL's launch variables (`tools/bench/distdgl_run.py`); "
           "its GraphSAGE example loop (DistNodeDataLoader, features pulled from the DistTensor, "
           "DistributedDataParallel over gloo). Same model and optimiser on both: GraphSAGE-mean, 2 layers, "
           "hidden 128, dropout 0.5 on each layer's input, Adam lr 0.01, weight decay 5e-4 on the first layer, "
           "batch 1024 seeds per trainer and step, fanouts 10,10, one thread per trainer (and per DGL server); "
           "test accuracy after the last epoch by full-neighbour inference, "
           f"mean over {seeds} seed(s) (min..max); seconds per epoch: sampling + feature fetch + training steps "
           "(the median of epochs 2..E, median over seeds); CPU seconds per epoch: process CPU time of the same span "
           "summed over tessel's ranks, or over DistDGL's trainers and graph servers (less disturbed by the other "
           "load on a shared machine than the wall time).", "",
           "| graph | K | tessel s/epoch | DistDGL s/epoch | tessel speed-up | CPU s/epoch, tessel / DistDGL | CPU ratio | tessel test % | DistDGL test % | "
           "tessel peak RSS per rank, MiB | DistDGL trainer + server peak RSS, MiB | MB sent between ranks per "
           "epoch, tessel / DistDGL |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def acc(rs):
        xs = [100 * r["test_accuracy"] for r in rs]
        return f"{statistics.mean(xs):.2f} ({min(xs):.2f}..{max(xs):.2f})"

    for g, k in configs:
        t, d = pick("train", "tessel", g, k), pick("train", "distdgl", g, k)
        if not t or not d:
            continue
        te = statistics.median(r["median_epoch_seconds"] for r in t)
        de = statistics.median(r["median_epoch_seconds"] for r in d)
        rank_mem = max(max(r["rank_peak_rss_bytes"]) for r in t)
        tr_mem = max(max(r["trainer_peak_rss_bytes"]) for r in d)
        sv_mem = max(max(r["server_peak_rss_bytes"]) for r in d)
        tc = statistics.median(r["median_epoch_cpu_seconds"] for r in t)
        dc = statistics.median(r["median_epoch_cpu_seconds"] for r in d)
        out.append(f"| {NAMES.get(g, g)} | {k} | {sec(te)} | {sec(de)} | {de / te:.1f}x | {sec(tc)} / {sec(dc)} | "
                   f"{dc / tc:.1f}x | {acc(t)} | {acc(d)} | "
                   f"{mib(rank_mem)} | {mib(tr_mem)} + {mib(sv_mem)} = {mib(tr_mem + sv_mem)} | "
                   f"{mb(statistics.median(r['bytes_per_epoch'] for r in t))} / "
                   f"{mb(statistics.median(r['bytes_per_epoch'] for r in d))} |")
    same = [(g, k) for g, k in configs
            if all(pick("train", system, g, k) for system in ("tessel", "tessel-dglparts", "distdgl"))]
    if same:
        out += ["", "tessel on DistDGL's own parts (`DGL_PARTS=1`: `tessel partition --method file --assignment` of "
                "DGL's node map, checked to cut the same adjacency entries as DGL's parts), beside tessel on its own "
                "METIS parts: the speed-up on the same parts is the engine's alone.", "",
                "| graph | K | tessel s/epoch, own parts | tessel s/epoch, DistDGL's parts | DistDGL s/epoch | "
                "speed-up on the same parts | tessel test %, DistDGL's parts | MB sent per epoch, own / DistDGL's "
                "parts | cut entries, own / DistDGL's parts |", "|---|---|---|---|---|---|---|---|---|"]
    for g, k in same:
        t, s, d = pick("train", "tessel", g, k), pick("train", "tessel-dglparts", g, k), pick("train", "distdgl", g, k)
        te, se, de = (statistics.median(r["median_epoch_seconds"] for r in rs) for rs in (t, s, d))
        tb, sb = (statistics.median(r["bytes_per_epoch"] for r in rs) for rs in (t, s))
        cuts = [pick("partition", system, g, k) for system in ("tessel", "tessel-dglparts")]
        cut = " / ".join(str(c[0]["cut_entries"]) if c else "?" for c in cuts)
        out.append(f"| {NAMES.get(g, g)} | {k} | {sec(te)} | {sec(se)} | {sec(de)} | {de / se:.1f}x | "
                   f"{acc(s)} | {mb(tb)} / {mb(sb)} | {cut} |")
    out += ["", "Bytes sent between ranks per epoch, by kind (median, MB; tessel's counters are message payloads, "
            "DistDGL's the TCP bytes of each trainer's sockets to other machines' processes from `ss -tinp`, which "
            "include DGL's RPC framing): tessel's remote feature rows (its halo cache holds the rest), sampling "
            "exchanges and gradient allreduce; DistDGL's requests to remote graph servers (sampling and feature "
            "pulls), their responses, and the gradient allreduce between trainers. Shared memory: DistDGL's server "
            "keeps its partition in /dev/shm and the trainer maps it, so the pages the trainer touches count in "
            "both RSS figures (largest RssShmem seen, trainer / server).", "",
            "| graph | K | tessel features | tessel sampling | tessel gradients | DistDGL requests | DistDGL "
            "responses | DistDGL gradients | DistDGL RssShmem trainer / server, MiB |",
            "|---|---|---|---|---|---|---|---|---|"]
    for g, k in configs:
        t, d = pick("train", "tessel", g, k), pick("train", "distdgl", g, k)
        if not t or not d:
            continue

        def med(rs, key):
            return mb(statistics.median(r["bytes_by_kind"][key] for r in rs))
        out.append(f"| {NAMES.get(g, g)} | {k} | {med(t, 'feature_bytes')} | {med(t, 'sample_bytes')} | "
                   f"{med(t, 'gradient_bytes')} | {med(d, 'request_sent')} | {med(d, 'response_received')} | "
                   f"{med(d, 'gradient_sent')} | {mib(max(max(r['trainer_max_shmem_bytes']) for r in d))} / "
                   f"{mib(max(max(r['server_max_shmem_bytes']) for r in d))} |")
    out += ["", "Partitioning (one process each; seconds from reading the dataset folder to the written parts, peak "
            "RSS polled from /proc; cut = adjacency entries whose ends are in different parts):", "",
            "| graph | K | tessel s | tessel peak RSS, MiB | tessel cut entries | DGL s | DGL peak RSS, MiB | "
            "DGL cut entries |", "|---|---|---|---|---|---|---|---|"]
    for g, k in configs:
        t, d = pick("partition", "tessel", g, k), pick("partition", "distdgl", g, k)
        if not t or not d:
            continue
        t, d = t[0], d[0]
        out.append(f"| {NAMES.get(g, g)} | {k} | {sec(t['seconds'])} | {mib(t['peak_rss_bytes'])} | "
                   f"{t['cut_entries']} | {sec(d['seconds'])} | {mib(d['peak_rss_bytes'])} | {d['cut_entries']} |")
    with open(a.section, "w") as f:
        f.write("\n".join(out) + "\n\n")


if __name__ == "__main__":
    main()
