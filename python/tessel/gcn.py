"""GCN training, prediction and partitioning from Python, with the parameters and defaults of
``tessel train gcn`` (one declaration in C++: ``TrainConfig::Params``)."""

import json
import math
import numbers
import os
import sys

from . import _tessel
from ._checks import as_bool, as_int, check_params
from ._errors import Error, python_spelling
from .data import NodeData, _path, from_pyg, load

#: The options of ``tessel train gcn`` offered to Python: name, help, default (and choices), from the engine.
GCN_PARAMS = json.loads(_tessel.gcn_params())
#: The options of ``tessel predict gcn`` offered to Python.
PREDICT_GCN_PARAMS = json.loads(_tessel.predict_gcn_params())
#: The options of ``tessel partition`` offered to Python.
PARTITION_PARAMS = json.loads(_tessel.partition_params())


def _node_data(data):
    if isinstance(data, NodeData):
        return data
    if isinstance(data, (str, os.PathLike)):
        d = load(data)
        if not isinstance(d, NodeData):
            raise Error(f"{os.fspath(data)}: holds sparse rows (an SVM dataset); a graph dataset is needed")
        return d
    if hasattr(data, "edge_index"):
        return from_pyg(data)
    raise Error(f"data: a tessel.NodeData, a dataset path or a PyG Data object is needed, got {type(data).__name__}")


def _random_split(value):
    """``random_split`` as three floats (train, val, test), checked as ``--random-split`` checks its text: three
    finite fractions >= 0 that sum to 1 within 1e-6; None when not given."""
    if value is None:
        return None
    fix = "give three fractions (train, val, test) that sum to 1, such as random_split=(0.6, 0.2, 0.2)"
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 3:
        raise Error(f"random_split={value!r}: {fix}")
    out = []
    for x in value:
        if isinstance(x, bool) or not isinstance(x, numbers.Real):
            raise Error(f"random_split={value!r}: {x!r} is not a number; {fix}")
        x = float(x)
        if not math.isfinite(x) or x < 0:
            raise Error(f"random_split={value!r}: the fraction {x} is {'negative' if x < 0 else 'not finite'}; {fix}")
        out.append(x)
    total = out[0] + out[1] + out[2]
    if abs(total - 1.0) > 1e-6:
        raise Error(f"random_split={value!r}: the fractions sum to {total}, not 1; {fix}")
    return out


def _epoch_line(s, epochs):
    return (f"epoch {s['epoch']:>4}/{epochs}  loss {s['loss']:.4f}  train {_acc(s['train_acc'])}  "
            f"val {_acc(s['val_acc'])}  {1e3 * s['epoch_seconds']:.1f} ms  eta {s['eta_seconds']:.1f} s")


def _acc(a):
    """An epoch's accuracy as the CLI shows it: "-" when the epoch was not evaluated (eval_every)."""
    return "-     " if a is None else f"{a:.4f}"


def _progress(verbose, epochs):
    """(on_epoch, close): a tqdm bar when tqdm is installed, else the CLI's line per epoch on stderr."""
    if not verbose:
        return None, lambda: None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        tqdm = None
    if tqdm is not None:
        bar = tqdm(total=epochs, desc="tessel gcn", unit="epoch")

        def on_epoch(s):
            bar.update(1)
            bar.set_postfix(loss=f"{s['loss']:.4f}", val=_acc(s['val_acc']))
        return on_epoch, bar.close
    return (lambda s: print(_epoch_line(s, epochs), file=sys.stderr, flush=True)), (lambda: None)


