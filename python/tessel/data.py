"""Datasets: open native folders as zero-copy numpy views, build them from numpy arrays, SciPy sparse matrices or
PyG ``Data`` objects with the checks of ``tessel convert``, and hand them to PyG (``to_pyg``)."""

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


def load(path, mmap=True):
    """Opens a dataset: a native folder (``tessel convert``; memory-mapped, checksums verified), a node-table prefix
    or a LIBSVM text file. Returns a :class:`NodeData` (graph datasets) or a :class:`RowData` (sparse rows).

    With ``mmap=True`` (the default) the arrays of a native folder are read-only numpy views of the mapped files: no
    copy is made, and pages are read as they are used. The files must then stay as they are while the dataset or a
    view of it is alive: a file truncated or rewritten in place on disk (another process, a full disk, a network
    file system) ends the interpreter with SIGBUS, as numpy's memmap does. Use ``mmap=False`` when the files may
    change under you, or live on storage you do not control: the arrays are copied into memory at load (the memory
    of the whole dataset, checked against the memory budget), and nothing done to the files later reaches them.
    Text inputs (node tables, LIBSVM) are parsed into memory either way.
    """
    return _tessel.load(_path("path", path), as_bool("mmap", mmap))


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


def _pyg_edge_weights(data, get, num_edges):
    """The weights of a PyG ``Data``'s edges: ``edge_weight`` (1-D, one per edge), else ``edge_attr`` when it is one
    value per edge (shape [E] or [E, 1]); None when it has neither. Refuses what it cannot keep rather than dropping
    it: edge features of more than one column, or an ``edge_attr`` that disagrees with ``edge_weight``."""
    weight, attr = get("edge_weight"), get("edge_attr")
    if attr is not None:
        shape = np.shape(attr)
        if len(shape) == 2 and shape[1] == 1:
            attr = np.asarray(attr).reshape(-1)
        elif len(shape) != 1:
            raise Error(f"from_pyg: edge_attr has shape {tuple(shape)}; a tessel graph keeps one weight per edge "
                        f"(an edge_attr of shape [num_edges] or [num_edges, 1]), not edge features. Pass the weights "
                        f"as data.edge_weight (e.g. data.edge_attr[:, 0]) and delete data.edge_attr, or delete it to "
                        f"train without edge features")
    if weight is not None and attr is not None:
        w = as_array("edge_weight", weight, "float", dtype=np.float32)
        a = as_array("edge_attr", attr, "float", dtype=np.float32)
        if w.shape != a.shape or not np.array_equal(w, a):
            raise Error("from_pyg: the object has both edge_weight and edge_attr, with different values; a tessel "
                        "graph keeps one weight per edge: delete the one that is not the edge weight")
    w = weight if weight is not None else attr
    if w is None:
        return None
    name = "edge_weight" if weight is not None else "edge_attr"
    w = as_array(name, w, "float", dtype=np.float32, finite=True)
    if w.shape[0] != num_edges:
        raise Error(f"from_pyg: {name} has {w.shape[0]} values for {num_edges} edges (edge_index has {num_edges} "
                    f"columns); one weight per edge is needed")
    return w


