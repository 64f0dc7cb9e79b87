#!/usr/bin/env python3
"""The project's hostile tests: bad inputs, hostile options and dangerous outputs against the real `tessel` binary
(and the Python package), each case classified by what happened.

Classes (docs/reliability.md, "Hostile tests"):
  loss       an input (or any file the case did not ask to replace) changed, vanished or gained entries
  crash      killed by a signal, a sanitizer report, `terminate called`, an MPI heap-corruption abort
  hang       still running at the case's time limit
  silent     exit 0 where the case must be refused (bad input accepted)
  unhelpful  refused, but the message lacks what it must name (the option, the file, the reason)
  clean      refused with a message naming what it must, nothing touched
  handled    a valid edge case that must succeed did
  broken     a valid edge case that must succeed failed

Usage: tools/hostile/probe.py --tessel BUILD/tools/tessel [--python-path BUILD/python] [--json OUT.json]
       [--only SUBSTRING] [--keep]
Exit status 0 when no case is loss, crash, hang or broken; 1 otherwise (silent and unhelpful are counted and
listed; --strict makes them failures too).
"""
import argparse
import ctypes
import hashlib
import json
import os
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data")
CRASH_MARKS = ("AddressSanitizer", "UndefinedBehaviorSanitizer", "runtime error:", "terminate called",
               "Segmentation fault", "corrupted", "double free", "free(): invalid", "malloc(): ",
               "munmap_chunk", "stack smashing", "core dumped", "signal 11", "signal 6", "Aborted")


def xxh3_hex(data):
    lib = ctypes.CDLL("libxxhash.so.0")
    lib.XXH3_64bits.restype = ctypes.c_uint64
    lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return "%016x" % lib.XXH3_64bits(data, len(data))


def snapshot(paths):
    """{path: digest} of every file (and every folder, as a marker) under the given paths; devices by st_rdev."""
    snap = {}
    for top in paths:
        if not os.path.lexists(top):
            snap[top] = "absent"
            continue
        todo = [top]
        while todo:
            p = todo.pop()
            st = os.lstat(p)
            if stat.S_ISDIR(st.st_mode):
                snap[p] = "dir"
                todo.extend(os.path.join(p, e) for e in os.listdir(p))
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    snap[p] = hashlib.sha256(f.read()).hexdigest()
            elif stat.S_ISLNK(st.st_mode):
                snap[p] = "link:" + os.readlink(p)
            else:
                snap[p] = "special:%o:%d" % (stat.S_IFMT(st.st_mode), st.st_rdev)
    return snap


class Case:
    def __init__(self, klass, name, cmd, expect="error", needles=(), protect=(), timeout=60, env=None, setup=None,
                 python=False, mpi=False, may_change=()):
        self.klass = klass  # the class the case was written for (loss, crash, hang, silent, unhelpful, ok)
        self.name = name
        self.cmd = cmd  # a list of words; "{T}" is the tessel binary, "{W}" the case's folder, "{D}" tests/data
        self.expect = expect  # "error" or "ok"
        self.needles = needles  # each a string or a tuple of alternatives; all must be in stderr (case-insensitive)
        self.protect = protect  # paths (with {W}) that must stay byte-identical; "{W}" alone protects the whole folder
        self.timeout = timeout
        self.env = env or {}
        self.setup = setup  # fn(work) run before the command
        self.python = python
        self.mpi = mpi
        self.may_change = may_change  # paths (with {W}) a valid case replaces on purpose


# ---------------------------------------------------------------------------------------------------------- fixtures

def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError("fixture failed: %s\n%s" % (" ".join(cmd), r.stderr[-2000:]))
    return r


def make_fixtures(tessel, fx):
    """Valid inputs every case starts from (copied into the case's folder)."""
    os.makedirs(fx, exist_ok=True)
    run([tessel, "convert", "--from", "nodetable", os.path.join(DATA, "cora", "cora"), "--name", "cora",
         "--output", os.path.join(fx, "ds")])
    run([tessel, "partition", os.path.join(fx, "ds"), "--parts", "2", "--output", os.path.join(fx, "parts")])
    run([tessel, "train", "gcn", "--dataset", os.path.join(fx, "ds"), "--epochs", "3", "--checkpoint",
         os.path.join(fx, "ckpt")])
    run([tessel, "train", "gcn", "--dataset", os.path.join(fx, "ds"), "--epochs", "3", "--normalize-features", "l1",
         "--checkpoint", os.path.join(fx, "ckpt_l1")])
    shutil.copy(os.path.join(DATA, "svm", "heart_scale"), os.path.join(fx, "h.svm"))
    run([tessel, "train", "svm", "--data", os.path.join(fx, "h.svm"), "--model", os.path.join(fx, "h.model")])
    shutil.copy(os.path.join(DATA, "svm", "letter_300"), os.path.join(fx, "letter.svm"))
    run([tessel, "train", "svm", "--data", os.path.join(fx, "letter.svm"), "--model",
         os.path.join(fx, "letter.model")])
    os.makedirs(os.path.join(fx, "junk"))
    for i in range(3):
        with open(os.path.join(fx, "junk", "thesis-%d.tex" % i), "w") as f:
            f.write("irreplaceable work %d\n" % i)
    with open(os.path.join(fx, "notes.txt"), "w") as f:
        f.write("a user's file\n")


def copy_fixtures(fx, work):
    for e in os.listdir(fx):
        s, d = os.path.join(fx, e), os.path.join(work, e)
        (shutil.copytree if os.path.isdir(s) else shutil.copy2)(s, d)


def edit_json(path, fn):
    with open(path) as f:
        j = json.load(f)
    fn(j)
    with open(path, "w") as f:
        json.dump(j, f, indent=2)


