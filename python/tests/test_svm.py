"""tessel.SVC against scikit-learn: its own estimator checks, and the same support vectors, dual coefficients,
intercepts, decision values and predictions as sklearn.svm.SVC on heart_scale, a9a and usps (bundled subsets:
tests/data/svm), LIBSVM model files both ways, pickling, and clear errors for bad input."""
import pickle
import subprocess
import warnings

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
    (dict(shrinking="sometimes"), "shrinking"), (dict(tol=-1), "tol"), (dict(probability="yes"), "probability"),
    (dict(solver="newton"), "solver|newton"), (dict(solver="batch", working_set=3), "working_set 3"),
    (dict(solver="batch", working_set=-2), "working_set.* -2"), (dict(device="tpu"), "tpu"), (dict(class_weight={7: 2.0}), "7"),
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


# ---- hostile input: every case raises a Python exception, none reaches SciPy's or the engine's compiled code -------

def _corrupt(X, how):
    """A copy of the CSR matrix X with one of its arrays corrupted (as a buggy producer or a hand edit leaves it)."""
    import scipy.sparse as sp
    m = sp.csr_matrix(X, copy=True)
    if how == "indptr jumps past the entries":
        m.indptr[3] = 10 ** 9
    elif how == "indptr decreases":
        m.indptr[5] = m.indptr[4] - 1
    elif how == "indptr ends beyond nnz":
        m.indptr[-1] += 100
    elif how == "indptr starts above 0":
        m.indptr[0] = 1
    elif how == "indptr too short":
        m.indptr = m.indptr[:-2].copy()
    elif how == "indptr empty":
        m.indptr = np.zeros(0, dtype=np.int32)
    elif how == "indptr float":
        m.indptr = m.indptr.astype(np.float64)
    elif how == "index too large":
        m.indices[7] = 10 ** 6
    elif how == "index negative":
        m.indices[7] = -3
    elif how == "indices float":
        m.indices = m.indices.astype(np.float64)
    elif how == "data shorter":
        m.data = m.data[:-1].copy()
    elif how == "data object":
        m.data = m.data.astype(object)
    elif how == "shape narrower than indices":
        m._shape = (m.shape[0], 5)
    elif how == "indptr 2-D":
        m.indptr = m.indptr.reshape(1, -1).copy()
    else:
        raise AssertionError(how)
    return m


CORRUPTIONS = ["indptr jumps past the entries", "indptr decreases", "indptr ends beyond nnz", "indptr starts above 0",
               "indptr too short", "indptr empty", "indptr float", "index too large", "index negative",
               "indices float", "data shorter", "data object", "shape narrower than indices", "indptr 2-D"]


@pytest.mark.parametrize("how", CORRUPTIONS)
def test_corrupt_csr_is_refused_before_scipy_reads_it(data_dir, how):
    X, y = load(data_dir, "heart_scale")
    bad = _corrupt(X, how)
    with pytest.raises(ValueError, match=r"X(\.indptr|\.indices|\.data)?: "):
        SVC().fit(bad, y)
    with pytest.raises(ValueError, match=r"X(\.indptr|\.indices|\.data)?: "):
        SVC(gamma="auto", kernel="linear").fit(bad, y)
    fitted = SVC().fit(X, y)
    for call in (fitted.predict, fitted.decision_function, lambda X: fitted.score(X, y)):
        with pytest.raises(ValueError, match=r"X(\.indptr|\.indices|\.data)?: "):
            call(bad)
    with pytest.raises(ValueError, match=r"X(\.indptr|\.indices|\.data)?: "):
        tessel.rows_dataset(bad, y)


