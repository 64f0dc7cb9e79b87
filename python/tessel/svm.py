"""tessel's SVM estimators: SVC, NuSVC, SVR, NuSVR and OneClassSVM, scikit-learn estimators over tessel's LIBSVM
solvers (LIBSVM's SMO with sample elimination; svm-train -s 0 to 4).

Each follows its ``sklearn.svm`` namesake: the same parameter names and defaults (``gamma="scale"``,
``cache_size=200``), the same class order for the classifiers (ascending labels, as scikit-learn's LIBSVM fork), so
``support_``, ``dual_coef_``, ``intercept_`` and ``n_support_`` equal scikit-learn's, and the same decision-function
conventions (binary sign, one-vs-rest shape, OneClassSVM's ``offset_``). ``shrinking`` also takes tessel's
sample-elimination policies, ``device="cuda"`` trains C-SVC on a GPU, and ``save``/``load`` read and write LIBSVM
model files of every formulation (svm-predict reads ours, we read svm-train's). The shared code is _BaseLibSVM
(and _BaseSVC, _BaseSVR), as scikit-learn's BaseLibSVM.
"""

import json
import numbers
import warnings

import numpy as np

from . import _tessel
from ._errors import Error
from ._checks import sparse_input
from .data import _path, csr_arrays

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, OutlierMixin, RegressorMixin
    from sklearn.exceptions import ConvergenceWarning, NotFittedError
    from sklearn.utils._available_if import available_if
    from sklearn.utils.class_weight import compute_class_weight
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils import check_random_state
    from sklearn.utils.validation import check_is_fitted
except ImportError as e:  # pragma: no cover - scikit-learn is a dependency of the SVM estimators only
    raise ImportError("tessel's SVM estimators need scikit-learn (Debian: python3-sklearn; pip: scikit-learn)") from e

#: The widest sparse X the estimators take: SciPy stores wider matrices with 64-bit indices, which scikit-learn's
#: checks (accept_large_sparse=False) refuse.
_SKLEARN_COLUMNS = 2 ** 31 - 1
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
    prob_a_old = np.asarray(m.get("prob_a", []), dtype=np.float64)
    prob_b_old = np.asarray(m.get("prob_b", []), dtype=np.float64)
    new_prob_a = np.zeros_like(prob_a_old)
    new_prob_b = np.zeros_like(prob_b_old)
    p = 0
    for a in range(k):
        for b in range(a + 1, k):
            i, j = order[a], order[b]  # old classes of the new pair (a, b); dec_ab > 0 means class a
            flip = i > j
            old = pair_old[(j, i)] if flip else pair_old[(i, j)]
            new_rho[p] = -rho_old[old] if flip else rho_old[old]
            if prob_a_old.size:  # P(a | f) = 1 / (1 + exp(A f + B)): a flipped pair keeps A and negates B
                new_prob_a[p] = prob_a_old[old]
                new_prob_b[p] = -prob_b_old[old] if flip else prob_b_old[old]
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
    out.update(labels=np.arange(k, dtype=np.int32), rho=new_rho, prob_a=new_prob_a, prob_b=new_prob_b,
               nr_sv=nr_sv[order].astype(np.int32),
               sv_coef=new_coef, sv_indptr=new_indptr,
               sv_indices=np.concatenate([idx[b:e] for b, e in rows]).astype(np.int32) if rows else idx[:0],
               sv_values=np.concatenate([val[b:e] for b, e in rows]) if rows else val[:0],
               sv_rows=np.zeros(0, dtype=np.int64))
    return out, labels[order]


# The engine's formulation of each estimator (SvmParams::type, svm-train -s) and the class that loads its files.
_CLASS_OF_TYPE = {"c_svc": "SVC", "nu_svc": "NuSVC", "one_class": "OneClassSVM", "epsilon_svr": "SVR",
                  "nu_svr": "NuSVR"}


