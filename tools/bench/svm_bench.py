#!/usr/bin/env python3
# SVM benchmarks against Debian's LIBSVM 3.24 (svm-train / svm-predict) run in the same process tree: conformance
# (objective, rho, accuracy), speed (wall and CPU time ratios) and the sample-elimination study; rewrites the
# "## SVM ..." sections of docs/benchmarks.md. Run through tools/bench/svm_bench.sh.
import argparse
import gzip
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

# name: (train file, test file or None, svm-train args); usps/mnist files are prepared in the work folder.
CONFORMANCE = [
    ("heart_scale", "heart_scale/heart_scale", None, ""),
    ("a9a", "a9a/a9a", "a9a/a9a.t", "-c 1 -g 0.05"),
    ("w8a", "w8a/w8a", None, "-c 16 -g 0.03125 -e 0.00001"),
    ("usps", "@usps.train", "@usps.test", "-c 10 -g 0.00390625"),
    ("letter", "letter/letter.scale", "letter/letter.scale.t", "-c 16 -g 4"),
]
SPEED = ["a9a", "w8a", "usps", "mnist10k", "letter"]
# The distributed study: (name, train file, args); fashion06 = Fashion-MNIST T-shirt/top (+1) against Shirt (-1),
# 12,000 x 784, converted by `tessel convert --from idx` from Debian's dataset-fashion-mnist.
DIST_SETS = [("a9a", "a9a/a9a", "-c 1 -g 0.05"), ("w8a", "w8a/w8a", "-c 16 -g 0.03125 -e 0.00001"),
             ("fashion06", "@fashion06", "-c 1")]
FASHION = "/usr/share/datasets/fashion-mnist"
DIST_RANKS = [1, 2, 4]
NETWORK = "10Gbit,5us"
MNIST10K = ("mnist10k", "@mnist10k.train", None, "-c 10 -g 0.02")  # all of mnist.t: training accuracy
ELIMINATION_SETS = ["a9a", "w8a"]
# LIBSVM's other formulations (svm-train -s 1..4): (name, train, test, args). Parameters exact in float, which
# svm-train parses them to, so the models can be compared byte for byte. friedman1 = scikit-learn's
# make_friedman1(n_samples=20000, n_features=10, noise=1.0, random_state=0) from Debian's python3-sklearn: the first
# 10,000 rows train, the rest test (docs/datasets.md). friedman20k = make_friedman1(20000, random_state=0), the
# set the speed goal names (at least 20,000 training samples; noise 0, the default), all of it training, tested on
# make_friedman1(5000, random_state=1).
TYPES = [
    ("nu_svc a9a", "a9a/a9a", "a9a/a9a.t", "-s 1 -n 0.25 -g 0.0625"),
    ("one_class a9a", "a9a/a9a", "a9a/a9a.t", "-s 2 -n 0.125 -g 0.0625"),
    ("epsilon_svr friedman1", "@friedman1.train", "@friedman1.test", "-s 3 -c 4 -p 0.25 -g 0.125"),
    ("nu_svr friedman1", "@friedman1.train", "@friedman1.test", "-s 4 -c 4 -n 0.5 -g 0.125"),
    ("epsilon_svr friedman20k", "@friedman20k.train", "@friedman20k.test", "-s 3 -c 4 -p 0.25 -g 0.125"),
    ("nu_svr friedman20k", "@friedman20k.train", "@friedman20k.test", "-s 4 -c 4 -n 0.5 -g 0.125"),
    ("nu_svc heart_scale", "heart_scale/heart_scale", None, "-s 1"),
    ("one_class heart_scale", "heart_scale/heart_scale", None, "-s 2"),
    ("epsilon_svr heart_scale", "heart_scale/heart_scale", None, "-s 3"),
    ("nu_svr heart_scale", "heart_scale/heart_scale", None, "-s 4"),
]
# Every formulation on every CPU solver, one process and under mpirun, against svm-train's objective at eps 1e-5:
# (name, train, args).
SOLVER_TYPES = [
    ("c_svc heart_scale", "heart_scale/heart_scale", "-s 0 -c 4 -g 0.25"),
    ("nu_svc heart_scale", "heart_scale/heart_scale", "-s 1 -n 0.25 -e 0.0000001"),
    ("one_class heart_scale", "heart_scale/heart_scale", "-s 2 -n 0.125"),
    ("epsilon_svr heart_scale", "heart_scale/heart_scale", "-s 3 -c 4 -p 0.25 -g 0.25"),
    ("nu_svr heart_scale", "heart_scale/heart_scale", "-s 4 -c 2 -n 0.75"),
    ("epsilon_svr friedman1", "@friedman1.train", "-s 3 -c 4 -p 0.25 -g 0.125"),
    ("nu_svr friedman1", "@friedman1.train", "-s 4 -c 4 -n 0.5 -g 0.125"),
]
FRIEDMAN = """
import sys
from sklearn.datasets import make_friedman1
def write(path, X, y, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write("%.17g " % y[r] + " ".join("%d:%.17g" % (j + 1, X[r, j]) for j in range(10)) + "\\n")
X, y = make_friedman1(n_samples=20000, n_features=10, noise=1.0, random_state=0)
write(sys.argv[1] + "/friedman1.train", X, y, range(0, 10000))
write(sys.argv[1] + "/friedman1.test", X, y, range(10000, 20000))
X, y = make_friedman1(20000, random_state=0)
write(sys.argv[1] + "/friedman20k.train", X, y, range(20000))
X, y = make_friedman1(5000, random_state=1)
write(sys.argv[1] + "/friedman20k.test", X, y, range(5000))
"""


