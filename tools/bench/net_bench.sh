#!/usr/bin/env bash
# Training over a real, shaped network (issue 39): in a private network namespace (`ip netns`) the loopback is
# rate-limited with tbf (`tc qdisc add dev lo root tbf rate R burst 256kb latency 50ms`) and Open MPI kept on TCP
# over it (--mca btl tcp,self, lo only); each workload runs per link and configuration with `--network R,LATENCY`
# so tessel's time model predicts the same run. Every link is probed first (a timed TCP transfer and a ping-pong).
# Reports measured s/epoch (median of EPOCHS epochs; SVM: median of REPEATS trainings), predicted s, error and
# accuracy, and rewrites the "## Over a shaped network" section of docs/benchmarks.md (DOC=0: stdout only).
# Needs root, ip and tc (iproute2), mpirun (Open MPI) and python3; removes its namespace on every exit.
#
# Usage: tools/bench/net_bench.sh BUILD_DIR
# Settings (environment):
#   WORKLOADS="csbm:2 facebook:2 svm:2"  (GRAPH:RANKS, METIS parts = RANKS; svm = a9a, --pairs shared)
#   LINKS="unshaped 10gbit 1gbit 100mbit"  (tbf rates; unshaped = no qdisc, predicted at the probed rate)
#   CONFIGS="plain compressed skewed best"  (GCN; compressed = --feature-compress int8 --grad-compress topk:0.02,
#     skewed = --skew-variance 2, best = both, pipelined = best + --grad-staleness 1, adaptive = pipelined with
#     --feature-compress auto --grad-compress auto, wholecache = plain with --feature-cache -1, the whole halo
#     cached, to check the default cache against it; a configuration may repeat, to interleave)
#   SVM_CONFIGS="smo batch"
#   SHARED=1 (pass --network R,LATENCY,shared: the one tbf carries every rank's bytes both ways; 0: per-rank links)
#   EPOCHS=3  REPEATS=3  BATCH=512  FANOUTS=10,10  LATENCY=auto (tessel's own: an 8-byte allreduce through its
#     communicator among the workload's ranks, over its 2 ceil(log2 P) latencies; or e.g. 20us)
#   BURST=256kb (tbf's bucket: bytes that pass at once after a pause; a real link has little; it must exceed the
#     loopback's MTU, 64 KiB unless MTU= sets it, e.g. MTU=9000 BURST=32kb)
#   CSBM_NODES=100000  DATA=../shared/data  DOC=1  JSONL= (a copy of every run's record)
#   GCN_FLAGS= (more `tessel train gcn` options for every GCN run, e.g. "--eval-every 0")
set -euo pipefail
# shellcheck source=tools/bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start 22 tessel "$@"
tessel=$(realpath "$build/tools/tessel")
ring_bench="$build/tools/bench/tessel_ring_allreduce_bench"
[[ -x $ring_bench ]] || { echo "error: no $ring_bench (the latency probe; configure with -DTESSEL_BENCH=ON and build it)" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "error: needs root (ip netns add, tc qdisc); run it as root or under sudo" >&2; exit 1; }
for tool in ip tc mpirun python3; do
  command -v "$tool" >/dev/null || { echo "error: $tool not found (ip, tc: apt-get install iproute2; mpirun: openmpi-bin)" >&2; exit 1; }
done
WORKLOADS=${WORKLOADS:-csbm:2 facebook:2 svm:2}
LINKS=${LINKS:-unshaped 10gbit 1gbit 100mbit}
CONFIGS=${CONFIGS:-plain compressed skewed best}
SVM_CONFIGS=${SVM_CONFIGS:-smo batch}
EPOCHS=${EPOCHS:-3}
REPEATS=${REPEATS:-3}
BATCH=${BATCH:-512}
FANOUTS=${FANOUTS:-10,10}
LATENCY=${LATENCY:-auto}
CSBM_NODES=${CSBM_NODES:-100000}
DATA=${DATA:-${TESSEL_SHARED_DATA:-$repo/../shared/data}}
DOC=${DOC:-1}
GCN_FLAGS=${GCN_FLAGS:-}
SHARED=${SHARED:-1}
BURST=${BURST:-256kb}
MTU=${MTU:-}
export CSBM_NODES OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
python=$(command -v python3)
for link in $LINKS; do
  [[ $link == unshaped || $link =~ ^[0-9]+(k|m|g)bit$ ]] || { echo "error: link '$link' is not unshaped or N{k,m,g}bit" >&2; exit 1; }
