#!/usr/bin/python3
# The peers of `tessel train gcn` on the same native dataset folder (tessel convert/generate output), for
# tools/bench/gpu_bench.sh: PyTorch Geometric's GCNConv (`--impl pyg`) and a plain PyTorch sparse GCN
# (`--impl torch`: Â = D^-1/2 (A + I) D^-1/2 as a sparse CSR tensor, torch.sparse.mm), with tessel's defaults: two
# layers, hidden 16, dropout 0.5 before each layer, Adam lr 0.01, weight decay 5e-4 on the first layer, features
# as stored (tessel's --normalize-features none). An epoch is one full-batch training step plus an evaluation
# forward, as tessel's epoch_seconds; on CUDA each epoch ends with torch.cuda.synchronize().
#
# Usage: /usr/bin/python3 tools/bench/gcn_peers.py DATASET_DIR [--impl pyg|torch] [--device cpu|cuda]
#        [--epochs 20] [--warmup 3] [--threads T]
# Prints one JSON object: impl, device, mean and median ms per epoch (after the warm-up epochs), test accuracy of
# the last epoch, versions.
import argparse
import json
import os
import statistics
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn.functional as F


def load_native(folder):
    """The arrays of a tessel native dataset folder (docs/formats.md): raw little-endian files named by
    manifest.json."""
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    if manifest.get("format") != "tessel-dataset" or manifest.get("kind") != "node":
        sys.exit(f"error: {folder} is not a tessel node dataset folder")
    arrays = {}
    for name, entry in manifest["arrays"].items():
        arrays[name] = np.fromfile(os.path.join(folder, entry["file"]), dtype=np.dtype(entry["dtype"]).newbyteorder("<"),
                                   count=entry["count"])
    return manifest, arrays


def build(manifest, arrays, device):
    n = manifest["num_nodes"]
    dim = manifest["feature_dim"]
    indptr = arrays["indptr"].astype(np.int64)
    dst = arrays["indices"].astype(np.int64)
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    if manifest.get("features_sparse"):
        fp = arrays["feat_indptr"].astype(np.int64)
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(fp))
        x = np.zeros((n, dim), dtype=np.float32)
        vals = arrays["feat_values"] if "feat_values" in arrays else np.ones(len(rows), dtype=np.float32)
        x[rows, arrays["feat_indices"].astype(np.int64)] = vals
    else:
        x = arrays["features"].reshape(n, dim)
    data = {
        "x": torch.from_numpy(np.ascontiguousarray(x)).to(device),
        "edge_index": torch.from_numpy(np.stack([src, dst])).to(device),
        "y": torch.from_numpy(arrays["labels"].astype(np.int64)).to(device),
        "train": torch.from_numpy(arrays["train"]).to(device),
        "test": torch.from_numpy(arrays["test"]).to(device),
        "n": n,
        "classes": manifest["num_classes"],
    }
    return data


class TorchGcn(torch.nn.Module):
    """Two dense layers with Â applied by torch.sparse.mm (the plain PyTorch GCN)."""

    def __init__(self, data, hidden, dropout):
        super().__init__()
        n = data["n"]
        ei = data["edge_index"]
        loops = torch.arange(n, device=ei.device)
        row = torch.cat([ei[0], loops])
        col = torch.cat([ei[1], loops])
        deg = torch.zeros(n, device=ei.device).scatter_add_(0, row, torch.ones_like(row, dtype=torch.float32))
        inv = deg.pow(-0.5)
        w = inv[row] * inv[col]
        self.adj = torch.sparse_coo_tensor(torch.stack([row, col]), w, (n, n)).coalesce().to_sparse_csr()
        self.lin1 = torch.nn.Linear(data["x"].shape[1], hidden)
        self.lin2 = torch.nn.Linear(hidden, data["classes"])
        self.dropout = dropout

    def forward(self, x):
        x = F.dropout(x, self.dropout, self.training)
        x = torch.relu(self.adj @ self.lin1(x))
        x = F.dropout(x, self.dropout, self.training)
        return self.adj @ self.lin2(x)


def make_pyg(data, hidden, dropout):
    from torch_geometric.nn import GCNConv

    class PygGcn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = GCNConv(data["x"].shape[1], hidden, cached=True)
            self.conv2 = GCNConv(hidden, data["classes"], cached=True)

        def forward(self, x):
            ei = data["edge_index"]
            x = F.dropout(x, dropout, self.training)
            x = torch.relu(self.conv1(x, ei))
            x = F.dropout(x, dropout, self.training)
            return self.conv2(x, ei)

    return PygGcn()


def main():
    warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta state")
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("dataset")
    ap.add_argument("--impl", choices=["pyg", "torch"], default="pyg")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.epochs <= args.warmup:
        sys.exit("error: --epochs must exceed --warmup")
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("error: --device cuda but torch sees no CUDA device")
    torch.manual_seed(args.seed)
    manifest, arrays = load_native(args.dataset)
    data = build(manifest, arrays, args.device)
    model = (make_pyg(data, 16, 0.5) if args.impl == "pyg" else TorchGcn(data, 16, 0.5)).to(args.device)
    first = list(model.parameters())[:2] if args.impl == "torch" else list(model.conv1.parameters())
    rest = [p for p in model.parameters() if all(p is not q for q in first)]
    opt = torch.optim.Adam([{"params": first, "weight_decay": 5e-4}, {"params": rest, "weight_decay": 0.0}], lr=0.01)
    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    times = []
    acc = 0.0
    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        model.train()
        opt.zero_grad()
        out = model(data["x"])
        loss = F.cross_entropy(out[data["train"]], data["y"][data["train"]])
        loss.backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            pred = model(data["x"]).argmax(dim=1)
            acc = (pred[data["test"]] == data["y"][data["test"]]).float().mean()
        sync()
        times.append(time.perf_counter() - t0)
        acc = float(acc)
    steady = times[args.warmup:]
    print(json.dumps({
        "impl": args.impl,
        "device": args.device,
        "dataset": manifest.get("name", os.path.basename(args.dataset.rstrip("/"))),
        "epochs": args.epochs,
        "mean_epoch_ms": 1e3 * statistics.mean(steady),
        "median_epoch_ms": 1e3 * statistics.median(steady),
        "test_accuracy": acc,
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
    }))


if __name__ == "__main__":
    main()
