"""Datasets: open native folders as zero-copy numpy views, and build them from numpy arrays, SciPy sparse matrices
or PyG ``Data`` objects with the checks of ``tessel convert``."""

import json
import os

import numpy as np

from . import _tessel
from ._checks import MAX_COLUMNS, as_array, as_bool, as_int, is_sparse, sparse_input
from ._errors import Error

NodeData = _tessel.NodeData
RowData = _tessel.RowData


def _path(name, value):
    if not isinstance(value, (str, os.PathLike)):
        raise Error(f"{name}={value!r}: a path (str or os.PathLike) is needed")
    return os.fspath(value)


def load(path):
    """Opens a dataset: a native folder (``tessel convert``; memory-mapped, checksums verified), a node-table prefix
    or a LIBSVM text file. Returns a :class:`NodeData` (graph datasets) or a :class:`RowData` (sparse rows).

    The arrays of a loaded dataset are read-only numpy views of the mapped files: no copy is made.
    """
    return _tessel.load(_path("path", path))


def _split(name, value, n):
    """A split given as node ids or as a boolean mask of length n, as sorted unique int64 ids."""
    if value is None:
        return None
    a = np.asarray(value)
    if a.dtype == np.bool_:
        if a.ndim != 1 or a.shape[0] != n:
            raise Error(f"{name}: a boolean mask of {a.shape[0] if a.ndim == 1 else a.shape} entries for {n} nodes")
        return np.flatnonzero(a).astype(np.int64)
    ids = as_array(name, a, "int", dtype=np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= n):
        raise Error(f"{name}: node ids must be in [0, {n}), found {ids.min()}..{ids.max()}")
    return np.unique(ids)


#: Dense features with at most this share of non-zeros are stored sparse by ``sparse_features="auto"``.
SPARSE_DENSITY = 0.1


def _features(features, n, sparse="auto"):
    """(dense float32 [n x d], None) or (None, (indptr, indices, values, dim)): SciPy sparse input stays sparse;
    dense input becomes sparse with sparse=True, or with "auto" when at most SPARSE_DENSITY of it is non-zero."""
    if features is None:
        return None, None
    if sparse not in (True, False, "auto"):
        raise Error(f"sparse_features={sparse!r}: True, False or 'auto' is needed")
    if is_sparse(features):
        m = sparse_input("features", features).tocsr()  # indptr and indices checked before SciPy reads them
        m.sum_duplicates()
        m.sort_indices()
        if m.shape[0] != n:
            raise Error(f"features: {m.shape[0]} rows for {n} nodes")
        values = as_array("features", m.data, "float", dtype=np.float32, finite=True)
        return None, (as_array("features.indptr", m.indptr, "int", dtype=np.int64),
                      as_array("features.indices", m.indices, "int", dtype=np.int32), values, int(m.shape[1]))
    dense = as_array("features", features, "float", ndim=2, dtype=np.float32, finite=True)
    if dense.shape[0] != n:
        raise Error(f"features: {dense.shape[0]} rows for {n} nodes")
    nnz = int(np.count_nonzero(dense))
    if sparse is True or (sparse == "auto" and dense.size and nnz <= SPARSE_DENSITY * dense.size):
        return None, _dense_to_csr(dense)
    return dense, None


def node_dataset(edge_index=None, *, adjacency=None, num_nodes=None, features=None, labels=None, num_classes=None,
                 train=None, val=None, test=None, edge_weights=None, directed=False, keep_self_loops=False, name="",
                 sparse_features="auto"):
    """Builds a node dataset in memory (save it with ``.save(path)``, train on it with :func:`train_gcn`).

    The graph is given as ``edge_index`` (a [2 x E] integer array, PyG's layout) or ``adjacency`` (a SciPy sparse
    matrix); like ``tessel convert`` it is symmetrised (unless ``directed``), self-loops are dropped (unless
    ``keep_self_loops``) and duplicate edges merged. ``features``: a [num_nodes x dim] array or a SciPy sparse
    matrix (float32, finite); ``sparse_features`` ("auto": dense features with at most 10% non-zeros, such as
    Planetoid's bag-of-words, are stored sparse, as ``tessel convert`` stores those datasets; True or False to
    choose). ``labels``: integer classes, -1 for unlabelled nodes. ``train``, ``val``, ``test``: node ids or
    boolean masks.
    """
    if (edge_index is None) == (adjacency is None):
        raise Error("give the graph as edge_index (2 x E ids) or adjacency (a SciPy sparse matrix), exactly one")
    if adjacency is not None:
        if not is_sparse(adjacency):
            raise Error(f"adjacency: a SciPy sparse matrix is needed, got {type(adjacency).__name__}")
        coo = sparse_input("adjacency", adjacency).tocoo()  # checked before SciPy reads its ids
        if coo.shape[0] != coo.shape[1]:
            raise Error(f"adjacency: a square matrix is needed, got shape {coo.shape}")
        src, dst = coo.row, coo.col
        if num_nodes is None:
            num_nodes = coo.shape[0]
        if edge_weights is None and coo.data.size and not np.all(coo.data == 1):
            edge_weights = coo.data
    else:
        ei = edge_index
        if hasattr(ei, "detach"):  # a torch tensor
            ei = ei.detach().cpu().numpy()
        ei = as_array("edge_index", ei, "int", ndim=2, dtype=np.int64)
        if ei.shape[0] != 2:
            raise Error(f"edge_index: shape {ei.shape}; PyG's [2 x num_edges] layout is needed")
        src, dst = ei[0], ei[1]
    src = as_array("edge_index[0]", src, "int", dtype=np.int64)
    dst = as_array("edge_index[1]", dst, "int", dtype=np.int64)
    if num_nodes is None:
        num_nodes = int(max(src.max(initial=-1), dst.max(initial=-1)) + 1)
        if features is not None:
            num_nodes = max(num_nodes, int(np.shape(features)[0]))
        if labels is not None:
            num_nodes = max(num_nodes, int(np.shape(labels)[0]))
    n = as_int("num_nodes", num_nodes, minimum=0)
    w = None if edge_weights is None else as_array("edge_weights", edge_weights, "float", dtype=np.float32, finite=True)
    dense, sparse = _features(features, n, sparse_features)
    y = None
    if labels is not None:
        y = as_array("labels", labels, "label", dtype=np.int64)
        if y.size and y.min() < -1:
            raise Error(f"labels: {y.min()} is not a class id; use 0, 1, ... and -1 for unlabelled nodes")
        if y.size and y.max() > np.iinfo(np.int32).max:
            raise Error(f"labels: {y.max()} is too large for a class id")
        y = y.astype(np.int32)
    k = -1 if num_classes is None else as_int("num_classes", num_classes, minimum=0)
    return _tessel.build_node(
        src, dst, n, as_bool("directed", directed), as_bool("keep_self_loops", keep_self_loops), w, dense,
        None if sparse is None else sparse[0], None if sparse is None else sparse[1],
        None if sparse is None else sparse[2], 0 if sparse is None else sparse[3], y, k,
        _split("train", train, n), _split("val", val, n), _split("test", test, n), str(name))


