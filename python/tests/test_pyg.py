"""PyG interop: to_pyg gives a torch_geometric Data with the dataset's graph, weights, features, labels and split;
from_pyg(to_pyg(d)) gives d back; from_pyg keeps edge weights (edge_weight, or a 1-D edge_attr) and refuses what a
tessel graph cannot hold instead of dropping it. The torch tests skip where PyTorch Geometric is not installed."""
import sys

import numpy as np
import pytest

import tessel


class PygLike:
    """An object with the attributes from_pyg reads (no torch needed)."""

    def __init__(self, **attrs):
        self.__dict__.update(attrs)


def weighted_graph(directed=False, keep_self_loops=False):
    """5 nodes, weighted edges (one self-loop), dense features, labels with one unlabelled node, a split."""
    edges = np.array([[0, 1, 2, 3, 4, 1], [1, 2, 3, 4, 4, 0]])
    weights = np.array([0.5, 2.0, 3.0, 1.5, 4.0, 0.25], np.float32)
    x = np.arange(20, dtype=np.float32).reshape(5, 4) / 10
    return tessel.node_dataset(edges, edge_weights=weights, features=x, labels=[0, 1, 2, 1, -1], train=[0, 1],
                               val=[2], test=[3], directed=directed, keep_self_loops=keep_self_loops,
                               sparse_features=False)


def dense_x(d):
    if not d.features_sparse:
        return np.asarray(d.dense_features)
    x = np.zeros((d.num_nodes, d.feature_dim), np.float32)
    x[np.repeat(np.arange(d.num_nodes), np.diff(d.feature_indptr)), d.feature_indices] = d.feature_values
    return x


def assert_same_dataset(a, b):
    assert a.num_nodes == b.num_nodes
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    if a.edge_weights is None:
        assert b.edge_weights is None
    else:
        np.testing.assert_array_equal(a.edge_weights, b.edge_weights)
    np.testing.assert_array_equal(dense_x(a), dense_x(b))
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.num_classes == b.num_classes
    for split in ("train", "val", "test"):
        np.testing.assert_array_equal(getattr(a, split), getattr(b, split))


def test_to_pyg_holds_the_dataset(cora):
    pytest.importorskip("torch_geometric.data")
    import torch
    g = tessel.to_pyg(cora)
    g.validate()  # PyG's own consistency check (edge ids within num_nodes, ...)
    n = cora.num_nodes
    assert g.num_nodes == n and g.num_edges == cora.num_entries
    assert g.edge_index.dtype == torch.int64 and g.x.dtype == torch.float32 and g.y.dtype == torch.int64
    src = np.repeat(np.arange(n), np.diff(cora.indptr))
    np.testing.assert_array_equal(g.edge_index.numpy(), np.stack([src, cora.indices]))
    assert "edge_weight" not in g  # Cora is unweighted
    assert cora.features_sparse and tuple(g.x.shape) == (n, cora.feature_dim)
    np.testing.assert_array_equal(g.x.numpy(), dense_x(cora))
    np.testing.assert_array_equal(g.y.numpy(), cora.labels)
    for split in ("train", "val", "test"):
        mask = getattr(g, f"{split}_mask").numpy()
        assert mask.dtype == bool
        np.testing.assert_array_equal(np.flatnonzero(mask), getattr(cora, split))
    # Copies: the dataset's read-only views are not shared with torch.
    g.x[0, 0] = 7.0
    assert dense_x(cora)[0, 0] != 7.0


@pytest.mark.parametrize("directed, keep_self_loops", [(False, False), (True, True)])
def test_round_trip(directed, keep_self_loops):
    pytest.importorskip("torch_geometric.data")
    d = weighted_graph(directed, keep_self_loops)
    g = tessel.to_pyg(d)
    np.testing.assert_array_equal(g.edge_weight.numpy(), d.edge_weights)
    assert g.y[4].item() == -1
    back = tessel.from_pyg(g, directed=directed, keep_self_loops=keep_self_loops, sparse_features=False)
    assert_same_dataset(d, back)
    if keep_self_loops:
        assert 4 in d.indices[d.indptr[4]:d.indptr[5]]  # the self-loop made the trip