def run_type(tessel, train, test, args, work):
    """svm-train and tessel on one formulation: objectives, rho, models (byte equality), predictions, times."""
    lib_model, our_model = f"{work}/type_libsvm.model", f"{work}/type_tessel.model"
    out, lib_wall, lib_cpu = timed(["svm-train", "-m", "100"] + args.split() + [train, lib_model])
    lib = dict(obj=[float(x) for x in re.findall(r"obj = ([-0-9.e+]+)", out)],
               rho=[float(x) for x in re.findall(r"rho = ([-0-9.e+]+)", out)])
    out, wall, cpu = timed([tessel, "--log-level", "warn", "train", "svm", "-m", "100", "--json", "--force", "--data",
                            train, "--model", our_model] + args.split())
    pairs = json.loads(out)["pairs"]
    ours = dict(obj=[p["obj"] for p in pairs], rho=[p["rho"] for p in pairs])
    same_model = open(lib_model, "rb").read() == open(our_model, "rb").read()
    target = test or train
    timed(["svm-predict", target, lib_model, f"{work}/type_libsvm.out"])
    pout, _, _ = timed([tessel, "--log-level", "warn", "predict", "svm", "--model", our_model, "--data", target,
                        "--output", f"{work}/type_tessel.out", "--force"])
    a = [float(x) for x in open(f"{work}/type_libsvm.out")]
    b = [float(x) for x in open(f"{work}/type_tessel.out")]
    equal = sum(x == y for x, y in zip(a, b))
    quality = pout.strip().replace("\n", "; ")
    rel = lambda u, v: max(abs(x - y) / max(abs(y), 1e-12) for x, y in zip(u, v))
    return dict(obj_rel=rel(ours["obj"], lib["obj"]), rho_rel=rel(ours["rho"], lib["rho"]), same_model=same_model,
                equal=equal, total=len(a), quality=quality, lib_wall=lib_wall, lib_cpu=lib_cpu, wall=wall, cpu=cpu,
                obj=ours["obj"][0] if len(ours["obj"]) == 1 else None)
POLICIES = ["off", "eager", "periodic", "lazy"]
WHEN_IT_PAYS = """**When elimination pays.** Elimination shortens every kernel row, scan and gradient update to the active set,
but costs a G_bar update (a full kernel row beyond the cached prefix) each time a variable reaches or leaves C,
one or more gradient reconstructions, and, when it is wrong, extra iterations. w8a (49,749 samples, 2,849 SVs,
only 821 at C) is the case it is made for: the active set falls to 6.6k samples, so rows are 7.5 times shorter;
with 100 MB (about 500 full rows) `periodic` needs 5.8 times fewer kernel evaluations than `off`, and with
1000 MB, where the cache holds nearly every row either way (same evaluations), it still takes 2.6 times less CPU
through the shorter scans and gradient updates. a9a (32,561 samples, 10.7k of 11.6k SVs at C) is the opposite:
its ~13.6k bound changes cost about as many full rows as the shorter rows save (kernel evaluations within 5% of
`off`), so elimination only gains the cheaper scans (3.2 vs 4.1 CPU s). `eager` pays for a check and cache-row
swaps every iteration and eliminates samples that come back (18k vs 15k iterations on a9a, 60k vs 43k on w8a);
the swaps grow with the number of cached rows, so it is worst with a large cache (a9a, 1000 MB: 4 times the CPU
of `periodic`). `lazy` waits for the gap to reach 100 eps: with a tight eps (w8a, 1e-5) most of the run is spent
on the full set (1.35G evaluations at 100 MB). `periodic` (LIBSVM's choice) is the robust default; elimination pays
most when few support vectors end at C and the cache is small relative to the rows the solver needs."""


