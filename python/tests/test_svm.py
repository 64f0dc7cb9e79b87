"""tessel.SVC against scikit-learn: its own estimator checks, and the same support vectors, dual coefficients,
intercepts, decision values and predictions as sklearn.svm.SVC on heart_scale, a9a and usps (bundled subsets:
tests/data/svm), LIBSVM model files both ways, pickling, and clear errors for bad input."""
import pickle
import subprocess

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.datasets import load_svmlight_file  # noqa: E402
from sklearn.svm import SVC as SkSVC  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import tessel  # noqa: E402
from tessel.svm import SVC  # noqa: E402

# Checks of scikit-learn's suite that do not apply, with the reason (docs/python.md repeats this list).
SKIPPED_CHECKS = {}


@parametrize_with_checks([SVC()])
def test_sklearn_estimator_checks(estimator, check):
    name = getattr(check, "func", check).__name__
    if name in SKIPPED_CHECKS:
        pytest.skip(SKIPPED_CHECKS[name])
    check(estimator)


def to_dense(a):
    return a.toarray() if hasattr(a, "toarray") else np.asarray(a)


def load(data_dir, name, n_features=None):
    X, y = load_svmlight_file(str(data_dir / "svm" / name), n_features=n_features)
    return X, y


CASES = [
    ("heart_scale", dict()),
    ("heart_scale", dict(kernel="linear", C=0.5)),
    ("heart_scale", dict(C=4, gamma=0.25)),
    ("heart_scale", dict(kernel="poly", degree=2, coef0=1, gamma="auto")),
    ("heart_scale", dict(kernel="sigmoid", gamma=0.01, coef0=-1)),
    ("heart_scale", dict(class_weight={1: 3.0})),
    ("heart_scale", dict(class_weight="balanced", shrinking=False)),
    ("a9a_2000.gz", dict(C=1, gamma="auto")),
    ("usps_400.gz", dict(C=10, gamma=2 ** -8)),
    ("usps_400.gz", dict(C=10, gamma=2 ** -8, decision_function_shape="ovo")),
    ("letter_300", dict(C=10)),
]


