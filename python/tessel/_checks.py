"""Argument checks shared by the package: numpy arrays of the right kind, shape and contents, converted to the
exact dtype and layout the extension module takes, with messages that name the argument and the fix."""

import numbers

import numpy as np

from ._errors import Error


def _kind(a):
    return {"b": "boolean", "i": "integer", "u": "unsigned integer", "f": "floating", "c": "complex",
            "O": "object", "U": "string", "S": "bytes"}.get(a.dtype.kind, str(a.dtype))


def as_array(name, value, kind, ndim=1, dtype=None, finite=False):
    """Returns `value` as a C-contiguous array of `dtype` (copied only when needed).

    kind: "int" (integer or boolean-free integer dtypes; floats with integral values are refused, so that a float
    label array is never silently truncated), "float" (integer or floating) or "label" (integers, or floats that
    are all integral). Non-contiguous arrays (slices, transposes) are copied.
    """
    try:
        a = np.asarray(value)
    except Exception as e:  # ragged lists and the like
        raise Error(f"{name}: cannot be read as an array ({e})") from None
    if a.dtype.kind in "OUSV" or a.dtype.kind == "c":
        raise Error(f"{name}: has dtype {a.dtype} ({_kind(a)}); a numeric array is needed")
    if ndim is not None and a.ndim != ndim:
        raise Error(f"{name}: has {a.ndim} dimension(s) (shape {a.shape}); {ndim} needed")
    if kind == "int":
        if a.dtype.kind not in "iu":
            raise Error(f"{name}: has dtype {a.dtype} ({_kind(a)}); integer ids are needed "
                        f"(convert with .astype(np.int64) if the values are whole numbers)")
    elif kind == "label":
        if a.dtype.kind == "f":
            if not np.all(np.isfinite(a)):
                raise Error(f"{name}: contains NaN or infinity; class labels must be integers")
            if not np.all(a == np.trunc(a)):
                bad = a[a != np.trunc(a)][0]
                raise Error(f"{name}: the label {bad!r} is not a whole number; class labels must be integers")
        elif a.dtype.kind not in "iub":
            raise Error(f"{name}: has dtype {a.dtype}; integer class labels are needed")
    elif kind == "float":
        if a.dtype.kind not in "iubf":
            raise Error(f"{name}: has dtype {a.dtype}; numbers are needed")
    if dtype is not None:
        if a.dtype.kind in "iu" and np.dtype(dtype).kind in "iu" and a.size:
            info = np.iinfo(dtype)
            lo, hi = a.min(), a.max()
            if lo < info.min or hi > info.max:
                raise Error(f"{name}: values in [{lo}, {hi}] do not fit {np.dtype(dtype).name}")
        if a.dtype.kind == "f" and np.dtype(dtype).kind in "iu" and a.size:
            info = np.iinfo(dtype)  # whole-numbered floats (labels): no silent wrap in the cast below
            lo, hi = float(a.min()), float(a.max())
            if lo < info.min or hi >= info.max + 1:
                raise Error(f"{name}: values in [{lo}, {hi}] do not fit {np.dtype(dtype).name}")
        a = np.ascontiguousarray(a, dtype=dtype)
    else:
        a = np.ascontiguousarray(a)
    if finite and a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        bad = np.argwhere(~np.isfinite(a))[0]
        raise Error(f"{name}: contains NaN or infinity (first at index {tuple(int(i) for i in bad)}); "
                    f"replace or drop those values")
    return a


#: Feature (column) ids are 32-bit in the engine: a matrix has at most this many columns.
MAX_COLUMNS = 2 ** 31


def is_sparse(value):
    """Whether `value` is a SciPy sparse matrix or array (decided without reading its contents)."""
    try:
        import scipy.sparse as sp
    except ImportError:
        return False
    return sp.issparse(value)


def _structure_array(name, X, attr, integral):
    a = getattr(X, attr, None)
    if not isinstance(a, np.ndarray) or a.ndim != 1:
        raise Error(f"{name}.{attr}: a 1-D numpy array is needed, found {type(a).__name__}"
                    f"{'' if not isinstance(a, np.ndarray) else f' of shape {a.shape}'}; the sparse matrix is corrupt "
                    f"(rebuild it with scipy.sparse.csr_matrix((data, indices, indptr), shape=...))")
    if integral and a.dtype.kind not in "iu":
        raise Error(f"{name}.{attr}: has dtype {a.dtype}; integer offsets and ids are needed (the sparse matrix is "
                    f"corrupt: rebuild it)")
    if not integral and a.dtype.kind not in "biuf":
        raise Error(f"{name}.data: has dtype {a.dtype} ({_kind(a)}); numbers are needed")
    return a