def test_corrupt_csc_coo_and_other_formats_are_refused(data_dir):
    import scipy.sparse as sp
    X, y = load(data_dir, "heart_scale")
    csc = sp.csc_matrix(X, copy=True)
    csc.indptr[2] = 10 ** 8
    with pytest.raises(ValueError, match="X.indptr"):
        SVC().fit(csc, y)
    coo = sp.coo_matrix(X, copy=True)
    coo.row[0] = 10 ** 6
    with pytest.raises(ValueError, match=r"X.row: id 1000000 is outside \[0, 270\)"):
        SVC().fit(coo, y)
    coo = sp.coo_matrix(X, copy=True)
    coo.col = coo.col[:-1].copy()
    with pytest.raises(ValueError, match="X: .* must agree"):
        SVC().fit(coo, y)
    lil = sp.lil_matrix(X, copy=True)
    lil.rows[0] = [10 ** 6]
    lil.data[0] = [1.0]
    with pytest.raises(ValueError):
        SVC().fit(lil, y)
    # Valid matrices of every format still train the same model.
    ref = SVC().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sp.SparseEfficiencyWarning)  # DIA of a matrix with many diagonals
        for fmt in ("csc", "coo", "lil", "dok", "bsr", "dia"):
            np.testing.assert_array_equal(SVC().fit(X.asformat(fmt), y).support_, ref.support_)


def test_engine_boundary_refuses_bad_arrays_without_the_python_checks(data_dir):
    # A direct call of the extension module (bypassing tessel/svm.py) must raise, not read outside the arrays.
    X, y = load(data_dir, "heart_scale")
    params = '{"kernel": "rbf", "gamma": 0.1}'
    fit = tessel._tessel.svm_fit
    ip, ix, vx = X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data.astype(np.float64)
    common = (params, [], True, -1, False)
    with pytest.raises(tessel.Error, match="indptr has 0 entries"):
        fit(np.zeros(0, np.int64), ix, vx, y, 13, *common)
    bad = ip.copy()
    bad[10] = 10 ** 12
    with pytest.raises(tessel.Error, match="malformed|offsets"):
        fit(bad, ix, vx, y, 13, *common)
    bad_ix = ix.copy()
    bad_ix[3] = 99
    with pytest.raises(tessel.Error, match="malformed|outside"):
        fit(ip, bad_ix, vx, y, 13, *common)
    with pytest.raises(tessel.Error, match="labels"):
        fit(ip, ix, vx, y[:-1], 13, *common)
    with pytest.raises(tessel.Error, match="features"):
        fit(ip, ix, vx, y, -1, *common)
    with pytest.raises(tessel.Error, match="options_json: not valid JSON"):
        fit(ip, ix, vx, y, 13, "{bad", *common[1:])
    with pytest.raises(tessel.Error, match="unknown option 'model'"):  # the command's paths are not Python's
        fit(ip, ix, vx, y, 13, '{"model": "m"}', *common[1:])
    with pytest.raises(tessel.Error, match="random seed"):
        fit(ip, ix, vx, y, 13, params, [], True, 2 ** 32, False)
    m = SVC().fit(X, y)
    with pytest.raises(tessel.Error, match="indptr has 0 entries"):
        tessel._tessel.svm_decision(m._model, np.zeros(0, np.int64), ix, vx, 13, 0)
    with pytest.raises(tessel.Error, match="threads"):
        tessel._tessel.svm_decision(m._model, ip, ix, vx, 13, -4)


@pytest.mark.parametrize("key, value, match", [
    ("nr_sv", lambda m: np.array([-1, m["nr_sv"].sum() + 1], np.int32), "nr_sv holds -1"),
    ("nr_sv", lambda m: np.array([2 ** 33, 1]), "outside the range"),
    ("nr_sv", lambda m: m["nr_sv"].astype(np.float64), "integers are needed"),
    ("labels", lambda m: np.array([0, 0], np.int32), "label 0 appears twice"),
    ("rho", lambda m: np.array([np.nan]), "not finite"),
    ("gamma", lambda m: -1.0, "gamma -1"),
    ("gamma", lambda m: "big", "'gamma' is 'big'"),
    ("degree", lambda m: 2 ** 40, "'degree' is"),
    ("num_features", lambda m: 3, "num_features is 3"),
    ("num_features", lambda m: -5, "num_features"),
    ("sv_indptr", lambda m: np.concatenate([m["sv_indptr"][:1], m["sv_indptr"][1:] + 10 ** 6]), "support"),
    ("sv_indices", lambda m: np.full_like(m["sv_indices"], 99), "feature id|ascending"),
    ("sv_coef", lambda m: m["sv_coef"][:, :-1], "coefficients"),
    ("sv_values", lambda m: np.array(["x"] * m["sv_values"].size), "numbers are needed"),
])
def test_a_tampered_model_dict_is_refused(data_dir, key, value, match):
    X, y = load(data_dir, "heart_scale")
    m = SVC().fit(X, y)
    m._model = dict(m._model)
    m._model[key] = value(m._model)
    with pytest.raises(ValueError, match=match):
        m.predict(X)


