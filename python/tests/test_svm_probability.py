"""probability=True on SVC and NuSVC: LIBSVM's -b 1 (Platt's sigmoid per pair from an internal 5-fold
cross-validation, Wu-Lin-Weng coupling). Against svm-predict -b 1 on a model file from svm-train -b 1 (the same
numbers, binary), against scikit-learn (the same predictions; probabilities close, since its internal folds come from
its own random_state), and the API: predict_proba only with probability=True, rows summing to 1, log-probabilities."""
import shutil
import subprocess

import numpy as np
import pytest

pytest.importorskip("sklearn")
import sklearn.svm as sk  # noqa: E402
from sklearn.datasets import load_svmlight_file  # noqa: E402

from tessel.svm import SVC, NuSVC  # noqa: E402


def load(data_dir, name):
    X, y = load_svmlight_file(str(data_dir / "svm" / name))
    return X.toarray(), y


@pytest.mark.parametrize("cls, sk_cls, params", [(SVC, sk.SVC, {}), (SVC, sk.SVC, {"C": 4, "gamma": 0.25}),
                                                   (NuSVC, sk.NuSVC, {"nu": 0.25})])
def test_close_to_sklearn_with_the_same_predictions(data_dir, cls, sk_cls, params):
    X, y = load(data_dir, "heart_scale")
    ours = cls(probability=True, **params).fit(X, y)
    theirs = sk_cls(probability=True, random_state=0, **params).fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    p, q = ours.predict_proba(X), theirs.predict_proba(X)
    assert p.shape == q.shape == (X.shape[0], 2)
    # Different internal folds (LIBSVM's rand() against scikit-learn's random_state): close, not equal.
    assert np.abs(p - q).mean() < 0.05, np.abs(p - q).mean()
    assert np.abs(p - q).max() < 0.15
    np.testing.assert_allclose(p.sum(axis=1), 1, atol=1e-9)
    np.testing.assert_allclose(ours.predict_log_proba(X), np.log(p))
    assert ours.probA_.shape == ours.probB_.shape == (1,)


def test_multiclass_probabilities(data_dir):
    X, y = load(data_dir, "letter_300")
    ours = SVC(probability=True, C=16, gamma=4).fit(X, y)
    p = ours.predict_proba(X)
    assert p.shape == (X.shape[0], ours.classes_.size)
    np.testing.assert_allclose(p.sum(axis=1), 1, atol=1e-6)
    assert ours.probA_.shape == (ours.classes_.size * (ours.classes_.size - 1) // 2,)
    theirs = sk.SVC(probability=True, C=16, gamma=4, random_state=0).fit(X, y)
    assert np.abs(p - theirs.predict_proba(X)).mean() < 0.05


def test_predict_proba_only_with_probability(data_dir):
    X, y = load(data_dir, "heart_scale")
    plain = SVC().fit(X, y)
    assert not hasattr(plain, "predict_proba")
    assert plain.probA_.size == 0


@pytest.mark.skipif(shutil.which("svm-train") is None or shutil.which("svm-predict") is None,
                    reason="LIBSVM's tools are not installed")
def test_a_model_from_svm_train_predicts_what_svm_predict_prints(data_dir, tmp_path):
    data = str(data_dir / "svm" / "heart_scale")
    subprocess.run(["svm-train", "-q", "-b", "1", data, str(tmp_path / "m.model")], check=True)
    subprocess.run(["svm-predict", "-b", "1", data, str(tmp_path / "m.model"), str(tmp_path / "out")], check=True,
                   stdout=subprocess.DEVNULL)
    lines = (tmp_path / "out").read_text().split("\n")
    labels = [float(v) for v in lines[0].split()[1:]]
    ref = np.array([[float(v) for v in line.split()[1:]] for line in lines[1:] if line.strip()])
    model = SVC.load(tmp_path / "m.model")
    assert model.probability
    X, _ = load(data_dir, "heart_scale")
    p = model.predict_proba(X)
    ref = ref[:, [labels.index(c) for c in model.classes_]]  # svm-predict's columns in model.classes_ order
    np.testing.assert_allclose(p, ref, rtol=1e-5, atol=1e-6)  # svm-predict prints %g