def check_sparse(name, X):
    """Checks the arrays of a SciPy CSR, CSC or COO matrix with numpy alone, before any SciPy routine reads them:
    SciPy's compiled routines trust indptr and indices, and a corrupt one crashes the interpreter.

    CSR/CSC: indptr has (rows or columns) + 1 integer entries, starts at 0, never decreases and ends at the entry
    count, which is the length of indices and of data; every index lies in [0, columns or rows). COO: row, col and
    data have one length and the ids lie within the shape.
    """
    shape = getattr(X, "shape", None)
    if (not isinstance(shape, tuple) or len(shape) != 2
            or not all(isinstance(s, numbers.Integral) and not isinstance(s, bool) and s >= 0 for s in shape)):
        raise Error(f"{name}: shape {shape!r}; a sparse matrix of two non-negative dimensions is needed")
    rows, cols = int(shape[0]), int(shape[1])
    fmt = getattr(X, "format", None)
    data = _structure_array(name, X, "data", integral=False)
    if fmt in ("csr", "csc"):
        major, minor = (rows, cols) if fmt == "csr" else (cols, rows)
        what, other = ("rows", "columns") if fmt == "csr" else ("columns", "rows")
        indptr = _structure_array(name, X, "indptr", integral=True)
        indices = _structure_array(name, X, "indices", integral=True)
        fix = f"the {fmt.upper()} matrix is corrupt: rebuild it with scipy.sparse.{fmt}_matrix"
        if indptr.size != major + 1:
            raise Error(f"{name}.indptr: {indptr.size} entries for {major} {what}; {major + 1} are needed ({fix})")
        if indptr[0] != 0:
            raise Error(f"{name}.indptr: starts at {indptr[0]}, not 0 ({fix})")
        if major:
            steps = np.diff(indptr.astype(np.int64) if indptr.dtype == np.uint64 else indptr)
            if steps.size and steps.min() < 0:
                at = int(np.argmax(steps < 0))
                raise Error(f"{name}.indptr: decreases at entry {at + 1} ({indptr[at]} then {indptr[at + 1]}); "
                            f"offsets must never decrease ({fix})")
        if indptr[-1] != indices.size or indices.size != data.size:
            raise Error(f"{name}: indptr ends at {indptr[-1]} but there are {indices.size} indices and {data.size} "
                        f"values; the three must agree ({fix})")
        if indices.size and (indices.min() < 0 or indices.max() >= minor):
            bad = indices.min() if indices.min() < 0 else indices.max()
            raise Error(f"{name}.indices: index {bad} is outside [0, {minor}) of the {minor} {other} ({fix})")
    elif fmt == "coo":
        row = _structure_array(name, X, "row", integral=True)
        col = _structure_array(name, X, "col", integral=True)
        if not row.size == col.size == data.size:
            raise Error(f"{name}: {row.size} row ids, {col.size} column ids and {data.size} values; the three must "
                        f"agree (the COO matrix is corrupt: rebuild it with scipy.sparse.coo_matrix)")
        for ids, n, what in ((row, rows, "row"), (col, cols, "col")):
            if ids.size and (ids.min() < 0 or ids.max() >= n):
                bad = ids.min() if ids.min() < 0 else ids.max()
                raise Error(f"{name}.{what}: id {bad} is outside [0, {n}) (the COO matrix is corrupt: rebuild it "
                            f"with scipy.sparse.coo_matrix)")
    else:
        raise Error(f"{name}: sparse format {fmt!r}: check_sparse reads CSR, CSC and COO matrices")


def sparse_input(name, X, max_columns=MAX_COLUMNS):
    """`X` itself when it is not a SciPy sparse matrix; else X as a checked CSR, CSC or COO matrix (other formats,
    such as LIL, DOK, DIA and BSR, become COO first: SciPy checks the ids of a COO matrix it builds), safe to give to
    SciPy and scikit-learn. A matrix wider than `max_columns` is refused here, naming its width, before any
    conversion or library check sizes anything by it."""
    if not is_sparse(X):
        return X
    shape = getattr(X, "shape", None)
    if (isinstance(shape, tuple) and len(shape) == 2 and isinstance(shape[1], numbers.Integral)
            and shape[1] > max_columns):
        raise Error(f"{name}: {int(shape[1])} columns; feature ids are 32-bit, so at most {max_columns} columns "
                    "(renumber the features densely)")
    if getattr(X, "format", None) not in ("csr", "csc", "coo"):
        try:
            X = X.tocoo()
        except Exception as e:  # corrupt LIL rows, a DIA offset array of the wrong length, ...
            raise Error(f"{name}: the {type(X).__name__} could not be read ({e}); rebuild it or pass a CSR matrix") \
                from None
    check_sparse(name, X)
    return X


def as_int(name, value, minimum=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise Error(f"{name}={value!r}: an integer is needed")
    value = int(value)
    if minimum is not None and value < minimum:
        raise Error(f"{name}={value}: must be >= {minimum}")
    if value > 2 ** 63 - 1:  # the engine's integers are 64-bit
        raise Error(f"{name}={value}: must be at most 2**63 - 1")
    return value


def as_bool(name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise Error(f"{name}={value!r}: True or False is needed")
    return bool(value)


def check_params(declared, given, what):
    """Checks keyword arguments against the engine's declaration (name, default, choices) of `what`.

    Types follow the defaults: an int default takes integers, a float default numbers, a bool default booleans,
    a list default a list of integers, a string default one of its choices (when declared) or any string.
    Returns a JSON-ready dict of the given values.
    """
    by_name = {p["name"]: p for p in declared}
    out = {}
    for key, value in given.items():
        if key not in by_name:
            close = [n for n in by_name if n.startswith(key[:3])]
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise Error(f"{what}: unknown parameter {key!r}{hint}; the parameters are {', '.join(by_name)}")
        default = by_name[key]["default"]
        if isinstance(default, bool):
            out[key] = as_bool(key, value)
        elif isinstance(default, int):
            out[key] = as_int(key, value)
        elif isinstance(default, float):
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise Error(f"{key}={value!r}: a number is needed")
            out[key] = float(value)
        elif isinstance(default, list):
            if isinstance(value, numbers.Integral) and not isinstance(value, bool):
                value = [value]
            if not isinstance(value, (list, tuple)) or not value:
                raise Error(f"{key}={value!r}: a non-empty list of integers is needed, e.g. [10, 10]")
            out[key] = [as_int(key, v) for v in value]
        else:
            if not isinstance(value, str):
                raise Error(f"{key}={value!r}: a string is needed")
            choices = by_name[key].get("choices")
            if choices and value not in choices:
                raise Error(f"{key}={value!r}: must be one of {', '.join(choices)}")
            out[key] = value
    return out
