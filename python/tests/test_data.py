"""Datasets from Python: numpy -> native folder -> numpy round trips, zero-copy read-only views, the checks of
`tessel convert` on arrays, and clear exceptions for bad input."""
import json

import numpy as np
import pytest

import tessel


def ring(n):
    """A symmetric ring graph's edge_index (both directions) and its CSR."""
    src = np.arange(n)
    dst = (src + 1) % n
    return np.stack([np.concatenate([src, dst]), np.concatenate([dst, src])])


def small(tmp_path, sparse=False, **kw):
    n = 10
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 4)).astype(np.float32)
    if sparse:
        import scipy.sparse as sp
        x[x < 0.5] = 0
        x = sp.csr_matrix(x)
    args = dict(features=x, labels=np.arange(n) % 3, train=[0, 1, 2, 3], val=[4, 5], test=[6, 7, 8, 9], name="ring")
    args.update(kw)
    return tessel.node_dataset(ring(n), **args), x


def test_round_trip_dense(tmp_path):
    d, x = small(tmp_path)
    assert not d.features_sparse  # normal-distributed: dense
    assert d.num_nodes == 10 and d.num_classes == 3 and d.feature_dim == 4
    d.save(tmp_path / "ring")
    e = tessel.load(tmp_path / "ring")
    assert isinstance(e, tessel.NodeData)
    np.testing.assert_array_equal(e.dense_features, x)
    np.testing.assert_array_equal(e.labels, np.arange(10) % 3)
    np.testing.assert_array_equal(e.train, [0, 1, 2, 3])
    np.testing.assert_array_equal(e.val, [4, 5])
    np.testing.assert_array_equal(e.test, [6, 7, 8, 9])
    np.testing.assert_array_equal(e.indptr, np.arange(0, 21, 2))
    for u in range(10):
        assert sorted(e.indices[e.indptr[u]:e.indptr[u + 1]]) == sorted({(u - 1) % 10, (u + 1) % 10})
    assert e.name == "ring"
    assert tessel.stats(e)["num_nodes"] == 10


def test_round_trip_sparse_features_and_masks(tmp_path):
    mask = np.zeros(10, dtype=bool)
    mask[[1, 3]] = True
    d, x = small(tmp_path, sparse=True, train=mask)
    d.save(tmp_path / "s")
    e = tessel.load(tmp_path / "s")
    assert e.features_sparse and e.dense_features is None
    import scipy.sparse as sp
    back = sp.csr_matrix((e.feature_values, e.feature_indices, e.feature_indptr), shape=(10, 4))
    assert (back != x).nnz == 0
    np.testing.assert_array_equal(e.train, [1, 3])


def test_views_are_zero_copy_and_read_only(tmp_path):
    import gc
    d, x = small(tmp_path)
    d.save(tmp_path / "r")
    e = tessel.load(tmp_path / "r")
    f = e.dense_features
    assert not f.flags.writeable and not f.flags.owndata and f.base is not None
    with pytest.raises(ValueError):
        f[0, 0] = 1
    # Two views of one array share memory: the mapping, not a copy each.
    assert np.shares_memory(e.dense_features, e.dense_features)
    del e  # the view keeps the dataset (and its mapping) alive
    gc.collect()
    np.testing.assert_array_equal(f, x)


def test_edges_are_symmetrised_and_deduplicated_like_convert():
    d = tessel.node_dataset(np.array([[0, 0, 1, 2, 2], [1, 1, 2, 2, 0]]), num_nodes=4)
    # (0,1) twice and the self-loop (2,2) collapse; every edge appears both ways; node 3 isolated.
    np.testing.assert_array_equal(d.indptr, [0, 2, 4, 6, 6])
    np.testing.assert_array_equal(d.indices, [1, 2, 0, 2, 0, 1])
    directed = tessel.node_dataset(np.array([[0], [1]]), num_nodes=2, directed=True)
    np.testing.assert_array_equal(directed.indptr, [0, 1, 1])