def from_pyg(data, name="", directed=False, sparse_features="auto", keep_self_loops=False):
    """A :class:`NodeData` from a PyG ``Data`` object: ``edge_index``, ``x``, ``y``, the ``train_mask``,
    ``val_mask``, ``test_mask`` masks and the edge weights (``edge_weight``, or a 1-D ``edge_attr``) when present
    (any object with those attributes works). Multi-column ``edge_attr`` (edge features) is refused, not dropped.
    The graph is built as by :func:`node_dataset`: symmetrised unless ``directed``, self-loops dropped unless
    ``keep_self_loops``, duplicate edges merged (the largest weight kept)."""
    def get(attr):
        v = getattr(data, attr, None)
        if v is not None and hasattr(v, "detach"):
            v = v.detach().cpu().numpy()
        return v
    edge_index = get("edge_index")
    if edge_index is None:
        raise Error("from_pyg: the object has no edge_index")
    y = get("y")
    if y is not None and np.ndim(y) == 2 and np.shape(y)[1] == 1:
        y = np.asarray(y).reshape(-1)
    num_edges = np.shape(edge_index)[1] if np.ndim(edge_index) == 2 else 0
    weights = _pyg_edge_weights(data, get, num_edges) if np.ndim(edge_index) == 2 else None
    return node_dataset(edge_index, num_nodes=getattr(data, "num_nodes", None), features=get("x"), labels=y,
                        train=get("train_mask"), val=get("val_mask"), test=get("test_mask"), edge_weights=weights,
                        directed=directed, keep_self_loops=keep_self_loops, name=name, sparse_features=sparse_features)


def to_pyg(data):
    """A ``torch_geometric.data.Data`` of a :class:`NodeData` (PyTorch and PyG are imported on first use):

    - ``edge_index``: int64 [2 x E], every stored adjacency entry (an undirected edge appears both ways), row 0
      the source (the CSR's row), row 1 the target, in the dataset's order;
    - ``edge_weight``: float32 [E], when the graph has weights;
    - ``x``: float32 [num_nodes x dim], dense (sparse features are expanded), when the dataset has features;
    - ``y``: int64 [num_nodes], -1 for unlabelled nodes, when it has labels;
    - ``train_mask``, ``val_mask``, ``test_mask``: bool [num_nodes], when it has a split;
    - ``num_nodes``.

    Every tensor is a copy (the dataset's arrays may be read-only mappings). ``from_pyg(to_pyg(d))`` gives back
    the graph, weights, features, labels and split of ``d`` (with ``directed=True`` for a directed graph and
    ``keep_self_loops=True`` for one with self-loops).
    """
    if not isinstance(data, NodeData):
        raise Error(f"to_pyg: a tessel.NodeData is needed, got {type(data).__name__}")
    try:
        import torch
        from torch_geometric.data import Data
    except ImportError as e:
        raise ImportError(f"tessel.to_pyg needs PyTorch and PyTorch Geometric (pip install torch torch_geometric): "
                          f"{e}") from e
    n = int(data.num_nodes)
    indptr = np.asarray(data.indptr)
    out = {"num_nodes": n}
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    out["edge_index"] = torch.from_numpy(np.stack([src, np.asarray(data.indices, dtype=np.int64)]))
    if data.edge_weights is not None:
        out["edge_weight"] = torch.from_numpy(np.array(data.edge_weights, dtype=np.float32))
    if data.feature_dim > 0 and n > 0:
        if data.features_sparse:
            x = np.zeros((n, data.feature_dim), dtype=np.float32)
            rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(data.feature_indptr))
            x[rows, data.feature_indices] = data.feature_values
        else:
            x = np.array(data.dense_features, dtype=np.float32)
        out["x"] = torch.from_numpy(x)
    if data.labels is not None:
        out["y"] = torch.from_numpy(np.asarray(data.labels, dtype=np.int64))
    splits = {"train": data.train, "val": data.val, "test": data.test}
    if any(ids.size for ids in splits.values()):
        for split, ids in splits.items():
            mask = np.zeros(n, dtype=bool)
            mask[ids] = True
            out[f"{split}_mask"] = torch.from_numpy(mask)
    return Data(**out)


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


def info(path, verify=True):
    """What ``tessel info --json PATH`` prints, as a dict: a native dataset folder, a partition folder, a GCN
    or SVM checkpoint folder or an SVM model file, read and checked as training and prediction read them (with
    ``verify=True`` every array's checksum too). Raises :class:`tessel.Error` naming the damage otherwise."""
    return json.loads(_tessel.info(_path("path", path), as_bool("verify", verify)))


def stats(data):
    """The statistics ``tessel info`` prints, as a dict."""
    return json.loads(data.stats_json())
