#!/usr/bin/python3
# PyTorch Geometric's side of the sampled mini-batch rows (tools/bench/gpu_bench.sh, issue 49): GraphSAGE-mean on a
# tessel native dataset folder with the model and protocol of `tessel train gcn --model sage --batch-size B
# --fanouts F` (as tools/bench/dgl_minibatch.py for DGL):
#   - two (or --layers) PyG SAGEConv(aggr="mean") layers, dropout --dropout on every layer's input, ReLU between;
#   - Adam (lr 0.01), L2 weight decay 5e-4 on the first layer only (tessel's default);
#   - shuffled training seeds in batches of --batch-size, --fanouts per layer in DGL's and tessel's order (the first
#     number for the first layer, i.e. the hop farthest from the seeds);
#   - after every epoch full-neighbour inference over the whole graph (not timed), the test accuracy of the
#     best-validation epoch.
# Sampler: PyG's NeighborLoader (`--sampler pyg`, the default when it works; it needs pyg-lib or torch-sparse),
# else (`--sampler torch`, or when NeighborLoader cannot run here, said in the output's "sampler_note") uniform
# sampling without replacement written in plain PyTorch on the same device, one block per layer (DGL's convention:
# a block's destinations are the first of its sources), SAGEConv on the bipartite blocks.
# Timed: each epoch's sampling and training loop (on CUDA ending with torch.cuda.synchronize()), wall and process
# CPU seconds.
#
# Usage: /usr/bin/python3 tools/bench/pyg_minibatch.py DATASET_DIR [--device cpu|cuda] [--sampler auto|pyg|torch]
#        [--batch-size 1024] [--fanouts 10,5] [--epochs 5] [--threads 2] [--seed 0]
# Prints one JSON line (mean_epoch_ms, median_epoch_ms, test_accuracy, sampler, versions).
import argparse
import json
import os
import resource
import statistics
import sys
import time

import numpy as np

try:
    import torch
    import torch.nn.functional as F
    import torch_geometric
    from torch_geometric.nn import SAGEConv
except ImportError as e:  # a message instead of a traceback
    sys.exit(f"error: {e}; install python3-torch (Debian) and torch_geometric==2.3.1 (pip)")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_run import add_model_options, add_run_options, load_native_node, start_run  # noqa: E402



class Sage(torch.nn.Module):
    def __init__(self, in_dim, hidden, classes, layers, dropout):
        super().__init__()
        dims = [in_dim] + [hidden] * (layers - 1) + [classes]
        self.layers = torch.nn.ModuleList(SAGEConv(dims[i], dims[i + 1], aggr="mean") for i in range(layers))
        self.dropout = dropout

    def forward(self, x, graphs):
        """graphs: one (edge_index, (num_src, num_dst)) per layer, or one edge_index for every layer (whole
        subgraph, PyG's NeighborLoader way)."""
        h = x
        for i, layer in enumerate(self.layers):
            h = F.dropout(h, self.dropout, self.training)
            g = graphs[i] if isinstance(graphs, list) else graphs
            if isinstance(g, tuple):  # a block: its destinations are its first sources
                edge_index, (n_src, n_dst) = g
                h = layer((h[:n_src], h[:n_dst]), edge_index, size=(n_src, n_dst))
            else:
                h = layer(h, g)
            if i != len(self.layers) - 1:
                h = F.relu(h)
        return h


class TorchSampler:
    """Uniform neighbour sampling without replacement in plain PyTorch, on the graph's device: per layer a block
    (edge_index of local ids, (sources, destinations)), destinations first among the sources."""

    def __init__(self, indptr, indices, n, device):
        self.indptr = torch.from_numpy(indptr).to(device)
        self.indices = torch.from_numpy(indices).to(device)
        self.pos = torch.full((n,), -1, dtype=torch.int64, device=device)
        self.device = device

    def sample(self, seeds, fanouts):
        blocks = []
        dst = seeds
        for k in reversed(fanouts):  # from the seeds outwards: the last layer's fanout first
            start, deg = self.indptr[dst], self.indptr[dst + 1] - self.indptr[dst]
            seg = torch.repeat_interleave(torch.arange(len(dst), device=self.device), deg)
            offs = torch.cumsum(deg, 0) - deg
            within = torch.arange(len(seg), device=self.device) - offs[seg]
            order = torch.argsort(seg.to(torch.float64) + torch.rand(len(seg), device=self.device, dtype=torch.float64))
            rank = torch.empty_like(order)
            rank[order] = within  # each candidate's place in its segment's random order
            keep = rank < k
            nbr = self.indices[start[seg[keep]] + within[keep]]
            d_local = seg[keep]
            self.pos[dst] = torch.arange(len(dst), device=self.device)
            new = torch.unique(nbr[self.pos[nbr] < 0])
            self.pos[new] = len(dst) + torch.arange(len(new), device=self.device)
            src = torch.cat([dst, new])
            edge_index = torch.stack([self.pos[nbr], d_local])
            self.pos[src] = -1
            blocks.append((edge_index, (len(src), len(dst))))
            dst = src
        blocks.reverse()
        return dst, blocks  # the first layer's sources (input rows), the blocks from the input side


