"""GCN from Python: the same accuracy as the CLI for the same parameters and seed, the PyG path, epoch callbacks,
checkpoints and prediction, partitioning, Ctrl-C, and parameter checks from the one declaration."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import tessel

ARGS = dict(epochs=30, normalize_features="l1", seed=3)


def cli_flags(params):
    out = []
    for k, v in params.items():
        if k == "seed":
            out += ["--seed", v]
        else:
            out += ["--" + k.replace("_", "-"), ",".join(map(str, v)) if isinstance(v, list) else v]
    return out


def test_same_accuracy_as_the_cli(cora, data_dir, run_cli, tmp_path):
    r = tessel.train_gcn(cora, **ARGS)
    metrics = tmp_path / "m.jsonl"
    cli = json.loads(run_cli("train", "gcn", "--dataset", data_dir / "cora" / "cora", "--json", "--metrics", metrics,
                             *cli_flags(ARGS)).stdout)
    assert r["test"]["accuracy"] == cli["test"]["accuracy"]
    assert r["best_epoch"] == cli["best_epoch"]
    assert r["config"] == cli["config"]
    epochs = [json.loads(line) for line in metrics.read_text().splitlines()][:-1]
    assert len(epochs) == ARGS["epochs"]
    assert [e["loss"] for e in r["history"]] == [e["loss"] for e in epochs]
    assert [e["val_acc"] for e in r["history"]] == [e["val_acc"] for e in epochs]


def test_sampled_minibatch_matches_the_cli(cora, data_dir, run_cli):
    params = dict(epochs=5, batch_size=64, fanouts=[5, 5], seed=1)
    r = tessel.train_gcn(cora, **params)
    cli = json.loads(run_cli("train", "gcn", "--dataset", data_dir / "cora" / "cora", "--json",
                             *cli_flags(params)).stdout)
    assert r["test"]["accuracy"] == cli["test"]["accuracy"]


def test_paper_accuracy_on_cora(cora):
    r = tessel.train_gcn(cora, epochs=200, normalize_features="l1")
    assert 0.79 <= r["test"]["accuracy"] <= 0.84
    assert len(r["history"]) == 200 and r["history"][-1]["epoch"] == 200


def pyg_like(cora):
    import scipy.sparse as sp

    class Data:
        pass
    g = Data()
    n = cora.num_nodes
    g.edge_index = np.stack([np.repeat(np.arange(n), np.diff(cora.indptr)), cora.indices.astype(np.int64)])
    g.x = sp.csr_matrix((cora.feature_values, cora.feature_indices, cora.feature_indptr), shape=(n, cora.feature_dim))
    g.y = cora.labels.astype(np.int64)
    g.num_nodes = n
    for split in ("train", "val", "test"):
        mask = np.zeros(n, dtype=bool)
        mask[getattr(cora, split)] = True
        setattr(g, f"{split}_mask", mask)
    return g


def test_pyg_data_trains_to_the_cli_accuracy(cora, data_dir, run_cli):
    r = tessel.train_gcn(pyg_like(cora), **ARGS)
    cli = json.loads(run_cli("train", "gcn", "--dataset", data_dir / "cora" / "cora", "--json",
                             *cli_flags(ARGS)).stdout)
    assert r["test"]["accuracy"] == cli["test"]["accuracy"]


def test_real_pyg_data(cora, data_dir, run_cli, tmp_path):
    """A torch_geometric Data as PyG users hold Cora (dense x, 1.3% non-zeros) trains to exactly the CLI's result on
    the bundled Cora: sparse_features="auto" stores it sparse, as the CLI reads it."""
    torch = pytest.importorskip("torch")
    pyg = pytest.importorskip("torch_geometric.data")
    g = pyg_like(cora)
    data = pyg.Data(edge_index=torch.from_numpy(g.edge_index), x=torch.from_numpy(g.x.toarray()),
                    y=torch.from_numpy(g.y), train_mask=torch.from_numpy(g.train_mask),
                    val_mask=torch.from_numpy(g.val_mask), test_mask=torch.from_numpy(g.test_mask))
    assert tessel.from_pyg(data).features_sparse
    assert not tessel.from_pyg(data, sparse_features=False).features_sparse
    full = dict(ARGS, epochs=200)
    r = tessel.train_gcn(data, **full)
    cli = json.loads(run_cli("train", "gcn", "--dataset", data_dir / "cora" / "cora", "--json",
                             *cli_flags(full)).stdout)
    assert r["test"]["accuracy"] == cli["test"]["accuracy"] and 0.79 <= r["test"]["accuracy"] <= 0.84
    # Kept dense, the same data gives the CLI's result on a folder tessel saved from it.
    dense = tessel.from_pyg(data, sparse_features=False)
    dense.save(tmp_path / "dense_cora")
    r = tessel.train_gcn(dense, **ARGS)
    cli = json.loads(run_cli("train", "gcn", "--dataset", tmp_path / "dense_cora", "--json", *cli_flags(ARGS)).stdout)
    assert r["test"]["accuracy"] == cli["test"]["accuracy"]


def test_callback_history_and_errors(cora):
    seen = []
    r = tessel.train_gcn(cora, epochs=4, callback=seen.append)
    assert [s["epoch"] for s in seen] == [1, 2, 3, 4] and seen == r["history"]

    class Stop(Exception):
        pass

    def stop(s):
        if s["epoch"] == 2:
            raise Stop("enough")
    with pytest.raises(Stop):
        tessel.train_gcn(cora, epochs=50, callback=stop)


def test_checkpoint_and_predict(cora, tmp_path):
    ck = tmp_path / "ck"
    r = tessel.train_gcn(cora, epochs=20, checkpoint=ck, predict=True)
    probs = tessel.predict_gcn(cora, ck)
    assert probs.shape == (cora.num_nodes, cora.num_classes)
    np.testing.assert_allclose(probs, r["probabilities"], atol=1e-6)
    test = cora.test
    acc = float(np.mean(probs[test].argmax(1) == cora.labels[test]))
    assert acc == pytest.approx(r["test"]["accuracy"])
    with pytest.raises(tessel.Error, match="resume"):
        tessel.train_gcn(cora, epochs=20, checkpoint=ck)
    more = tessel.train_gcn(cora, epochs=25, checkpoint=ck, resume=True)
    assert [e["epoch"] for e in more["history"]] == [21, 22, 23, 24, 25]


def test_partition(cora, tmp_path):
    desc = tessel.partition(cora, 2, tmp_path / "p2")
    assert desc["num_parts"] == 2
    assert (tmp_path / "p2" / "partitions.json").exists()
    with pytest.raises(tessel.Error, match="exists"):
        tessel.partition(cora, 2, tmp_path / "p2")


def test_partition_given_assignment(cora, tmp_path):
    n = tessel.partition(cora, 1, tmp_path / "p1")["dataset"]["num_nodes"]
    (tmp_path / "a.txt").write_text("".join(f"{i % 3}\n" for i in range(n)))
    desc = tessel.partition(cora, 3, tmp_path / "p3", method="file", assignment=str(tmp_path / "a.txt"))
    assert desc["method"] == "file"
    assert [p["nodes"] for p in desc["parts"]] == [len(range(p, n, 3)) for p in range(3)]
    (tmp_path / "b.txt").write_text("0\n1\nx\n")
    with pytest.raises(tessel.Error, match=r"b\.txt:3: 'x' is not a part id"):
        tessel.partition(cora, 2, tmp_path / "pb", method="file", assignment=str(tmp_path / "b.txt"))
    with pytest.raises(tessel.Error, match="method file needs assignment"):
        tessel.partition(cora, 2, tmp_path / "pc", method="file")


@pytest.mark.parametrize("kwargs, match", [
    (dict(epoch=3), "unknown parameter 'epoch'.*epochs"),
    (dict(epochs=2.5), "integer"),
    (dict(epochs=True), "integer"),
    (dict(lr="0.1"), "number"),
    (dict(model="gat"), "one of gcn, sage"),
    (dict(epochs=0), "epochs"),
    (dict(fanouts=[5, 5]), "batch_size"),
    (dict(dropout=1.0), "dropout"),
    (dict(threads=-1), "threads"),
    (dict(device="tpu"), "tpu"),
])
def test_bad_parameters(cora, kwargs, match):
    with pytest.raises(tessel.Error, match=match):
        tessel.train_gcn(cora, **kwargs)


def test_bad_data_argument():
    with pytest.raises(tessel.Error, match="NodeData"):
        tessel.train_gcn([1, 2, 3])


def test_interrupt_stops_training(cora):
    timer = threading.Timer(0.5, tessel._tessel._request_interrupt)
    timer.start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        tessel.train_gcn(cora, epochs=1_000_000)
    assert time.monotonic() - t0 < 30
    # The engine is usable afterwards.
    assert tessel.train_gcn(cora, epochs=2)["history"][-1]["epoch"] == 2


def test_ctrl_c_in_a_real_process(data_dir):
    script = textwrap.dedent(f"""
        import sys, time, tessel
        d = tessel.load({str(data_dir / "cora" / "cora")!r})
        print("ready", flush=True)
        try:
            tessel.train_gcn(d, epochs=1_000_000)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(3)
    """)
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=os.environ.copy())
    assert p.stdout.readline().strip() == "ready"
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 3 and "interrupted" in out


def test_gil_is_released(cora):
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.005)
    t = threading.Thread(target=ticker)
    t.start()
    tessel.train_gcn(cora, epochs=60)
    stop.set()
    t.join()
    assert len(ticks) >= 5


def test_params_declaration_matches_cli_help(run_cli):
    help_text = run_cli("train", "gcn", "--help").stdout
    for p in tessel.GCN_PARAMS:
        for flag in p["flag"].split(","):
            assert flag.lstrip("!") in help_text, flag
    assert "epochs = 200" in tessel.train_gcn.__doc__
    # The parameters' help in Python spelling: "unless --decay-all" is "unless decay_all_layers" here.
    params_doc = tessel.train_gcn.__doc__.split("Options from ``tessel train gcn``:")[1]
    assert "unless decay_all_layers=True" in params_doc and "as overlap=False" in params_doc
    for flag in ("--decay-all", "--no-overlap", "--threads", "--device cuda", "--batch-size"):
        assert flag not in params_doc, flag


def test_verbose_progress(cora, capfd):
    tessel.train_gcn(cora, epochs=3, verbose=True)
    err = capfd.readouterr().err
    try:
        import tqdm  # noqa: F401
        assert "tessel gcn" in err  # the bar's description
    except ImportError:
        assert "epoch    3/3" in err and "loss" in err  # the CLI's epoch lines
    tessel.train_gcn(cora, epochs=3)
    assert capfd.readouterr().err == ""  # quiet by default, the engine's log included (fd 2)


def no_split(cora):
    """Cora's graph, features and labels without a split."""
    src = np.repeat(np.arange(cora.num_nodes), np.diff(cora.indptr))
    import scipy.sparse as sp
    x = sp.csr_matrix((cora.feature_values, cora.feature_indices, cora.feature_indptr),
                      shape=(cora.num_nodes, cora.feature_dim))
    return tessel.node_dataset(np.stack([src, cora.indices]), features=x, labels=cora.labels, name="cora")


