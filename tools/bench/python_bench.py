#!/usr/bin/env python3
# Python package benchmarks (docs/python.md), written to the "## Python package" section of docs/benchmarks.md:
#  1. tessel.SVC.fit against sklearn.svm.SVC.fit (scikit-learn's LIBSVM fork) on a9a, w8a, usps and letter (../shared/data),
#     the same parameters and cache size, one after the other in this process; also checks that both give the same
#     model (support vectors, coefficients, predictions on the test file).
#  2. The binding's cost against the CLI on Cora (tests/data/cora, converted once): tessel.load + tessel.train_gcn in
#     a running interpreter against the `tessel train gcn` process, and the per-epoch times of both.
# Usage: PYTHONPATH=build/python /usr/bin/python3 tools/bench/python_bench.py [--build build] [--data ../shared/data]
#        [--repeats 5] [--only svm|gcn] [--no-write]
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# name, train file, test file, parameters (those of tools/bench/svm_bench.py's speed table, cache 100 MB).
SVM_SETS = [
    ("a9a", "svm/a9a/a9a", "svm/a9a/a9a.t", dict(C=1.0, gamma=0.05, cache_size=100)),
    ("w8a", "svm/w8a/w8a", None, dict(C=16.0, gamma=0.03125, tol=1e-5, cache_size=100)),
    ("usps", "svm/usps/usps.esl.gz", "svm/usps/usps.esl.t.gz", dict(C=10.0, gamma=0.00390625, cache_size=100)),
    ("letter", "svm/letter/letter.scale", "svm/letter/letter.scale.t", dict(C=16.0, gamma=4.0, cache_size=100)),
]
GCN_ARGS = dict(epochs=200, normalize_features="l1", seed=0)


