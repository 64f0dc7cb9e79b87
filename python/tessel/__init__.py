"""tessel: distributed GCN and SVM training (C++20, oneTBB, MPI, CUDA) from Python.

    import tessel
    data = tessel.load("cora")                       # a native dataset folder: zero-copy numpy views
    result = tessel.train_gcn(data, epochs=200, normalize_features="l1")
    print(result["test"]["accuracy"])

    clf = tessel.SVC(C=1.0, gamma="scale").fit(X, y)  # a scikit-learn estimator (LIBSVM's C-SVC)
    reg = tessel.SVR(C=1.0, epsilon=0.1).fit(X, t)    # also NuSVC, NuSVR and OneClassSVM

Errors of the engine are raised as :class:`tessel.Error` (a ValueError) with the engine's message.
"""

from ._errors import Error
from . import _tessel
from .data import NodeData, RowData, from_pyg, info, load, node_dataset, rows_dataset, stats, to_pyg
from .gcn import GCN_PARAMS, PARTITION_PARAMS, PREDICT_GCN_PARAMS, partition, predict_gcn, train_gcn

__version__ = _tessel.__version__
#: Whether this build has the CUDA backend (device="cuda") and the MPI communicator.
HAVE_CUDA = _tessel.cuda
HAVE_MPI = _tessel.mpi

# A library stays quiet: the engine logs warnings and errors only; set_log_level("info") shows its progress lines.
set_log_level = _tessel.set_log_level
get_log_level = _tessel.get_log_level
_tessel.set_log_level("warn")


# The SVM estimators (tessel/svm.py), loaded on first use.
_SVM_ESTIMATORS = ("SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM")


def __getattr__(name):
    # The SVM estimators import scikit-learn on first use only, so the graph API works without it.
    if name in _SVM_ESTIMATORS:
        from . import svm
        return getattr(svm, name)
    raise AttributeError(f"module 'tessel' has no attribute {name!r}")


def __dir__():
    # The estimators are loaded on first use (__getattr__) but belong in dir(tessel) and tab completion.
    return sorted(set(globals()) | set(_SVM_ESTIMATORS))


__all__ = ["Error", "NodeData", "RowData", *_SVM_ESTIMATORS, "GCN_PARAMS", "PARTITION_PARAMS", "PREDICT_GCN_PARAMS", "from_pyg", "info", "load", "node_dataset",
           "partition", "predict_gcn", "rows_dataset", "stats", "to_pyg", "train_gcn", "set_log_level",
           "get_log_level", "__version__"]