done
for cfg in $CONFIGS; do
  [[ $cfg =~ ^(plain|compressed|skewed|best|pipelined|adaptive|wholecache)$ ]] || { echo "error: configuration '$cfg' is not plain, compressed, skewed, best, pipelined, adaptive or wholecache" >&2; exit 1; }
done
for cfg in $SVM_CONFIGS; do
  [[ $cfg =~ ^(smo|batch)$ ]] || { echo "error: SVM configuration '$cfg' is not smo or batch" >&2; exit 1; }
done

# tc's size units (b, kb/k = 1024 b, mb/m = 1024 kb) -> bytes
case ${BURST,,} in
  *kb | *k) burst_bytes=$((${BURST%[kK]*} * 1024)) ;;
  *mb | *m) burst_bytes=$((${BURST%[mM]*} * 1048576)) ;;
  *b) burst_bytes=${BURST%[bB]} ;;
  *) burst_bytes=$BURST ;;
esac
[[ $burst_bytes =~ ^[0-9]+$ ]] || { echo "error: BURST=$BURST is not a tc size (e.g. 256kb, 32kb, 65536b)" >&2; exit 1; }

ns="tessel_net_$$"
work=$(mktemp -d "${TMPDIR:-/tmp}/tessel_net_bench.XXXXXX")
cleanup() {
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ip netns add "$ns" || { echo "error: ip netns add $ns failed (no network namespaces here?)" >&2; exit 1; }
ip -n "$ns" link set lo up
[[ -z $MTU ]] || ip -n "$ns" link set lo mtu "$MTU" || { echo "error: ip link set lo mtu $MTU failed" >&2; exit 1; }
results="$work/results.jsonl"
: >"$results"

# in_ns CMD...: CMD inside the namespace (the environment is kept: ip netns exec runs it directly)
in_ns() { ip netns exec "$ns" "$@"; }
mpi_in_ns() {
  local np=$1
  shift
  in_ns mpirun -np "$np" --oversubscribe --mca btl tcp,self --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo "$@"
}

# shape LINK: the loopback's root qdisc (none for unshaped)
shape() {
  tc -n "$ns" qdisc del dev lo root 2>/dev/null || true
  [[ $1 == unshaped ]] || tc -n "$ns" qdisc add dev lo root tbf rate "$1" burst "$BURST" latency 50ms \
    || { echo "error: tc qdisc add dev lo root tbf rate $1 failed (sch_tbf missing?)" >&2; exit 1; }
}

# probe BYTES -> "Mbit/s rtt_us": one TCP stream of BYTES through the namespace's loopback, then a 1-byte ping-pong
# (TCP_NODELAY, median of 2000 round trips; Python's own overhead included)
probe() {
  in_ns "$python" - "$1" <<'PY'
import socket, statistics, sys, threading, time
n = int(sys.argv[1])
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(2); port = srv.getsockname()[1]
def sink():
    c, _ = srv.accept(); got = 0
    while got < n:
        b = c.recv(1 << 20)
        if not b: break
        got += len(b)
    c.sendall(b"k"); c.close()
t = threading.Thread(target=sink); t.start()
s = socket.create_connection(("127.0.0.1", port)); buf = b"x" * (1 << 20); sent = 0; t0 = time.perf_counter()
while sent < n:
    k = min(len(buf), n - sent); s.sendall(buf[:k]); sent += k
s.recv(1); dt = time.perf_counter() - t0; t.join(); s.close()
def echo(c):
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while (b := c.recv(16)):
        c.sendall(b)
s = socket.create_connection(("127.0.0.1", port)); c, _ = srv.accept()
threading.Thread(target=echo, args=(c,), daemon=True).start()
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1); rtt = []
for _ in range(2000):
    t0 = time.perf_counter(); s.sendall(b"p"); s.recv(16); rtt.append(time.perf_counter() - t0)
print(f"{n * 8 / dt / 1e6:.1f} {statistics.median(rtt) * 1e6:.1f}")
PY
}

# mpi_latency RANKS -> microseconds: the small-message cost of tessel's own calls on this link among the workload's
# ranks. The per-message software cost is what the time model's alpha must carry: a Python TCP ping-pong includes
# none of MPI's (matching, progress) and is unsteady; Open MPI's blocking MPI_Allreduce (the earlier probe) leaves
# out the non-blocking collective and polling that tessel's communicator uses for its timeout (about half of its
# cost at 2 ranks on the loopback); among 4 ranks on 2 cores it also carries the ranks' taking turns on a core.
mpi_latency() {
  local np=$1 out
  # One 8-byte allreduce through tessel's communicator (the MPI backend's non-blocking call, polled), after a
  # barrier, the slowest rank's time, median of 1000; an allreduce is 2 ceil(log2 P) latencies in the model.
  out=$(mpi_in_ns "$np" "$ring_bench" --sizes 8 --chunks 0 --reps 1000 2>/dev/null | grep -m1 '^8 B MPI_Allreduce') \
    || { echo "error: the latency probe ($ring_bench) failed" >&2; exit 1; }
  awk -v np="$np" '{ for (i = 1; i <= NF; ++i) if ($i == "median") ms = $(i + 1) }
    END { r = 0; for (p = 1; p < np; p *= 2) ++r; printf "%.1f", ms * 1000 / (2 * r) }' <<<"$out"
}