def log(msg):
    print(f"[svm_bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def timed(cmd):
    """Runs cmd; returns (stdout, wall seconds, CPU seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p.stdout, wall, cpu


def prepare(shared, work):
    """Uncompressed usps and [0,1]-scaled mnist.t (pixel / 255) in `work`."""
    def gunzip(src, dst):
        with gzip.open(src, "rt") as f, open(dst, "w") as g:
            g.write(f.read())
    gunzip(f"{shared}/usps/usps.esl.gz", f"{work}/usps.train")
    gunzip(f"{shared}/usps/usps.esl.t.gz", f"{work}/usps.test")
    with gzip.open(f"{shared}/mnist/mnist.t.gz", "rt") as f:
        lines = [l.split() for l in f if l.strip()]
    def scaled(rows):
        out = []
        for r in rows:
            feats = [f"{t.split(':')[0]}:{float(t.split(':')[1]) / 255:.6g}" for t in r[1:]]
            out.append(" ".join([r[0]] + feats))
        return "\n".join(out) + "\n"
    with open(f"{work}/mnist10k.train", "w") as g:
        g.write(scaled(lines[:10000]))


def path(shared, work, name):
    return f"{work}/{name[1:]}" if name.startswith("@") else f"{shared}/{name}"


def run_libsvm(train, test, args, work, cache):
    model = f"{work}/libsvm.model"
    out, wall, cpu = timed(["svm-train", "-m", str(cache)] + args.split() + [train, model])
    objs = [float(x) for x in re.findall(r"obj = ([-0-9.e+]+)", out)]
    rhos = [float(x) for x in re.findall(r"rho = ([-0-9.e+]+)", out)]
    iters = sum(int(x) for x in re.findall(r"#iter = (\d+)", out))
    nsv = int(re.search(r"Total nSV = (\d+)", out).group(1))
    pout, _, _ = timed(["svm-predict", test or train, model, f"{work}/libsvm.out"])
    acc = float(re.search(r"Accuracy = ([0-9.]+)%", pout).group(1))
    return dict(obj=objs, rho=rhos, iterations=iters, nsv=nsv, accuracy=acc, wall=wall, cpu=cpu)


def run_tessel(tessel, train, test, args, work, cache, threads=0, shrinking="periodic", predict=True):
    model = f"{work}/tessel.model"
    cmd = [tessel, "--log-level", "warn", "train", "svm", "-m", str(cache), "--threads", str(threads),
           "--shrinking", shrinking, "--json", "--force", "--data", train, "--model", model] + args.split()
    out, wall, cpu = timed(cmd)
    j = json.loads(out)
    pairs = j["pairs"]
    r = dict(obj=[p["obj"] for p in pairs], rho=[p["rho"] for p in pairs], iterations=j["iterations"],
             kernel_evaluations=j["kernel_evaluations"], nsv=None, wall=wall, cpu=cpu,
             min_active=min(p["min_active"] for p in pairs),
             reconstructions=sum(p["reconstructions"] for p in pairs),
             shrink_checks=sum(p["shrink_checks"] for p in pairs))
    with open(model) as f:
        r["nsv"] = int(re.search(r"total_sv (\d+)", f.read(4096)).group(1))
    if not predict:
        return r
    pout, _, _ = timed([tessel, "--log-level", "warn", "predict", "svm", "--json", "--model", model, "--data",
                        test or train])
    r["accuracy"] = json.loads(pout)["accuracy"]
    # svm-predict must read our model and agree with our accuracy.
    sp, _, _ = timed(["svm-predict", test or train, model, f"{work}/tessel_by_libsvm.out"])
    r["accuracy_by_svm_predict"] = float(re.search(r"Accuracy = ([0-9.]+)%", sp).group(1))
    return r


def run_dist(tessel, train, args, work, ranks, shrinking, solver="smo", repeats=3, rebalance=None):
    """K = 1: one process, one thread; K > 1: mpirun -np K, one thread per rank, with the network prediction.
    The fastest of `repeats` runs (by training time): other jobs share this machine's cores."""
    model = f"{work}/dist.model"
    cmd = [tessel, "--log-level", "warn", "train", "svm", "--threads", "1", "--shrinking", shrinking, "--json",
           "--solver", solver, "--force", "--data", train, "--model", model] + args.split()
    if ranks > 1:
        cmd = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(ranks)] + cmd + ["--network", NETWORK]
        if rebalance is not None:
            cmd += ["--rebalance", str(rebalance)]
    runs = []
    for _ in range(repeats):
        out, wall, cpu = timed(cmd)
        runs.append((json.loads(out)["seconds"], out, wall, cpu))
    _, out, wall, cpu = min(runs, key=lambda r: r[0])
    j = json.loads(out)
    d = j.get("distributed")
    return dict(wall=wall, cpu=cpu, train=j["seconds"], iterations=j["iterations"], obj=[p["obj"] for p in j["pairs"]],
                evals_min=d["kernel_evaluations_per_rank"]["min"] if d else j["kernel_evaluations"],
                evals_max=d["kernel_evaluations_per_rank"]["max"] if d else j["kernel_evaluations"],
                bytes_per_iter=d["bytes_per_iteration"] if d else 0.0, comm=d["comm_seconds"] if d else 0.0,
                rounds=d.get("rounds", 0) if d else 0, rebalances=d.get("rebalances", 0) if d else 0,
                min_local_active=d.get("min_local_active", 0) if d else 0, bytes_per_round=d.get("bytes_per_round", 0.0) if d else 0.0,
                cpu_rank=d["cpu_seconds_per_rank"]["max"] if d else cpu,
                predicted=d.get("predicted_seconds", 0.0) if d else j["seconds"],
                min_active=min(p["min_active"] for p in j["pairs"]))