class _BaseLibSVM(BaseEstimator):
    """What tessel's five LIBSVM estimators share (scikit-learn's BaseLibSVM): parameter checks, training through
    the engine, the fitted attributes, decision values, and LIBSVM model files both ways. A subclass names its
    formulation (``_svm_type``) and the parameters it adds to the kernel's (``_formulation``: "C", "nu",
    "epsilon")."""

    _svm_type = "c_svc"
    _formulation = ("C",)
    _classifier = False  # classes_, one-vs-one pairs, the binary sign flip

    def _keep_params(self, args):
        """What each estimator's __init__ does, as scikit-learn wants it: stores every argument (ARGS, the
        __init__'s locals()) unchanged as the attribute of its name."""
        for name, value in args.items():
            if name != "self":
                setattr(self, name, value)

    # ---- parameters -------------------------------------------------------------------------------------------
    def _engine_params(self, X):
        def number(name, value, lo=None, lo_open=True, hi=None):
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
                raise ValueError(f"{name}={value!r}: a finite number is needed")
            if lo is not None and (value <= lo if lo_open else value < lo):
                raise ValueError(f"{name}={value!r}: must be {'>' if lo_open else '>='} {lo}")
            if hi is not None and value > hi:
                raise ValueError(f"{name}={value!r}: must be in ({lo}, {hi}]")
            return float(value)

        def integer(name, value, lo, hi=2 ** 31 - 1):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not lo <= value <= hi:
                raise ValueError(f"{name}={value!r}: an integer from {lo} to {hi} is needed")
            return int(value)

        if self.kernel not in _KERNELS:
            raise ValueError(f"kernel={self.kernel!r}: one of {', '.join(_KERNELS)} is needed "
                             f"(precomputed and callable kernels are not supported)")
        self._check_own_params()
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
        params = {
            "svm_type": self._svm_type,
            # C of C-SVC, epsilon-SVR and nu-SVR; nu-SVC and one-class have none (the engine checks C > 0 for
            # every type, so they pass LIBSVM's default, which their solvers do not read).
            "cost": number("C", self.C, 0.0) if "C" in self._formulation else 1.0,
            "kernel": _KERNELS[self.kernel],
            "degree": integer("degree", self.degree, 0),
            "gamma": float(gamma),
            "coef0": number("coef0", self.coef0),
            "eps": number("tol", self.tol, 0.0),
            "cache_mb": number("cache_size", self.cache_size, 0.0),
            "shrinking": shrinking,
            "max_iter": -1 if self.max_iter == -1 else integer("max_iter", self.max_iter, 1, 2 ** 63 - 1),
        }
        if isinstance(self.verbose, numbers.Integral) and not isinstance(self.verbose, bool) and self.verbose < 0 or \
                not isinstance(self.verbose, (numbers.Integral, np.bool_)):
            raise ValueError(f"verbose={self.verbose!r}: True, False or an integer >= 0 is needed")
        if "nu" in self._formulation:
            params["nu"] = number("nu", self.nu, 0.0, hi=1.0)
        if "epsilon" in self._formulation:
            params["epsilon"] = number("epsilon", self.epsilon, 0.0, lo_open=False)
        return params

    def _check_own_params(self):
        """A subclass's checks of its own parameters (the classifiers' probability, decision_function_shape)."""

    def _threads(self):
        t = self.threads
        if isinstance(t, bool) or not isinstance(t, numbers.Integral) or not 0 <= t <= 4096:
            raise ValueError(f"threads={t!r}: an integer from 0 (all cores) to 4096 is needed")
        return int(t)

    def _validate(self, X, reset):
        # _SKLEARN_COLUMNS: SciPy gives a wider matrix 64-bit indices, which scikit-learn's checks refuse without
        # naming the width; sparse_input refuses it first, naming it.
        # A SciPy matrix's indptr and indices are checked before SciPy or scikit-learn reads them (a corrupt one
        # would crash the interpreter inside SciPy's compiled routines).
        return self._validate_data(sparse_input("X", X, _SKLEARN_COLUMNS), accept_sparse="csr", dtype=np.float64, order="C",
                                   accept_large_sparse=False, reset=reset)

    def _validate_xy(self, X, y):
        return self._validate_data(sparse_input("X", X, _SKLEARN_COLUMNS), y, accept_sparse="csr", dtype=np.float64, order="C",
                                   accept_large_sparse=False)

    # ---- training ---------------------------------------------------------------------------------------------
    def _fit_engine(self, X, labels, params, threads, weights=(), seed=-1):
        """Trains the engine's formulation on validated X and labels (class positions 0..k-1 for the classifiers,
        targets for the regressions, ones for one-class) through the one run of `tessel train svm` (its options:
        PARAMS and tessel's own four) and sets the fitted attributes. SEED: random_state's draw for the probability
        folds (-1: none)."""
        indptr, indices, values, n_features = csr_arrays("X", X)
        w = self.working_set
        options = dict(params, threads=threads, device=self.device, solver=self.solver,
                       working_set=int(w) if isinstance(w, numbers.Integral) and not isinstance(w, bool) else w)
        try:
            options_json = json.dumps(options)
        except TypeError as e:  # an object JSON cannot write (the engine names the option for anything it reads)
            raise ValueError(f"device={self.device!r}, solver={self.solver!r}, working_set={w!r}: {e}") from e
        model, report = _tessel.svm_fit(
            indptr, indices, values, np.ascontiguousarray(labels, dtype=np.float64), n_features, options_json,
            list(weights), True, int(seed), bool(self.verbose))
        self._sparse = hasattr(X, "tocsr")
        self._set_model(model)
        self.support_ = model["sv_rows"].astype(np.int32)
        self.support_vectors_ = X[self.support_]
        report = json.loads(report)
        n_iter = np.array([p["iterations"] for p in report["pairs"]], dtype=np.int32)
        # scikit-learn: an array (one entry per pair) for the classifiers, an int for the one problem of the others.
        self.n_iter_ = n_iter if self._classifier else int(n_iter[0])
        # 1 when the iteration limit stopped a problem before its violation gap fell below tol (scikit-learn's
        # fit_status_ and warning; the solver's gap is below eps at every other exit).
        self.fit_status_ = int(any(p["gap"] >= params["eps"] for p in report["pairs"]))
        if self.fit_status_:
            warnings.warn(f"Solver terminated early (max_iter={self.max_iter}).  Consider pre-processing your data "
                          f"with StandardScaler or MinMaxScaler.", ConvergenceWarning)
        self.shape_fit_ = X.shape
        self.train_report_ = report
        return self

    def _set_model(self, model):
        self._model = model
        self._gamma = model["gamma"]
        self._dual_coef_ = np.asarray(model["sv_coef"], dtype=np.float64)
        self._intercept_ = -np.asarray(model["rho"], dtype=np.float64)
        if self._classifier:
            self.n_support_ = np.asarray(model["nr_sv"], dtype=np.int32)
        else:  # scikit-learn's n_support_ of one-class and the regressions: [number of support vectors]
            self.n_support_ = np.array([len(model["sv_indptr"]) - 1], dtype=np.int32)
        if self._classifier and len(self.classes_) == 2:  # scikit-learn's sign: positive means classes_[1]
            self.dual_coef_ = -self._dual_coef_
            self.intercept_ = -self._intercept_
        else:
            self.dual_coef_ = self._dual_coef_
            self.intercept_ = self._intercept_.copy()
        if getattr(self, "_sparse", False):  # as scikit-learn: sparse training data, sparse coefficients
            import scipy.sparse as sp
            self.dual_coef_ = sp.csr_matrix(self.dual_coef_)

    # ---- prediction -------------------------------------------------------------------------------------------
    def _engine_decision(self, X):
        """(LIBSVM's decision values [rows x pairs], its prediction per row: the voted class position, +1/-1 for
        one-class, the value for regression)."""
        check_is_fitted(self)
        X = self._validate(X, reset=False)
        indptr, indices, values, n_features = csr_arrays("X", X)
        return _tessel.svm_decision(self._model, indptr, indices, values, n_features, self._threads())

    # ---- LIBSVM model files -----------------------------------------------------------------------------------
    def _file_model(self):
        return dict(self._model)

    def save(self, path, force=False):
        """Writes the model as a LIBSVM model file (svm-predict and ``tessel predict svm`` read it), with tessel's
        sidecar PATH.json. A classifier needs integer class labels."""
        check_is_fitted(self)
        _tessel.svm_save(self._file_model(), _path("path", path), bool(force))

    def _adopt_file_model(self, path, m):
        """The model of a file as this estimator holds it (the classifiers sort its classes)."""
        return m

    @classmethod
    def load(cls, path, **params):
        """An estimator from a LIBSVM model file of its formulation (svm-train's or tessel's), ready to predict."""
        path = _path("path", path)
        m = _tessel.svm_load(path)
        if m["svm_type"] != cls._svm_type:
            raise Error(f"{path}: a {m['svm_type']} model (svm_type {m['svm_type']}); "
                        f"tessel.{_CLASS_OF_TYPE[m['svm_type']]}.load reads it, {cls.__name__} reads "
                        f"{cls._svm_type} models")
        kernel = {v: k for k, v in _KERNELS.items()}[m["kernel"]]
        if "probability" in cls._get_param_names() and "probability" not in params:
            params["probability"] = bool(len(m.get("prob_a", [])) and len(m.get("prob_b", [])))  # a -b 1 model
        est = cls(kernel=kernel, degree=int(m["degree"]), gamma=float(m["gamma"]), coef0=float(m["coef0"]),
                  **params)
        model = dict(est._adopt_file_model(path, m))
        model["source"] = path  # prediction's refusals name the model file
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


