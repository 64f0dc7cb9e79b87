#!/usr/bin/env python3
"""Writes the seed inputs of the fuzz targets (tests/fuzz/fuzz_*.cc) into OUT/<target>/ from the small files of
tests/data plus a few hand-written broken inputs. tools/fuzz.sh merges them into the corpus; the native, partition
and checkpoint targets write their own valid seeds (TESSEL_FUZZ_WRITE_SEEDS)."""
import bz2
import gzip
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data")
SEP = b"\n@@\n"  # fuzz_util.h kSeparator


def read(*parts):
    with open(os.path.join(DATA, *parts), "rb") as f:
        return f.read()


def main(out):
    seeds = {}

    def add(target, name, data):
        seeds.setdefault(target, {})[name] = data

    # edgelist: option byte (fuzz_edgelist.cc) + file
    add("edgelist", "small_csv", b"\x00" + read("edgelist", "small.csv"))
    add("edgelist", "snap", b"\x00" + read("edgelist", "snap_small.txt"))
    add("edgelist", "snap_gz", b"\x00" + read("edgelist", "snap_small.txt.gz"))
    add("edgelist", "snap_bz2", b"\x00" + read("edgelist", "snap_small.txt.bz2"))
    add("edgelist", "weighted_one_based", b"\x30" + read("edgelist", "weighted_one_based.txt"))
    add("edgelist", "weighted_csv", b"\x25" + read("convert", "weighted.csv"))
    add("edgelist", "tiny", b"\x40" + read("convert", "tiny.edges"))
    add("edgelist", "bad", b"\x00" + read("convert", "bad.edges"))
    add("edgelist", "bad_id", b"\x00" + b"0 1\n1 x\n")
    add("edgelist", "huge_nodes", b"\x00" + b"# nodes 99999999999999\n0 1\n")
    add("edgelist", "negative", b"\x12" + b"0 1\n-1 2\n")

    # metis
    for name in ("isolated", "manual_edge_weights", "manual_unweighted", "sizes_weights"):
        add("metis", name, read("metis", name + ".graph"))
    add("metis", "square", read("convert", "square.graph"))
    add("metis", "short", b"3 2\n2\n1 3\n")
    add("metis", "huge_header", b"1000000000000 1\n")
    add("metis", "fmt", b"2 1 011 2\n1 1 2 5\n1 1 1 5\n")

    # linqs: content SEP cites
    add("linqs", "tiny", read("linqs", "tiny.content") + SEP + read("linqs", "tiny.cites"))
    add("linqs", "papers", read("convert", "papers.content") + SEP + read("convert", "papers.cites"))
    add("linqs", "unknown_cite", b"a 1 0 X\nb 0 1 Y\n" + SEP + b"a c\n")

    # nodetable: edges SEP features SEP labels SEP train SEP val SEP test
    nt = [read("nodetable", f) for f in ("tiny.edges.txt", "tiny.features.txt.gz", "tiny.labels.txt.bz2",
                                         "tiny.train.txt", "tiny.val.txt", "tiny.test.txt")]
    add("nodetable", "tiny", SEP.join(nt))
    ct = [read("convert", "table." + f + ".txt") for f in ("edges", "features", "labels", "train", "val", "test")]
    add("nodetable", "table", SEP.join(ct))
    add("nodetable", "edges_only", ct[0])
    add("nodetable", "huge_features", ct[0] + SEP + b"3 99999999999 1\n0 0 1.0\n")

    # ogb: edge, node-feat, node-label, num-node-list, train, valid, test
    def ogb(base, split):
        def f(*p):
            for ext in ("", ".gz"):
                path = os.path.join(DATA, *p) + ext
                if os.path.exists(path):
                    with open(path, "rb") as fh:
                        return fh.read()
            return b""
        return SEP.join([f(base, "raw", "edge.csv"), f(base, "raw", "node-feat.csv"), f(base, "raw", "node-label.csv"),
                         f(base, "raw", "num-node-list.csv"), f(base, "split", split, "train.csv"),
                         f(base, "split", split, "valid.csv"), f(base, "split", split, "test.csv")])
    add("ogb", "tiny", ogb(os.path.join("ogb", "ogbn-tiny"), "time"))
    add("ogb", "mini", ogb(os.path.join("convert", "ogb-mini"), "random"))
    add("ogb", "no_split", b"0,1\n1,2\n" + SEP * 3 + b"3\n")

    # compressed inputs longer than the fuzzers' 64-byte stream window (fuzz_util.h): pieces, carried line tails
    # and errors land on every side of a window boundary
    edges = b"# Nodes: 400 Edges: 300\n" + b"".join(b"%d\t%d\n" % (i * 7 % 400, i * 13 % 397) for i in range(300))
    add("edgelist", "multi_window_gz", b"\x00" + gzip.compress(edges, mtime=0))
    add("edgelist", "multi_stream_bz2", b"\x00" + bz2.compress(edges[:1500]) + bz2.compress(edges[1500:]))
    rows = b"".join(b"%+d 1:%d 3:0.5 %d:1\n" % (1 if i % 3 else -1, i, 4 + i % 9) for i in range(200))
    add("libsvm", "multi_window_gz", gzip.compress(rows, mtime=0))
    add("libsvm", "multi_window_bad_gz", gzip.compress(rows[:3000] + b"1 2:1 2:1\n" + rows[3000:], mtime=0))
    ring = b"100 100\n" + b"".join(b"%d %d\n" % ((v - 2) % 100 + 1, v % 100 + 1) for v in range(1, 101))
    add("metis", "ring_gz", gzip.compress(ring, mtime=0))

    # libsvm
    add("libsvm", "tiny", read("libsvm", "tiny.svm"))
    add("libsvm", "tiny_gz", read("libsvm", "tiny.svm.gz"))
    add("libsvm", "tiny_bz2", read("libsvm", "tiny.svm.bz2"))
    add("libsvm", "rows", read("convert", "rows.libsvm"))
    add("libsvm", "heart_head", b"".join(read("svm", "heart_scale").splitlines(True)[:12]))
    add("libsvm", "declared", b"!1 1:0.5 8:1\n-1 9:1\n")
    add("libsvm", "bad_order", b"1 3:1 2:1\n")

    # idx: images SEP labels
    def idx_images(n, r, c, pix):
        return struct.pack(">BBBB", 0, 0, 8, 3) + struct.pack(">III", n, r, c) + bytes(pix)
    def idx_labels(n, labels):
        return struct.pack(">BBBB", 0, 0, 8, 1) + struct.pack(">I", n) + bytes(labels)
    add("idx", "two", idx_images(2, 2, 2, [0, 255, 3, 0, 9, 0, 0, 1]) + SEP + idx_labels(2, [3, 7]))
    add("idx", "two_gz", gzip.compress(idx_images(2, 2, 2, [0, 255, 3, 0, 9, 0, 0, 1]), mtime=0) + SEP +
        idx_labels(2, [3, 7]))
    add("idx", "truncated", idx_images(3, 2, 2, [1, 2, 3]) + SEP + idx_labels(3, [1, 2, 3]))
    add("idx", "huge", idx_images(0xFFFFFFFF, 0xFFFF, 0xFFFF, []) + SEP + idx_labels(0xFFFFFFFF, []))

    # svm_model: model [SEP sidecar]
    add("svm_model", "heart_scale", read("svm", "heart_scale.libsvm.model"))
    small = (b"svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 2\nrho 0.1\nlabel 1 -1\n"
             b"nr_sv 1 1\nSV\n1 1:0.5 2:1\n-1 1:-0.5\n")
    add("svm_model", "small", small)
    add("svm_model", "small_sidecar", small + SEP + b'{"format":"tessel-svm-model-sidecar","num_features":13}\n')
    add("svm_model", "three_class",
        b"svm_type c_svc\nkernel_type polynomial\ndegree 3\ngamma 1\ncoef0 0\nnr_class 3\ntotal_sv 3\n"
        b"rho 0.1 0.2 0.3\nlabel 1 2 3\nnr_sv 1 1 1\nSV\n1 0.5 1:1\n-1 1 2:1\n-1 -1 3:1\n")
    add("svm_model", "huge_total", small.replace(b"total_sv 2", b"total_sv 999999999999"))

    # cli: arguments separated by NUL bytes
    for name, args in {
        "help": ["--help"],
        "version": ["--version"],
        "convert": ["convert", "--from", "edgelist", "in.txt", "--output", "out"],
        "info": ["info", "somewhere", "--json"],
        "partition": ["partition", "d", "--parts", "4", "--output", "o"],
        "train_gcn": ["train", "gcn", "--dataset", "d", "--epochs", "5", "--lr", "0.01"],
        "train_svm": ["train", "svm", "--data", "x", "--model", "m", "--solver", "batch"],
        "predict_svm": ["predict", "svm", "--model", "m", "--data", "x"],
        "predict_gcn": ["--log-level", "debug", "predict", "gcn", "--help"],
        "generate": ["generate", "csbm", "--output", "o"],
        "bad": ["train", "--epochs", "x"],
    }.items():
        add("cli", name, b"\0".join(a.encode() for a in args))

    for target, files in seeds.items():
        d = os.path.join(out, target)
        os.makedirs(d, exist_ok=True)
        for name, data in files.items():
            with open(os.path.join(d, "seed-" + name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "fuzz", "corpus"))
