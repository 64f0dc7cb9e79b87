#!/usr/bin/env bash
# Ranks that leave (issue 50): `tessel launch -np RANKS --min-np 1 -- train gcn` on a generated CSBM graph in RANKS
# METIS parts, undisturbed (the baseline: run first and last, compared with their mean) and with one rank killed in the
# middle of epoch 3 (with virtual ranks, the default, and with --no-virtual-ranks), stopped there
# (--timeout 5), or killed while rank 0 writes its scheduled checkpoint (the write fault point, --checkpoint-every 2);
# then a RANKS-rank checkpoint after EPOCHS/2 epochs resumed on 1 .. RANKS-1 ranks. Each row: epochs finished, ranks at
# the end, steps lost (the launcher's count: the step in flight and any completed after the saved state), restart time
# (the failed run's end to the restarted run's "resuming from" line: mpirun's start, the parts loaded and merged), wall time and its excess over the undisturbed run,
# test accuracy and its difference. Writes the "Ranks that leave" section of docs/benchmarks.md (WRITE=1) or prints
# it. Builds nothing.
#
# PART=seeds: the undisturbed and the killed GCN run for each of SEEDS (test accuracy: mean and spread), the killed
# one twice: with virtual ranks (the default: the restarted run follows the undisturbed run's sample path) and with
# --no-virtual-ranks (the baseline: each survivor's parts merged into one, with their own draws); section "Ranks
# that leave: GCN accuracy over seeds". PART=svm: `tessel launch -np RANKS -- train svm` on a9a (-c 1 -g 0.05)
# beside svm-train, undisturbed and with a rank killed or stopped in the middle of the solve (SMO and --solver batch):
# ranks at the end, steps saved and redone, restart time, wall time, objective against svm-train's, predictions on
# a9a.t; section "Ranks that leave: the distributed SVM".
#
# Usage: [PART=gcn|seeds|svm] tools/bench/elastic_bench.sh BUILD_DIR
# Settings: CSBM_NODES=100000 CSBM_DEGREE=20 CSBM_FEATURES=128 CSBM_HOMOPHILY=0.4 (the generator's 0.8 makes every
#   run 0.9997 accurate, which compares nothing) RANKS=4 EPOCHS=8 BATCH=512 FANOUTS=10,10 SEED=1 SEEDS="1 2 3"
#   THREADS=1 (per rank) WRITE=1 DATA (svm: DATA/svm/a9a)
set -euo pipefail
# shellcheck source=tools/bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start 18 tessel "$@"
tessel="$build/tools/tessel"
bench_need_tool mpirun "apt-get install openmpi-bin"
CSBM_NODES=${CSBM_NODES:-100000}
CSBM_DEGREE=${CSBM_DEGREE:-20}
CSBM_FEATURES=${CSBM_FEATURES:-128}
CSBM_HOMOPHILY=${CSBM_HOMOPHILY:-0.4}
RANKS=${RANKS:-4}
EPOCHS=${EPOCHS:-8}
BATCH=${BATCH:-512}
FANOUTS=${FANOUTS:-10,10}
SEED=${SEED:-1}
THREADS=${THREADS:-1}
WRITE=${WRITE:-1}
PART=${PART:-gcn}
SEEDS=${SEEDS:-1 2 3}
bench_mpi_workspace elastic_bench
if [[ "$PART" == svm ]]; then
  # shellcheck source=tools/bench/elastic_svm.sh
  source "$(dirname "${BASH_SOURCE[0]}")/elastic_svm.sh"
  exit 0
fi
data="$work/csbm"
"$tessel" --log-level warn generate csbm --nodes "$CSBM_NODES" --avg-degree "$CSBM_DEGREE" --features "$CSBM_FEATURES" \
  --classes 8 --homophily "$CSBM_HOMOPHILY" --seed 1 --output "$data" >/dev/null