class _BaseSVC(ClassifierMixin, _BaseLibSVM):
    """SVC and NuSVC: classes in ascending order (scikit-learn's LIBSVM fork), one-vs-one pairs, LIBSVM's voting,
    scikit-learn's binary sign and one-vs-rest decision shape."""

    _classifier = True

    def _check_own_params(self):
        if not isinstance(self.probability, (bool, np.bool_)):
            raise ValueError(f"probability={self.probability!r}: True or False is needed")
        if self.decision_function_shape not in ("ovr", "ovo"):
            raise ValueError(f"decision_function_shape={self.decision_function_shape!r}: 'ovr' or 'ovo' is needed")
        if self.break_ties and self.decision_function_shape == "ovo":
            raise ValueError("break_ties must be False when decision_function_shape is 'ovo'")

    def fit(self, X, y):
        """Trains on X (dense or SciPy CSR, n_samples x n_features) and class labels y. Returns self."""
        X, y = self._validate_xy(X, y)
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
        self.classes_ = classes
        params["probability"] = 1 if self.probability else 0
        # scikit-learn's seed: one draw from random_state on every fit (as BaseLibSVM.fit), which seeds the
        # probability fits' folds; equal seeds give equal models.
        seed = check_random_state(self.random_state).randint(np.iinfo("i").max)
        return self._fit_engine(X, y_index, params, threads, weights, seed)

    def _set_model(self, model):
        super()._set_model(model)
        # LIBSVM's probA / probB per pair (classes in classes_ order), as scikit-learn exposes them; empty without
        # probability=True.
        self.probA_ = np.asarray(model.get("prob_a", []), dtype=np.float64)
        self.probB_ = np.asarray(model.get("prob_b", []), dtype=np.float64)

    def _check_proba(self):
        if not self.probability:
            raise AttributeError("predict_proba is not available when probability=False")
        return True

    @available_if(_check_proba)
    def predict_proba(self, X):
        """Class probabilities (n_samples, n_classes), columns in classes_ order: LIBSVM's Platt sigmoid per pair
        (fitted at fit time on a 5-fold cross-validation, as svm-train -b 1) coupled by Wu, Lin and Weng's method.
        As in LIBSVM and scikit-learn, the most probable class can differ from predict's vote."""
        check_is_fitted(self)
        if self.probA_.size == 0:
            raise NotFittedError("predict_proba: this model has no probability estimates (fit with "
                                 "probability=True, or load a model file trained with -b 1)")
        X = self._validate(X, reset=False)
        indptr, indices, values, n_features = csr_arrays("X", X)
        return _tessel.svm_probability(self._model, indptr, indices, values, n_features, self._threads())

    @available_if(_check_proba)
    def predict_log_proba(self, X):
        """The natural logarithm of predict_proba."""
        return np.log(self.predict_proba(X))

    def decision_function(self, X):
        """Decision values: (n_samples,) for two classes (positive means classes_[1]); (n_samples, n_classes)
        with decision_function_shape="ovr", else LIBSVM's one-vs-one values (n_samples, n_pairs)."""
        dec, _ = self._engine_decision(X)
        if len(self.classes_) == 2:
            return -dec.ravel()
        if self.decision_function_shape == "ovr":
            return _ovr_decision_function(dec < 0, -dec, len(self.classes_))
        return dec

    def predict(self, X):
        """Class labels by LIBSVM's one-vs-one voting (with break_ties: the largest one-vs-rest value)."""
        dec, votes = self._engine_decision(X)
        if self.break_ties and self.decision_function_shape == "ovr" and len(self.classes_) > 2:
            return self.classes_[np.argmax(_ovr_decision_function(dec < 0, -dec, len(self.classes_)), axis=1)]
        return self.classes_[votes.astype(np.int64)]

    def _file_model(self):
        c = self.classes_
        integral = c.dtype.kind in "iu" or (c.dtype.kind == "f" and np.all(c == np.trunc(c)))
        if not integral or np.abs(c).max() > np.iinfo(np.int32).max:
            raise Error(f"save: LIBSVM model files hold integer class labels; these are {c.dtype} ({c[:3]}...)")
        m = dict(self._model)
        m["labels"] = self.classes_.astype(np.int32)
        return m

    def _adopt_file_model(self, path, m):
        if len(m["labels"]) < 2:
            raise Error(f"{path}: a model of one class (label {m['labels'][0]}), which svm-train writes for data of "
                        f"one label; {type(self).__name__} needs two classes or more (`tessel predict svm` predicts "
                        f"with it)")
        model, self.classes_ = _sorted_model(m)
        return model

    def _more_tags(self):
        return {"binary_only": False}


