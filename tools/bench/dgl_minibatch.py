#!/usr/bin/env python3
# The DGL side of tools/bench/minibatch_bench.sh: sampled mini-batch GraphSAGE-mean (or GCN) on a tessel native
# dataset folder, the same model and protocol as `tessel train gcn --batch-size B --fanouts F`:
#   - two (or --layers) SAGEConv('mean') layers with feat_drop = --dropout on every layer's input (tessel drops
#     before every layer), ReLU between layers, bias on;
#   - Adam (lr 0.01), L2 weight decay 5e-4 on the first layer only (tessel's default, Kipf & Welling);
#   - NeighborSampler(fanouts), shuffled training seeds, batch --batch-size, one worker (the main process);
#   - after every epoch full-neighbour inference over the whole graph (not timed), test accuracy of the
#     best-validation epoch (tessel keeps the best-validation weights).
# Timed: each epoch's sampling + training loop (DataLoader iteration, forward, backward, optimiser step), wall and
# process CPU seconds, the same span as tessel's "train_seconds".
#
# DGL needs PyTorch >= 1.13 (Debian 12's python3-torch reports 1.13.0a0 and is refused); tools/bench/setup-dgl.sh
# makes a virtual environment with the pinned versions. Usage:
#   /opt/dgl-venv/bin/python tools/bench/dgl_minibatch.py DATASET_DIR [--threads 2] [--epochs 5] [--seed 0] ...
# Prints one JSON line.
import argparse
import json
import resource
import statistics
import sys
import time

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import dgl
    import dgl.nn as dglnn
except ImportError as e:  # pragma: no cover - a message instead of a traceback
    sys.exit(f"error: {e}; install DGL with tools/bench/setup-dgl.sh and run this script with /opt/dgl-venv/bin/python")
from torch_run import add_model_options, add_run_options, load_native_node, start_run  # noqa: E402  (after torch imported, or the message above)


class Model(nn.Module):
    def __init__(self, kind, in_dim, hidden, classes, layers, dropout):
        super().__init__()
        dims = [in_dim] + [hidden] * (layers - 1) + [classes]
        if kind == "sage":
            self.layers = nn.ModuleList(dglnn.SAGEConv(dims[i], dims[i + 1], "mean", feat_drop=dropout) for i in range(layers))
        else:
            self.layers = nn.ModuleList(dglnn.GraphConv(dims[i], dims[i + 1], norm="both", allow_zero_in_degree=True) for i in range(layers))
        self.kind = kind
        self.dropout = nn.Dropout(dropout)

    def forward(self, graphs, x):
        h = x
        for i, (layer, g) in enumerate(zip(self.layers, graphs)):
            if self.kind == "gcn":
                h = self.dropout(h)
            h = layer(g, h)
            if i != len(self.layers) - 1:
                h = F.relu(h)
        return h


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("dataset")
    ap.add_argument("--model", default="sage", choices=["sage", "gcn"])
    add_model_options(ap, batch_size=512, fanouts="10,10")
    add_run_options(ap, epochs=5)
    a = start_run(ap)
    dgl.seed(a.seed)
    m, indptr, indices, feats, labels, split = load_native_node(a.dataset)
    n = m["num_nodes"]
    g = dgl.graph(("csr", (torch.from_numpy(indptr), torch.from_numpy(indices), torch.empty(0, dtype=torch.int64))), num_nodes=n)
    x = torch.from_numpy(feats.copy())
    y = torch.from_numpy(labels)
    fanouts = [int(f) for f in a.fanouts.split(",")]
    model = Model(a.model, x.shape[1], a.hidden, m["num_classes"], a.layers, a.dropout)
    first = list(model.layers[0].parameters())
    rest = [p for layer in model.layers[1:] for p in layer.parameters()]
    opt = torch.optim.Adam([{"params": first, "weight_decay": a.weight_decay}, {"params": rest, "weight_decay": 0.0}], lr=a.lr)
    sampler = dgl.dataloading.NeighborSampler(fanouts)
    train_ids = torch.from_numpy(split["train"])
    loader = dgl.dataloading.DataLoader(g, train_ids, sampler, batch_size=a.batch_size, shuffle=True, drop_last=False, num_workers=0)
    full_g = dgl.add_self_loop(dgl.remove_self_loop(g)) if a.model == "gcn" else g

    epoch_s, cpu_s, best_val, best_test = [], [], -1.0, 0.0
    for _ in range(a.epochs):
        model.train()
        t0, c0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        for _input_nodes, output_nodes, blocks in loader:
            logits = model(blocks, x[blocks[0].srcdata[dgl.NID]])
            loss = F.cross_entropy(logits, y[output_nodes])
            opt.zero_grad()
            loss.backward()
            opt.step()
        c1 = resource.getrusage(resource.RUSAGE_SELF)
        epoch_s.append(time.perf_counter() - t0)
        cpu_s.append((c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime))
        model.eval()
        with torch.no_grad():
            pred = model([full_g] * a.layers, x).argmax(1)
        acc = {k: float((pred[split[k]] == y[split[k]]).float().mean()) for k in ("val", "test")}
        if acc["val"] > best_val:
            best_val, best_test = acc["val"], acc["test"]
    print(json.dumps({
        "system": "dgl", "dgl": dgl.__version__, "torch": torch.__version__, "dataset": m.get("name"), "model": a.model,
        "threads": a.threads, "epochs": a.epochs, "batch_size": a.batch_size, "fanouts": fanouts,
        "epoch_seconds": epoch_s, "mean_epoch_seconds": statistics.mean(epoch_s),
        "median_epoch_seconds": statistics.median(epoch_s), "mean_epoch_cpu_seconds": statistics.mean(cpu_s),
        "best_val_accuracy": best_val, "test_accuracy": best_test}))


if __name__ == "__main__":
    main()
