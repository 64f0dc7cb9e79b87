"""tessel: distributed GCN and SVM training (C++20, oneTBB, MPI, CUDA) from Python.

    import tessel
    data = tessel.load("cora")                       # a native dataset folder: zero-copy numpy views
    result = tessel.train_gcn(data, epochs=200, normalize_features="l1")
    print(result["test"]["accuracy"])

    clf = tessel.SVC(C=1.0, gamma="scale").fit(X, y)  # a scikit-learn estimator (LIBSVM's C-SVC)

Errors of the engine are raised as :class:`tessel.Error` (a ValueError) with the engine's message.
"""

from ._errors import Error
from . import _tessel
from .data import NodeData, RowData, from_pyg, load, node_dataset, rows_dataset, stats, to_pyg
from .gcn import GCN_PARAMS, partition, predict_gcn, train_gcn

__version__ = _tessel.__version__
#: Whether this build has the CUDA backend (device="cuda") and the MPI communicator.
HAVE_CUDA = _tessel.cuda
HAVE_MPI = _tessel.mpi

# A library stays quiet: the engine logs warnings and errors only; set_log_level("info") shows its progress lines.
set_log_level = _tessel.set_log_level
get_log_level = _tessel.get_log_level
_tessel.set_log_level("warn")


def __getattr__(name):
    # tessel.SVC imports scikit-learn on first use only, so the graph API works without it.
    if name == "SVC":
        from .svm import SVC
        return SVC
    raise AttributeError(f"module 'tessel' has no attribute {name!r}")


def __dir__():
    # SVC is loaded on first use (__getattr__) but belongs in dir(tessel) and tab completion like the rest.
    return sorted(set(globals()) | {"SVC"})


__all__ = ["Error", "NodeData", "RowData", "SVC", "GCN_PARAMS", "from_pyg", "load", "node_dataset", "partition",
           "predict_gcn", "rows_dataset", "stats", "to_pyg", "train_gcn", "set_log_level", "get_log_level",
           "__version__"]