parts="$work/parts"
"$tessel" --log-level warn partition "$data" -k "$RANKS" --seed 1 -o "$parts" >/dev/null
train=(train gcn --partitions "$parts" --batch-size "$BATCH" --fanouts "$FANOUTS" --threads "$THREADS" --seed "$SEED"
  --log-level info)

# run NAME NP FAULT EPOCHS ARGS...: one launch; prints "wall seconds" and leaves $work/NAME.{log,jsonl} and the
# checkpoint.
run() {
  local name=$1 np=$2 fault=$3 epochs=$4
  shift 4
  local t0 t1
  t0=$(date +%s.%N)
  TESSEL_FAULT=$fault "$tessel" launch -np "$np" --min-np 1 --mpirun-args --oversubscribe -- \
    "${train[@]}" --epochs "$epochs" --checkpoint "$work/$name.ck" --metrics "$work/$name.jsonl" "$@" >"$work/$name.out" \
    2>"$work/$name.log" || { echo "error: run $name failed; its log:" >&2; tail -20 "$work/$name.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc
}
# table ROWS_TSV: the Markdown rows. Each line of ROWS_TSV: label, wall seconds, run name. The baseline wall is the mean
# of the two undisturbed runs' (labelled "undisturbed"), the baseline accuracy theirs.
table() {
  python3 - "$1" "$work" <<'PY'
import json, re, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
work = sys.argv[2]
def fields(name):
    lines = [json.loads(l) for l in open(f"{work}/{name}.jsonl")]
    final = [l for l in lines if "final" in l][-1]["final"]
    epochs = max(l["epoch"] for l in lines if "epoch" in l)
    log = open(f"{work}/{name}.log").read()
    lost = re.findall(r"steps lost: (\d+)", log)
    restart = re.findall(r"resumed \(its state loaded, its parts merged\) ([0-9.]+) s", log)
    return epochs, final["ranks"], lost[0] if lost else "-", restart[0] if restart else "-", final["test"]["accuracy"]
base = [(float(w), n) for label, w, n in rows if label.startswith("undisturbed")]
base_wall = sum(w for w, _ in base) / len(base)
base_acc = fields(base[0][1])[4]
for label, wall, name in rows:
    e, r, lost, restart, acc = fields(name)
    print(f"| {label} | {e} | {r} | {lost} | {restart} | {float(wall):.1f} | {float(wall) - base_wall:+.1f} | "
          f"{acc:.4f} | {100 * (acc - base_acc):+.2f} |")
PY
}

if [[ "$PART" == seeds ]]; then
  # The undisturbed run and the run with rank RANKS-1 killed half way through epoch 3, for each seed.
  : >"$work/seeds.tsv"
  for seed in $SEEDS; do
    train[${#train[@]} - 3]=$seed  # --seed's value
    echo "== seed $seed" >&2
    run "base_s$seed" "$RANKS" "" "$EPOCHS" >/dev/null
    steps=$(python3 -c "import json,sys; print([json.loads(l) for l in open(sys.argv[1])][0]['steps'])" "$work/base_s$seed.jsonl")
    fault="kill@step,rank=$((RANKS - 1)),after=$((2 * steps + steps / 2))"
    run "kill_s$seed" "$RANKS" "$fault" "$EPOCHS" >/dev/null
    run "merged_s$seed" "$RANKS" "$fault" "$EPOCHS" --no-virtual-ranks >/dev/null
    printf '%s\tbase_s%s\tkill_s%s\tmerged_s%s\n' "$seed" "$seed" "$seed" "$seed" >>"$work/seeds.tsv"
  done
  section="$work/section.md"
  python3 - "$work" "$RANKS" "$EPOCHS" <<'PY' >"$section"
import json, statistics, sys
work, ranks, epochs = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def acc(name):
    lines = [json.loads(l) for l in open(f"{work}/{name}.jsonl")]
    final = [l for l in lines if "final" in l][-1]["final"]
    return final["test"]["accuracy"], final["ranks"]
rows = [l.split() for l in open(f"{work}/seeds.tsv")]
print("## Ranks that leave: GCN accuracy over seeds\n")
print(f"The CSBM run of \"Ranks that leave\" (the same graph, parts and settings) with --seed {', '.join(r[0] for r in rows)}:")
print(f"for each seed the undisturbed {ranks}-rank run and the run whose rank {ranks - 1} is killed half way through")
print(f"epoch 3 (the launcher finishes the job, from that step to epoch {epochs}, on {ranks - 1} ranks), once with virtual ranks")
print("(the default: each survivor steps its parts as their own ranks did) and once with --no-virtual-ranks (the")
print("baseline: each survivor's parts merged into one, with its own shuffles and samples). Test accuracy; the differences")
print("are killed minus undisturbed, in points.\n")
print("| seed | undisturbed | killed, virtual ranks | difference | killed, --no-virtual-ranks | difference |")
print("|---|---|---|---|---|---|")
base, kill, diff, merged, mdiff = [], [], [], [], []
for seed, b, k, m in rows:
    (ab, _), (ak, rk), (am, rm) = acc(b), acc(k), acc(m)
    base.append(ab); kill.append(ak); diff.append(100 * (ak - ab)); merged.append(am); mdiff.append(100 * (am - ab))
    print(f"| {seed} | {ab:.4f} | {ak:.4f} ({rk} ranks) | {diff[-1]:+.2f} | {am:.4f} ({rm} ranks) | {mdiff[-1]:+.2f} |")
sd = lambda x: statistics.stdev(x) if len(x) > 1 else 0.0
print(f"| mean (standard deviation) | {statistics.mean(base):.4f} ({sd(base):.4f}) | {statistics.mean(kill):.4f} "
      f"({sd(kill):.4f}) | {statistics.mean(diff):+.2f} ({sd(diff):.2f}) | {statistics.mean(merged):.4f} "
      f"({sd(merged):.4f}) | {statistics.mean(mdiff):+.2f} ({sd(mdiff):.2f}) |")
print()
PY
  echo "Measured $(date -u +%Y-%m-%d) with \`PART=seeds SEEDS=\"$SEEDS\" tools/bench/elastic_bench.sh BUILD\` on $(nproc) cores shared with other agents." >>"$section"
  if [[ "$WRITE" == 1 ]]; then write_bench_section "## Ranks that leave: GCN accuracy over seeds" "$section"; else cat "$section"; fi
  exit 0
fi

echo "== undisturbed" >&2
printf 'undisturbed, %s ranks, first run of the script\t%s\tbase1\n' "$RANKS" "$(run base1 "$RANKS" "" "$EPOCHS")" \
  >"$work/rows.tsv"
steps=$(python3 -c "import json,sys; print([json.loads(l) for l in open(sys.argv[1])][0]['steps'])" "$work/base1.jsonl")
mid=$((2 * steps + steps / 2))  # the step half way through epoch 3, counted from 0
last=$((RANKS - 1))
declare -A fault=(
  [kill]="kill@step,rank=$last,after=$mid"
  [merged]="kill@step,rank=$last,after=$mid"
  [stall]="stall@step,rank=$last,after=$mid"
  [write]="kill@write,rank=0,after=6"
)
declare -A extra=([kill]="" [merged]="--no-virtual-ranks" [stall]="--timeout 5" [write]="--checkpoint-every 2")
declare -A what=(
  [kill]="rank $last killed (SIGKILL) at step $((mid - 2 * steps + 1)) of $steps in epoch 3"
  [merged]="the same kill, --no-virtual-ranks (the survivors' parts merged, their own draws)"
  [stall]="rank $last stopped (SIGSTOP) at step $((mid - 2 * steps + 1)) of $steps in epoch 3, --timeout 5"
  [write]="rank 0 killed while writing its epoch-4 checkpoint (--checkpoint-every 2)"
)
for how in kill merged stall write; do
  echo "== $how" >&2
  # shellcheck disable=SC2086  # extra holds separate words
  printf '%s\t%s\t%s\n' "${what[$how]}" "$(run "$how" "$RANKS" "${fault[$how]}" "$EPOCHS" ${extra[$how]})" "$how" \
    >>"$work/rows.tsv"
done
echo "== a $RANKS-rank checkpoint after $((EPOCHS / 2)) epochs, resumed on fewer ranks" >&2
run half "$RANKS" "" $((EPOCHS / 2)) >/dev/null
for np in $(seq $((RANKS - 1)) -1 1); do
  cp -r "$work/half.ck" "$work/on$np.ck"
  cp "$work/half.jsonl" "$work/on$np.jsonl"
  printf '%s\t%s\t%s\n' "$RANKS-rank checkpoint after epoch $((EPOCHS / 2)) resumed on $np rank(s) (epochs $((EPOCHS / 2 + 1))-$EPOCHS only)" \
    "$(run "on$np" "$np" "" "$EPOCHS" --resume)" "on$np" >>"$work/rows.tsv"
done
echo "== undisturbed again" >&2
printf 'undisturbed, %s ranks, last run of the script\t%s\tbase2\n' "$RANKS" "$(run base2 "$RANKS" "" "$EPOCHS")" \
  >>"$work/rows.tsv"

section="$work/section.md"
{
  echo "## Ranks that leave"
  echo
  echo "Elastic GCN training (issue 50; docs/reliability.md, \"Ranks that leave\"): \`tessel launch -np $RANKS --min-np 1"
  echo "-- train gcn\` on CSBM ($CSBM_NODES nodes, average degree $CSBM_DEGREE, $CSBM_FEATURES features, 8 classes, homophily"
  echo "$CSBM_HOMOPHILY) in $RANKS METIS parts, $EPOCHS epochs, batch $BATCH per rank, fanouts $FANOUTS, seed $SEED, $THREADS thread"
  echo "per rank ($steps steps an epoch). A fault is injected with TESSEL_FAULT in the first run only; the launcher restarts"
  echo "the job on the ranks left (\`--resume\` from the state the survivors wrote). The baseline is the undisturbed run"
  echo "of the same command, run first and last in the same script run: walls are compared with their mean, accuracies"
  echo "with the first. Steps lost: the launcher's count (the step in flight, and steps completed after the saved state,"
  echo "none by construction). Restart: from the failed run's end to the restarted run's \"resuming from\" line (mpirun"
  echo "started again, the parts loaded and merged, the state read)."
  echo
  echo "| run | epochs | ranks at the end | steps lost | restart (s) | wall (s) | vs baseline (s) | test accuracy | vs baseline (points) |"
  echo "|---|---|---|---|---|---|---|---|---|"
  table "$work/rows.tsv"
  echo
  echo "Measured $(date -u +%Y-%m-%d) with \`tools/bench/elastic_bench.sh BUILD\` on $(nproc) cores shared with other"
  echo "agents' builds and tests: times are disturbed (compare the two baseline rows), and 4 ranks oversubscribe the"
  echo "cores, so 3 ranks need not be slower. mpirun waits \`--term-grace\` (3 s) between its SIGTERM to the survivors and"
  echo "its SIGKILL, and a stopped rank is found after \`--timeout\` (5 s); both are in the wall time of their rows."
  echo "Accuracy: with virtual ranks (the default) a run that ends on fewer ranks steps each part as its own rank did,"
  echo "so it follows the undisturbed run's sample path draw for draw (the gradient sums add the same floats in another"
  echo "order); the --no-virtual-ranks row is the baseline of the merged parts, which train their last epochs on other"
  echo "shuffles and samples (over seeds: \"Ranks that leave: GCN accuracy over seeds\", PART=seeds)."
} >"$section"
if [[ "$WRITE" == 1 ]]; then write_bench_section "## Ranks that leave" "$section"; else cat "$section"; fi