def test_tampered_model_files_are_refused(data_dir, tmp_path):
    text = (data_dir / "svm" / "heart_scale.libsvm.model").read_text()
    total = int(next(line.split()[1] for line in text.splitlines() if line.startswith("total_sv")))
    cases = {
        "negative nr_sv": (f"nr_sv {total + 5} -5", r"'nr_sv' holds -5"),
        "repeated labels": ("label 1 1", "label 1 appears twice"),
    }
    for name, (line, match) in cases.items():
        key = line.split()[0]
        bad = "\n".join(line if ln.split()[:1] == [key] else ln for ln in text.splitlines()) + "\n"
        path = tmp_path / "bad.model"
        path.write_text(bad)
        with pytest.raises(tessel.Error, match=r"bad\.model:\d+: " + match):
            SVC.load(path)
    path = tmp_path / "gamma.model"
    path.write_text(text.replace("gamma ", "gamma -", 1))
    with pytest.raises(tessel.Error, match="gamma -.* must not be negative"):
        SVC.load(path)
    good = tmp_path / "good.model"
    good.write_text(text)
    (tmp_path / "good.model.json").write_text('{"format": "tessel-svm-model-sidecar", "version": 1, '
                                              '"num_features": -5}')
    with pytest.raises(tessel.Error, match=r"good\.model\.json: .*'num_features' is -5"):
        SVC.load(good)


@pytest.mark.parametrize("make, match", [
    (lambda X, y: (np.float64(3.0), y), "2D array|scalar"),
    (lambda X, y: (X.toarray()[None], y), "dim 3|3 dimension|2D"),
    (lambda X, y: (X.toarray()[:0], y[:0]), "0 sample"),
    (lambda X, y: (X.toarray()[:, :0], y), "0 feature"),
    (lambda X, y: (X.toarray().astype(np.complex128), y), "[Cc]omplex"),
    (lambda X, y: (np.where(X.toarray() > 0.5, np.inf, X.toarray()), y), "infinity"),
    (lambda X, y: (X.multiply(np.nan).tocsr(), y), "NaN"),
    (lambda X, y: (X, np.where(np.arange(y.size) == 3, np.nan, y)), "NaN"),
    (lambda X, y: (X, np.where(np.arange(y.size) == 3, np.inf, y)), "infinity|Unknown label"),
    (lambda X, y: (X, y.reshape(-1, 1, 1)), "dim 3|shape|1d|column"),
    (lambda X, y: (X, np.array([None] * y.size)), "label|type|object"),
])
def test_hostile_arrays_raise_python_exceptions(data_dir, make, match):
    X, y = load(data_dir, "heart_scale")
    with pytest.raises(ValueError, match=match):
        SVC().fit(*make(X, y))


def test_more_hostile_calls(data_dir):
    import scipy.sparse as sp
    X, y = load(data_dir, "heart_scale")
    with pytest.raises(TypeError):
        SVC().fit(X, y, sample_weight=np.ones(y.size))  # not supported: a Python error, as for an unknown argument
    with pytest.raises((TypeError, ValueError)):  # float() of an arbitrary object: Python's own error
        SVC().fit(np.array([object()] * 2 * y.size, dtype=object).reshape(-1, 2), y)
    for threads in (-1, 2 ** 40, 1.5, True):
        with pytest.raises(ValueError, match="threads"):
            SVC(threads=threads).fit(X, y)
    with pytest.raises(ValueError, match="working_set"):
        SVC(solver="batch", working_set=2 ** 70).fit(X, y)
    # A matrix too wide for 32-bit feature ids.
    with pytest.raises(ValueError):
        SVC().fit(sp.csr_matrix((y.size, 2 ** 40)), y)
    with pytest.raises(ValueError, match="columns"):
        tessel.rows_dataset(sp.csr_matrix((3, 2 ** 33)), np.zeros(3))
    # Labels: booleans and negative integers are classes; strided and Fortran arrays are read, not misread.
    D = X.toarray()
    np.testing.assert_array_equal(SVC().fit(D, y > 0).predict(D), SVC().fit(D, y).predict(D) > 0)
    np.testing.assert_array_equal(SVC().fit(D, -9 + 7 * (y > 0)).predict(D), -9 + 7 * (SVC().fit(D, y).predict(D) > 0))
    wide = np.zeros((D.shape[0] * 2, D.shape[1] * 3))
    wide[::2, ::3] = D
    np.testing.assert_array_equal(SVC().fit(wide[::2, ::3], y).support_, SVC().fit(D, y).support_)
    fitted = SVC().fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        fitted.predict(np.full((2, D.shape[1]), np.nan))
    with pytest.raises(ValueError, match="0 sample"):
        fitted.predict(D[:0])