def pyg_loader(x, edge_index, y, train_ids, fanouts, batch_size):
    from torch_geometric.data import Data
    from torch_geometric.loader import NeighborLoader
    data = Data(x=x, edge_index=edge_index, y=y, num_nodes=x.shape[0])
    loader = NeighborLoader(data, num_neighbors=list(reversed(fanouts)), batch_size=batch_size, shuffle=True,
                            input_nodes=train_ids)
    next(iter(loader))  # fails here when neither pyg-lib nor torch-sparse is installed
    return loader


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("dataset")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--sampler", default="auto", choices=["auto", "pyg", "torch"])
    add_model_options(ap, batch_size=1024, fanouts="10,5")
    add_run_options(ap, epochs=5)
    a = start_run(ap)
    dev = torch.device(a.device)
    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("error: --device cuda but torch sees no GPU")
    m, indptr, indices, feats, labels, split = load_native_node(a.dataset)
    n = m["num_nodes"]
    fanouts = [int(f) for f in a.fanouts.split(",")]
    if len(fanouts) != a.layers:
        sys.exit(f"error: --fanouts {a.fanouts} has {len(fanouts)} numbers for {a.layers} layers")
    x = torch.from_numpy(feats.copy()).to(dev)
    y = torch.from_numpy(labels).to(dev)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    # PyG's edge_index is [source, target]: messages from indices[e] to its CSR row.
    edge_index = torch.from_numpy(np.stack([indices, rows])).to(dev)
    train_ids = torch.from_numpy(split["train"]).to(dev)
    model = Sage(x.shape[1], a.hidden, m["num_classes"], a.layers, a.dropout).to(dev)
    first = list(model.layers[0].parameters())
    rest = [p for layer in model.layers[1:] for p in layer.parameters()]
    opt = torch.optim.Adam([{"params": first, "weight_decay": a.weight_decay}, {"params": rest, "weight_decay": 0.0}],
                           lr=a.lr)

    sampler, note, loader = "torch", "", None
    if a.sampler in ("auto", "pyg"):
        try:
            # PyG's usual way: the graph in host memory, sampled there, each batch moved to the device
            loader = pyg_loader(x.cpu(), edge_index.cpu(), y.cpu(), train_ids.cpu(), fanouts, a.batch_size)
            sampler = "pyg NeighborLoader"
        except Exception as e:  # ImportError of pyg-lib / torch-sparse, or their absence reported otherwise
            if a.sampler == "pyg":
                sys.exit(f"error: PyG's NeighborLoader cannot run here: {type(e).__name__}: {e}")
            note = f"PyG's NeighborLoader cannot run here ({type(e).__name__}: {str(e)[:200]}); plain PyTorch sampling"
    torch_sampler = TorchSampler(indptr, indices, n, dev) if loader is None else None

    def sync():
        if a.device == "cuda":
            torch.cuda.synchronize()

    epoch_s, cpu_s, best_val, best_test = [], [], -1.0, 0.0
    for _ in range(a.epochs):
        model.train()
        sync()
        t0, c0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        if loader is not None:
            for batch in loader:
                batch = batch.to(dev)
                out = model(batch.x, batch.edge_index)[:batch.batch_size]
                loss = F.cross_entropy(out, batch.y[:batch.batch_size])
                opt.zero_grad()
                loss.backward()
                opt.step()
        else:
            perm = train_ids[torch.randperm(len(train_ids), device=dev)]
            for b in range(0, len(perm), a.batch_size):
                seeds = perm[b:b + a.batch_size]
                inputs, blocks = torch_sampler.sample(seeds, fanouts)
                out = model(x[inputs], blocks)
                loss = F.cross_entropy(out, y[seeds])
                opt.zero_grad()
                loss.backward()
                opt.step()
        sync()
        c1 = resource.getrusage(resource.RUSAGE_SELF)
        epoch_s.append(time.perf_counter() - t0)
        cpu_s.append((c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime))
        model.eval()
        with torch.no_grad():
            pred = model(x, edge_index).argmax(1)
        acc = {k: float((pred[split[k]] == y[split[k]]).float().mean()) for k in ("val", "test")}
        if acc["val"] > best_val:
            best_val, best_test = acc["val"], acc["test"]
    timed = epoch_s[1:] if len(epoch_s) > 1 else epoch_s  # the first epoch warms up (CUDA context, caches)
    print(json.dumps({
        "system": "pyg", "torch_geometric": torch_geometric.__version__, "torch": torch.__version__,
        "device": a.device, "sampler": sampler, "sampler_note": note, "dataset": m.get("name"),
        "batch_size": a.batch_size, "fanouts": fanouts, "epochs": a.epochs, "epoch_seconds": epoch_s,
        "mean_epoch_ms": 1000 * statistics.mean(timed), "median_epoch_ms": 1000 * statistics.median(timed),
        "mean_epoch_cpu_seconds": statistics.mean(cpu_s), "best_val_accuracy": best_val, "test_accuracy": best_test}))


if __name__ == "__main__":
    main()