def edit_text(path, fn):
    with open(path) as f:
        t = f.read()
    with open(path, "w") as f:
        f.write(fn(t))


def ckpt_json(key, value):
    return lambda w: edit_json(os.path.join(w, "ckpt", "checkpoint.json"), lambda j: j.__setitem__(key, value))


def ckpt_tensor_values(fn):
    """Rewrites the checkpoint's tensors with fn(list of (rows, cols, floats)) and recomputes the checksum."""
    def setup(w):
        d = os.path.join(w, "ckpt")
        with open(os.path.join(d, "tensors.bin"), "rb") as f:
            b = f.read()
        tensors, pos = [], 0
        while pos < len(b):
            r, c = struct.unpack_from("<qq", b, pos)
            pos += 16
            vals = list(struct.unpack_from("<%df" % (r * c), b, pos))
            pos += 4 * r * c
            tensors.append((r, c, vals))
        tensors = fn(tensors)
        out = b"".join(struct.pack("<qq", r, c) + struct.pack("<%df" % len(v), *v) for r, c, v in tensors)
        with open(os.path.join(d, "tensors.bin"), "wb") as f:
            f.write(out)
        edit_json(os.path.join(d, "checkpoint.json"), lambda j: j.__setitem__("tensors_checksum", xxh3_hex(out)))
    return setup


def set_first(tensors, value):
    r, c, v = tensors[0]
    v = list(v)
    v[0] = value
    return [(r, c, v)] + tensors[1:]


def model_header(key_fn):
    def setup(w):
        edit_text(os.path.join(w, "h.model"), key_fn)
    return setup


def replace_line(prefix, new):
    def fn(text):
        out = []
        for line in text.split("\n"):
            out.append(new if line.startswith(prefix + " ") or line == prefix else line)
        return "\n".join(out)
    return fn


def parts_json(fn):
    return lambda w: edit_json(os.path.join(w, "parts", "partitions.json"), fn)