def test_scipy_adjacency(tmp_path):
    import scipy.sparse as sp
    a = sp.coo_matrix((np.ones(4), ([0, 1, 1, 2], [1, 0, 2, 1])), shape=(3, 3))
    d = tessel.node_dataset(adjacency=a)
    np.testing.assert_array_equal(d.indptr, [0, 1, 3, 4])


def test_rows_round_trip(tmp_path):
    import scipy.sparse as sp
    X = sp.random(20, 7, density=0.3, random_state=1, format="csr")
    y = np.arange(20) % 2
    r = tessel.rows_dataset(X, y)
    r.save(tmp_path / "rows")
    back = tessel.load(tmp_path / "rows")
    assert isinstance(back, tessel.RowData)
    Y = sp.csr_matrix((back.values, back.indices, back.indptr), shape=(back.num_rows, back.num_features))
    assert abs(Y - X).max() == 0
    np.testing.assert_array_equal(back.labels, y)


def test_save_never_replaces_without_force(tmp_path):
    d, _ = small(tmp_path)
    d.save(tmp_path / "x")
    with pytest.raises(tessel.Error, match="force"):
        d.save(tmp_path / "x")
    d.save(tmp_path / "x", force=True)
    (tmp_path / "file").write_text("keep")
    with pytest.raises(tessel.Error):
        d.save(tmp_path / "file", force=True)
    assert (tmp_path / "file").read_text() == "keep"


def test_corrupt_folder_is_refused(tmp_path):
    d, _ = small(tmp_path)
    d.save(tmp_path / "c")
    m = json.loads((tmp_path / "c" / "manifest.json").read_text())
    feat = next(p for p in (tmp_path / "c").iterdir() if "feat" in p.name and p.suffix != ".json")
    raw = bytearray(feat.read_bytes())
    raw[-1] ^= 0xFF
    feat.write_bytes(bytes(raw))
    with pytest.raises(tessel.Error, match="checksum"):
        tessel.load(tmp_path / "c")
    assert m["kind"] == "node"


@pytest.mark.parametrize("kwargs, match", [
    (dict(labels=np.array([0.0, 1.5] + [0.0] * 8)), "not a whole number"),
    (dict(labels=np.arange(9)), "labels: 9 values for 10 nodes"),
    (dict(features=np.ones((9, 4), np.float32)), "9 rows for 10 nodes"),
    (dict(features=np.full((10, 4), np.nan)), "NaN"),
    (dict(features=np.array([["a"] * 4] * 10)), "numeric"),
    (dict(features=np.ones((10, 4), np.complex64)), "numeric"),
    (dict(train=[0.5, 1.0]), "integer ids"),
    (dict(train=[0, 99]), r"\[0, 10\)"),
    (dict(labels=np.full(10, -5)), "not a class id"),
    (dict(train=[0, 1], val=[1, 2]), "disjoint|both|overlap|twice|also"),
])
def test_bad_input_raises_clear_errors(tmp_path, kwargs, match):
    with pytest.raises(tessel.Error, match=match):
        small(tmp_path, **kwargs)


def test_bad_edges():
    with pytest.raises(tessel.Error, match="edge_index"):
        tessel.node_dataset(np.array([[0.0, 1.0], [1.0, 0.0]]))
    with pytest.raises(tessel.Error, match=r"2 x num_edges"):
        tessel.node_dataset(np.zeros((3, 4), np.int64))
    with pytest.raises(tessel.Error, match="negative|< 0|id"):
        tessel.node_dataset(np.array([[0, -1], [1, 0]]))
    with pytest.raises(tessel.Error, match="exactly one"):
        tessel.node_dataset()
    with pytest.raises(tessel.Error):
        tessel.node_dataset(np.array([[0, 5], [1, 0]]), num_nodes=3)


def test_non_contiguous_arrays_are_copied_not_misread(tmp_path):
    x = np.asfortranarray(np.arange(40, dtype=np.float64).reshape(10, 4))
    d = tessel.node_dataset(ring(10), features=x[:, ::-1][:, ::-1], labels=(np.arange(20) % 3)[::2])
    np.testing.assert_array_equal(d.dense_features, x.astype(np.float32))
    np.testing.assert_array_equal(d.labels, (np.arange(20) % 3)[::2])