def test_random_split_is_the_clis(cora, data_dir, run_cli, tmp_path):
    params = dict(epochs=20, normalize_features="l1", seed=5)
    r = tessel.train_gcn(cora, random_split=(0.6, 0.2, 0.2), **params)
    cli = json.loads(run_cli("train", "gcn", "--dataset", data_dir / "cora" / "cora", "--json", "--random-split",
                             "0.6,0.2,0.2", *cli_flags(params)).stdout)
    assert r["test"] == cli["test"] and r["best_epoch"] == cli["best_epoch"]
    assert r["split"] == {"train": 1625, "val": 542, "test": 541}  # largest remainder of 2708 labelled nodes
    assert (cora.train.size, cora.val.size, cora.test.size) == (140, 500, 1000)  # the dataset keeps its own split
    # Another seed, another split; the same seed, the same split; Cora's own split without random_split.
    assert tessel.train_gcn(cora, random_split=[0.6, 0.2, 0.2], **dict(params, seed=6))["test"] != r["test"]
    assert tessel.train_gcn(cora, random_split=np.array([0.6, 0.2, 0.2]), **params)["test"] == r["test"]
    assert tessel.train_gcn(cora, **params)["split"] == {"train": 140, "val": 500, "test": 1000}
    # A dataset without a split trains with one, to the CLI's result on the same data saved.
    d = no_split(cora)
    d.save(tmp_path / "nosplit")
    r = tessel.train_gcn(d, random_split=(0.5, 0.25, 0.25), **params)
    cli = json.loads(run_cli("train", "gcn", "--dataset", tmp_path / "nosplit", "--json", "--random-split",
                             "0.5,0.25,0.25", *cli_flags(params)).stdout)
    assert r["test"] == cli["test"] and r["split"] == {"train": 1354, "val": 677, "test": 677}