class SVC(_BaseSVC):
    """C-Support Vector Classification by tessel's engine, a drop-in for ``sklearn.svm.SVC``.

    Parameters (scikit-learn's names and defaults, LIBSVM's meanings):
      C (1.0), kernel ("rbf"; "linear", "poly", "sigmoid"), degree (3), gamma ("scale", "auto" or a float > 0),
      coef0 (0.0), shrinking (True = LIBSVM's periodic elimination, False = off, or one of "off", "eager",
      "periodic", "lazy"), tol (1e-3), cache_size (200, MB), class_weight (None, a dict or "balanced"),
      max_iter (-1: LIBSVM's limit max(10^7, 100 l)), decision_function_shape ("ovr" or "ovo"), break_ties (False),
      probability (False; True fits LIBSVM's probabilities for predict_proba and predict_log_proba, as
      svm-train -b 1: an internal 5-fold cross-validation per pair, so fitting takes about 6 times as long).
      random_state (None, an int or a RandomState: seeds the probability fits' folds as scikit-learn's does, so
      equal seeds give equal models and probA_/probB_ equal to sklearn.svm.SVC's with the same seed),
      verbose (False; True logs the training's progress and each pair's objective at info level on stderr).
    tessel's own: device ("cpu" or "cuda"), solver ("smo" or "batch"), working_set (0 = default), threads
      (0 = all cores).
    """

    _svm_type = "c_svc"
    _formulation = ("C",)

    def __init__(self, *, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True, tol=1e-3,
                 cache_size=200, class_weight=None, max_iter=-1, decision_function_shape="ovr", break_ties=False,
                 probability=False, random_state=None, verbose=False, device="cpu", solver="smo", working_set=0,
                 threads=0):
        self._keep_params(locals())