def test_load_errors_name_the_path(tmp_path):
    with pytest.raises(tessel.Error, match="nothing_here"):
        tessel.load(tmp_path / "nothing_here")
    with pytest.raises(tessel.Error, match="path"):
        tessel.load(42)


def test_pyg_like_object(cora):
    class Data:  # the attributes from_pyg reads from a torch_geometric.data.Data
        pass
    g = Data()
    n = cora.num_nodes
    src = np.repeat(np.arange(n), np.diff(cora.indptr))
    g.edge_index = np.stack([src, cora.indices.astype(np.int64)])
    import scipy.sparse as sp
    g.x = sp.csr_matrix((cora.feature_values, cora.feature_indices, cora.feature_indptr), shape=(n, cora.feature_dim))
    g.y = cora.labels
    g.num_nodes = n
    for split in ("train", "val", "test"):
        mask = np.zeros(n, dtype=bool)
        mask[getattr(cora, split)] = True
        setattr(g, f"{split}_mask", mask)
    d = tessel.from_pyg(g)
    np.testing.assert_array_equal(d.indptr, cora.indptr)
    np.testing.assert_array_equal(d.indices, cora.indices)
    np.testing.assert_array_equal(d.test, cora.test)


def test_sparse_features_auto():
    x = np.zeros((10, 50), np.float32)
    x[np.arange(10), np.arange(10) * 3] = 1.0  # 2% non-zero, as bag-of-words features
    d = tessel.node_dataset(ring(10), features=x)
    assert d.features_sparse
    import scipy.sparse as sp
    back = sp.csr_matrix((d.feature_values, d.feature_indices, d.feature_indptr), shape=(10, 50)).toarray()
    np.testing.assert_array_equal(back, x)
    assert not tessel.node_dataset(ring(10), features=x, sparse_features=False).features_sparse
    assert tessel.node_dataset(ring(10), features=np.ones((10, 2)), sparse_features=True).features_sparse
    with pytest.raises(tessel.Error, match="sparse_features"):
        tessel.node_dataset(ring(10), features=x, sparse_features="maybe")


def test_load_of_a_non_dataset_says_what_the_path_is(tmp_path):
    # A binary file (bytes that are not UTF-8 end up quoted in the reader's message), a folder of unrelated files
    # and a folder whose manifest.json is binary: each message names the path and what was expected.
    rng = np.random.default_rng(1)
    blob = tmp_path / "random.bin"
    blob.write_bytes(bytes(rng.integers(0, 256, 4096, dtype=np.uint8)))
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "a.jpg").write_bytes(b"\xff\xd8\xff\xe0" + bytes(100))
    manifest = tmp_path / "broken"
    manifest.mkdir()
    (manifest / "manifest.json").write_bytes(b"\x00\x9f\x92\x96 not json")
    for path, name in ((blob, "random.bin"), (folder, "photos"), (manifest, "broken")):
        with pytest.raises(tessel.Error) as info:
            tessel.load(path)
        msg = str(info.value)
        assert name in msg, msg
        assert len(msg) > len(str(path)) + 10, msg
    with pytest.raises(tessel.Error, match="random.bin: a binary file"):
        tessel.load(blob)
    # Text whose bytes are not UTF-8 (Latin-1 here) is quoted with escapes, not raised as an empty message.
    latin = tmp_path / "latin1.txt"
    latin.write_bytes(b"caf\xe9 1:1\n")
    with pytest.raises(tessel.Error, match=r"latin1.txt:1: .*caf\\xe9"):
        tessel.load(latin)


def _corrupt_csr(x, how):
    import scipy.sparse as sp
    m = sp.csr_matrix(x, copy=True)
    if how == "indptr":
        m.indptr[2] = 10 ** 9
    elif how == "indices":
        m.indices[0] = 10 ** 6
    elif how == "nnz":
        m.data = m.data[:-1].copy()
    return m