@pytest.mark.parametrize("value, match", [
    ("0.6,0.2,0.2", "three fractions"),
    ((0.6, 0.4), "three fractions"),
    ((0.6, 0.2, 0.1, 0.1), "three fractions"),
    (0.6, "three fractions"),
    ((0.9, 0.9, 0.9), "sum to 2.7"),
    ((-0.1, 0.6, 0.5), "negative"),
    ((float("nan"), 0.5, 0.5), "not finite"),
    ((True, 0, 0), "not a number"),
    (("0.6", 0.2, 0.2), "not a number"),
])
def test_bad_random_split(cora, value, match):
    with pytest.raises(tessel.Error, match=r"random_split=.*" + match + r".*random_split=\(0\.6, 0\.2, 0\.2\)"):
        tessel.train_gcn(cora, epochs=1, random_split=value)


def test_missing_split_is_explained_in_python_spelling(cora, run_cli, tmp_path):
    d = no_split(cora)
    with pytest.raises(tessel.Error) as e:
        tessel.train_gcn(d, epochs=1)
    assert "pass random_split=(0.6, 0.2, 0.2) for a seeded random split" in str(e.value)
    assert "--" not in str(e.value)
    # The command line keeps its own spelling.
    d.save(tmp_path / "nosplit")
    cli = run_cli("train", "gcn", "--dataset", tmp_path / "nosplit", "--epochs", 1, check=False)
    assert cli.returncode != 0 and "pass --random-split 0.6,0.2,0.2" in cli.stderr


