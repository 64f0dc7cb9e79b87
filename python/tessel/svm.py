"""tessel.SVC: a scikit-learn estimator over tessel's C-SVC (LIBSVM's SMO with sample elimination).

It follows ``sklearn.svm.SVC``: the same parameter names and defaults (``gamma="scale"``, ``cache_size=200``), the
same class order (ascending labels, as scikit-learn's LIBSVM fork), so ``support_``, ``dual_coef_``,
``intercept_`` and ``n_support_`` equal scikit-learn's, and the same decision-function conventions (binary sign,
one-vs-rest shape). ``shrinking`` also takes tessel's sample-elimination policies, ``device="cuda"`` trains on a GPU,
and ``save``/``load`` read and write LIBSVM model files (svm-predict reads ours, we read svm-train's).
"""

import json
import numbers

import numpy as np

from . import _tessel
from ._errors import Error
from ._checks import sparse_input
from .data import _path, csr_arrays

try:
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.utils.class_weight import compute_class_weight
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_is_fitted
except ImportError as e:  # pragma: no cover - the package declares scikit-learn as a dependency of SVC only
    raise ImportError("tessel.SVC needs scikit-learn (Debian: python3-sklearn; pip: scikit-learn)") from e

_KERNELS = {"linear": "linear", "poly": "polynomial", "rbf": "rbf", "sigmoid": "sigmoid"}
_SHRINKING = ("off", "eager", "periodic", "lazy")


def _ovr_decision_function(predictions, confidences, n_classes):
    """scikit-learn's one-vs-one to one-vs-rest transform (votes plus confidences scaled into (-1/3, 1/3))."""
    n = predictions.shape[0]
    votes = np.zeros((n, n_classes))
    conf = np.zeros((n, n_classes))
    k = 0
    for i in range(n_classes):
        for j in range(i + 1, n_classes):
            conf[:, i] -= confidences[:, k]
            conf[:, j] += confidences[:, k]
            votes[predictions[:, k] == 0, i] += 1
            votes[predictions[:, k] == 1, j] += 1
            k += 1
    return votes + conf / (3 * (np.abs(conf) + 1))


def _sorted_model(m):
    """The model with its classes in ascending label order (a model file from svm-train lists them in order of
    first appearance): SV groups, coefficient rows and pair signs permuted. Labels become 0..k-1."""
    labels = np.asarray(m["labels"])
    k = labels.size
    order = np.argsort(labels, kind="stable")  # new position -> old class
    new_of = np.empty(k, dtype=np.int64)
    new_of[order] = np.arange(k)
    nr_sv = np.asarray(m["nr_sv"], dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(nr_sv)])
    coef = np.asarray(m["sv_coef"], dtype=np.float64).reshape(max(k - 1, 0), -1)
    indptr = np.asarray(m["sv_indptr"], dtype=np.int64)
    rho_old = np.asarray(m["rho"], dtype=np.float64)
    pair_old = {}
    p = 0
    for i in range(k):
        for j in range(i + 1, k):
            pair_old[(i, j)] = p
            p += 1
    sv_order = np.concatenate([np.arange(start[c], start[c + 1]) for c in order]) if k else np.zeros(0, np.int64)
    new_coef = np.zeros_like(coef[:, sv_order]) if coef.size else coef.copy()
    new_rho = np.zeros_like(rho_old)
    p = 0
    for a in range(k):
        for b in range(a + 1, k):
            i, j = order[a], order[b]  # old classes of the new pair (a, b); dec_ab > 0 means class a
            flip = i > j
            new_rho[p] = -rho_old[pair_old[(j, i)]] if flip else rho_old[pair_old[(i, j)]]
            p += 1
    # Coefficient of an SV of (old) class c against (old) class o sits in row o if o < c else o - 1.
    pos = 0
    for c in order:
        for s in range(start[c], start[c + 1]):
            for o in range(k):
                if o == c:
                    continue
                v = coef[o if o < c else o - 1, s]
                nc, no = new_of[c], new_of[o]
                flip = (c < o) != (nc < no)
                new_coef[no if no < nc else no - 1, pos] = -v if flip else v
            pos += 1
    rows = [(indptr[s], indptr[s + 1]) for s in sv_order]
    new_indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    new_indptr[1:] = np.cumsum([e - b for b, e in rows])
    idx = np.asarray(m["sv_indices"])
    val = np.asarray(m["sv_values"])
    out = dict(m)
    out.update(labels=np.arange(k, dtype=np.int32), rho=new_rho, nr_sv=nr_sv[order].astype(np.int32),
               sv_coef=new_coef, sv_indptr=new_indptr,
               sv_indices=np.concatenate([idx[b:e] for b, e in rows]).astype(np.int32) if rows else idx[:0],
               sv_values=np.concatenate([val[b:e] for b, e in rows]) if rows else val[:0],
               sv_rows=np.zeros(0, dtype=np.int64))
    return out, labels[order]