@pytest.mark.parametrize("how", ["indptr", "indices", "nnz"])
def test_corrupt_sparse_inputs_are_refused_before_scipy_reads_them(tmp_path, how):
    import scipy.sparse as sp
    x = np.zeros((10, 6), np.float32)
    x[np.arange(10), np.arange(10) % 6] = 1
    with pytest.raises(tessel.Error, match="features"):
        tessel.node_dataset(ring(10), features=_corrupt_csr(x, how))
    with pytest.raises(tessel.Error, match="X"):
        tessel.rows_dataset(_corrupt_csr(x, how), np.zeros(10))
    adj = sp.csr_matrix(sp.coo_matrix((np.ones(20), (ring(10)[0], ring(10)[1])), shape=(10, 10)))
    with pytest.raises(tessel.Error, match="adjacency"):
        tessel.node_dataset(adjacency=_corrupt_csr(adj, how))


def test_hostile_arrays_raise_python_exceptions(tmp_path):
    import scipy.sparse as sp
    with pytest.raises(tessel.Error, match="dimension"):
        tessel.rows_dataset(np.ones((2, 3, 4)), np.zeros(2))
    with pytest.raises(tessel.Error, match="dimension"):
        tessel.rows_dataset(np.float64(1.0), np.zeros(1))
    with pytest.raises(tessel.Error, match="numeric"):
        tessel.rows_dataset(np.array([[object()]], dtype=object), np.zeros(1))
    with pytest.raises(tessel.Error, match="NaN"):
        tessel.rows_dataset(np.ones((2, 2)), np.array([0.0, np.nan]))
    with pytest.raises(tessel.Error, match="NaN"):
        tessel.rows_dataset(sp.csr_matrix(np.array([[np.nan, 1.0]])), np.zeros(1))
    with pytest.raises(tessel.Error, match="2 labels for 3 rows"):
        tessel.rows_dataset(np.ones((3, 2)), np.zeros(2))
    empty = tessel.rows_dataset(np.zeros((0, 4)), np.zeros(0))
    assert empty.num_rows == 0 and empty.num_features == 4
    with pytest.raises(tessel.Error, match="do not fit int64"):
        tessel.node_dataset(ring(10), labels=np.full(10, 1e300))
    with pytest.raises(tessel.Error, match="num_nodes"):
        tessel.node_dataset(ring(10), num_nodes=-1)
    # The extension module itself refuses what the Python layer would have caught.
    with pytest.raises(tessel.Error, match="indptr has 0 entries"):
        tessel._tessel.build_rows(np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0), np.zeros(0), 3, "")
    with pytest.raises(tessel.Error, match="malformed|offsets"):
        tessel._tessel.build_rows(np.array([0, 5, 1], np.int64), np.zeros(1, np.int32), np.ones(1), np.zeros(2), 3, "")
    with pytest.raises(tessel.Error, match="features"):
        tessel._tessel.build_rows(np.array([0, 1], np.int64), np.zeros(1, np.int32), np.ones(1), np.zeros(1), -2, "")


def test_dir_lists_every_public_name_including_the_lazy_svc():
    names = dir(tessel)
    for name in tessel.__all__:
        assert name in names, name
    assert "SVC" in names


def test_node_data_repr_shows_name_shape_and_split(cora):
    assert repr(cora) == ("NodeData(name='cora', nodes=2708, edges=10556, features=1433 sparse, classes=7, "
                          "split=140/500/1000)")
    assert str(cora) == repr(cora)
    d = tessel.node_dataset(np.array([[0, 1], [1, 2]]), edge_weights=[0.5, 2.0], num_nodes=4, name="it's")
    assert repr(d) == ("NodeData(name=\"it's\", nodes=4, edges=4 weighted, features=none, classes=none, "
                       "split=none)")
    d, _ = small(None)
    assert repr(d) == "NodeData(name='ring', nodes=10, edges=20, features=4 dense, classes=3, split=4/2/4)"
    assert repr(small(None, sparse=True)[0]).startswith("NodeData(name='ring', nodes=10, edges=20, features=4 sparse")