# nominal_mbit LINK -> the tbf rate in Mbit/s
nominal_mbit() {
  local v=${1%bit}
  case $v in
    *k) awk -v x="${v%k}" 'BEGIN { print x / 1000 }' ;;
    *m) echo "${v%m}" ;;
    *g) echo $((${v%g} * 1000)) ;;
  esac
}

# record KEY=VALUE... METRICS_OR_JSON_FILE: one JSON line of $results
record() {
  "$python" - "$results" "$@" <<'PY'
import json, sys
out, *kv = sys.argv[1:]
rec = dict(a.split("=", 1) for a in kv[:-1])
rec["lines"] = [json.loads(l) for l in open(kv[-1]) if l.strip()]
with open(out, "a") as f:
    f.write(json.dumps(rec) + "\n")
PY
}

declare -A gcn_flags=([plain]="" [compressed]="--feature-compress int8 --grad-compress topk:0.02"
  [skewed]="--skew-variance 2" [best]="--skew-variance 2 --feature-compress int8 --grad-compress topk:0.02"
  [pipelined]="--skew-variance 2 --feature-compress int8 --grad-compress topk:0.02 --grad-staleness 1"
  [adaptive]="--skew-variance 2 --feature-compress auto --grad-compress auto --grad-staleness 1"
  [wholecache]="--feature-cache -1")