class NuSVC(_BaseSVC):
    """Nu-Support Vector Classification (LIBSVM's nu-SVC, svm-train -s 1), a drop-in for ``sklearn.svm.NuSVC``.

    nu (0.5, in (0, 1]) bounds the fraction of margin errors from above and of support vectors from below; it
    replaces SVC's C. The other parameters are SVC's. class_weight is accepted and, as in LIBSVM and scikit-learn,
    has no effect on nu-SVC (both classes' bounds are 1). A nu that is infeasible for a pair of classes
    (nu (n1 + n2) / 2 > min(n1, n2)) raises ValueError.
    """

    _svm_type = "nu_svc"
    _formulation = ("nu",)

    def __init__(self, *, nu=0.5, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True, tol=1e-3,
                 cache_size=200, class_weight=None, max_iter=-1, decision_function_shape="ovr", break_ties=False,
                 probability=False, random_state=None, verbose=False, device="cpu", solver="smo", working_set=0,
                 threads=0):
        self._keep_params(locals())

    def _more_tags(self):
        return {"binary_only": False,
                "_xfail_checks": {"check_class_weight_classifiers": "class_weight is ignored (nu-SVC's bounds are 1, "
                                                                     "as in LIBSVM and sklearn.svm.NuSVC)"}}


class _BaseSVR(RegressorMixin, _BaseLibSVM):
    """SVR and NuSVR: real targets, one problem over 2 l variables, the prediction is the decision value (as in
    scikit-learn, a regressor has no decision_function)."""

    def fit(self, X, y):
        """Trains on X (dense or SciPy CSR) and real targets y. Returns self."""
        X, y = self._validate_xy(X, y)
        threads = self._threads()
        params = self._engine_params(X)
        return self._fit_engine(X, y.astype(np.float64, copy=False), params, threads)

    def predict(self, X):
        """The regression values sum_i dual_coef_[i] K(support_vectors_[i], x) + intercept_."""
        _, value = self._engine_decision(X)
        return value