@pytest.mark.parametrize("name, params", CASES)
@pytest.mark.parametrize("dense", [False, True])
def test_same_model_as_sklearn(data_dir, name, params, dense):
    X, y = load(data_dir, name)
    if dense:
        X = X.toarray()
    ours = SVC(**params).fit(X, y)
    ref = SkSVC(**params).fit(X, y)
    np.testing.assert_array_equal(ours.classes_, ref.classes_)
    np.testing.assert_array_equal(ours.support_, ref.support_)
    np.testing.assert_array_equal(ours.n_support_, ref.n_support_)
    assert hasattr(ours.dual_coef_, "toarray") == hasattr(ref.dual_coef_, "toarray")  # sparse for sparse X
    np.testing.assert_allclose(to_dense(ours.dual_coef_), to_dense(ref.dual_coef_), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(to_dense(ours.support_vectors_), to_dense(ref.support_vectors_))
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    assert ours.score(X, y) == ref.score(X, y)


def test_elimination_policies_give_the_same_model(data_dir):
    X, y = load(data_dir, "heart_scale")
    # Every policy stops at an eps-optimal point of the same dual: objectives agree to the tolerance, the models
    # nearly everywhere (the duals themselves may differ within eps).
    base = SVC(shrinking=False, tol=1e-6).fit(X, y)
    obj = base.train_report_["pairs"][0]["obj"]
    for policy in ("eager", "periodic", "lazy", True):
        m = SVC(shrinking=policy, tol=1e-6).fit(X, y)
        assert m.train_report_["pairs"][0]["obj"] == pytest.approx(obj, rel=1e-6)
        np.testing.assert_array_equal(m.support_, base.support_)
        np.testing.assert_allclose(to_dense(m.dual_coef_), to_dense(base.dual_coef_), atol=1e-4)


def test_string_labels_and_pickle(data_dir, tmp_path):
    X, y = load(data_dir, "letter_300")
    names = np.array([f"class{int(v):02d}" for v in y])
    m = SVC(C=10).fit(X, names)
    assert m.classes_.dtype.kind == "U"
    with pytest.raises(tessel.Error, match="integer class labels"):
        m.save(tmp_path / "never_written.model")
    again = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(again.predict(X), m.predict(X))
    assert set(m.predict(X)) <= set(names)


def test_libsvm_model_files_both_ways(data_dir, tmp_path):
    X, y = load(data_dir, "heart_scale")
    # svm-train's model (heart_scale.libsvm.model, labels +1 first) predicts what svm-predict predicted.
    m = SVC.load(data_dir / "svm" / "heart_scale.libsvm.model")
    expected = np.loadtxt(data_dir / "svm" / "heart_scale.libsvm.predictions")
    np.testing.assert_array_equal(m.predict(X[:, :m.n_features_in_]), expected)
    np.testing.assert_array_equal(m.classes_, [-1, 1])
    # Ours, read by svm-predict and by SVC.load.
    ours = SVC(C=2).fit(X, y)
    path = tmp_path / "model"
    ours.save(path)
    with pytest.raises(tessel.Error, match="exists"):
        ours.save(path)
    back = SVC.load(path)
    np.testing.assert_array_equal(back.predict(X), ours.predict(X))
    np.testing.assert_allclose(back.decision_function(X), ours.decision_function(X), rtol=1e-9, atol=1e-12)
    svm_predict = subprocess.run(["which", "svm-predict"], capture_output=True, text=True).stdout.strip()
    if svm_predict:
        out = tmp_path / "pred"
        subprocess.run([svm_predict, str(data_dir / "svm" / "heart_scale"), str(path), str(out)], check=True,
                       capture_output=True)
        np.testing.assert_array_equal(np.loadtxt(out), ours.predict(X))


def test_load_of_a_multiclass_model_reorders_classes(data_dir, tmp_path, run_cli):
    # The CLI writes classes in first-appearance order (svm-train's); SVC.load sorts them, permuting the model.
    path = tmp_path / "letter.model"
    run_cli("train", "svm", "--data", data_dir / "svm" / "letter_300", "--model", path, "-c", "10", "-e", "1e-6")
    X, y = load(data_dir, "letter_300")
    m = SVC.load(path)
    assert list(m.classes_) == sorted(set(y.astype(int)))
    out = tmp_path / "pred"
    run_cli("predict", "svm", "--data", data_dir / "svm" / "letter_300", "--model", path, "--output", out)
    # Votes are the CLI's; only a tie may break differently (LIBSVM gives it to the earlier class of the model's
    # order, which the sort changes).
    votes = np.rint(m.decision_function(X))
    unique_top = (votes == votes.max(1, keepdims=True)).sum(1) == 1
    assert unique_top.mean() > 0.8
    np.testing.assert_array_equal(m.predict(X)[unique_top], np.loadtxt(out)[unique_top])
    # The same binary problems solved the other way round (class order) agree to the solver's tolerance.
    ref = SVC(C=10, gamma=m.gamma, tol=1e-6, decision_function_shape="ovo").fit(X, y)
    m.set_params(decision_function_shape="ovo")
    np.testing.assert_allclose(m.decision_function(X), ref.decision_function(X), atol=1e-5)


@pytest.mark.parametrize("make, match", [
    (lambda X, y: (np.where(np.arange(X.shape[1]) == 0, np.nan, X.toarray()), y), "NaN|infinity"),
    (lambda X, y: (X, y + 0.5), "Unknown label type"),
    (lambda X, y: (X, y[:-1]), "inconsistent numbers of samples"),
    (lambda X, y: (np.full(X.shape, "x", dtype=object), y), "could not convert|dtype"),
    (lambda X, y: (X.toarray()[:, 0], y), "2D array"),
    (lambda X, y: (X, np.zeros_like(y)), "class"),
])
def test_bad_input(data_dir, make, match):
    X, y = load(data_dir, "heart_scale")
    with pytest.raises(ValueError, match=match):
        SVC().fit(*make(X, y))


@pytest.mark.parametrize("params, match", [
    (dict(C=0), "C=0"), (dict(kernel="precomputed"), "precomputed"), (dict(gamma="big"), "gamma"),
    (dict(shrinking="sometimes"), "shrinking"), (dict(tol=-1), "tol"), (dict(probability=True), "probability"),
    (dict(solver="newton"), "solver|newton"), (dict(solver="batch", working_set=3), "working_set 3"),
    (dict(solver="batch", working_set=-2), "working_set -2"), (dict(device="tpu"), "tpu"), (dict(class_weight={7: 2.0}), "7"),
])
def test_bad_parameters(data_dir, params, match):
    X, y = load(data_dir, "heart_scale")
    with pytest.raises(ValueError, match=match):
        SVC(**params).fit(X, y)


def test_non_contiguous_and_other_dtypes(data_dir):
    X, y = load(data_dir, "heart_scale")
    D = X.toarray()
    ref = SVC().fit(D, y)
    f = np.asfortranarray(D)
    np.testing.assert_array_equal(SVC().fit(f, y).support_, ref.support_)
    np.testing.assert_array_equal(SVC().fit(D.astype(np.float32), y).predict(D), SVC().fit(D.astype(np.float32), y)
                                  .predict(D))
    np.testing.assert_array_equal(ref.predict(np.hstack([D, D])[:, :D.shape[1]]), ref.predict(D))
    with pytest.raises(ValueError, match="features"):
        ref.predict(D[:, :5])