class SVC(ClassifierMixin, BaseEstimator):
    """C-Support Vector Classification by tessel's engine, a drop-in for ``sklearn.svm.SVC``.

    Parameters (scikit-learn's names and defaults, LIBSVM's meanings):
      C (1.0), kernel ("rbf"; "linear", "poly", "sigmoid"), degree (3), gamma ("scale", "auto" or a float > 0),
      coef0 (0.0), shrinking (True = LIBSVM's periodic elimination, False = off, or one of "off", "eager",
      "periodic", "lazy"), tol (1e-3), cache_size (200, MB), class_weight (None, a dict or "balanced"),
      max_iter (-1: LIBSVM's limit max(10^7, 100 l)), decision_function_shape ("ovr" or "ovo"), break_ties (False),
      probability (False; True is not supported).
    tessel's own: device ("cpu" or "cuda"), solver ("smo" or "batch"), working_set (0 = default), threads
      (0 = all cores).
    """

    def __init__(self, *, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True, tol=1e-3,
                 cache_size=200, class_weight=None, max_iter=-1, decision_function_shape="ovr", break_ties=False,
                 probability=False, device="cpu", solver="smo", working_set=0, threads=0):
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.probability = probability
        self.device = device
        self.solver = solver
        self.working_set = working_set
        self.threads = threads

    # ---- parameters -------------------------------------------------------------------------------------------
    def _engine_params(self, X):
        def number(name, value, lo=None, lo_open=True):
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
                raise ValueError(f"{name}={value!r}: a finite number is needed")
            if lo is not None and (value <= lo if lo_open else value < lo):
                raise ValueError(f"{name}={value!r}: must be {'>' if lo_open else '>='} {lo}")
            return float(value)

        def integer(name, value, lo, hi=2 ** 31 - 1):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not lo <= value <= hi:
                raise ValueError(f"{name}={value!r}: an integer from {lo} to {hi} is needed")
            return int(value)

        if self.kernel not in _KERNELS:
            raise ValueError(f"kernel={self.kernel!r}: one of {', '.join(_KERNELS)} is needed "
                             f"(precomputed and callable kernels are not supported)")
        if self.probability:
            raise ValueError("probability=True: probability estimates (Platt scaling) are not implemented; use "
                             "decision_function")
        if self.decision_function_shape not in ("ovr", "ovo"):
            raise ValueError(f"decision_function_shape={self.decision_function_shape!r}: 'ovr' or 'ovo' is needed")
        if self.break_ties and self.decision_function_shape == "ovo":
            raise ValueError("break_ties must be False when decision_function_shape is 'ovo'")
        if isinstance(self.shrinking, (bool, np.bool_)):
            shrinking = "periodic" if self.shrinking else "off"
        elif self.shrinking in _SHRINKING:
            shrinking = self.shrinking
        else:
            raise ValueError(f"shrinking={self.shrinking!r}: True, False or one of {', '.join(_SHRINKING)}")
        n_features = X.shape[1]
        if isinstance(self.gamma, str):
            if self.gamma == "scale":
                with np.errstate(over="ignore", invalid="ignore"):  # overflow: refused below
                    if hasattr(X, "multiply"):
                        var = X.multiply(X).mean() - X.mean() ** 2
                    else:
                        var = X.var()
                if not np.isfinite(var) and self.kernel == "linear":
                    var = 1.0  # gamma is not used by a linear kernel
                if not np.isfinite(var):
                    raise ValueError("gamma='scale': the variance of X is not finite (its values are too large); "
                                     "scale X or give gamma a number")
                gamma = 1.0 / (n_features * var) if var != 0 else 1.0
                if not np.isfinite(gamma):
                    raise ValueError(f"gamma='scale': 1 / (n_features * X.var()) = {gamma} is not finite (the "
                                     f"variance of X is {var:g}); scale X or give gamma a number")
            elif self.gamma == "auto":
                gamma = 1.0 / n_features
            else:
                raise ValueError(f"gamma={self.gamma!r}: 'scale', 'auto' or a number > 0 is needed")
        else:
            gamma = number("gamma", self.gamma, 0.0)
        return {
            "cost": number("C", self.C, 0.0),
            "kernel": _KERNELS[self.kernel],
            "degree": integer("degree", self.degree, 0),
            "gamma": float(gamma),
            "coef0": number("coef0", self.coef0),
            "eps": number("tol", self.tol, 0.0),
            "cache_mb": number("cache_size", self.cache_size, 0.0),
            "shrinking": shrinking,
            "max_iter": -1 if self.max_iter == -1 else integer("max_iter", self.max_iter, 1, 2 ** 63 - 1),
        }

    def _working_set(self):
        w = self.working_set
        if isinstance(w, bool) or not isinstance(w, numbers.Integral) or not -2 ** 31 <= w < 2 ** 31:
            raise ValueError(f"working_set={w!r}: 0 (the default) or a positive even integer is needed")
        return int(w)

    def _threads(self):
        t = self.threads
        if isinstance(t, bool) or not isinstance(t, numbers.Integral) or not 0 <= t <= 4096:
            raise ValueError(f"threads={t!r}: an integer from 0 (all cores) to 4096 is needed")
        return int(t)

    def _validate(self, X, reset):
        # A SciPy matrix's indptr and indices are checked before SciPy or scikit-learn reads them (a corrupt one
        # would crash the interpreter inside SciPy's compiled routines).
        return self._validate_data(sparse_input("X", X), accept_sparse="csr", dtype=np.float64, order="C",
                                   accept_large_sparse=False, reset=reset)

    # ---- training ---------------------------------------------------------------------------------------------
    def fit(self, X, y):
        """Trains on X (dense or SciPy CSR, n_samples x n_features) and class labels y. Returns self."""
        X, y = self._validate_data(sparse_input("X", X), y, accept_sparse="csr", dtype=np.float64, order="C",
                                   accept_large_sparse=False)
        threads = self._threads()
        check_classification_targets(y)
        params = self._engine_params(X)
        classes, y_index = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(f"The number of classes has to be greater than one; got {classes.size} class")
        weights = []
        if self.class_weight is not None:
            if isinstance(self.class_weight, str) and self.class_weight != "balanced":
                raise ValueError(f"class_weight={self.class_weight!r}: None, 'balanced' or a dict is needed")
            if isinstance(self.class_weight, dict):
                unknown = [c for c in self.class_weight if c not in set(classes.tolist())]
                if unknown:
                    raise ValueError(f"class_weight: the class label(s) {unknown} are not in y")
            w = compute_class_weight(self.class_weight, classes=classes, y=y)
            weights = [(int(i), float(v)) for i, v in enumerate(w)]
        indptr, indices, values, n_features = csr_arrays("X", X)
        model, report = _tessel.svm_fit(
            indptr, indices, values, y_index.astype(np.float64), n_features, json.dumps(params), weights, True, threads,
            str(self.device), str(self.solver), self._working_set())
        self.classes_ = classes
        self._sparse = hasattr(X, "tocsr")
        self._set_model(model)
        self.support_ = model["sv_rows"].astype(np.int32)
        self.support_vectors_ = X[self.support_]
        report = json.loads(report)
        self.n_iter_ = np.array([p["iterations"] for p in report["pairs"]], dtype=np.int32)
        self.fit_status_ = 0
        self.shape_fit_ = X.shape
        self.train_report_ = report
        return self

    def _set_model(self, model):
        self._model = model
        self._gamma = model["gamma"]
        self.n_support_ = np.asarray(model["nr_sv"], dtype=np.int32)
        self._dual_coef_ = np.asarray(model["sv_coef"], dtype=np.float64)
        self._intercept_ = -np.asarray(model["rho"], dtype=np.float64)
        if len(self.classes_) == 2:  # scikit-learn's sign: a positive decision value means classes_[1]
            self.dual_coef_ = -self._dual_coef_
            self.intercept_ = -self._intercept_
        else:
            self.dual_coef_ = self._dual_coef_
            self.intercept_ = self._intercept_
        if getattr(self, "_sparse", False):  # as scikit-learn: sparse training data, sparse coefficients
            import scipy.sparse as sp
            self.dual_coef_ = sp.csr_matrix(self.dual_coef_)

    # ---- prediction -------------------------------------------------------------------------------------------
    def _ovo(self, X):
        check_is_fitted(self)
        X = self._validate(X, reset=False)
        indptr, indices, values, n_features = csr_arrays("X", X)
        return _tessel.svm_decision(self._model, indptr, indices, values, n_features, self._threads())

    def decision_function(self, X):
        """Decision values: (n_samples,) for two classes (positive means classes_[1]); (n_samples, n_classes)
        with decision_function_shape="ovr", else LIBSVM's one-vs-one values (n_samples, n_pairs)."""
        dec, _ = self._ovo(X)
        if len(self.classes_) == 2:
            return -dec.ravel()
        if self.decision_function_shape == "ovr":
            return _ovr_decision_function(dec < 0, -dec, len(self.classes_))
        return dec

    def predict(self, X):
        """Class labels by LIBSVM's one-vs-one voting (with break_ties: the largest one-vs-rest value)."""
        dec, votes = self._ovo(X)
        if self.break_ties and self.decision_function_shape == "ovr" and len(self.classes_) > 2:
            return self.classes_[np.argmax(_ovr_decision_function(dec < 0, -dec, len(self.classes_)), axis=1)]
        return self.classes_[votes.astype(np.int64)]

    # ---- LIBSVM model files -----------------------------------------------------------------------------------
    def save(self, path, force=False):
        """Writes the model as a LIBSVM model file (svm-predict and ``tessel predict svm`` read it), with tessel's
        sidecar PATH.json. Needs integer class labels."""
        check_is_fitted(self)
        c = self.classes_
        integral = c.dtype.kind in "iu" or (c.dtype.kind == "f" and np.all(c == np.trunc(c)))
        if not integral or np.abs(c).max() > np.iinfo(np.int32).max:
            raise Error(f"save: LIBSVM model files hold integer class labels; these are {c.dtype} ({c[:3]}...)")
        m = dict(self._model)
        m["labels"] = self.classes_.astype(np.int32)
        _tessel.svm_save(m, _path("path", path), bool(force))

    @classmethod
    def load(cls, path, **params):
        """An SVC from a LIBSVM model file (svm-train's or tessel's), ready to predict."""
        path = _path("path", path)
        m = _tessel.svm_load(path)
        if len(m["labels"]) < 2:
            raise Error(f"{path}: a model of one class (label {m['labels'][0]}), which svm-train writes for data of "
                        f"one label; SVC needs two classes or more (`tessel predict svm` predicts with it)")
        model, classes = _sorted_model(m)
        kernel = {v: k for k, v in _KERNELS.items()}[m["kernel"]]
        est = cls(kernel=kernel, degree=int(m["degree"]), gamma=float(m["gamma"]), coef0=float(m["coef0"]),
                  **params)
        est.classes_ = classes
        est._set_model(model)
        n_features = int(m["num_features"])
        est.n_features_in_ = n_features
        est.support_ = np.zeros(0, dtype=np.int32)  # the training rows are not in a model file
        n_sv = len(model["sv_indptr"]) - 1
        if n_sv * n_features > 2 ** 24:  # a wide model (the sidecar's num_features): sparse, as for sparse training
            import scipy.sparse as sp
            est.support_vectors_ = sp.csr_matrix((model["sv_values"], model["sv_indices"], model["sv_indptr"]),
                                                 shape=(n_sv, n_features))
            return est
        sv = np.zeros((n_sv, n_features))
        for r in range(sv.shape[0]):
            b, e = model["sv_indptr"][r], model["sv_indptr"][r + 1]
            sv[r, model["sv_indices"][b:e]] = model["sv_values"][b:e]
        est.support_vectors_ = sv
        return est

    def _more_tags(self):
        return {"binary_only": False}