def solver_objectives(tessel, train, args, work):
    """svm-train's objectives at eps 1e-5, then tessel's for SMO and batch at K = 1, 2, 4 (one thread per rank):
    {(solver, K): max relative difference over the pairs}."""
    eps = [] if "-e " in args else ["-e", "0.00001"]  # a case's own -e: nu-SVC's objective is its dual's over r^2
    o, _, _ = timed(["svm-train", "-m", "100"] + eps + args.split() + [train, f"{work}/objectives.libsvm"])
    lib = {"obj": [float(x) for x in re.findall(r"obj = ([-0-9.e+]+)", o)]}
    out = {}
    for solver in ("smo", "batch"):
        for ranks in DIST_RANKS:
            cmd = [tessel, "--log-level", "warn", "train", "svm", "--threads", "1" if ranks > 1 else "0", "--json",
                   "--solver", solver, "--force", "--data", train, "--model", f"{work}/objectives.model"] + eps + args.split()
            if ranks > 1:
                cmd = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(ranks)] + cmd
            o, _, _ = timed(cmd)
            out[(solver, ranks)] = rel_obj({"obj": [p["obj"] for p in json.loads(o)["pairs"]]}, lib)
    # The device loop (--device cuda's solver) on the simulated device: its host twins, the CUDA kernels' contracts.
    cmd = [tessel, "--log-level", "warn", "train", "svm", "--json", "--device", "sim", "--force", "--data", train,
           "--model", f"{work}/objectives.model"] + eps + args.split()
    o, _, _ = timed(cmd)
    out[("device", 1)] = rel_obj({"obj": [p["obj"] for p in json.loads(o)["pairs"]]}, lib)
    return out


def rel_obj(a, b):
    return max(abs(x - y) / max(abs(y), 1e-12) for x, y in zip(a["obj"], b["obj"]))


def abs_rho(a, b):
    return max(abs(x - y) for x, y in zip(a["rho"], b["rho"]))


def replace_section(doc, title, body):
    text = open(doc).read() if os.path.exists(doc) else "# Benchmarks\n\n"
    header = f"## {title}\n"
    start = text.find(header)
    section = header + body.rstrip() + "\n\n"
    if start < 0:
        text = text.rstrip() + "\n\n" + section
    else:
        nxt = text.find("\n## ", start + len(header))
        text = text[:start] + section + (text[nxt + 1:] if nxt >= 0 else "")
    with open(doc, "w") as f:
        f.write(text.rstrip() + "\n")


