"""probability=True on SVC and NuSVC: LIBSVM's -b 1 (Platt's sigmoid per pair from an internal 5-fold
cross-validation, Wu-Lin-Weng coupling). Against svm-predict -b 1 on a model file from svm-train -b 1 (the same
numbers, binary), against scikit-learn with the same random_state (its generator draws the same folds, so probA_ and
probB_ are scikit-learn's), and the API: predict_proba only with probability=True, rows summing to 1,
log-probabilities, random_state and verbose as scikit-learn's."""
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


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("cls, sk_cls, params", [(SVC, sk.SVC, {}), (SVC, sk.SVC, {"C": 4, "gamma": 0.25}),
                                                   (NuSVC, sk.NuSVC, {"nu": 0.25})])
def test_sklearns_sigmoids_for_the_same_random_state(data_dir, cls, sk_cls, params, seed):
    X, y = load(data_dir, "heart_scale")
    ours = cls(probability=True, random_state=seed, **params).fit(X, y)
    theirs = sk_cls(probability=True, random_state=seed, **params).fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    # The same folds (scikit-learn's mt19937 seeded from random_state, reseeded at each of its svm_train calls),
    # the same fold models: scikit-learn's sigmoid up to the solvers' rounding.
    np.testing.assert_allclose(ours.probA_, theirs.probA_, rtol=1e-7)
    np.testing.assert_allclose(ours.probB_, theirs.probB_, rtol=1e-7, atol=1e-9)
    p, q = ours.predict_proba(X), theirs.predict_proba(X)
    assert p.shape == q.shape == (X.shape[0], 2)
    # Two classes: LIBSVM 3.24 (svm-predict, tessel) takes the pair's sigmoid as it is, P(classes_[0]) =
    # 1 / (1 + exp(A f + B)) of LIBSVM's decision value f (-decision_function); scikit-learn's older fork runs the
    # iterative coupling, which stops near it (its tolerance 0.005 / k is on the coupling's residual).
    f = -ours.decision_function(X)
    np.testing.assert_allclose(p[:, 0], 1 / (1 + np.exp(ours.probA_[0] * f + ours.probB_[0])), rtol=1e-12)
    assert np.abs(p - q).max() < 0.01
    np.testing.assert_allclose(p.sum(axis=1), 1, atol=1e-9)
    np.testing.assert_allclose(ours.predict_log_proba(X), np.log(p))
    assert ours.probA_.shape == ours.probB_.shape == (1,)


def test_equal_seeds_give_equal_models_and_other_seeds_other_folds(data_dir):
    X, y = load(data_dir, "heart_scale")
    a = SVC(probability=True, random_state=7).fit(X, y)
    b = SVC(probability=True, random_state=np.random.RandomState(7)).fit(X, y)
    c = SVC(probability=True, random_state=8).fit(X, y)
    d = SVC(probability=True, random_state=7).fit(X, y)
    np.testing.assert_array_equal(a.probA_, d.probA_)
    np.testing.assert_array_equal(a.probB_, d.probB_)
    assert a.probA_[0] != c.probA_[0]
    # A RandomState draws its seed as scikit-learn's does: RandomState(7)'s first draw, not 7.
    theirs = sk.SVC(probability=True, random_state=np.random.RandomState(7)).fit(X, y)
    np.testing.assert_allclose(b.probA_, theirs.probA_, rtol=1e-7)
    # random_state=None draws from NumPy's global generator, as scikit-learn's does.
    np.random.seed(11)
    e = SVC(probability=True).fit(X, y)
    np.random.seed(11)
    f = sk.SVC(probability=True).fit(X, y)
    np.testing.assert_allclose(e.probA_, f.probA_, rtol=1e-7)


def test_verbose_logs_the_run_and_restores_the_level(data_dir, capfd):
    import tessel
    X, y = load(data_dir, "heart_scale")
    level = tessel.get_log_level()
    SVC().fit(X, y)
    assert "obj =" not in capfd.readouterr().err
    SVC(verbose=True).fit(X, y)
    assert "obj =" in capfd.readouterr().err
    assert tessel.get_log_level() == level
    with pytest.raises(ValueError, match="verbose"):
        SVC(verbose="loud").fit(X, y)


def test_multiclass_probabilities(data_dir):
    X, y = load(data_dir, "letter_300")
    ours = SVC(probability=True, C=16, gamma=4, random_state=0).fit(X, y)
    p = ours.predict_proba(X)
    assert p.shape == (X.shape[0], ours.classes_.size)
    np.testing.assert_allclose(p.sum(axis=1), 1, atol=1e-6)
    assert ours.probA_.shape == (ours.classes_.size * (ours.classes_.size - 1) // 2,)
    theirs = sk.SVC(probability=True, C=16, gamma=4, random_state=0).fit(X, y)
    np.testing.assert_allclose(ours.probA_, theirs.probA_, rtol=1e-7)
    np.testing.assert_allclose(ours.probB_, theirs.probB_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(p, theirs.predict_proba(X), atol=1e-9)  # more than two classes: the same coupling


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
