#!/usr/bin/python3
# The baseline of tools/bench/gcn_bench.sh: a PyTorch GCN in the style of the public pygcn code (Kipf's
# tkipf/pygcn: dense input features, torch.spmm for the normalised adjacency, dropout between the two layers,
# Adam with weight decay on every parameter, an eval forward after every training step), timed per epoch.
#
# Usage: /usr/bin/python3 tools/bench/pygcn_baseline.py PREFIX [--seed S] [--epochs N] [--threads T]
#   PREFIX is a node table (tests/data/cora/cora -> cora.edges.txt.gz, cora.features.txt.gz, ...).
# Prints one JSON object: test accuracy, mean/median wall and CPU seconds per epoch, torch version and BLAS.
import argparse
import gzip
import json
import math
import os
import statistics
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_run import add_run_options, start_run


def read_lines(prefix, what):
    for ext in ("", ".gz"):
        path = f"{prefix}.{what}.txt{ext}"
        if os.path.exists(path):
            opener = gzip.open if ext == ".gz" else open
            with opener(path, "rt") as f:
                return [l.strip() for l in f if l.strip() and not l.startswith("#")]
    raise SystemExit(f"error: {prefix}.{what}.txt(.gz) not found")


def load(prefix):
    feats = read_lines(prefix, "features")
    n, dim, _ = (int(x) for x in feats[0].split())
    x = np.zeros((n, dim), dtype=np.float32)
    for line in feats[1:]:
        u, j, v = line.split()
        x[int(u), int(j)] = float(v)
    labels = np.array([int(l) for l in read_lines(prefix, "labels")], dtype=np.int64)
    edges = np.array([[int(t) for t in l.split()[:2]] for l in read_lines(prefix, "edges")], dtype=np.int64)
    split = {k: np.array([int(l) for l in read_lines(prefix, k)], dtype=np.int64) for k in ("train", "val", "test")}
    return x, labels, edges, split


def normalized_adjacency(n, edges):
    # D^-1/2 (A + I) D^-1/2, symmetric, as a torch sparse COO tensor (the pygcn representation).
    e = edges[edges[:, 0] != edges[:, 1]]
    rows = np.concatenate([e[:, 0], e[:, 1], np.arange(n)])
    cols = np.concatenate([e[:, 1], e[:, 0], np.arange(n)])
    deg = np.bincount(rows, minlength=n).astype(np.float64)
    vals = 1.0 / np.sqrt(deg[rows] * deg[cols])
    idx = torch.from_numpy(np.vstack([rows, cols]))
    return torch.sparse_coo_tensor(idx, torch.from_numpy(vals.astype(np.float32)), (n, n)).coalesce()


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.FloatTensor(in_features, out_features))
        self.bias = nn.Parameter(torch.FloatTensor(out_features))
        stdv = 1.0 / math.sqrt(out_features)
        self.weight.data.uniform_(-stdv, stdv)
        self.bias.data.uniform_(-stdv, stdv)

    def forward(self, x, adj):
        support = torch.mm(x, self.weight)
        return torch.spmm(adj, support) + self.bias


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout):
        super().__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        return F.log_softmax(self.gc2(x, adj), dim=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("prefix")
    add_run_options(ap, epochs=200)
    a = start_run(ap)
    x, labels, edges, split = load(a.prefix)
    x = x / np.maximum(x.sum(axis=1, keepdims=True), 1e-12)  # row-normalised, as pygcn
    features = torch.from_numpy(x)
    adj = normalized_adjacency(x.shape[0], edges)
    y = torch.from_numpy(labels)
    idx = {k: torch.from_numpy(v) for k, v in split.items()}
    model = GCN(x.shape[1], 16, int(labels.max()) + 1, 0.5)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    wall, cpu = [], []
    for _ in range(a.epochs):
        t0, c0 = time.perf_counter(), time.process_time()
        model.train()
        opt.zero_grad()
        out = model(features, adj)
        loss = F.nll_loss(out[idx["train"]], y[idx["train"]])
        loss.backward()
        opt.step()
        model.eval()
        out = model(features, adj)
        val_acc = (out[idx["val"]].argmax(1) == y[idx["val"]]).float().mean().item()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    model.eval()
    out = model(features, adj)
    test_acc = (out[idx["test"]].argmax(1) == y[idx["test"]]).float().mean().item()
    blas = [l.strip() for l in torch.__config__.show().splitlines() if "BLAS" in l]
    print(json.dumps({"baseline": "pygcn_baseline.py", "torch": torch.__version__, "threads": torch.get_num_threads(),
                      "blas": blas, "seed": a.seed, "epochs": a.epochs, "test_accuracy": test_acc,
                      "last_val_accuracy": val_acc, "mean_epoch_seconds": statistics.mean(wall),
                      "median_epoch_seconds": statistics.median(wall), "mean_epoch_cpu_seconds": statistics.mean(cpu)}))


if __name__ == "__main__":
    main()