def machine(cmdline):
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    return (f"- Machine: {os.cpu_count()} CPUs, {cpu}; load average {open('/proc/loadavg').read().split()[:3]} at "
            f"the end of the section (other jobs share the cores: wall times are noisy, CPU times less so).\n"
            f"- Commit: {commit} plus uncommitted changes, {time.strftime('%Y-%m-%d')}; LIBSVM: Debian libsvm-tools 3.24.\n"
            f"- Command: `{cmdline}`\n")


def write_table_section(a, title, intro, rows, after=""):
    """Rewrites the section `## TITLE` of a.doc: INTRO (ending in a blank line), the machine lines, the table ROWS
    and AFTER."""
    replace_section(a.doc, title, intro + machine(a.cmdline) + "\n" + "\n".join(rows) + "\n" + after)


def solvers_section(a, work):
    """The section "SVM: every formulation on every solver" (part `solvers`): SOLVER_TYPES on SMO and batch at
    K = 1, 2, 4 against svm-train's objectives; friedman1 must be in WORK."""
    rows = ["| formulation, data | svm-train args (and `-e 0.00001`) | SMO K = 1 | SMO K = 2 | SMO K = 4 | batch K = 1 | batch K = 2 | batch K = 4 | device loop K = 1 (`--device sim`) |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, train, args in SOLVER_TYPES:
        log(f"solvers: {name}: {args}")
        d = solver_objectives(a.tessel, path(a.shared, work, train), args, work)
        cells = " | ".join(f"{d[(s_, k)]:.1e}" for s_ in ("smo", "batch") for k in DIST_RANKS)
        rows.append(f"| {name} | `{args}` | {cells} | {d[('device', 1)]:.1e} |")
    intro = ("Every LIBSVM formulation on every solver against `svm-train` 3.24's objective, both at `-e 0.00001` "
             "(the batched rounds and the eliminations reach the optimum by other paths, so the objectives agree "
             "to the stopping tolerance, not bit for bit): the largest relative difference over the pairs of "
             "`tessel train svm --solver smo|batch` in one process (K = 1, all cores) and under `mpirun -np K "
             "--oversubscribe` with one thread per rank (the problem shared by all ranks), from the `--json` "
             "objectives against svm-train's printed `%f` ones (so about 1e-8 is the printing's limit). nu-SVC's "
             "objective is its dual's over r^2, which magnifies the tolerance: its row runs both at `-e 1e-7`. friedman1 as below (10,000 rows). "
             "The device loop (`--device cuda`'s solver, every formulation given to it as data) runs here on the "
             "simulated device (`--device sim`: the loop over the CUDA kernels' host twins, the same decisions); on a "
             "GPU: the GPU benchmarks.\n\n")
    write_table_section(a, "SVM: every formulation on every solver", intro, rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    ap.add_argument("--shared", required=True)
    ap.add_argument("--doc", required=True)
    ap.add_argument("--parts", default="conformance,speed,elimination,distributed,types,solvers")
    ap.add_argument("--cmdline", default="tools/bench/svm_bench.sh")
    ap.add_argument("--elimination-sets", default=",".join(ELIMINATION_SETS))
    ap.add_argument("--speed-sets", default=",".join(SPEED))
    ap.add_argument("--types-sets", default="", help="only the types rows whose data is one of these (default: all)")
    a = ap.parse_args()
    parts = a.parts.split(",")
    work = tempfile.mkdtemp(prefix="tessel_svm_bench_")
    prepare(a.shared, work)  # usps, mnist10k
    results = {}

    if "distributed" in parts:
        log("fashion06: tessel convert --from idx")
        subprocess.run([a.tessel, "--log-level", "warn", "convert", "--from", "idx",
                        f"{FASHION}/train-images-idx3-ubyte.gz", "--labels", f"{FASHION}/train-labels-idx1-ubyte.gz",
                        "--positive", "0", "--negative", "6", "-o", f"{work}/fashion06", "--force"], check=True,
                       stdout=subprocess.DEVNULL)
        rows = ["| data | K | solver | elimination | wall s | training s | speed-up vs K = 1 | CPU s per rank (max) | iterations (rounds) | smallest active set: all ranks / one rank (rebalances) | kernel evaluations per rank (min / max) | bytes per iteration (per round) per rank | comm s | predicted s, K machines at 10 Gbit/s | obj. rel. diff vs K = 1 SMO |",
                "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|"]
        elim_notes = []
        rebalance_notes = []
        repeats = int(os.environ.get("TESSEL_SVM_DIST_REPEATS", "3"))
        for name, train, args in DIST_SETS:
            tr = path(a.shared, work, train)
            base = {}
            for ranks in DIST_RANKS:
                times = {}
                configs = [("smo", "periodic"), ("smo", "off"), ("batch", "periodic")]
                if ranks > 1:
                    configs.insert(1, ("smo", "periodic, --rebalance 0"))
                for solver, label in configs:
                    shrinking = label.split(",")[0]
                    log(f"distributed {name} K={ranks} {solver} {label}")
                    r = run_dist(a.tessel, tr, args, work, ranks, shrinking, solver, repeats,
                                 rebalance=0 if "rebalance 0" in label else None)
                    key = (solver, label)
                    if ranks == 1:
                        base[key] = r
                    times[key] = r["train"]
                    its = f"{r['iterations']}" + (f" ({r['rounds']})" if r["rounds"] else "")
                    per = f"{r['bytes_per_iter']:.0f}" + (f" ({r['bytes_per_round']:.0f})" if r["rounds"] else "")
                    b = base.get(key, base.get((solver, shrinking)))
                    active = f"{r['min_active']:,}" + (f" / {r['min_local_active']:,} ({r['rebalances']})"
                                                       if ranks > 1 and solver == "smo" else "")
                    rows.append(f"| {name} | {ranks} | {solver} | {label} | {r['wall']:.2f} | {r['train']:.2f} | "
                                f"{b['train'] / r['train']:.2f}x | {r['cpu_rank']:.2f} | {its} | {active} | "
                                f"{r['evals_min']:,} / {r['evals_max']:,} | {per} | "
                                f"{r['comm']:.2f} | {r['predicted']:.2f} | "
                                f"{rel_obj(r, base[('smo', 'periodic')]):.1e} |")
                elim_notes.append(f"{name} K={ranks}: {times[('smo', 'off')] / times[('smo', 'periodic')]:.2f}x")
                if ranks > 1:
                    rebalance_notes.append(f"{name} K={ranks}: "
                                           f"{times[('smo', 'periodic, --rebalance 0')] / times[('smo', 'periodic')]:.2f}x")
        intro = ("`tessel train svm --threads 1` in one process (K = 1) and under `mpirun -np K --oversubscribe` with one "
                 "thread per rank (K = 2, 4), with LIBSVM's periodic elimination and without (`--shrinking off`). "
                 f"`--solver batch` (q = 256) is the batched solver: one process at K = 1, the distributed batched "
                 f"solver (two collectives a round) at K > 1. "
                 f"Each row is the fastest of {repeats} runs by training time (other jobs share the cores). "
                 "*training s*: the solve as the trainer reports it (reading the file and MPI start-up excluded; "
                 "*wall s* includes them). *speed-up*: training time of K = 1 with the same elimination / this one "
                 "(target: 1.8x at K = 2 on this machine's two cores). *smallest active set*: over the check points, "
                 "of all ranks together and of one rank, with the check points that rebalanced the shares (SMO "
                 "rebalances at 1.2x the mean share by default; `--rebalance 0` rows never do). *CPU s per rank*: user + system of the busiest "
                 "rank (Open MPI polls while it waits, so waiting counts as CPU). *bytes per iteration*: what the "
                 "busiest rank sent, over the SMO iterations (over the rounds in parentheses). *predicted*: each rank's time outside communicator "
                 "calls plus the alpha-beta time of its calls on a 10 Gbit/s, 5 us network (docs/comm.md); at K = 4 "
                 "two ranks share each core here, so the measured compute, and the prediction, carry that slowdown. "
                 "*obj. rel. diff*: against K = 1 SMO with elimination (all within LIBSVM's tolerance; without "
                 "elimination K = 1 and K > 1 make the same iterations). fashion06: Fashion-MNIST T-shirt/top (+1) "
                 f"against Shirt (-1), 12,000 x 784 (`tessel convert --from idx ... --positive 0 --negative 6`). "
                 "What the table shows, and what is not met: docs/svm.md, \"Distributed training\", *Measured*.\n\n")
        write_table_section(a, "SVM: distributed training (mpirun)", intro, rows,
                            "\nElimination against none (training time off / periodic): " + ", ".join(elim_notes)
                            + ".\n\nRebalancing against none (training time `--rebalance 0` / default, SMO with "
                            "periodic elimination): " + ", ".join(rebalance_notes) + ".\n")

    if "conformance" in parts or "speed" in parts:
        sets = CONFORMANCE + ([MNIST10K] if "speed" in parts else [])
        if "conformance" not in parts:
            sets = [s for s in sets if s[0] in a.speed_sets.split(",")]
        for name, train, test, args in sets:
            tr, te = path(a.shared, work, train), (path(a.shared, work, test) if test else None)
            log(f"{name}: svm-train {args}")
            lib = run_libsvm(tr, te, args, work, 100)
            log(f"{name}: tessel (all cores)")
            ours = run_tessel(a.tessel, tr, te, args, work, 100)
            one = None
            if name in a.speed_sets.split(","):
                log(f"{name}: tessel --threads 1")
                one = run_tessel(a.tessel, tr, te, args, work, 100, threads=1, predict=False)
            results[name] = (args, test is not None, lib, ours, one)
            log(f"{name}: obj rel {rel_obj(ours, lib):.2e} rho {abs_rho(ours, lib):.2e} "
                f"time {lib['wall']:.1f}s vs {ours['wall']:.1f}s")

    if "conformance" in parts:
        rows = ["| data | svm-train args | pairs | max obj rel. diff | max rho abs. diff | accuracy (svm-train / tessel / svm-predict on tessel's model) | nSV (svm-train / tessel) | iterations (svm-train / tessel) |",
                "|---|---|---:|---:|---:|---|---|---|"]
        for name, train, test, args in CONFORMANCE:
            args_, has_test, lib, ours, _ = results[name]
            acc_kind = "test" if has_test else "training"
            rows.append(f"| {name} | `{args or '(defaults)'}` | {len(lib['obj'])} | {rel_obj(ours, lib):.1e} | "
                        f"{abs_rho(ours, lib):.1e} | {acc_kind}: {lib['accuracy']:.4f} / {ours['accuracy']:.4f} / "
                        f"{ours['accuracy_by_svm_predict']:.4f} | {lib['nsv']} / {ours['nsv']} | "
                        f"{lib['iterations']} / {ours['iterations']} |")
        intro = ("`tessel train svm` against Debian's `svm-train` 3.24 with the same arguments and `-m 100`; "
                 "objectives and rho as printed by svm-train (`%f`, 6 decimals) per one-vs-one pair; accuracy from "
                 "`svm-predict` and `tessel predict svm`; the last accuracy is `svm-predict` reading tessel's model "
                 "file. Required: "
                 "objective within 1e-5 relative, rho within 1e-3, accuracy within 0.05 points. Note: Debian's "
                 "svm-train parses -c/-g/-r/-e as float (`-g 0.05` trains with 0.05000000074505806; its model says "
                 "so), tessel keeps float64, so paths can differ by a few iterations even with the same algorithm.\n\n")
        write_table_section(a, "SVM: conformance with LIBSVM 3.24", intro, rows)

    if "speed" in parts:
        rows = ["| data | args | svm-train s (CPU s) | tessel all cores s (CPU s) | ratio | ratio of CPU s | tessel 1 thread s (CPU s) | ratio 1 thread | obj rel. diff |",
                "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        for name in [n for n in SPEED if n in a.speed_sets.split(",")]:
            args, _, lib, ours, one = results[name]
            rows.append(f"| {name} | `{args} -m 100` | {lib['wall']:.2f} ({lib['cpu']:.2f}) | {ours['wall']:.2f} "
                        f"({ours['cpu']:.2f}) | {lib['wall'] / ours['wall']:.1f}x | {lib['cpu'] / ours['cpu']:.1f}x | "
                        f"{one['wall']:.2f} ({one['cpu']:.2f}) "
                        f"| {lib['wall'] / one['wall']:.1f}x | {rel_obj(ours, lib):.1e} |")
        intro = ("Wall-clock seconds of `svm-train` and `tessel train svm` (reading the file included) with the same "
                 "parameters and cache size, run one after the other in the same script; *ratio* = svm-train time / "
                 "tessel time (target: at least 5x with both cores). CPU seconds (user + system of the child) in "
                 "parentheses; *ratio of CPU s* = svm-train's CPU seconds / tessel's (all cores), the work compared "
                 "when other jobs load the machine (then tessel's second thread rarely gets a core, and the wall "
                 "ratios are noise). usps: the ESL files (7,291 training rows, 2,007 test rows, 256 features). "
                 "mnist10k = the 10,000 rows of `mnist.t` with pixels / 255 (accuracy on the training rows).\n\n")
        write_table_section(a, "SVM: speed against svm-train", intro, rows)

    if "types" in parts or "solvers" in parts:  # friedman1's training and test files in the work folder
        subprocess.run(["/usr/bin/python3", "-c", FRIEDMAN, work], check=True)

    if "types" in parts:
        rows = ["| formulation, data | svm-train args | obj rel. diff (pairs: max) | rho rel. diff | model file | predictions equal (test or training rows) | tessel's prediction quality | svm-train s (CPU s) | tessel s (CPU s) | ratio | ratio of CPU s |",
                "|---|---|---:|---:|---|---:|---|---:|---:|---:|---:|"]
        for name, train, test, args in TYPES:
            if a.types_sets and name.split()[-1] not in a.types_sets.split(","):
                continue
            log(f"types: {name}: {args}")
            tr, te = path(a.shared, work, train), (path(a.shared, work, test) if test else None)
            r = run_type(a.tessel, tr, te, args, work)
            rows.append(f"| {name} | `{args} -m 100` | {r['obj_rel']:.1e} | {r['rho_rel']:.1e} | "
                        f"{'byte-identical' if r['same_model'] else 'differs'} | {r['equal']} / {r['total']} | "
                        f"{r['quality']} | {r['lib_wall']:.2f} ({r['lib_cpu']:.2f}) | {r['wall']:.2f} ({r['cpu']:.2f}) "
                        f"| {r['lib_wall'] / r['wall']:.1f}x | {r['lib_cpu'] / max(r['cpu'], 1e-9):.1f}x |")
        intro = ("LIBSVM's other formulations (`-s 1` nu-SVC, `-s 2` one-class, `-s 3` epsilon-SVR, `-s 4` nu-SVR), "
                 "`tessel train svm` (all cores) against Debian's `svm-train` 3.24 with the same arguments: objective "
                 "and rho relative differences (svm-train's printed `%f` digits), whether the model files are equal "
                 "byte for byte, predictions of `svm-predict` (svm-train's model) and `tessel predict svm` (ours) "
                 "compared value by value, and wall-clock seconds with the ratio svm-train / tessel (and the ratio of their CPU "
                 "seconds, the work compared when other jobs load the machine). friedman1: "
                 "scikit-learn's `make_friedman1(n_samples=20000, n_features=10, noise=1.0, random_state=0)` "
                 "(10,000 rows train, 10,000 test); friedman20k: `make_friedman1(20000, random_state=0)`, all 20,000 rows "
                 "train, tested on `make_friedman1(5000, random_state=1)` (docs/datasets.md). Both programs run one after the other, each row "
                 "in turn (interleaved). Here on the one-process SMO solver; every "
                 "solver and mpirun: the section \"SVM: every formulation on every solver\".\n\n")
        write_table_section(a, "SVM: every LIBSVM formulation against svm-train", intro, rows)

    if "solvers" in parts:
        solvers_section(a, work)

    if "elimination" in parts:
        args_of = {n: args for n, _, _, args in CONFORMANCE}
        rows = ["| data | cache MB | elimination | iterations | kernel evaluations | smallest active set | reconstructions | seconds (CPU s) | objective |",
                "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
        for name in a.elimination_sets.split(","):
            train = path(a.shared, work, dict((n, t) for n, t, _, _ in CONFORMANCE)[name])
            for cache in (100, 1000):
                for policy in POLICIES:
                    log(f"elimination {name} {cache} MB {policy}")
                    r = run_tessel(a.tessel, train, None, args_of[name], work, cache, shrinking=policy, predict=False)
                    rows.append(f"| {name} | {cache} | {policy} | {r['iterations']} | {r['kernel_evaluations']:,} | "
                                f"{r['min_active']} | {r['reconstructions']} | {r['wall']:.2f} ({r['cpu']:.2f}) | "
                                f"{r['obj'][0]:.6f} |")
        intro = ("`tessel train svm --shrinking POLICY -m CACHE` (all cores) with the conformance arguments: "
                 "`off` never eliminates; `eager` checks every iteration; `periodic` every min(l, 1000) iterations "
                 "(LIBSVM); `lazy` periodically once the gap is below 100 eps. Every policy ends with the same full "
                 "optimality check, so the objective agrees to the tolerance.\n\n")
        write_table_section(a, "SVM: sample elimination", intro, rows, "\n" + WHEN_IT_PAYS)
    log("done")


if __name__ == "__main__":
    main()