class SVR(_BaseSVR):
    """Epsilon-Support Vector Regression (LIBSVM's epsilon-SVR, svm-train -s 3), a drop-in for ``sklearn.svm.SVR``.

    Parameters: kernel, degree, gamma, coef0, tol, C (1.0), epsilon (0.1, the width of the loss's insensitive
    tube, >= 0), shrinking, cache_size, max_iter, as scikit-learn's; tessel's device, solver, working_set, threads.
    """

    _svm_type = "epsilon_svr"
    _formulation = ("C", "epsilon")

    def __init__(self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, C=1.0, epsilon=0.1,
                 shrinking=True, cache_size=200, max_iter=-1, verbose=False, device="cpu", solver="smo", working_set=0,
                 threads=0):
        self._keep_params(locals())


class NuSVR(_BaseSVR):
    """Nu-Support Vector Regression (LIBSVM's nu-SVR, svm-train -s 4), a drop-in for ``sklearn.svm.NuSVR``.

    Parameters: nu (0.5, in (0, 1]: the tube's width is found so that nu bounds the fraction of errors and
    support vectors), C (1.0), kernel, degree, gamma, coef0, shrinking, tol, cache_size, max_iter, as
    scikit-learn's; tessel's device, solver, working_set, threads.
    """

    _svm_type = "nu_svr"
    _formulation = ("C", "nu")

    def __init__(self, *, nu=0.5, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True,
                 tol=1e-3, cache_size=200, max_iter=-1, verbose=False, device="cpu", solver="smo", working_set=0,
                 threads=0):
        self._keep_params(locals())


class OneClassSVM(OutlierMixin, _BaseLibSVM):
    """Unsupervised outlier detection (LIBSVM's one-class SVM, svm-train -s 2), a drop-in for
    ``sklearn.svm.OneClassSVM``.

    Parameters: kernel, degree, gamma, coef0, tol, nu (0.5, in (0, 1]: an upper bound on the fraction of training
    errors and a lower bound on that of support vectors), shrinking, cache_size, max_iter, as scikit-learn's;
    tessel's device, solver, working_set, threads. ``decision_function`` is sum_i dual_coef_[i] K(sv_i, x) - rho
    (positive for inliers), ``score_samples`` the sum without rho, and ``offset_`` = rho = -intercept_.
    """

    _svm_type = "one_class"
    _formulation = ("nu",)

    def __init__(self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, nu=0.5, shrinking=True,
                 cache_size=200, max_iter=-1, verbose=False, device="cpu", solver="smo", working_set=0, threads=0):
        self._keep_params(locals())

    def fit(self, X, y=None):
        """Learns the support of X's distribution (dense or SciPy CSR); y is ignored. Returns self."""
        X = self._validate(X, reset=True)
        threads = self._threads()
        params = self._engine_params(X)
        return self._fit_engine(X, np.ones(X.shape[0]), params, threads)

    def _set_model(self, model):
        super()._set_model(model)
        self.offset_ = -self._intercept_  # scikit-learn's: decision_function = score_samples - offset_

    def decision_function(self, X):
        """Signed distance to the separating hyperplane: positive for an inlier, negative for an outlier."""
        dec, _ = self._engine_decision(X)
        return dec.ravel()

    def score_samples(self, X):
        """The unshifted score sum_i dual_coef_[i] K(support_vectors_[i], x) = decision_function(X) + offset_."""
        return self.decision_function(X) + self.offset_

    def predict(self, X):
        """+1 for an inlier, -1 for an outlier (the sign of the decision value, LIBSVM's: 0 is an outlier)."""
        _, sign = self._engine_decision(X)
        return np.asarray(sign, dtype=np.intp)
