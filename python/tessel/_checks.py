"""Argument checks shared by the package: numpy arrays of the right kind, shape and contents, converted to the
exact dtype and layout the extension module takes, with messages that name the argument and the fix."""

import numbers
import re

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
        a = np.ascontiguousarray(a, dtype=dtype)
    else:
        a = np.ascontiguousarray(a)
    if finite and a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        bad = np.argwhere(~np.isfinite(a))[0]
        raise Error(f"{name}: contains NaN or infinity (first at index {tuple(int(i) for i in bad)}); "
                    f"replace or drop those values")
    return a


def as_int(name, value, minimum=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise Error(f"{name}={value!r}: an integer is needed")
    value = int(value)
    if minimum is not None and value < minimum:
        raise Error(f"{name}={value}: must be >= {minimum}")
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


def engine_call(flags, fn, *args):
    """fn(*args), with the engine's command-line flags in its messages (``--weight-decay``) named as this API's
    keyword arguments (``weight_decay``); ``flags`` maps one to the other."""
    try:
        return fn(*args)
    except Error as e:
        msg = str(e)
        for flag in sorted(flags, key=len, reverse=True):
            msg = re.sub(re.escape(flag) + r"(?![\w-])", flags[flag], msg)
        raise Error(msg) from None
