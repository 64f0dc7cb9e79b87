#!/usr/bin/env python3
# The DistDGL side of tools/bench/distdgl_bench.sh, run with the DGL virtual environment's python
# (tools/bench/setup-dgl.sh). Subcommands:
#   partition DATASET OUT --parts K   dgl.distributed.partition_graph(part_method="metis", balance_ntypes=train
#                                     mask, balance_edges=True: DistDGL's example settings) of a tessel native
#                                     dataset folder; prints one JSON line (seconds, peak RSS, edge cut) and writes
#                                     OUT/assignment.npy (the part of every original node id).
#   run PART_CONFIG --parts K ...     K "machines" on this host, each its own mount namespace with a private tmpfs
#                                     at /dev/shm (two DGL servers sharing one /dev/shm collide: bus error), holding
#                                     one graph server and one trainer started from the environment variables DGL's
#                                     tools/launch.py sets (no ssh); polls /proc for every process's peak RSS
#                                     (proc_peak.py); prints one JSON line.
#   machine / serve / train           the pieces `run` starts (internal).
# The trainer is DistDGL's GraphSAGE example (examples/distributed/graphsage/node_classification.py): DistGraph,
# node_split(force_even=True) of the training nodes, DistNodeDataLoader over NeighborSampler(fanouts), features
# pulled from the DistTensor for each batch's input nodes, DistributedDataParallel over gloo; the model and the
# optimiser are tessel's (`train gcn --model sage`, as tools/bench/dgl_minibatch.py: SAGEConv-mean layers with
# dropout on every layer's input, Adam, weight decay on the first layer only). After the last epoch: full-neighbour
# inference of each trainer's val and test nodes (tessel's --eval full), correct counts summed over trainers.
# Bytes between machines per epoch: from `ss -tinp` at each epoch's start and end, each trainer's TCP sockets
# whose other end belongs to a process of another machine (sent on every such socket, plus received from remote
# graph servers, so that no byte is counted twice).
import argparse
import json
import os
import random
import resource
import signal
import socket
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _kib_to_bytes(kib):
    return int(kib) * 1024


# ---------------------------------------------------------------------------------------------------- partition
def cmd_partition(a):
    import torch
    import dgl
    from dgl_minibatch import load_native

    t0 = time.perf_counter()
    m, indptr, indices, feats, labels, split = load_native(a.dataset)
    n = m["num_nodes"]
    g = dgl.graph(("csr", (torch.from_numpy(indptr), torch.from_numpy(indices), torch.empty(0, dtype=torch.int64))),
                  num_nodes=n)
    g.ndata["feat"] = torch.from_numpy(feats)
    g.ndata["label"] = torch.from_numpy(labels)
    for k in ("train", "val", "test"):
        mask = torch.zeros(n, dtype=torch.bool)
        mask[torch.from_numpy(split[k])] = True
        g.ndata[f"{k}_mask"] = mask
    t1 = time.perf_counter()
    orig_nids, _ = dgl.distributed.partition_graph(
        g, m.get("name") or "graph", a.parts, a.out, part_method="metis", balance_ntypes=g.ndata["train_mask"],
        balance_edges=True, return_mapping=True)
    t2 = time.perf_counter()
    with open(os.path.join(a.out, f"{m.get('name') or 'graph'}.json")) as f:
        conf = json.load(f)
    ranges = np.array(conf["node_map"]["_N"])  # [K, 2] ranges of new ids
    part_of_new = np.repeat(np.arange(a.parts), ranges[:, 1] - ranges[:, 0])
    assignment = np.empty(n, dtype=np.int32)
    assignment[orig_nids.numpy()] = part_of_new
    np.save(os.path.join(a.out, "assignment.npy"), assignment)
    # The same as text, one part id per node in node order: `tessel partition --method file --assignment` reads it.
    np.savetxt(os.path.join(a.out, "assignment.txt"), assignment, fmt="%d")
    src = np.repeat(np.arange(n), np.diff(indptr))
    cut_entries = int(np.count_nonzero(assignment[src] != assignment[indices]))
    print(json.dumps({
        "system": "distdgl", "parts": a.parts, "load_seconds": t1 - t0, "partition_seconds": t2 - t1,
        "peak_rss_bytes": _kib_to_bytes(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss),
        "cut_entries": cut_entries, "part_config": os.path.join(a.out, f"{m.get('name') or 'graph'}.json"),
        "part_nodes": [int(x) for x in ranges[:, 1] - ranges[:, 0]]}))


