"""Shared by the PyTorch baselines of tools/bench (pygcn_baseline.py, dgl_minibatch.py): their run options
(--epochs, --threads, --seed) and the start of a run from them."""
import numpy as np
import torch


def add_run_options(ap, epochs):
    """Adds --epochs (default EPOCHS), --threads (2) and --seed (0) to the argparse parser AP."""
    ap.add_argument("--epochs", type=int, default=epochs)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)


def start_run(ap):
    """Parses AP's options, sets torch's thread count and seeds torch and NumPy from them; returns the options."""
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    np.random.seed(a.seed)
    return a