def log(msg):
    print(f"[python_bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def cpu_self():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(fn):
    c0, t0 = cpu_self(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, cpu_self() - c0


def to_dense(a):
    return a.toarray() if hasattr(a, "toarray") else np.asarray(a)


def bench_svm(data):
    import sklearn
    from sklearn.datasets import load_svmlight_file
    from sklearn.svm import SVC as SkSVC

    import tessel
    rows = []
    for name, train, test, params in SVM_SETS:
        path = os.path.join(data, train)
        if not os.path.exists(path):
            log(f"skip {name}: no {path}")
            continue
        X, y = load_svmlight_file(path)
        Xt = yt = None
        if test and os.path.exists(os.path.join(data, test)):
            Xt, yt = load_svmlight_file(os.path.join(data, test), n_features=X.shape[1])
        log(f"{name}: {X.shape[0]} x {X.shape[1]}, sklearn {sklearn.__version__} fit")
        ref, ref_wall, ref_cpu = timed(lambda: SkSVC(**params).fit(X, y))
        log(f"{name}: sklearn {ref_wall:.2f} s; tessel fit")
        ours, wall, cpu = timed(lambda: tessel.SVC(**params).fit(X, y))
        log(f"{name}: tessel {wall:.2f} s")
        _, wall1, cpu1 = timed(lambda: tessel.SVC(threads=1, **params).fit(X, y))
        same_sv = np.array_equal(ours.support_, ref.support_)
        coef = float(np.max(np.abs(to_dense(ours.dual_coef_) - to_dense(ref.dual_coef_)))) if same_sv else None
        Xe = Xt if Xt is not None else X
        agree = float(np.mean(ours.predict(Xe) == ref.predict(Xe)))
        acc = float(np.mean(ours.predict(Xt) == yt)) if Xt is not None else None
        rows.append(dict(name=name, n=X.shape[0], d=X.shape[1], params=params, ref_wall=ref_wall, ref_cpu=ref_cpu,
                         wall=wall, cpu=cpu, wall1=wall1, cpu1=cpu1, nsv=int(ours.support_.size),
                         ref_nsv=int(ref.support_.size), same_sv=same_sv, coef=coef, agree=agree, acc=acc,
                         on="test" if Xt is not None else "train"))
    return rows


def bench_gcn(build, repeats):
    import tessel
    binary = os.path.join(build, "tools", "tessel")
    work = tempfile.mkdtemp(prefix="tessel_pybench_")
    cora = os.path.join(work, "cora")
    subprocess.run([binary, "--log-level", "warn", "convert", "--from", "nodetable",
                    os.path.join(REPO, "tests", "data", "cora", "cora"), "-o", cora], check=True)
    flags = ["--epochs", str(GCN_ARGS["epochs"]), "--normalize-features", GCN_ARGS["normalize_features"],
             "--seed", str(GCN_ARGS["seed"])]
    cli, py, py_proc = [], [], []
    cli_epoch, py_epoch = [], []
    script = ("import time; t0 = time.perf_counter(); import tessel; "
              f"tessel.train_gcn(tessel.load({cora!r}), **{GCN_ARGS!r})")
    for k in range(repeats):
        t0 = time.perf_counter()
        out = subprocess.run([binary, "--log-level", "warn", "train", "gcn", "--dataset", cora, "--json", *flags],
                             check=True, capture_output=True, text=True).stdout
        cli.append(time.perf_counter() - t0)
        cli_res = json.loads(out)
        cli_epoch.append(cli_res["mean_epoch_seconds"])
        t0 = time.perf_counter()
        r = tessel.train_gcn(tessel.load(cora), **GCN_ARGS)
        py.append(time.perf_counter() - t0)
        py_epoch.append(statistics.mean(e["epoch_seconds"] for e in r["history"]))
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", script], check=True, env=dict(os.environ))
        py_proc.append(time.perf_counter() - t0)
        assert r["test"]["accuracy"] == cli_res["test"]["accuracy"], "binding and CLI disagree"
    med = statistics.median
    cli_epoch = [e for e in cli_epoch if e is not None]
    return dict(cli=med(cli), py=med(py), py_proc=med(py_proc), cli_all=cli, py_all=py, py_proc_all=py_proc,
                cli_epoch=med(cli_epoch) if cli_epoch else None, py_epoch=med(py_epoch),
                acc=r["test"]["accuracy"], repeats=repeats)


def section(svm_rows, gcn, command):
    import sklearn
    commit = subprocess.run(["git", "-C", REPO, "log", "-1", "--format=%h"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True).stdout.strip()
    cpu = "?"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    out = ["## Python package", "",
           f"- Machine: {os.cpu_count()} CPUs, {cpu}; load average {os.getloadavg()[0]:.2f} at the end.",
           f"- Commit: {commit}{' plus uncommitted changes' if dirty else ''}, {time.strftime('%Y-%m-%d')}; "
           f"scikit-learn {sklearn.__version__} (Debian), Python {sys.version.split()[0]}.",
           f"- Command: `{command}`", ""]
    if svm_rows:
        out += ["### `tessel.SVC.fit` against `sklearn.svm.SVC.fit`", "",
                "Both fitted in this process on the same arrays (sparse CSR from `load_svmlight_file`), the same "
                "parameters and cache size; wall seconds (CPU seconds of the process in parentheses); *ratio* = "
                "scikit-learn / tessel. *same SVs*: `support_` identical; *coef*: the largest difference of "
                "`dual_coef_`; *agree*: share of equal predictions (on the test file where there is one).", "",
                "| data | parameters | sklearn s (CPU s) | tessel s (CPU s) | ratio | tessel 1 thread s | ratio 1 thread "
                "| SVs | same SVs | coef | agree | test accuracy |",
                "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
        for r in svm_rows:
            p = ", ".join(f"{k}={v}" for k, v in r["params"].items())
            coef = "" if r["coef"] is None else f"{r['coef']:.1e}"
            acc = "" if r["acc"] is None else f"{r['acc']:.4f}"
            out.append(f"| {r['name']} ({r['n']} x {r['d']}) | `{p}` | {r['ref_wall']:.2f} ({r['ref_cpu']:.2f}) | "
                       f"{r['wall']:.2f} ({r['cpu']:.2f}) | {r['ref_wall'] / r['wall']:.1f}x | {r['wall1']:.2f} | "
                       f"{r['ref_wall'] / r['wall1']:.1f}x | {r['nsv']} | {'yes' if r['same_sv'] else 'no'} | "
                       f"{coef} | {r['agree']:.4f} ({r['on']}) | {acc} |")
        out.append("")
    if gcn:
        overhead = gcn["py"] / gcn["cli"] - 1
        out += ["### The binding's cost on Cora", "",
                f"`tessel train gcn` (200 epochs, `--normalize-features l1`, seed 0) on the converted Cora folder, "
                f"median of {gcn['repeats']} runs each, interleaved; every Python run's test accuracy equals the CLI's "
                f"({gcn['acc']:.4f}).", "",
                "| how | median s | runs (s) |", "|---|---:|---|",
                f"| CLI process (`tessel train gcn --dataset ... --json`) | {gcn['cli']:.3f} | "
                f"{', '.join(f'{v:.3f}' for v in gcn['cli_all'])} |",
                f"| `tessel.train_gcn(tessel.load(...))` in a running interpreter | {gcn['py']:.3f} | "
                f"{', '.join(f'{v:.3f}' for v in gcn['py_all'])} |",
                f"| a new `python3` process: start, `import tessel`, load, train | {gcn['py_proc']:.3f} | "
                f"{', '.join(f'{v:.3f}' for v in gcn['py_proc_all'])} |", "",
                f"The binding costs nothing measurable: the same work in a running interpreter takes "
                f"{100 * overhead:+.1f}% against the CLI process (which also starts, loads its libraries and logs a "
                f"line per epoch), and the engine's own mean epoch time is "
                + (f"{1e3 * gcn['cli_epoch']:.2f} ms" if gcn["cli_epoch"] else "n/a")
                + f" in the CLI against {1e3 * gcn['py_epoch']:.2f} ms through the binding. A whole new Python process "
                f"costs {gcn['py_proc'] - gcn['cli']:.3f} s more than the CLI's: the interpreter's start and its "
                f"imports (NumPy), not the binding.", ""]
    return "\n".join(out) + "\n"


def write_section(text):
    doc = os.path.join(REPO, "docs", "benchmarks.md")
    body = open(doc).read()
    m = re.search(r"^## Python package\n.*?(?=^## |\Z)", body, flags=re.S | re.M)
    body = body[:m.start()] + text + body[m.end():] if m else body.rstrip("\n") + "\n\n" + text
    tmp = doc + ".tmp"
    open(tmp, "w").write(body)
    os.replace(tmp, doc)
    log(f"wrote the ## Python package section of {doc}")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--data", default=os.path.join(os.path.dirname(REPO), "shared", "data"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--only", choices=["svm", "gcn"])
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    command = "PYTHONPATH=build/python /usr/bin/python3 tools/bench/python_bench.py " + " ".join(sys.argv[1:])
    svm_rows = bench_svm(a.data) if a.only in (None, "svm") else []
    gcn = bench_gcn(a.build, a.repeats) if a.only in (None, "gcn") else None
    text = section(svm_rows, gcn, command.strip())
    print(text)
    if not a.no_write:
        write_section(text)


if __name__ == "__main__":
    main()