def from_pyg(data, name="", directed=False, sparse_features="auto"):
    """A :class:`NodeData` from a PyG ``Data`` object: ``edge_index``, ``x``, ``y`` and the ``train_mask``,
    ``val_mask``, ``test_mask`` masks when present (any object with those attributes works)."""
    def get(attr):
        v = getattr(data, attr, None)
        if v is not None and hasattr(v, "detach"):
            v = v.detach().cpu().numpy()
        return v
    if get("edge_index") is None:
        raise Error("from_pyg: the object has no edge_index")
    y = get("y")
    if y is not None and np.ndim(y) == 2 and np.shape(y)[1] == 1:
        y = np.asarray(y).reshape(-1)
    return node_dataset(get("edge_index"), num_nodes=getattr(data, "num_nodes", None), features=get("x"), labels=y,
                        train=get("train_mask"), val=get("val_mask"), test=get("test_mask"), directed=directed,
                        name=name, sparse_features=sparse_features)


def rows_dataset(X, y, name=""):
    """A :class:`RowData` (LIBSVM's data model: sparse float64 rows, real labels) from a dense array or a SciPy
    sparse matrix ``X`` and labels ``y``; save it with ``.save(path)`` for ``tessel train svm --data``."""
    indptr, indices, values, num_features = csr_arrays("X", X)
    labels = as_array("y", y, "float", dtype=np.float64, finite=True)
    if labels.shape[0] != indptr.shape[0] - 1:
        raise Error(f"y: {labels.shape[0]} labels for {indptr.shape[0] - 1} rows of X")
    return _tessel.build_rows(indptr, indices, values, labels, num_features, str(name))


def csr_arrays(name, X):
    """(indptr int64, indices int32, values float64, num_features) of a dense array or SciPy sparse matrix, with
    finite values, sorted indices and no explicit duplicates."""
    if is_sparse(X):
        m = sparse_input(name, X).tocsr()  # indptr and indices checked before SciPy reads them
        if m.shape[1] > MAX_COLUMNS:
            raise Error(f"{name}: {m.shape[1]} columns; feature ids are 32-bit, so at most {MAX_COLUMNS} columns")
        if not m.has_canonical_format:
            m = m.copy()
            m.sum_duplicates()
        values = as_array(name, m.data, "float", dtype=np.float64, finite=True)
        return (as_array(name + ".indptr", m.indptr, "int", dtype=np.int64),
                as_array(name + ".indices", m.indices, "int", dtype=np.int32), values, int(m.shape[1]))
    dense = as_array(name, X, "float", ndim=2, dtype=np.float64, finite=True)
    if dense.shape[1] > MAX_COLUMNS:
        raise Error(f"{name}: {dense.shape[1]} columns; feature ids are 32-bit, so at most {MAX_COLUMNS} columns")
    return _dense_to_csr(dense)


def _dense_to_csr(dense):
    """(indptr int64, indices int32, values of dense's dtype, columns) of the non-zeros of a 2-D array."""
    rows, cols = np.nonzero(dense)
    indptr = np.zeros(dense.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=dense.shape[0]), out=indptr[1:])
    return indptr, cols.astype(np.int32), np.ascontiguousarray(dense[rows, cols]), int(dense.shape[1])


def stats(data):
    """The statistics ``tessel info`` prints, as a dict."""
    return json.loads(data.stats_json())