def test_round_trip_of_cora_trains_to_the_same_result(cora):
    pytest.importorskip("torch_geometric.data")
    back = tessel.from_pyg(tessel.to_pyg(cora))
    assert_same_dataset(cora, back)
    assert back.features_sparse  # stored sparse again, as the CLI reads Cora
    args = dict(epochs=10, normalize_features="l1", seed=1)
    assert tessel.train_gcn(back, **args)["test"] == tessel.train_gcn(cora, **args)["test"]


def test_to_pyg_of_a_dataset_without_labels_or_split():
    pytest.importorskip("torch_geometric.data")
    d = tessel.node_dataset(np.array([[0, 1], [1, 2]]), num_nodes=4)
    g = tessel.to_pyg(d)
    assert g.num_nodes == 4 and g.num_edges == 4
    for attr in ("x", "y", "train_mask", "val_mask", "test_mask", "edge_weight"):
        assert attr not in g, attr
    assert_same_dataset(d, tessel.from_pyg(g))


def test_to_pyg_needs_torch_geometric(cora, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch_geometric", None)  # `import torch_geometric` now raises ImportError
    monkeypatch.setitem(sys.modules, "torch_geometric.data", None)
    with pytest.raises(ImportError, match="PyTorch Geometric"):
        tessel.to_pyg(cora)


def test_to_pyg_refuses_what_is_not_a_node_dataset():
    with pytest.raises(tessel.Error, match="NodeData"):
        tessel.to_pyg(tessel.rows_dataset(np.eye(2), [0, 1]))
    with pytest.raises(tessel.Error, match="NodeData"):
        tessel.to_pyg("tests/data/cora/cora")


EDGES = np.array([[0, 1, 2], [1, 2, 0]])


@pytest.mark.parametrize("attrs", [
    dict(edge_weight=np.array([0.5, 2.0, 3.0])),
    dict(edge_attr=np.array([0.5, 2.0, 3.0])),
    dict(edge_attr=np.array([[0.5], [2.0], [3.0]])),  # one column
    dict(edge_weight=np.array([0.5, 2.0, 3.0]), edge_attr=np.array([0.5, 2.0, 3.0])),  # the same values twice
])
def test_from_pyg_keeps_edge_weights(attrs):
    d = tessel.from_pyg(PygLike(edge_index=EDGES, **attrs))
    assert d.edge_weights is not None
    weight = {(int(u), int(v)): w for u, v, w in zip(np.repeat(np.arange(3), np.diff(d.indptr)), d.indices,
                                                      d.edge_weights)}
    # Symmetrised: each edge both ways with its weight.
    assert weight == {(0, 1): 0.5, (1, 0): 0.5, (1, 2): 2.0, (2, 1): 2.0, (2, 0): 3.0, (0, 2): 3.0}


@pytest.mark.parametrize("attrs, match", [
    (dict(edge_attr=np.ones((3, 2))), r"edge_attr has shape \(3, 2\).*one weight per edge"),
    (dict(edge_attr=np.ones((3, 1, 1))), r"edge_attr has shape \(3, 1, 1\)"),
    (dict(edge_weight=np.ones(3), edge_attr=np.arange(3.0)), "both edge_weight and edge_attr"),
    (dict(edge_weight=np.ones(3), edge_attr=np.ones((3, 4))), "edge_attr has shape"),
    (dict(edge_weight=np.ones(2)), "edge_weight has 2 values for 3 edges"),
    (dict(edge_attr=np.ones(4)), "edge_attr has 4 values for 3 edges"),
    (dict(edge_weight=np.array([1.0, np.nan, 1.0])), "edge_weight: contains NaN"),
    (dict(edge_weight=np.array(["a", "b", "c"])), "edge_weight: has dtype"),
])
def test_from_pyg_refuses_edge_data_it_cannot_keep(attrs, match):
    with pytest.raises(tessel.Error, match=match):
        tessel.from_pyg(PygLike(edge_index=EDGES, **attrs))


def test_from_pyg_reads_torch_edge_attr():
    torch = pytest.importorskip("torch")
    pyg = pytest.importorskip("torch_geometric.data")
    g = pyg.Data(edge_index=torch.from_numpy(EDGES), edge_attr=torch.tensor([[0.5], [2.0], [3.0]]), num_nodes=3)
    assert sorted(tessel.from_pyg(g).edge_weights.tolist()) == [0.5, 0.5, 2.0, 2.0, 3.0, 3.0]
    g.edge_attr = torch.ones(3, 8)
    with pytest.raises(tessel.Error, match="edge_attr has shape"):
        tessel.from_pyg(g)