for wl in $WORKLOADS; do
  [[ $wl =~ ^(csbm|facebook|svm):[0-9]+$ ]] || { echo "error: workload '$wl' is not csbm:N, facebook:N or svm:N" >&2; exit 1; }
  graph=${wl%%:*}
  ranks=${wl#*:}
  if [[ $graph == svm ]]; then
    train="$DATA/svm/a9a/a9a"
    [[ -f "$train" && -f "$train.t" ]] || { echo "error: no a9a at $DATA/svm/a9a" >&2; exit 1; }
  else
    data=$(bench_dataset "$graph")
    parts="$work/$graph-metis$ranks"
    [[ -d "$parts" ]] || "$tessel" --log-level warn partition "$data" -k "$ranks" --method metis --seed 1 -o "$parts" >/dev/null
  fi
  for link in $LINKS; do
    shape "$link"
    if [[ $link == unshaped ]]; then probe_bytes=1000000000; else probe_bytes=$(($(nominal_mbit "$link") * 125000 / 2)); fi
    read -r mbit rtt <<<"$(probe "$probe_bytes")"
    alpha=$(mpi_latency "$ranks")
    echo "== $wl over $link: probed $mbit Mbit/s, round trip $rtt us, MPI latency $alpha us" >&2
    if [[ $link == unshaped ]]; then bw="$(printf '%.0f' "$mbit")Mbit"; else bw="$(nominal_mbit "$link")Mbit"; fi
    if [[ $LATENCY == auto ]]; then lat="$(awk -v a="$alpha" 'BEGIN { printf "%.0f", a }')us"; else lat=$LATENCY; fi
    net="$bw,$lat"
    [[ $SHARED == 1 ]] && net="$net,shared"
    # tbf's bucket, as the model's burst (tc's kb = 1024 bytes); unshaped: none
    [[ $link == unshaped ]] || net="$net,burst=${burst_bytes}B"
    if [[ $graph == svm ]]; then
      for cfg in $SVM_CONFIGS; do
        for rep in $(seq 1 "$REPEATS"); do
          echo "   svm a9a K=$ranks --solver $cfg, run $rep, --network $net" >&2
          out="$work/svm.json"
          mpi_in_ns "$ranks" "$tessel" --log-level warn train svm --data "$train" -c 1 -g 0.05 --threads 1 --pairs shared \
            --solver "$cfg" --network "$net" --json --force --model "$work/a9a.model" >"$out"
          "$tessel" --log-level warn predict svm --json --model "$work/a9a.model" --data "$train.t" \
            --output "$work/a9a.pred" --force | tail -n 1 >>"$out"
          record workload="$wl" link="$link" config="$cfg" network="$net" probed_mbit="$mbit" rtt_us="$rtt" \
            rep="$rep" "$out"
        done
      done
    else
      for cfg in $CONFIGS; do
        echo "   $graph $ranks parts, $cfg, --network $net" >&2
        metrics="$work/metrics.jsonl"
        rm -f "$metrics"
        # shellcheck disable=SC2086  # the configuration's flags are words
        mpi_in_ns "$ranks" "$tessel" --log-level warn train gcn --partitions "$parts" --epochs "$EPOCHS" \
          --batch-size "$BATCH" --fanouts "$FANOUTS" --threads 1 --seed 0 ${gcn_flags[$cfg]} $GCN_FLAGS --network "$net" \
          --metrics "$metrics" >/dev/null
        record workload="$wl" link="$link" config="$cfg" network="$net" probed_mbit="$mbit" rtt_us="$rtt" "$metrics"
      done
    fi
  done
done
shape unshaped

tables=$("$python" - "$results" <<'PY'
import json, os, statistics, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
med = statistics.median
def link_label(r):
    bw, lat = r["network"].split(",")[:2]
    name = "unshaped" if r["link"] == "unshaped" else r["link"].replace("gbit", " Gbit/s").replace("mbit", " Mbit/s").replace("kbit", " kbit/s")
    return f"{name} (probed {float(r['probed_mbit']):.0f} Mbit/s, RTT {float(r['rtt_us']):.0f} µs)"
out = []
for wl in dict.fromkeys(r["workload"] for r in recs):
    graph, ranks = wl.split(":")
    rows = [r for r in recs if r["workload"] == wl]
    links = list(dict.fromkeys(r["link"] for r in rows))
    configs = list(dict.fromkeys(r["config"] for r in rows))
    if graph == "svm":
        out += [f"### SVM on a9a, K = {ranks} (`--pairs shared`, -c 1 -g 0.05)", "",
                "| link | solver | measured training s | predicted s | error | comm s | bytes/iteration per rank | test accuracy % | `--network` |",
                "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        for link in links:
            for cfg in configs:
                rs = [r for r in rows if r["link"] == link and r["config"] == cfg]
                if not rs: continue
                tr = [r["lines"][0] for r in rs]
                m = med(t["seconds"] for t in tr)
                p = med(t["distributed"]["predicted_seconds"] for t in tr)
                comm = med(t["distributed"]["comm_seconds"] for t in tr)
                bpi = med(t["distributed"]["bytes_per_iteration"] for t in tr)
                acc = rs[0]["lines"][1]["accuracy"]  # predict svm reports percent
                out.append(f"| {link_label(rs[0])} | {cfg} | {m:.2f} | {p:.2f} | {100 * (p - m) / m:+.0f}% | {comm:.2f} | "
                           f"{bpi:.0f} | {acc:.2f} | {rs[0]['network']} |")
        out.append("")
        continue
    nodes = int(os.environ.get("CSBM_NODES", "100000"))
    title = {"csbm": f"CSBM, {nodes // 1000}k nodes", "facebook": "Facebook page-page"}.get(graph, graph)
    out += [f"### {title}, {ranks} METIS parts ({ranks} ranks × 1 thread)", "",
            "| link | configuration | measured s/epoch | predicted s/epoch | error | vs plain | MB/epoch (eval MB) | comm s/epoch | test accuracy % | `--network` |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for link in links:
        plain = None
        for cfg in configs:
            r = next((r for r in rows if r["link"] == link and r["config"] == cfg), None)
            if r is None: continue
            ep = [l for l in r["lines"] if "epoch" in l and "final" not in l]
            fin = next(l["final"] for l in r["lines"] if "final" in l)
            m = med(l["epoch_seconds"] for l in ep)
            p = med(l["predicted_epoch_seconds"] for l in ep)
            if cfg == "plain": plain = m
            mb = med(l["total_bytes"] for l in ep) / 1e6
            ev = med(l["eval_bytes"] for l in ep) / 1e6
            comm = med(l["comm_seconds"] for l in ep)
            vs = f"{plain / m:.2f}×" if plain else "–"
            out.append(f"| {link_label(r)} | {cfg} | {m:.2f} | {p:.2f} | {100 * (p - m) / m:+.0f}% | {vs} | {mb:.2f} ({ev:.2f}) | "
                       f"{comm:.2f} | {100 * fin['test']['accuracy']:.2f} | {r['network']} |")
    out.append("")
print("\n".join(out))
PY
)

cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=""
if [[ -n $(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null) ]]; then dirty=" plus uncommitted changes"; fi
env_line="WORKLOADS=\"$WORKLOADS\" LINKS=\"$LINKS\" CONFIGS=\"$CONFIGS\" SVM_CONFIGS=\"$SVM_CONFIGS\" EPOCHS=$EPOCHS REPEATS=$REPEATS SHARED=$SHARED${GCN_FLAGS:+ GCN_FLAGS=\"$GCN_FLAGS\"}"
doc="$repo/docs/benchmarks.md"
notes=""
[[ -f "$doc" ]] && notes=$(awk '/^<!-- net_bench notes -->$/ { keep = 1 } keep { print } /^<!-- end net_bench notes -->$/ { keep = 0 }' "$doc")
section="$work/section.md"
# The plot (docs/net_epoch_time.png) when matplotlib is there (tools/setup-deps.sh --bench installs it).
plot_line=""
plot_python=""
for py in /usr/bin/python3 "$python"; do
  if [[ -z $plot_python ]] && "$py" -c "import matplotlib" 2>/dev/null; then plot_python=$py; fi
done
if [[ $DOC == 1 && -n $plot_python ]] && "$plot_python" "$repo/tools/bench/net_plot.py" "$repo/docs/net_epoch_time.png" "$results"; then
  plot_line=$'![Seconds per epoch against link bandwidth, measured and predicted, per configuration](net_epoch_time.png)\n\n'
fi
cat >"$section" <<SECTION
## Over a shaped network

Every multi-rank figure above ran over shared memory on one machine. Here a real link is made on one machine
(\`tools/bench/net_bench.sh\`): a private network namespace whose loopback is rate-limited with tbf (\`tc qdisc add
dev lo root tbf rate R burst $BURST latency 50ms\`${MTU:+, loopback MTU $MTU}; netem, which would add delay, is not available), and Open MPI on
TCP over it (\`--mca btl tcp,self --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo\`). Each link is probed
before its runs: one TCP stream of a known size (probed Mbit/s), a 1-byte Python ping-pong (median round trip) and
tessel's own latency among the workload's ranks (the median time of an 8-byte allreduce through tessel's
communicator, \`tessel_ring_allreduce_bench --sizes 8\`, over its 2⌈log₂P⌉ latency terms). Every run also passes
\`--network BANDWIDTH,LATENCY[,shared][,burst=SIZE]\` (the tbf rate, or the probed rate unshaped; LATENCY=${LATENCY}:
auto = tessel's latency; on a shaped link burst = tbf's bucket, $BURST), so tessel's time model
([comm.md](comm.md#time-model)) predicts the run it is in: *measured* is the median \`epoch_seconds\` (training +
evaluation, maximum over ranks) of $EPOCHS epochs, *predicted* the median \`predicted_epoch_seconds\`, *error* =
(predicted − measured) / measured. GCN: batch $BATCH, fanouts $FANOUTS, seed 0, default cache and \`--eval full\`
(every epoch${GCN_FLAGS:+; every GCN run adds \`$GCN_FLAGS\`}); compressed = \`--feature-compress int8 --grad-compress topk:0.02\`, skewed = \`--skew-variance 2\`,
best = both, pipelined = best with \`--grad-staleness 1\` (the gradient sum of step s overlapping step s + 1's
compute; the pipeline's second thread runs at \`--threads 1\` too), adaptive = pipelined with \`--feature-compress
auto --grad-compress auto\` (the codecs chosen from the link). *MB/epoch*: all bytes the ranks sent (\`total_bytes\`), of which the evaluation's exchange in
parentheses. SVM: median of $REPEATS trainings (\`seconds\`, predicted \`distributed.predicted_seconds\`), accuracy
by \`tessel predict svm\` on a9a.t. One tbf qdisc shapes both directions of the loopback together: two opposite
streams share the rate (measured by hand: 12.5 MB each way at 100mbit take 2.02 s, 99 Mbit/s in all); with
SHARED=$SHARED the runs $( [[ $SHARED == 1 ]] && echo "tell the model so (\`--network R,LATENCY,shared\`: a call's volume counts once per rank)" || echo "model a full-duplex link per rank").

- Machine: $(nproc) CPUs (\`nproc\`), ${cpu_model}; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end (the bench's ranks included).
- Commit: $commit$dirty, $(date -u +%Y-%m-%d); Open MPI $(mpirun --version 2>/dev/null | head -n 1 | awk '{ print $NF }'), $(uname -r).
- Command: \`$env_line tools/bench/net_bench.sh $build\` (as root).

$tables
${plot_line}${notes:+$notes
}
SECTION
if [[ $DOC == 1 ]]; then
  write_bench_section "## Over a shaped network" "$section"
fi
[[ -n "${JSONL:-}" ]] && cp "$results" "$JSONL"
cat "$section"
