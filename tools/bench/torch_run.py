"""Shared by the PyTorch baselines of tools/bench (pygcn_baseline.py, dgl_minibatch.py, pyg_minibatch.py): their run
options (--epochs, --threads, --seed), the start of a run from them, and a node dataset folder read as dense arrays."""
import json
import os
import sys

import numpy as np
import torch


def add_run_options(ap, epochs):
    """Adds --epochs (default EPOCHS), --threads (2) and --seed (0) to the argparse parser AP."""
    ap.add_argument("--epochs", type=int, default=epochs)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)


def add_model_options(ap, batch_size, fanouts):
    """The sampled model's options of `tessel train gcn`, with its defaults (tessel's --hidden 16, --dropout 0.5, Adam
    lr 0.01, weight decay 5e-4): --layers, --hidden, --batch-size, --fanouts, --dropout, --lr, --weight-decay."""
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=16)
    ap.add_argument("--batch-size", type=int, default=batch_size)
    ap.add_argument("--fanouts", default=fanouts)
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--weight-decay", type=float, default=5e-4)


def start_run(ap):
    """Parses AP's options, sets torch's thread count and seeds torch and NumPy from them; returns the options."""
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    np.random.seed(a.seed)
    return a


def load_native_node(folder):
    """(manifest, indptr, indices, dense float32 features, labels, split) of a tessel node dataset folder
    (docs/formats.md: little-endian arrays named by manifest.json); sparse features are densified."""
    with open(os.path.join(folder, "manifest.json")) as f:
        m = json.load(f)
    if m.get("kind") != "node":
        sys.exit(f"error: {folder} is not a tessel node dataset folder")
    arrays = m["arrays"]

    def arr(name):
        a = arrays[name]
        return np.fromfile(os.path.join(folder, a["file"]), dtype=np.dtype(a["dtype"]).newbyteorder("<"),
                           count=a["count"])

    n = m["num_nodes"]
    indptr = arr("indptr").astype(np.int64)
    indices = arr("indices").astype(np.int64)
    if m.get("features_sparse"):
        feats = np.zeros((n, m["feature_dim"]), dtype=np.float32)
        fp, fi = arr("feat_indptr").astype(np.int64), arr("feat_indices").astype(np.int64)
        fv = arr("feat_values") if "feat_values" in arrays else np.ones(len(fi), dtype=np.float32)
        feats[np.repeat(np.arange(n), np.diff(fp)), fi] = fv
    else:
        feats = arr("features").reshape(n, m["feature_dim"])
    split = {k: arr(k).astype(np.int64) for k in ("train", "val", "test")}
    return m, indptr, indices, feats, arr("labels").astype(np.int64), split