def mknod_null(name):
    def setup(w):
        os.mknod(os.path.join(w, name), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return setup


def symlink(target, name):
    return lambda w: os.symlink(os.path.join(w, target), os.path.join(w, name))


def hardlink(target, name):
    return lambda w: os.link(os.path.join(w, target), os.path.join(w, name))


def write(name, data, mode="w"):
    def setup(w):
        p = os.path.join(w, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, mode) as f:
            f.write(data)
    return setup


def chain(*fns):
    def setup(w):
        for fn in fns:
            fn(w)
    return setup


def halo_tamper(w):
    """Moves the first halo node's stored remote id past its owner's node count (checksums recomputed)."""
    part = os.path.join(w, "parts", "part-0")
    with open(os.path.join(part, "manifest.json")) as f:
        man = json.load(f)
    arrays = man.get("arrays", {})
    key = "halo_remote" if "halo_remote" in arrays else next((k for k in arrays if "halo" in k), None)
    if key is None:
        raise RuntimeError("no halo id array in %s" % list(arrays))
    e = arrays[key]
    p = os.path.join(part, e["file"])
    with open(p, "rb") as f:
        b = bytearray(f.read())
    fmt = {"int32": "<i", "int64": "<q"}[e["dtype"]]
    (v,) = struct.unpack_from(fmt, b, 0)
    struct.pack_into(fmt, b, 0, v + 1 if v + 1 < 1000 else v - 1)
    with open(p, "wb") as f:
        f.write(b)
    e["xxh3"] = xxh3_hex(bytes(b))
    with open(os.path.join(part, "manifest.json"), "w") as f:
        json.dump(man, f, indent=2)
    with open(os.path.join(part, "manifest.json"), "rb") as f:
        mb = f.read()
    edit_json(os.path.join(w, "parts", "partitions.json"), lambda j: fix_part_checksum(j, 0, xxh3_hex(mb)))


def fix_part_checksum(j, k, value):
    j["parts"][k]["manifest_xxh3"] = value


# ------------------------------------------------------------------------------------------------------------ cases

def cases(have_mpi):
    T, W, D = "{T}", "{W}", "{D}"
    gcn = [T, "train", "gcn", "--dataset", W + "/ds", "--epochs", "2"]
    gcn5 = [T, "train", "gcn", "--dataset", W + "/ds", "--epochs", "5"]
    mpi_parts = (["mpirun", "--oversubscribe", "-np", "2", T, "train", "gcn", "--partitions", W + "/parts", "--epochs",
                  "2", "--timeout", "20"] if have_mpi else [T, "info", W + "/parts"])
    svm_predict = [T, "predict", "svm", "--model", W + "/h.model", "--data", W + "/h.svm"]
    out = []
    L = lambda *a, **k: out.append(Case("loss", *a, **k))  # noqa: E731
    C = lambda *a, **k: out.append(Case("crash", *a, **k))  # noqa: E731
    H = lambda *a, **k: out.append(Case("hang", *a, **k))  # noqa: E731
    S = lambda *a, **k: out.append(Case("silent", *a, **k))  # noqa: E731
    U = lambda *a, **k: out.append(Case("unhelpful", *a, **k))  # noqa: E731
    K = lambda *a, **k: out.append(Case("ok", *a, expect="ok", **k))  # noqa: E731

    # ---- outputs that would destroy inputs or other files
    L("checkpoint-resume-on-folder-of-files", gcn + ["--checkpoint", W + "/junk", "--resume"], needles=("junk",))
    L("checkpoint-resume-force-on-folder-of-files", gcn + ["--checkpoint", W + "/junk", "--resume", "--force"],
      needles=("junk",))
    L("checkpoint-force-on-folder-of-files", gcn + ["--checkpoint", W + "/junk", "--force"], needles=("junk",))
    L("checkpoint-is-the-dataset", gcn + ["--checkpoint", W + "/ds", "--force"], needles=("--checkpoint",))
    L("checkpoint-is-another-dataset", [T, "train", "gcn", "--dataset", D + "/cora/cora", "--epochs", "2",
                                        "--checkpoint", W + "/ds", "--force"], needles=("ds",))
    L("checkpoint-is-a-partition-folder", gcn + ["--checkpoint", W + "/parts", "--force"], needles=("parts",))
    L("checkpoint-is-a-plain-file", gcn + ["--checkpoint", W + "/notes.txt", "--force"], needles=("notes.txt",))
    L("checkpoint-inside-the-dataset", gcn + ["--checkpoint", W + "/ds/ck", "--force"], needles=("--checkpoint",))
    L("checkpoint-is-the-partitions", mpi_parts + ["--checkpoint", W + "/parts", "--force"],
      needles=("--checkpoint",), timeout=90)
    L("checkpoint-symlink-to-dataset", gcn + ["--checkpoint", W + "/alias", "--force"], needles=("--checkpoint",),
      setup=symlink("ds", "alias"))
    L("checkpoint-is-the-run-metrics-folder", gcn + ["--checkpoint", W + "/ck", "--metrics", W + "/ck/m.jsonl"],
      needles=(("--metrics", "--checkpoint"),))
    L("predict-gcn-output-into-dataset", [T, "predict", "gcn", "--dataset", W + "/ds", "--checkpoint", W + "/ckpt",
                                          "--output", W + "/ds/manifest.json", "--force"], needles=("--output",))
    L("predict-gcn-output-is-checkpoint-file", [T, "predict", "gcn", "--dataset", W + "/ds", "--checkpoint",
                                                W + "/ckpt", "--output", W + "/ckpt/checkpoint.json", "--force"],
      needles=("--output",))
    L("metrics-into-dataset", gcn + ["--metrics", W + "/ds/manifest.json", "--force"], needles=("--metrics",))
    L("metrics-symlink-to-dataset-file", gcn + ["--metrics", W + "/m.jsonl", "--force"], needles=("--metrics",),
      setup=symlink("ds/manifest.json", "m.jsonl"))
    L("metrics-hardlink-to-dataset-file", gcn + ["--metrics", W + "/m.jsonl", "--force"], needles=("--metrics",),
      setup=hardlink("ds/manifest.json", "m.jsonl"))
    L("metrics-into-partitions", mpi_parts + ["--metrics", W + "/parts/partitions.json", "--force"],
      needles=("--metrics",), timeout=90)
    L("svm-sidecar-is-the-data", [T, "train", "svm", "--data", W + "/h.json", "--model", W + "/h", "--force"],
      needles=("h.json",), setup=lambda w: shutil.copy(os.path.join(w, "h.svm"), os.path.join(w, "h.json")))
    L("svm-model-is-the-data", [T, "train", "svm", "--data", W + "/h.svm", "--model", W + "/h.svm", "--force"],
      needles=("--model",))
    L("svm-model-hardlink-to-data", [T, "train", "svm", "--data", W + "/h.svm", "--model", W + "/hl", "--force"],
      needles=("--model",), setup=hardlink("h.svm", "hl"))
    L("svm-model-is-a-folder", [T, "train", "svm", "--data", W + "/h.svm", "--model", W + "/junk", "--force"],
      needles=("junk",))
    L("svm-model-is-a-dataset", [T, "train", "svm", "--data", W + "/h.svm", "--model", W + "/ds", "--force"],
      needles=("ds",))
    L("predict-svm-output-is-the-model", svm_predict + ["--output", W + "/h.model", "--force"], needles=("--output",))
    L("predict-svm-output-is-model-sidecar", svm_predict + ["--output", W + "/h.model.json", "--force"],
      needles=("--output",))
    L("predict-svm-output-symlink-to-data", svm_predict + ["--output", W + "/p", "--force"], needles=("--output",),
      setup=symlink("h.svm", "p"))
    L("predict-svm-output-device-node", svm_predict + ["--output", W + "/null", "--force"], needles=("null",),
      setup=mknod_null("null"))
    L("metrics-device-node", gcn + ["--metrics", W + "/null", "--force"], needles=("null",), setup=mknod_null("null"))
    L("svm-model-device-node", [T, "train", "svm", "--data", W + "/h.svm", "--model", W + "/null", "--force"],
      needles=("null",), setup=mknod_null("null"))
    L("partition-output-is-its-dataset", [T, "partition", W + "/ds", "--parts", "2", "--output", W + "/ds",
                                          "--force"], needles=("ds",))
    L("partition-output-inside-its-dataset", [T, "partition", W + "/ds", "--parts", "2", "--output",
                                              W + "/ds/p", "--force"], needles=("--output",))
    L("partition-output-is-a-checkpoint", [T, "partition", W + "/ds", "--parts", "2", "--output", W + "/ckpt",
                                           "--force"], needles=("ckpt",))
    L("convert-output-contains-its-input", [T, "convert", "--from", "libsvm", W + "/in/h.svm", "--output", W + "/in",
                                            "--force"], needles=(("--output", "not a tessel dataset"),),
      setup=lambda w: (os.makedirs(os.path.join(w, "in")), shutil.copy(os.path.join(w, "h.svm"),
                                                                       os.path.join(w, "in", "h.svm"))))
    L("convert-output-is-a-checkpoint", [T, "convert", "--from", "libsvm", W + "/h.svm", "--output", W + "/ckpt",
                                         "--force"], needles=("ckpt",))
    L("generate-output-is-a-partition-folder", [T, "generate", "csbm", "--nodes", "100", "--output", W + "/parts",
                                                "--force"], needles=("parts",))
    L("generate-output-is-folder-of-files", [T, "generate", "csbm", "--nodes", "100", "--output", W + "/junk",
                                             "--force"], needles=("junk",))
    L("python-checkpoint-is-the-dataset", ["python", "import tessel,sys; tessel.train_gcn(sys.argv[1]+'/ds', "
                                           "epochs=2, checkpoint=sys.argv[1]+'/ds', force=True)"],
      needles=("ds",), python=True)
    L("python-checkpoint-resume-on-files", ["python", "import tessel,sys; tessel.train_gcn(sys.argv[1]+'/ds', "
                                            "epochs=2, checkpoint=sys.argv[1]+'/junk', resume=True)"],
      needles=("junk",), python=True)
    L("python-svm-save-over-dataset", ["python", "import tessel,sys,numpy as np; c=tessel.SVC().fit(np.eye(4),"
                                       "[0,1,0,1]); c.save(sys.argv[1]+'/ds', force=True)"], needles=("ds",),
      python=True)

    # ---- crashes
    C("svm-model-negative-nr-sv", svm_predict, needles=("nr_sv",),
      setup=model_header(lambda t: replace_line("nr_sv", "nr_sv %d %d" % (
          -5, sum(int(x) for x in [l for l in t.split("\n") if l.startswith("nr_sv")][0].split()[1:]) + 5))(t)))
    C("svm-model-nr-sv-short", svm_predict, needles=("nr_sv",), setup=model_header(replace_line("nr_sv", "nr_sv 3")))
    C("svm-model-huge-total-sv", svm_predict, needles=(("total_sv", "support vectors"),),
      setup=model_header(replace_line("total_sv", "total_sv 9223372036854775807")))
    C("svm-model-nr-class-huge", svm_predict, needles=("nr_class",),
      setup=model_header(replace_line("nr_class", "nr_class 2000000000")))
    C("svm-model-rho-short", svm_predict, needles=("rho",), setup=model_header(replace_line("rho", "rho")))
    C("svm-model-sv-index-zero", svm_predict, needles=("h.model",),
      setup=model_header(lambda t: t.replace(" 1:", " 0:", 1)))
    C("python-csr-bad-indptr", ["python", "import tessel,numpy as np,scipy.sparse as sp; X=sp.csr_matrix(np.eye(4));"
                                " X.indptr[2]=100; tessel.SVC().fit(X,[0,1,0,1])"], needles=("indptr",), python=True)
    C("python-csr-bad-indices", ["python", "import tessel,numpy as np,scipy.sparse as sp; X=sp.csr_matrix(np.eye(4));"
                                 " X.indices[1]=10**6; tessel.SVC().fit(X,[0,1,0,1])"], needles=("indices",),
      python=True)
    C("python-csr-negative-indices", ["python", "import tessel,numpy as np,scipy.sparse as sp; "
                                      "X=sp.csr_matrix(np.eye(4)); X.indices[1]=-3; tessel.SVC().fit(X,[0,1,0,1])"],
      needles=("indices",), python=True)
    C("python-csr-bad-indptr-predict", ["python", "import tessel,numpy as np,scipy.sparse as sp; "
                                        "c=tessel.SVC().fit(np.eye(4),[0,1,0,1]); X=sp.csr_matrix(np.eye(4)); "
                                        "X.indptr[1]=7; c.predict(X)"], needles=("indptr",), python=True)
    if have_mpi:
        for opt, a, b in [("--hidden", "16", "32"), ("--epochs", "2", "3"), ("--model", "gcn", "sage"),
                          ("--grad-compress", "none", "topk:0.1"), ("--layers", "2 --fanouts 5,5", "3 --fanouts 5,5,5")]:
            C("mpi-ranks-differ-" + opt.strip("-"),
              ["mpirun", "--oversubscribe", "-np", "1", T, "train", "gcn", "--partitions", W + "/parts", "--epochs",
               "2", opt] + a.split() + ["--timeout", "20", ":", "-np", "1", T, "train", "gcn", "--partitions",
                                        W + "/parts", "--epochs", "2", opt] + b.split() + ["--timeout", "20"],
              needles=((opt, "--fanouts"),), mpi=True, timeout=90)
        C("mpi-svm-solver-differs",
          ["mpirun", "--oversubscribe", "-np", "1", T, "train", "svm", "--data", W + "/letter.svm", "--model",
           W + "/m", "--solver", "smo", "--timeout", "20", ":", "-np", "1", T, "train", "svm", "--data",
           W + "/letter.svm", "--model", W + "/m", "--solver", "batch", "--timeout", "20"], needles=("--solver",),
          mpi=True, timeout=90)

    # ---- hangs
    for v in ("2147483647", "1099511627776", "-5"):
        H("checkpoint-epochs-done-" + v, gcn + ["--checkpoint", W + "/ckpt", "--resume"], needles=("epochs_done",),
          setup=ckpt_json("epochs_done", int(v)), timeout=60, may_change=(W + "/ckpt",))
    H("checkpoint-adam-steps-negative", gcn + ["--checkpoint", W + "/ckpt", "--resume"], needles=("adam_steps",),
      setup=ckpt_json("adam_steps", -7), timeout=60, may_change=(W + "/ckpt",))

    # ---- silently accepted
    S("checkpoint-nan-weight-resume", gcn + ["--checkpoint", W + "/ckpt", "--resume"], needles=("ckpt",),
      setup=ckpt_tensor_values(lambda t: set_first(t, float("nan"))), may_change=(W + "/ckpt",))
    S("checkpoint-inf-weight-predict", [T, "predict", "gcn", "--dataset", W + "/ds", "--checkpoint", W + "/ckpt"],
      needles=("ckpt",), setup=ckpt_tensor_values(lambda t: set_first(t, float("inf"))))
    S("checkpoint-missing-feature-scaling", [T, "predict", "gcn", "--dataset", W + "/ds", "--checkpoint",
                                             W + "/ckpt_l1"], needles=("ckpt_l1",),
      setup=lambda w: edit_json(os.path.join(w, "ckpt_l1", "checkpoint.json"),
                                lambda j: j["config"].pop("feature_scaling", None) if isinstance(j.get("config"), dict)
                                else None))
    S("checkpoint-wrong-moment-count", gcn5 + ["--checkpoint", W + "/ckpt", "--resume"],
      needles=("ckpt",), setup=chain(ckpt_tensor_values(lambda t: t + [t[0]]),
                                     lambda w: edit_json(os.path.join(w, "ckpt", "checkpoint.json"),
                                                         lambda j: j.__setitem__("num_moments",
                                                                                 j["num_moments"] + 1))), may_change=(W + "/ckpt",))
    S("checkpoint-best-val-acc-nan", gcn5 + ["--checkpoint", W + "/ckpt", "--resume"],
      needles=("best_val_acc",), setup=ckpt_json("best_val_acc", "NaN"), may_change=(W + "/ckpt",))
    S("svm-model-gamma-negative", svm_predict, needles=("gamma",),
      setup=model_header(replace_line("gamma", "gamma -1")))
    S("svm-model-gamma-nan", svm_predict, needles=("gamma",), setup=model_header(replace_line("gamma", "gamma nan")))
    S("svm-model-repeated-labels", [T, "predict", "svm", "--model", W + "/letter.model", "--data", W + "/letter.svm"],
      needles=("label",), setup=lambda w: edit_text(os.path.join(w, "letter.model"), lambda t: replace_line(
          "label", "label " + " ".join(["1"] * (len([l for l in t.split("\n") if l.startswith("label ")][0].split())
                                                - 1)))(t)))
    S("svm-model-degree-negative", svm_predict, needles=("degree",),
      setup=model_header(lambda t: t.replace("kernel_type rbf", "kernel_type polynomial\ndegree -3")))
    S("svm-sidecar-num-features-negative", svm_predict, needles=("num_features",),
      setup=lambda w: edit_json(os.path.join(w, "h.model.json"), lambda j: j.__setitem__("num_features", -5)))
    S("partitions-num-nodes-disagree", mpi_parts,
      needles=("num_nodes",), setup=parts_json(lambda j: j["dataset"].__setitem__("num_nodes",
                                                                                  j["dataset"]["num_nodes"] + 7)))
    S("partitions-num-classes-disagree", [T, "info", W + "/parts"], needles=("class",),
      setup=parts_json(lambda j: j["dataset"].__setitem__("num_classes", j["dataset"]["num_classes"] + 3)))
    S("partition-halo-id-moved", mpi_parts,
      needles=("halo",), setup=halo_tamper)
    S("seed-negative", gcn + ["--seed", "-1"], needles=("--seed",))
    S("seed-1e23", gcn + ["--seed", "1e23"], needles=("--seed",))
    S("seed-float", gcn + ["--seed", "2.5"], needles=("--seed",))
    S("hidden-float", gcn + ["--hidden", "16.5"], needles=("--hidden",))
    S("epochs-huge", gcn + ["--epochs", "99999999999"], needles=("--epochs",))
    S("partition-seed-negative", [T, "partition", W + "/ds", "--parts", "2", "--output", W + "/p2", "--seed", "-1"],
      needles=("--seed",))
    S("rebalance-nan", [T, "train", "svm", "--data", W + "/h.svm", "--model", W + "/m", "--rebalance", "nan"],
      needles=("--rebalance",))
    S("lr-nan", gcn + ["--lr", "nan"], needles=("--lr",))
    S("lr-inf", gcn + ["--lr", "inf"], needles=("--lr",))
    S("svm-cost-nan", [T, "train", "svm", "--data", W + "/h.svm", "--model", W + "/m", "-c", "nan"],
      needles=(("-c", "cost"),))
    S("svm-gamma-inf", [T, "train", "svm", "--data", W + "/h.svm", "--model", W + "/m", "-g", "inf"],
      needles=("gamma",))
    S("svm-max-iter-negative", [T, "train", "svm", "--data", W + "/h.svm", "--model", W + "/m", "--max-iter", "-5"],
      needles=("--max-iter",))
    S("partition-imbalance-nan", [T, "partition", W + "/ds", "--parts", "2", "--output", W + "/p2", "--imbalance",
                                  "nan"], needles=("--imbalance",))
    S("generate-homophily-nan", [T, "generate", "csbm", "--nodes", "100", "--homophily", "nan", "--output",
                                 W + "/g"], needles=("--homophily",))
    S("timeout-empty", gcn + ["--timeout", ""], needles=("--timeout",))
    S("empty-split", [T, "generate", "csbm", "--nodes", "100", "--split", "", "--output", W + "/g"],
      needles=("--split",))
    S("empty-metrics", gcn + ["--metrics", ""], needles=("--metrics",))
    S("empty-checkpoint", gcn + ["--checkpoint", ""], needles=("--checkpoint",))
    S("empty-random-split", gcn + ["--random-split", ""], needles=("--random-split",))
    S("empty-output-predict-svm", svm_predict + ["--output", ""], needles=("--output",))
    S("convert-num-features-huge", [T, "convert", "--from", "libsvm", W + "/h.svm", "--num-features", "99999999999",
                                    "--output", W + "/c"], needles=("--num-features",))
    if have_mpi:
        for opt, a, b in [("--lr", "0.01", "0.02"), ("--seed", "1", "2"), ("--dropout", "0.5", "0.1")]:
            S("mpi-ranks-differ-" + opt.strip("-"),
              ["mpirun", "--oversubscribe", "-np", "1", T, "train", "gcn", "--partitions", W + "/parts", "--epochs",
               "2", opt, a, "--timeout", "20", ":", "-np", "1", T, "train", "gcn", "--partitions", W + "/parts",
               "--epochs", "2", opt, b, "--timeout", "20"], needles=(opt,), mpi=True, timeout=90)
        S("mpi-ranks-differ-dataset",
          ["mpirun", "--oversubscribe", "-np", "1", T, "train", "gcn", "--partitions", W + "/parts", "--epochs", "2",
           "--dataset", W + "/ds", "--timeout", "20", ":", "-np", "1", T, "train", "gcn", "--partitions",
           W + "/parts", "--epochs", "2", "--dataset", W + "/other", "--timeout", "20"], needles=("--dataset",),
          mpi=True, timeout=90,
          setup=lambda w: subprocess.run([w + "/../tessel-bin", "generate", "csbm", "--nodes", "300", "--output",
                                          os.path.join(w, "other")], check=False, capture_output=True))
        S("mpi-svm-cost-differs",
          ["mpirun", "--oversubscribe", "-np", "1", T, "train", "svm", "--data", W + "/letter.svm", "--model",
           W + "/m", "-c", "1", "--timeout", "20", ":", "-np", "1", T, "train", "svm", "--data", W + "/letter.svm",
           "--model", W + "/m", "-c", "2", "--timeout", "20"], needles=(("-c", "cost"),), mpi=True, timeout=90)
        S("mpi-svm-kernel-differs",
          ["mpirun", "--oversubscribe", "-np", "1", T, "train", "svm", "--data", W + "/letter.svm", "--model",
           W + "/m", "-t", "2", "--timeout", "20", ":", "-np", "1", T, "train", "svm", "--data", W + "/letter.svm",
           "--model", W + "/m", "-t", "0", "--timeout", "20"], needles=(("kernel", "-t"),), mpi=True, timeout=90)

    # ---- unhelpful messages
    U("folder-named-manifest-json", [T, "info", W + "/fake"], needles=("manifest.json", "folder"),
      setup=lambda w: os.makedirs(os.path.join(w, "fake", "manifest.json")))
    U("threads-huge", gcn + ["--threads", "2147483647"], needles=("--threads",))
    U("fanouts-huge", gcn + ["--batch-size", "64", "--fanouts", "2147483647,1"], needles=("--fanouts",))
    U("hidden-1e8", gcn + ["--hidden", "1e8"], needles=("--hidden",))
    U("hidden-huge", [T, "--max-memory", "1G"] + gcn[1:] + ["--hidden", "100000000"], needles=("--hidden",))
    U("generate-nodes-1e12", [T, "generate", "csbm", "--nodes", "1e12", "--output", W + "/g"], needles=("--nodes",))
    U("generate-nodes-huge", [T, "--max-memory", "1G", "generate", "csbm", "--nodes", "1000000000000", "--output",
                              W + "/g"], needles=("--nodes",))
    U("checkpoint-shape-mismatch", gcn + ["--checkpoint", W + "/ckpt", "--resume"], needles=("ckpt",),
      setup=ckpt_tensor_values(lambda t: [(t[0][0], t[0][1] - 1, t[0][2][:t[0][0] * (t[0][1] - 1)])] + t[1:]), may_change=(W + "/ckpt",))
    U("checkpoint-config-not-object", [T, "predict", "gcn", "--dataset", W + "/ds", "--checkpoint", W + "/ckpt"],
      needles=("ckpt",), setup=ckpt_json("config", 5))
    U("nul-byte-in-input", [T, "convert", "--from", "edgelist", W + "/nul.edges", "--output", W + "/c"],
      needles=("hidden-tail",), setup=write("nul.edges", "0 1\n1 2\n2 x\x00hidden-tail\n"))
    U("dev-zero-as-input", [T, "train", "svm", "--data", "/dev/zero", "--model", W + "/m"],
      needles=("/dev/zero", ("device", "regular file", "not a file")))
    U("dev-zero-as-model", [T, "predict", "svm", "--model", "/dev/zero", "--data", W + "/h.svm"],
      needles=("/dev/zero", ("device", "regular file", "not a file")))
    U("python-load-binary-file", ["python", "import tessel,sys; tessel.load(sys.argv[1]+'/bin')"],
      needles=("bin",), python=True, setup=write("bin", os.urandom(512), mode="wb"))
    U("python-load-folder-of-files", ["python", "import tessel,sys; tessel.load(sys.argv[1]+'/junk')"],
      needles=("junk",), python=True)
    U("checkpoint-epochs-done-string", gcn + ["--checkpoint", W + "/ckpt", "--resume"], needles=("epochs_done",),
      setup=ckpt_json("epochs_done", "three"), may_change=(W + "/ckpt",))

    # ---- valid edge cases that must keep working
    K("checkpoint-new-folder", gcn + ["--checkpoint", W + "/newck"])
    K("checkpoint-replace-own-kind", gcn + ["--checkpoint", W + "/ckpt", "--force"], may_change=(W + "/ckpt",))
    K("checkpoint-resume", gcn5 + ["--checkpoint", W + "/ckpt", "--resume"], may_change=(W + "/ckpt",))
    K("checkpoint-resume-missing-folder", gcn + ["--checkpoint", W + "/fresh", "--resume"])
    K("checkpoint-into-empty-folder-force", gcn + ["--checkpoint", W + "/empty", "--force"], may_change=(W + "/empty",),
      setup=lambda w: os.makedirs(os.path.join(w, "empty")))
    K("metrics-replace-own-file", gcn + ["--metrics", W + "/m.jsonl", "--force"], may_change=(W + "/m.jsonl",),
      setup=write("m.jsonl", "{}\n"))
    K("predict-svm-output-new", svm_predict + ["--output", W + "/pred.txt"])
    K("predict-svm-replace-output", svm_predict + ["--output", W + "/notes.txt", "--force"], may_change=(W + "/notes.txt",))
    K("svm-model-replace-own", [T, "train", "svm", "--data", W + "/h.svm", "--model", W + "/h.model", "--force"],
      may_change=(W + "/h.model", W + "/h.model.json"))
    K("convert-replace-dataset", [T, "convert", "--from", "libsvm", W + "/h.svm", "--output", W + "/ds", "--force"],
      may_change=(W + "/ds",))
    K("partition-replace-partition", [T, "partition", W + "/ds", "--parts", "2", "--output", W + "/parts",
                                      "--force"], may_change=(W + "/parts",))
    K("seed-large-valid", gcn + ["--seed", "18446744073709551615"])
    K("predict-gcn-stdout", [T, "predict", "gcn", "--dataset", W + "/ds", "--checkpoint", W + "/ckpt"])
    K("predict-gcn-l1-checkpoint", [T, "predict", "gcn", "--dataset", W + "/ds", "--checkpoint", W + "/ckpt_l1"])
    K("info-partitions", [T, "info", W + "/parts"])
    K("python-svc-csr", ["python", "import tessel,numpy as np,scipy.sparse as sp; X=sp.csr_matrix(np.eye(4)); "
                         "print(tessel.SVC().fit(X,[0,1,0,1]).predict(X))"], python=True)
    if have_mpi:
        K("mpi-same-options", ["mpirun", "--oversubscribe", "-np", "2", T, "train", "gcn", "--partitions",
                               W + "/parts", "--epochs", "2", "--timeout", "30"], mpi=True, timeout=120)
    return out



# The option sweep: every integer, float and text option of every subcommand (as `--help` listed them at 9134ecb)
# given a value it must refuse, on top of a command that is valid without it. Integers: not an integer, out of
# range (and negative for unsigned ones); floats: not finite; text: empty.
SWEEP = {
    "convert": (["convert", "--from", "libsvm", "{W}/h.svm", "--output", "{W}/c"],
                "-o,--output:T --name:T --split:T --seed:U --delimiter:T --edges:T --features:T --labels:T "
                "--positive:T --negative:T --train:T --val:T --test:T --ogb-split:T --num-features:I --from:T"),
    "generate csbm": (["generate", "csbm", "--nodes", "100", "--output", "{W}/g"],
                      "-o,--output:T --seed:U --split:T --threads:I -n,--nodes:I --classes:I --avg-degree:F "
                      "--homophily:F --degree-exponent:F --class-concentration:F --features:I --signal:F --noise:F"),
    "generate rmat": (["generate", "rmat", "--scale", "6", "--output", "{W}/g"],
                      "--seed:U --split:T --threads:I --scale:I --edge-factor:F -n,--nodes:I -m,--edges:I -a:F -b:F "
                      "-c:F -d:F --noise:F --features:I --classes:I"),
    "partition": (["partition", "{W}/ds", "--parts", "2", "--output", "{W}/p2"],
                  "-k,--parts:I -o,--output:T --method:T --balance:T --objective:T --metis-algorithm:T --seed:U "
                  "--imbalance:F --threads:I"),
    "train gcn": (["train", "gcn", "--dataset", "{W}/ds", "--epochs", "2"],
                  "--dataset:T --model:T --layers:I --hidden:I --epochs:I --lr:F --dropout:F --weight-decay:F "
                  "--batch-size:I --fanouts:T --patience:I --features-on:T --normalize-features:T --seed:U "
                  "--threads:I --device:T --math:T --device-id:I --checkpoint:T --checkpoint-every:I --metrics:T "
                  "--random-split:T --partitions:T --timeout:F --skew:F --skew-variance:F --skew-max:F "
                  "--feature-cache:I --grad-compress:T --feature-compress:T --network:T"),
    "train svm": (["train", "svm", "--data", "{W}/h.svm", "--model", "{W}/m"],
                  "--data:T --model:T -c,--cost:F -g,--gamma:F -t,--kernel:T -d,--degree:I -r,--coef0:F -e,--eps:F "
                  "-m,--cache:F -h,--shrinking:T --max-iter:I -w,--weight:T --threads:I --device:T --device-id:I "
                  "--solver:T --working-set:I --network:T --pairs:T --rebalance:F --timeout:F"),
    "predict gcn": (["predict", "gcn", "--dataset", "{W}/ds", "--checkpoint", "{W}/ckpt"],
                    "--dataset:T --checkpoint:T --nodes:T --output:T --threads:I --device:T --math:T --device-id:I"),
    "predict svm": (["predict", "svm", "--model", "{W}/h.model", "--data", "{W}/h.svm"],
                    "--model:T --data:T --output:T --threads:I --device:T --device-id:I"),
}
BAD_VALUES = {"I": ["1e23", "2.5", "99999999999999999999"], "U": ["-1", "1e23", "2.5", "99999999999999999999"],
              "F": ["nan", "inf"], "T": [""]}


def sweep_cases():
    out = []
    for sub, (base, spec) in SWEEP.items():
        for item in spec.split():
            names, kind = item.rsplit(":", 1)
            flag = names.split(",")[-1]
            for value in BAD_VALUES[kind]:
                words = ["{T}"] + list(base)
                if flag in words:
                    words[words.index(flag) + 1] = value
                else:
                    words += [flag, value]
                needle = tuple(n for n in names.split(",")) + ((flag.lstrip("-"),) if len(flag) > 2 else ())
                out.append(Case("sweep", "sweep %s %s %r" % (sub, flag, value), words, needles=(needle,)))
    return out

# ----------------------------------------------------------------------------------------------------------- runner

def classify(case, rc, err, timed_out, changed):
    crashed = rc is not None and (rc < 0 or rc >= 128) or any(m in err for m in CRASH_MARKS)
    if changed:
        return "loss"
    if timed_out:
        return "hang"
    if crashed:
        return "crash"
    if case.expect == "ok":
        return "handled" if rc == 0 else "broken"
    if rc == 0:
        return "silent"
    low = err.lower()
    for n in case.needles:
        alts = n if isinstance(n, tuple) else (n,)
        if not any(a.lower() in low for a in alts):
            return "unhelpful"
    if "bad_alloc" in err or len(err.strip()) == 0:
        return "unhelpful"
    return "clean"


def run_case(case, args, fx, base):
    work = tempfile.mkdtemp(prefix="case-", dir=base)
    copy_fixtures(fx, work)
    if case.setup:
        case.setup(work)
    protect = [p.replace("{W}", work) for p in case.protect] if case.protect else [work]
    before = snapshot(protect)
    subst = lambda s: s.replace("{T}", args.tessel).replace("{W}", work).replace("{D}", DATA)  # noqa: E731
    words = [subst(w) for w in case.cmd]
    env = dict(os.environ, **case.env)
    env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    if case.python:
        env["PYTHONPATH"] = args.python_path + os.pathsep + env.get("PYTHONPATH", "")
        words = [args.python, "-c", words[1], work]
    start = time.time()
    p = subprocess.Popen(words, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=work,
                         start_new_session=True, errors="replace")
    timed_out = False
    try:
        out, err = p.communicate(timeout=case.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
    rc = None if timed_out else p.returncode
    if case.python and rc not in (None, 0) and rc < 128 and rc > 0:
        # A Python exception is a refusal; the message is the traceback's last line.
        err = err.strip().split("\n")[-1] if err.strip() else ""
    after = snapshot(protect)
    allowed = [p.replace("{W}", work) for p in case.may_change]
    top = set(os.path.join(work, e) for e in os.listdir(work)) if os.path.isdir(work) else set()
    def counts(p):
        if any(p == a or p.startswith(a + os.sep) for a in allowed):
            return False
        if p in before:
            return after.get(p) != before[p]  # an existing path changed or vanished
        # A new path: an output beside the inputs is fine; one inside an existing folder changed that folder.
        return os.path.dirname(p) != work and os.path.dirname(p) in before
    changed = sorted(p for p in set(before) | set(after) if counts(p))
    del top
    verdict = classify(case, rc, err, timed_out, changed)
    rec = {"case": case.name, "class": case.klass, "verdict": verdict, "rc": rc, "seconds": round(time.time() - start,
                                                                                                   2),
           "stderr": err.strip()[-600:], "changed": [c.replace(work, "W") for c in changed][:8]}
    if not args.keep:
        subprocess.run(["chmod", "-R", "u+w", work], check=False)
        shutil.rmtree(work, ignore_errors=True)
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", required=True)
    ap.add_argument("--python-path", default="")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--json", help="write every case's record here")
    ap.add_argument("--only", help="run the cases whose name contains this")
    ap.add_argument("--keep", action="store_true", help="keep the case folders")
    ap.add_argument("--strict", action="store_true", help="silent and unhelpful cases fail too")
    ap.add_argument("--no-mpi", action="store_true")
    args = ap.parse_args()
    args.tessel = os.path.abspath(args.tessel)
    have_mpi = not args.no_mpi and shutil.which("mpirun") is not None
    base = tempfile.mkdtemp(prefix="tessel-hostile-")
    os.symlink(args.tessel, os.path.join(base, "tessel-bin"))
    fx = os.path.join(base, "fixtures")
    make_fixtures(args.tessel, fx)
    all_cases = [c for c in cases(have_mpi) + sweep_cases() if not args.only or args.only in c.name]
    if not args.python_path:
        all_cases = [c for c in all_cases if not c.python]
    records = []
    for c in all_cases:
        rec = run_case(c, args, fx, base)
        records.append(rec)
        print("%-10s %-9s %-45s rc=%s %5.1fs  %s" % (rec["verdict"], c.klass, c.name, rec["rc"], rec["seconds"],
                                                       rec["stderr"].split("\n")[-1][:110]), flush=True)
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    verdicts = ["loss", "crash", "hang", "silent", "unhelpful", "broken", "clean", "handled"]
    table = {k: {v: 0 for v in verdicts} for k in ["loss", "crash", "hang", "silent", "unhelpful", "ok", "sweep"]}
    for r in records:
        table[r["class"]][r["verdict"]] += 1
    print("\nwritten for  " + " ".join("%9s" % v for v in verdicts))
    for k, row in table.items():
        print("%-12s " % k + " ".join("%9d" % row[v] for v in verdicts))
    totals = {v: sum(1 for r in records if r["verdict"] == v) for v in verdicts}
    print("%-12s " % "all" + " ".join("%9d" % totals[v] for v in verdicts) + "   (%d cases)" % len(records))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"totals": totals, "by_class": table, "cases": records}, f, indent=1)
    bad = totals["loss"] + totals["crash"] + totals["hang"] + totals["broken"]
    if args.strict:
        bad += totals["silent"] + totals["unhelpful"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