def train_gcn(data, *, predict=False, callback=None, verbose=False, **options):
    """Trains a GCN (or GraphSAGE-mean) node classifier, as ``tessel train gcn --dataset`` does.

    data: a :class:`NodeData`, a dataset path (native folder or node-table prefix) or a PyG ``Data``.
    options: the options of ``tessel train gcn`` as keywords (``tessel.GCN_PARAMS`` lists them with their
    defaults; one declaration in C++ serves both), e.g. ``epochs=200, lr=0.01, hidden=16, normalize_features="l1",
    seed=0, threads=0, device="cpu"``. ``checkpoint``: folder for checkpoints (``predict_gcn`` reads it); ``resume``
    continues one, ``force`` replaces one. ``random_split``: ``(train, val, test)`` fractions, e.g.
    ``(0.6, 0.2, 0.2)``: train on a random split of the labelled nodes made with ``seed`` instead of the dataset's own
    split (``tessel train gcn --random-split 0.6,0.2,0.2``: the same split for the same seed); ``data`` itself is not
    changed.
    callback: called after every epoch with that epoch's statistics (a dict); an exception it raises stops training.
    predict: also return the class probabilities [num_nodes x classes] of the best-validation weights.
    verbose: a tqdm bar when tqdm is installed, else the CLI's line per epoch on stderr.

    Returns a dict: the test/val/train metrics of the best-validation epoch (``test.accuracy``, ...), timings, the
    configuration used, ``split`` (the train/val/test sizes trained on), ``history`` (one dict per epoch) and, with
    ``predict``, ``probabilities``. The GIL is
    released while training runs; Ctrl-C stops it cleanly (KeyboardInterrupt).
    """
    if options.get("checkpoint") is not None:
        options["checkpoint"] = _path("checkpoint", options["checkpoint"])
    else:
        options.pop("checkpoint", None)
    if options.get("random_split") is not None:
        options["random_split"] = ",".join(repr(x) for x in _random_split(options["random_split"]))
    else:
        options.pop("random_split", None)
    given = check_params(GCN_PARAMS, options, "train_gcn")
    nd = _node_data(data)
    epochs = given.get("epochs", next(p["default"] for p in GCN_PARAMS if p["name"] == "epochs"))
    show, close = _progress(as_bool("verbose", verbose), epochs)
    if callback is not None and not callable(callback):
        raise Error(f"callback={callback!r}: a callable taking the epoch's statistics (a dict) is needed")
    on_epoch = None
    if show is not None or callback is not None:
        def on_epoch(line):
            s = json.loads(line)
            if show is not None:
                show(s)
            if callback is not None:
                callback(s)
    try:
        result_json, probs = _tessel.train_gcn(nd, json.dumps(given), as_bool("predict", predict), on_epoch)
    finally:
        close()
    result = json.loads(result_json)
    if predict:
        result["probabilities"] = probs
    return result


def predict_gcn(data, checkpoint, **options):
    """Class probabilities [num_nodes x classes] of every node of ``data`` from a checkpoint's best-validation
    weights (``tessel predict gcn``); ``probs.argmax(1)`` are the predicted classes. options: those of
    ``tessel predict gcn`` offered to Python (``threads``, ``device``, ``device_id``, ``math``)."""
    nd = _node_data(data)
    options["checkpoint"] = _path("checkpoint", checkpoint)
    given = check_params(PREDICT_GCN_PARAMS, options, "predict_gcn")
    return _tessel.predict_gcn(nd, json.dumps(given))


def partition(data, parts, output, **options):
    """Partitions a graph dataset into ``parts`` parts with 1-hop halos and writes the partition folder
    ``output`` (``tessel partition``; train on it with ``mpirun -np K tessel train gcn --partitions OUTPUT``).
    options: those of ``tessel partition`` (``tessel.PARTITION_PARAMS``: method, balance, objective,
    metis_algorithm, seed, imbalance, force, threads). Returns the description written to ``partitions.json`` as a
    dict."""
    nd = _node_data(data)
    options["parts"] = parts
    options["output"] = _path("output", output)
    given = check_params(PARTITION_PARAMS, options, "partition")
    return json.loads(_tessel.partition(nd, json.dumps(given)))


def _params_doc(params):
    lines = []
    for p in params:
        choices = f" (one of {', '.join(p['choices'])})" if p.get("choices") else ""
        lines.append(f"    {p['name']} = {p['default']!r}: {python_spelling(p['help'])}{choices}")
    return "\n".join(lines)


train_gcn.__doc__ += "\n    Options from ``tessel train gcn``:\n" + _params_doc(GCN_PARAMS) + "\n"
predict_gcn.__doc__ += "\n    Options from ``tessel predict gcn``:\n" + _params_doc(PREDICT_GCN_PARAMS) + "\n"
partition.__doc__ += "\n    Options from ``tessel partition``:\n" + _params_doc(PARTITION_PARAMS) + "\n"