# ------------------------------------------------------------------------------------------------------- bytes
def _tcp_sockets():
    """[(local, peer, pid, bytes_sent, bytes_received)] of the established TCP sockets of this host."""
    out = subprocess.run(["ss", "-tinpH", "state", "established"], capture_output=True, text=True).stdout
    socks, cur = [], None
    for line in out.splitlines():
        if not line.startswith((" ", "\t")):
            f = line.split()
            pid = -1
            if "pid=" in line:
                pid = int(line.split("pid=")[1].split(",")[0])
            cur = [f[2], f[3], pid, 0, 0]
            socks.append(cur)
        elif cur is not None:
            for tok in line.split():
                if tok.startswith("bytes_sent:"):
                    cur[3] = int(tok.split(":")[1])
                elif tok.startswith("bytes_received:"):
                    cur[4] = int(tok.split(":")[1])
    return socks


def _cross_machine_bytes(me, my_server):
    """This trainer's bytes to and from other machines: {gradient_sent (to trainers), request_sent (to remote
    servers), response_received (from remote servers)}."""
    socks = _tcp_sockets()
    owner = {s[0]: s[2] for s in socks}
    role = {}

    def role_of(pid):
        if pid not in role:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cl = f.read().split(b"\0")
                role[pid] = "server" if b"serve" in cl else "trainer" if b"train" in cl else "other"
            except OSError:
                role[pid] = "other"
        return role[pid]

    r = {"gradient_sent": 0, "request_sent": 0, "response_received": 0}
    for local, peer, pid, sent, received in socks:
        if pid != me:
            continue
        other = owner.get(peer, -1)
        if other in (-1, me, my_server):
            continue
        if role_of(other) == "trainer":
            r["gradient_sent"] += sent
        elif role_of(other) == "server":
            r["request_sent"] += sent
            r["response_received"] += received
    return r