def test_row_data_repr_shows_name_shape_nnz_and_classes(data_dir):
    path = data_dir / "svm" / "heart_scale"
    nnz = sum(len(line.split()) - 1 for line in path.read_text().splitlines() if line.strip())
    labels = {line.split()[0] for line in path.read_text().splitlines() if line.strip()}
    r = tessel.load(path)
    assert repr(r) == f"RowData(name='heart_scale', rows=270, features=13, nnz={nnz}, classes={len(labels)})"
    assert len(labels) == 2
    X = np.array([[1.0, 0, 0], [0, 2.0, 3.0]])
    r = tessel.rows_dataset(X, [1.5, -1], name="x")
    assert repr(r) == "RowData(name='x', rows=2, features=3, nnz=3, classes=2)"


def test_load_without_mmap_copies_so_truncation_on_disk_cannot_reach_the_arrays(tmp_path):
    # A mapped file truncated while a view of it is alive raises SIGBUS (as numpy's memmap); mmap=False copies.
    d, x = small(tmp_path)
    d.save(tmp_path / "ring")
    e = tessel.load(tmp_path / "ring", mmap=False)
    feats, indptr, labels = e.dense_features, e.indptr, e.labels
    for f in (tmp_path / "ring").glob("*.bin"):
        with open(f, "r+b") as out:
            out.truncate(0)
    np.testing.assert_array_equal(feats, x)
    assert indptr[-1] == e.num_entries
    np.testing.assert_array_equal(labels, np.arange(10) % 3)
    assert not feats.flags.writeable  # still read-only views, of the copy
    # The checks of a mapped load still apply: the truncated folder is refused by name either way.
    for mmap in (True, False):
        with pytest.raises(tessel.Error, match="ring"):
            tessel.load(tmp_path / "ring", mmap=mmap)
    with pytest.raises(tessel.Error, match="mmap"):
        tessel.load(tmp_path / "ring", mmap="no")


def test_a_mapped_file_truncated_on_disk_is_refused_before_a_new_view_reads_it(tmp_path):
    # Views already handed out cannot be protected (mmap=False is the defence); a new view, a save or the statistics
    # check first that no mapped file of the folder became shorter, and name it instead of raising SIGBUS.
    d, _ = small(tmp_path)
    d.save(tmp_path / "ring")
    e = tessel.load(tmp_path / "ring")
    with open(tmp_path / "ring" / "labels.bin", "r+b") as out:
        out.truncate(0)
    for read in (lambda: e.labels, lambda: e.indptr, lambda: tessel.stats(e), lambda: e.save(tmp_path / "copy")):
        with pytest.raises(tessel.Error, match="labels.bin: has 0 bytes now.*mmap=False"):
            read()
    assert e.num_nodes == 10  # counts held in memory still answer


def test_info_describes_datasets_checkpoints_and_svm_models(tmp_path, data_dir, run_cli):
    d, _ = small(tmp_path)
    d.save(tmp_path / "ring")
    assert tessel.info(tmp_path / "ring")["num_nodes"] == 10
    hs = data_dir / "svm" / "heart_scale"
    run_cli("train", "svm", "-q", hs, tmp_path / "hs.model")
    m = tessel.info(tmp_path / "hs.model")
    total_sv = next(int(line.split()[1]) for line in open(tmp_path / "hs.model") if line.startswith("total_sv"))
    assert m["kind"] == "svm_model" and m["svm_type"] == "c_svc" and m["total_sv"] == total_sv
    assert sum(m["nr_sv"]) == total_sv and m["num_features"] == 13
    run_cli("train", "gcn", "--dataset", tmp_path / "ring", "--epochs", "2", "--checkpoint", tmp_path / "ck")
    c = tessel.info(tmp_path / "ck")
    assert c["kind"] == "gcn_checkpoint" and c["epochs_done"] == 2
    with pytest.raises(tessel.Error, match="nor an SVM model"):
        tessel.info(hs)
    with pytest.raises(tessel.Error, match="verify=1"):
        tessel.info(hs, verify=1)
