"""Issue 33, data loss from Python: the same output guard as the CLI. A checkpoint, a partition folder, a dataset
and an SVM model never replace a folder or file of another kind, a device, or an input, even with force=True;
resume never takes over a folder that is not a checkpoint. Every file is byte-identical after each refusal."""
import os

import numpy as np
import pytest

import tessel


def snapshot(root):
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            out[os.path.join(dirpath, name)] = None
        for name in filenames:
            p = os.path.join(dirpath, name)
            with open(p, "rb") as f:
                out[p] = f.read()
    return out


@pytest.fixture
def places(tmp_path, cora):
    """A dataset, a folder of other files, a plain file and an empty folder."""
    cora.save(tmp_path / "ds")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "keep.txt").write_text("mine")
    (tmp_path / "plain.txt").write_text("plain")
    (tmp_path / "empty").mkdir()
    return tmp_path


@pytest.mark.parametrize("target, resume, match", [
    ("notes", True, r"is not a tessel checkpoint \(it is a folder of other files\)"),
    ("notes", False, "so it is not replaced even with force=True"),
    ("ds", False, r"\(it is a tessel dataset\)"),
    ("ds", True, r"\(it is a tessel dataset\)"),
    ("plain.txt", False, r"\(it is a regular file\)"),
])
def test_checkpoint_never_replaces_another_kind(places, cora, target, resume, match):
    before = snapshot(places)
    with pytest.raises(tessel.Error, match=match):
        tessel.train_gcn(cora, epochs=1, checkpoint=places / target, resume=resume, force=not resume)
    assert snapshot(places) == before


def test_checkpoint_on_a_device_is_refused(cora):
    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null")
    with pytest.raises(tessel.Error, match="is a device"):
        tessel.train_gcn(cora, epochs=1, checkpoint="/dev/null", force=True)
    assert not os.path.isfile("/dev/null")


def test_checkpoint_replaces_a_checkpoint_or_an_empty_folder(places, cora):
    tessel.train_gcn(cora, epochs=1, checkpoint=places / "empty")
    assert (places / "empty" / "checkpoint.json").exists()
    with pytest.raises(tessel.Error, match="resume=True to continue it, force=True to replace it"):
        tessel.train_gcn(cora, epochs=1, checkpoint=places / "empty")
    tessel.train_gcn(cora, epochs=1, checkpoint=places / "empty", force=True)


def test_partition_and_save_never_replace_another_kind(places, cora):
    before = snapshot(places)
    with pytest.raises(tessel.Error, match="is not a partition folder"):
        tessel.partition(cora, 2, places / "ds", force=True)
    with pytest.raises(tessel.Error, match="is not a partition folder"):
        tessel.partition(cora, 2, places / "notes", force=True)
    with pytest.raises(tessel.Error, match="is not a tessel dataset"):
        cora.save(places / "notes", force=True)
    with pytest.raises(tessel.Error, match="path .*plain.txt: is not a tessel dataset"):
        cora.save(places / "plain.txt", force=True)
    assert snapshot(places) == before


def test_svm_save_guards_the_model_and_its_sidecar(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    clf = tessel.SVC(kernel="linear").fit(X, y)
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "keep.txt").write_text("mine")
    (tmp_path / "m.json").write_text("not a sidecar of mine")
    before = snapshot(tmp_path)
    with pytest.raises(tessel.Error, match="not a file"):
        clf.save(tmp_path / "folder", force=True)
    with pytest.raises(tessel.Error, match="path's sidecar .*m.json: already exists; pass force=True"):
        clf.save(tmp_path / "m")
    assert snapshot(tmp_path) == before
    clf.save(tmp_path / "m2")
    with pytest.raises(tessel.Error, match="already exists; pass force=True"):
        clf.save(tmp_path / "m2")
    clf.save(tmp_path / "m2", force=True)
