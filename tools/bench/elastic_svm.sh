# shellcheck shell=bash
# The distributed SVM's part of tools/bench/elastic_bench.sh (PART=svm), sourced by it with $tessel, $work, $DATA,
# RANKS, THREADS and WRITE set: `tessel launch -np RANKS --min-np 1 -- train svm` on a9a (-c 1 -g 0.05, the
# benchmarks' setting) beside svm-train (the baseline of the answer: its objective and its predictions on a9a.t), and
# the undisturbed launch (the baseline of the time: SMO run first and last, compared with their mean; batched once).
# Faults (TESSEL_FAULT, first run only) at the check point half way through the undisturbed solve: SMO with rank
# RANKS-1 killed or stopped (--timeout 5), batched with it killed.
bench_need_tool svm-train "apt-get install libsvm-tools"
a9a="$DATA/svm/a9a/a9a"
a9at="$DATA/svm/a9a/a9a.t"
[[ -f "$a9a" && -f "$a9at" ]] || { echo "error: no a9a at $DATA/svm/a9a (see ../shared/data/svm/README.md)" >&2; exit 1; }
svm_args=(-c 1 -g 0.05)

echo "== svm-train ${svm_args[*]} a9a" >&2
svm-train "${svm_args[@]}" "$a9a" "$work/ref.model" >"$work/ref.out"
svm-predict "$a9at" "$work/ref.model" "$work/ref.pred" >/dev/null

# svm_run NAME FAULT ARGS...: one launch (ARGS: more train svm options); leaves $work/NAME.{out,log,model,pred,wall}.
svm_run() {
  local name=$1 fault=$2 t0 t1
  shift 2
  echo "== $name" >&2
  t0=$(date +%s.%N)
  TESSEL_FAULT=$fault "$tessel" launch -np "$RANKS" --min-np 1 --mpirun-args --oversubscribe -- \
    train svm --data "$a9a" "${svm_args[@]}" --threads "$THREADS" --checkpoint "$work/$name.ck" \
    --model "$work/$name.model" --json --log-level info "$@" >"$work/$name.out" 2>"$work/$name.log" ||
    { echo "error: run $name failed; its log:" >&2; tail -20 "$work/$name.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc >"$work/$name.wall"
  svm-predict "$a9at" "$work/$name.model" "$work/$name.pred" >/dev/null
}
json_field() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

svm_run smo_base ""
smo_mid=$(($(json_field "$work/smo_base.out" "j['iterations']") / 2000))  # check points every 1,000 steps
svm_run smo_kill "kill@epoch,rank=$((RANKS - 1)),after=$smo_mid"
svm_run smo_stall "stall@epoch,rank=$((RANKS - 1)),after=$smo_mid" --timeout 5
svm_run batch_base "" --solver batch
batch_mid=$(($(json_field "$work/batch_base.out" "j['distributed']['rounds']") / 2))
svm_run batch_kill "kill@epoch,rank=$((RANKS - 1)),after=$batch_mid" --solver batch
svm_run smo_base2 ""

section="$work/svm_section.md"
{
  echo "## Ranks that leave: the distributed SVM"
  echo
  echo "Elastic SVM training (issue 50; docs/reliability.md, \"Ranks that leave\"): \`tessel launch -np $RANKS --min-np 1 --"
  echo "train svm --data a9a ${svm_args[*]} --checkpoint CK\` ($THREADS thread per rank), beside \`svm-train ${svm_args[*]}\`."
  echo "Every rank keeps the whole alpha (each step's new alphas are computed identically on every rank), so the"
  echo "survivors of a failure write the alpha of the last completed step; the launcher restarts the job on them and"
  echo "each problem starts from its saved alpha, its gradient rebuilt (G = p + Q alpha: one kernel row per support"
  echo "vector over each rank's samples). Faults at the check point half way through the undisturbed solve (SMO: check"
  echo "point $smo_mid of steps every 1,000; batched: round $batch_mid). Steps saved: SMO steps in the state the restart"
  echo "resumed from; after: the restarted run's steps; total: their sum against the undisturbed run's. Restart: from"
  echo "the failed run's end to the restarted run's \"resuming from\" line. Objective: relative difference from"
  echo "svm-train's; predictions: labels on a9a.t that differ from svm-train's."
  echo
  echo "| run | ranks at the end | steps lost | steps saved + after = total (undisturbed) | restart (s) | wall (s) | vs baseline (s) | objective | vs svm-train | predictions differing |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  python3 - "$work" "$RANKS" <<'PY'
import json, re, sys
work, ranks = sys.argv[1], int(sys.argv[2])
ref_obj = float(re.findall(r"obj = (-?[0-9.]+)", open(f"{work}/ref.out").read())[-1])
ref_pred = open(f"{work}/ref.pred").read().split()
wall = lambda n: float(open(f"{work}/{n}.wall").read())
base = {"smo": (wall("smo_base") + wall("smo_base2")) / 2, "batch": wall("batch_base")}
undisturbed = {s: json.load(open(f"{work}/{s}_base.out"))["iterations"] for s in ("smo", "batch")}
rows = [("smo_base", "SMO, undisturbed (first run of the script)"),
        ("smo_kill", f"SMO, rank {ranks - 1} killed (SIGKILL) mid-solve"),
        ("smo_stall", f"SMO, rank {ranks - 1} stopped (SIGSTOP) mid-solve, --timeout 5"),
        ("smo_base2", "SMO, undisturbed (last run of the script)"),
        ("batch_base", "--solver batch, undisturbed"),
        ("batch_kill", f"--solver batch, rank {ranks - 1} killed (SIGKILL) mid-solve")]
for name, label in rows:
    solver = name.split("_")[0]
    j = json.load(open(f"{work}/{name}.out"))
    log = open(f"{work}/{name}.log").read()
    saved = re.findall(r"\((\d+) SMO steps into it\)", log)
    lost = re.findall(r"steps lost: (\d+)", log)
    restart = re.findall(r"resumed \(its state loaded\) ([0-9.]+) s", log)
    ended = re.findall(r"finished on (\d+) rank", log)
    after = j["iterations"]
    steps = (f"{saved[0]} + {after} = {int(saved[0]) + after} ({undisturbed[solver]})" if saved
             else f"{after} ({undisturbed[solver]})")
    obj = j["pairs"][0]["obj"]
    pred = open(f"{work}/{name}.pred").read().split()
    differ = sum(a != b for a, b in zip(pred, ref_pred)) + abs(len(pred) - len(ref_pred))
    print(f"| {label} | {ended[0] if ended else '-'} | {lost[0] if lost else '-'} | {steps} | "
          f"{restart[0] if restart else '-'} | {wall(name):.1f} | {wall(name) - base[solver]:+.1f} | {obj:.6f} | "
          f"{abs(obj - ref_obj) / abs(ref_obj):.1e} | {differ} of {len(ref_pred)} |")
PY
  echo
  echo "Measured $(date -u +%Y-%m-%d) with \`PART=svm tools/bench/elastic_bench.sh BUILD\` on $(nproc) cores shared with other"
  echo "agents' builds and tests: times are disturbed (compare the two SMO baseline rows), and $RANKS ranks oversubscribe"
  echo "the cores. mpirun waits \`--term-grace\` (3 s) between its SIGTERM to the survivors and its SIGKILL, and a stopped"
  echo "rank is found after \`--timeout\` (5 s); both are in the wall time of their rows."
} >"$section"
if [[ "$WRITE" == 1 ]]; then write_bench_section "## Ranks that leave: the distributed SVM" "$section"; else cat "$section"; fi