def _cpu_seconds(server_pid):
    """(this process's CPU seconds, the CPU seconds of process SERVER_PID, from /proc, or 0 when it is gone)."""
    u = resource.getrusage(resource.RUSAGE_SELF)
    server = 0.0
    try:
        with open(f"/proc/{server_pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        server = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        pass
    return u.ru_utime + u.ru_stime, server


# ------------------------------------------------------------------------------------------------------- train
def cmd_serve(a):
    import dgl
    dgl.distributed.initialize(a.ip_config)  # DGL_ROLE=server: serves until every trainer has left, then exits


def _evaluate(g, model, nodes, batch, dgl, torch):
    sampler = dgl.dataloading.MultiLayerFullNeighborSampler(2)
    loader = dgl.dataloading.DistNodeDataLoader(g, nodes, sampler, batch_size=batch, shuffle=False)
    correct = 0
    with torch.no_grad():
        for input_nodes, seeds, blocks in loader:
            pred = model(blocks, g.ndata["feat"][input_nodes]).argmax(1)
            correct += int((pred == g.ndata["label"][seeds]).sum())
    return correct


def cmd_train(a):
    import torch
    import torch.nn.functional as F
    import dgl
    import dgl.distributed.rpc_client as rpc_client
    from dgl_minibatch import Model

    machine = int(os.environ["TESSEL_DGL_MACHINE"])
    # All machines share 127.0.0.1 here, and DGL finds a client's machine by matching the ip_config's addresses
    # against the host's interfaces (the first match: machine 0 for everyone); the launch script's cluster has one
    # address per machine, so the machine id is given instead.
    rpc_client.get_local_machine_id = lambda _namebook: machine
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    np.random.seed(a.seed)
    random.seed(a.seed)
    dgl.seed(a.seed)
    dgl.distributed.initialize(a.ip_config)
    torch.distributed.init_process_group("gloo")
    rank = torch.distributed.get_rank()
    g = dgl.distributed.DistGraph(a.graph_name, part_config=a.part_config)
    pb = g.get_partition_book()
    train_nid = dgl.distributed.node_split(g.ndata["train_mask"], pb, force_even=True)
    val_nid = dgl.distributed.node_split(g.ndata["val_mask"], pb, force_even=False)
    test_nid = dgl.distributed.node_split(g.ndata["test_mask"], pb, force_even=False)
    in_dim = g.ndata["feat"].shape[1]
    classes = int(a.classes)
    fanouts = [int(f) for f in a.fanouts.split(",")]
    model = Model("sage", in_dim, a.hidden, classes, len(fanouts), a.dropout)
    first = list(model.layers[0].parameters())
    rest = [p for layer in model.layers[1:] for p in layer.parameters()]
    model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.Adam([{"params": first, "weight_decay": a.weight_decay},
                            {"params": rest, "weight_decay": 0.0}], lr=a.lr)
    sampler = dgl.dataloading.NeighborSampler(fanouts)
    loader = dgl.dataloading.DistNodeDataLoader(g, train_nid, sampler, batch_size=a.batch_size, shuffle=True,
                                                drop_last=False)
    my_server = int(os.environ.get("TESSEL_DGL_SERVER_PID", "-1"))
    me = os.getpid()
    epochs = []
    for epoch in range(a.epochs):
        model.train()
        b0 = _cross_machine_bytes(me, my_server)
        c0 = _cpu_seconds(my_server)
        t0 = time.perf_counter()
        steps = 0
        for input_nodes, seeds, blocks in loader:
            x = g.ndata["feat"][input_nodes]
            y = g.ndata["label"][seeds].long()
            loss = F.cross_entropy(model(blocks, x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            steps += 1
        t1 = time.perf_counter()
        c1 = _cpu_seconds(my_server)
        b1 = _cross_machine_bytes(me, my_server)
        epochs.append({"epoch": epoch + 1, "seconds": t1 - t0, "steps": steps, "loss": float(loss),
                       "trainer_cpu_seconds": c1[0] - c0[0], "server_cpu_seconds": c1[1] - c0[1],
                       "bytes": {k: b1[k] - b0[k] for k in b0}})
    model.eval()
    # The validation nodes only with --eval-val (nothing picks an epoch by them: both sides keep the last one).
    val = _evaluate(g, model.module, val_nid, a.eval_batch, dgl, torch) if a.eval_val else 0
    counts = torch.tensor([val, max(len(val_nid), 1) if a.eval_val else 1,
                           _evaluate(g, model.module, test_nid, a.eval_batch, dgl, torch), len(test_nid)],
                          dtype=torch.float64)
    torch.distributed.all_reduce(counts)
    out = {"rank": rank, "machine": machine, "train_nodes": len(train_nid), "epochs": epochs,
           "val_accuracy": float(counts[0] / counts[1]) if a.eval_val else None, "test_accuracy": float(counts[2] / counts[3]),
           "peak_rss_bytes": _kib_to_bytes(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss),
           "dgl": dgl.__version__, "torch": torch.__version__}
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f)
    os.replace(tmp, a.out)


# ------------------------------------------------------------------------------------------------ machine, run
def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cmd_machine(a, rest):
    """Inside one mount namespace (a private /dev/shm): this machine's graph server, then its trainer."""
    env = dict(os.environ)
    common = {"DGL_NUM_SAMPLER": "0", "OMP_NUM_THREADS": str(a.threads), "DGL_NUM_CLIENT": str(a.parts),
              "DGL_CONF_PATH": a.part_config, "DGL_IP_CONFIG": a.ip_config, "DGL_NUM_SERVER": "1",
              "DGL_GRAPH_FORMAT": "csc"}
    server_env = dict(env, **common, DGL_ROLE="server", DGL_SERVER_ID=str(a.machine), DGL_KEEP_ALIVE="0")
    me = [sys.executable, os.path.abspath(__file__)]
    server = subprocess.Popen(me + ["serve", "--ip-config", a.ip_config], env=server_env)
    trainer_env = dict(env, **common, DGL_DIST_MODE="distributed", DGL_ROLE="client", DGL_GROUP_ID="0",
                       TESSEL_DGL_MACHINE=str(a.machine), TESSEL_DGL_SERVER_PID=str(server.pid),
                       MASTER_ADDR="127.0.0.1", MASTER_PORT=str(a.master_port), RANK=str(a.machine),
                       WORLD_SIZE=str(a.parts), LOCAL_RANK="0")
    trainer = subprocess.Popen(me + ["train"] + rest, env=trainer_env)
    rc = trainer.wait()
    try:
        rc = rc or server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
        rc = rc or 1
    sys.exit(rc)


def cmd_run(a, rest):
    from proc_peak import run_watched

    work = a.workdir
    os.makedirs(work, exist_ok=True)
    ip_config = os.path.join(work, "ip_config.txt")
    ports = set()
    while len(ports) < a.parts + 1:
        ports.add(_free_port())
    ports = sorted(ports)
    with open(ip_config, "w") as f:
        for m in range(a.parts):
            f.write(f"127.0.0.1 {ports[m]}\n")
    outs = [os.path.join(work, f"trainer{m}.json") for m in range(a.parts)]
    for o in outs:
        if os.path.exists(o):
            os.remove(o)
    # One shell starts the K machines, each `unshare -m` with its own tmpfs at /dev/shm, and waits for them all.
    me = f"{sys.executable} {os.path.abspath(__file__)}"
    lines = ["pids=''"]
    for m in range(a.parts):
        args = (f"machine --machine {m} --parts {a.parts} --part-config {a.part_config} --ip-config {ip_config} "
                f"--master-port {ports[-1]} --threads {a.threads} -- {' '.join(rest)} --out {outs[m]} "
                f"--part-config {a.part_config} --ip-config {ip_config} --threads {a.threads}")
        lines.append(f"unshare -m --propagation private sh -c 'mount -t tmpfs -o size={a.shm_size} tmpfs /dev/shm "
                     f"&& exec {me} {args}' & pids=\"$pids $!\"")
    lines.append('rc=0; for p in $pids; do wait $p || rc=1; done; exit $rc')
    t0 = time.perf_counter()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run_watched then kills the machines' processes
    rc, procs = run_watched(["sh", "-c", "\n".join(lines)], timeout=a.timeout)
    wall = time.perf_counter() - t0
    if rc != 0 or not all(os.path.exists(o) for o in outs):
        sys.exit(f"error: the DistDGL run failed (status {rc}); see the messages above")
    trainers = [json.load(open(o)) for o in outs]

    def peaks(word):
        return [p["peak_rss_bytes"] for p in procs if f"distdgl_run.py {word}" in p["cmdline"]]

    def shmem(word):
        return [p["max_rss_shmem_bytes"] for p in procs if f"distdgl_run.py {word}" in p["cmdline"]]

    ep = len(trainers[0]["epochs"])
    per_epoch = [max(t["epochs"][e]["seconds"] for t in trainers) for e in range(ep)]
    bytes_epoch = [sum(t["epochs"][e]["bytes"][k] for t in trainers for k in t["epochs"][e]["bytes"])
                   for e in range(ep)]
    cpu_epoch = [sum(t["epochs"][e]["trainer_cpu_seconds"] + t["epochs"][e]["server_cpu_seconds"] for t in trainers)
                 for e in range(ep)]
    kinds = {k: statistics.median(sum(t["epochs"][e]["bytes"][k] for t in trainers) for e in range(1, ep))
             if ep > 1 else 0 for k in trainers[0]["epochs"][0]["bytes"]}
    print(json.dumps({
        "system": "distdgl", "parts": a.parts, "wall_seconds": wall, "epoch_seconds": per_epoch,
        "median_epoch_seconds": statistics.median(per_epoch[1:] if ep > 1 else per_epoch),
        "steps_per_epoch": trainers[0]["epochs"][0]["steps"], "cpu_seconds": cpu_epoch,
        "median_epoch_cpu_seconds": statistics.median(cpu_epoch[1:] if ep > 1 else cpu_epoch),
        "server_cpu_share": sum(t["epochs"][e]["server_cpu_seconds"] for t in trainers for e in range(ep))
        / max(sum(cpu_epoch), 1e-9),
        "bytes_per_epoch": statistics.median(bytes_epoch[1:] if ep > 1 else bytes_epoch), "bytes_by_kind": kinds,
        "val_accuracy": trainers[0]["val_accuracy"], "test_accuracy": trainers[0]["test_accuracy"],
        "trainer_peak_rss_bytes": peaks("train"), "server_peak_rss_bytes": peaks("serve"),
        "trainer_max_shmem_bytes": shmem("train"), "server_max_shmem_bytes": shmem("serve"),
        "trainer_self_peak_rss_bytes": [t["peak_rss_bytes"] for t in trainers],
        "dgl": trainers[0]["dgl"], "torch": trainers[0]["torch"]}))


def main():
    argv = sys.argv[1:]
    rest = []
    if "--" in argv:
        i = argv.index("--")
        argv, rest = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description="DistDGL on one host, beside tessel (tools/bench/distdgl_bench.sh)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("partition")
    p.add_argument("dataset")
    p.add_argument("out")
    p.add_argument("--parts", type=int, required=True)
    p = sub.add_parser("run", help="run PART_CONFIG --parts K [--workdir W] -- TRAIN OPTIONS")
    p.add_argument("part_config")
    p.add_argument("--parts", type=int, required=True)
    p.add_argument("--workdir", required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--shm-size", default="8g")
    p.add_argument("--timeout", type=float, default=3600)
    p = sub.add_parser("machine")
    for opt in ("--machine", "--parts", "--master-port", "--threads"):
        p.add_argument(opt, type=int, required=True)
    p.add_argument("--part-config", required=True)
    p.add_argument("--ip-config", required=True)
    p = sub.add_parser("serve")
    p.add_argument("--ip-config", required=True)
    p = sub.add_parser("train")
    p.add_argument("--part-config", required=True)
    p.add_argument("--ip-config", required=True)
    p.add_argument("--graph-name", required=True)
    p.add_argument("--classes", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--eval-batch", type=int, default=4096)
    p.add_argument("--eval-val", action="store_true", help="also report the validation accuracy")
    p.add_argument("--fanouts", default="10,10")
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv + (rest if argv[:1] == ["train"] else []))
    if a.cmd == "partition":
        cmd_partition(a)
    elif a.cmd == "run":
        cmd_run(a, rest)
    elif a.cmd == "machine":
        cmd_machine(a, rest)
    elif a.cmd == "serve":
        cmd_serve(a)
    else:
        cmd_train(a)


if __name__ == "__main__":
    main()