def test_kernel_values_beyond_the_cache_are_refused_not_crashed():
    rng = np.random.default_rng(0)
    X, y = rng.random((10, 2)), np.arange(10) % 2
    with pytest.raises(ValueError, match="kernel values .* reach"):
        SVC(kernel="poly", degree=2 ** 31 - 1, gamma=1.0).fit(X, y)
    with pytest.raises(ValueError, match="squared norm"):
        SVC(kernel="linear").fit(X * 1e200, y)
    with pytest.raises(ValueError, match="gamma='scale'"):
        SVC().fit(np.full((10, 2), 1e308) * (1 - 2 * (np.arange(20).reshape(10, 2) % 2)), y)
    with pytest.raises(ValueError, match="degree"):
        SVC(kernel="poly", degree=2 ** 40).fit(X, y)
    with pytest.raises(ValueError, match="max_iter"):
        SVC(max_iter=2 ** 70).fit(X, y)


def test_load_of_one_class_and_wide_models(tmp_path):
    one = tmp_path / "one.model"
    one.write_text("svm_type c_svc\nkernel_type rbf\ngamma 1\nnr_class 1\ntotal_sv 0\nrho\nlabel 5\nnr_sv 0\nSV\n")
    with pytest.raises(tessel.Error, match="one class .*label 5"):
        SVC.load(one)
    with pytest.raises(tessel.Error, match="path"):
        SVC.load(3)
    wide = tmp_path / "wide.model"
    wide.write_text("svm_type c_svc\nkernel_type linear\nnr_class 2\ntotal_sv 2\nrho 0\nlabel 1 -1\nnr_sv 1 1\nSV\n"
                    "1 1:1\n-1 2:1\n")
    (tmp_path / "wide.model.json").write_text('{"format": "tessel-svm-model-sidecar", "version": 1, '
                                              '"num_features": 2147483648}')
    m = SVC.load(wide)  # the support vectors as a sparse matrix: 2 x 2^31 dense would need 32 GiB
    assert m.support_vectors_.shape == (2, 2 ** 31) and hasattr(m.support_vectors_, "tocsr")


def test_models_sharing_no_feature_with_the_data_are_refused_naming_the_file(tmp_path):
    # Support vector ids billions beyond the data's (a damaged file, or another data set's model) loaded and
    # predicted without a word.
    far = tmp_path / "far.model"
    far.write_text("svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 2\nrho 0\nlabel 1 -1\n"
                   "nr_sv 1 1\nSV\n1 2000000001:1\n-1 2000000002:1\n")
    import scipy.sparse as sp
    m = SVC.load(far)
    X = sp.csr_matrix((np.ones(2), (np.arange(2), np.array([0, 12]))), shape=(2, m.n_features_in_))
    for call in (m.predict, m.decision_function):
        with pytest.raises(tessel.Error, match="far.model: its support vectors use feature ids 2000000001 to "
                                               "2000000002, all beyond the largest feature id of X"):
            call(X)
    # One shared feature is enough.
    X = sp.csr_matrix((np.ones(2), (np.arange(2), np.array([0, 2000000001]))), shape=(2, m.n_features_in_))
    assert m.predict(X).shape == (2,)