def test_engine_errors_name_keyword_arguments(cora, tmp_path):
    ck = tmp_path / "ck"
    tessel.train_gcn(cora, epochs=2, checkpoint=ck)
    with pytest.raises(tessel.Error) as e:
        tessel.train_gcn(cora, epochs=2, checkpoint=ck)
    assert "pass resume=True to continue it, force=True to replace it" in str(e.value) and "--" not in str(e.value)
    with pytest.raises(tessel.Error, match="fanouts and replace=True apply to sampled mini-batches: add batch_size=N"):
        tessel.train_gcn(cora, epochs=1, replace=True)
    tessel.partition(cora, 2, tmp_path / "p")
    with pytest.raises(tessel.Error) as e:
        tessel.partition(cora, 2, tmp_path / "p")
    assert "pass force=True" in str(e.value) and "--" not in str(e.value)


def test_cuda_errors_name_the_device_argument(cora):
    try:
        tessel.train_gcn(cora, epochs=1, device="cuda")
    except tessel.Error as e:
        assert str(e).startswith('device="cuda": ') and "--" not in str(e)
    else:
        pytest.skip("this machine trains on CUDA")


@pytest.mark.parametrize("engine, python", [
    ("x: pass --random-split 0.6,0.2,0.2 for a split", "x: pass random_split=(0.6, 0.2, 0.2) for a split"),
    ("already exists; pass --force to replace it", "already exists; pass force=True to replace it"),
    ("--device cuda: no CUDA device", 'device="cuda": no CUDA device'),
    ("--device-id 3 and --device cpu", "device_id 3 and device cpu"),
    ("pass --resume to continue", "pass resume=True to continue"),
    ("--weight-decay must be >= 0; --decay-all", "weight_decay must be >= 0; decay_all_layers=True"),
    ("the same results as --no-overlap", "the same results as overlap=False"),
    ("--features-on host", "features_on host"),
    ("--math tf32 and --forced and x--force", "math tf32 and --forced and x--force"),  # not options of the API
])
def test_python_spelling(engine, python):
    from tessel._errors import python_spelling
    assert python_spelling(engine) == python
