#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz (`make fuzz`). Each target fuzzes for FUZZ_SECONDS in a scratch corpus
# seeded from the checked-in one (tests/fuzz/corpus/<target>/, which is never written here unless FUZZ_MERGE=1), and
# a summary line per target gives seconds, executions, exec/s and crashes (inputs under BUILD/fuzz-work/<target>/
# artifacts/). Usage: tools/fuzz.sh BUILD_DIR [TARGET...]
#   FUZZ_SECONDS   seconds per target (default 600)
#   FUZZ_PARALLEL  targets fuzzed at the same time (default 1)
#   FUZZ_MERGE=1   afterwards minimise (-merge=1) the scratch corpus back into tests/fuzz/corpus/<target>/, keeping
#                  the regression-* files
#   FUZZ_ARGS      extra libFuzzer flags
# Crashes do not stop a run (-fork=1 -ignore_crashes=1): every finding is kept. Reproduce one with
# BUILD/tests/fuzz/fuzz_<target> ARTIFACT, or BUILD/tests/fuzz/replay_<target> ARTIFACT in any build.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:?usage: tools/fuzz.sh BUILD_DIR [TARGET...]}"
shift
BUILD="$(cd "$BUILD" && pwd)"
ALL_TARGETS=(edgelist metis linqs nodetable ogb libsvm idx native partition svm_model checkpoint svm_state cli)
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL_TARGETS[@]}")
SECONDS_PER="${FUZZ_SECONDS:-600}"
PARALLEL="${FUZZ_PARALLEL:-1}"
WORK="$BUILD/fuzz-work"

max_len() {
  case "$1" in
    cli) echo 512 ;;
    svm_model) echo 16384 ;;  # heart_scale's model is 14 KB
    *) echo 4096 ;;
  esac
}

run_one() {
  local t="$1" bin="$BUILD/tests/fuzz/fuzz_$1" dir="$WORK/$1"
  [ -x "$bin" ] || { echo "$bin: not built (cmake --build $BUILD --target tessel_fuzz_targets)" >&2; return 1; }
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/artifacts" "$dir/seeds" "$dir/tmp"
  # The targets' scratch folders (fuzz_util.h ScratchDir) go here: fork-mode workers exit without removing theirs.
  export TMPDIR="$dir/tmp"
  cp "$ROOT/tests/fuzz/corpus/$t/"* "$dir/corpus/" 2>/dev/null || true
  # The template-based targets write their valid inputs as seeds on the first run (fuzz_util.h MaybeWriteSeed).
  TESSEL_FUZZ_WRITE_SEEDS="$dir/seeds" "$bin" -runs=0 "$dir/seeds" > /dev/null 2>&1 || true
  cp "$dir/seeds/"* "$dir/corpus/" 2>/dev/null || true
  local start end
  start=$(date +%s)
  # The memory limits keep a decompression bomb or a huge declared count from stalling the run: it is reported
  # as an oom-* artifact instead.
  (cd "$dir" && "$bin" -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 -max_total_time="$SECONDS_PER" \
    -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=20 -max_len="$(max_len "$t")" \
    -artifact_prefix="$dir/artifacts/" ${FUZZ_ARGS:-} "$dir/corpus" > "$dir/log.txt" 2>&1) || true
  end=$(date +%s)
  # Fork mode reports "#<executions>: cov: ... exec/s <rate> ..." on its progress lines; the last one is the total.
  local execs rate crashes
  execs=$( (grep -aoE '^#[0-9]+' "$dir/log.txt" || true) | tail -1 | tr -d '#')
  rate=$( (grep -aoE 'exec/s:? [0-9]+' "$dir/log.txt" || true) | tail -1 | awk '{print $2}')
  crashes=$(find "$dir/artifacts" -type f | wc -l)
  echo "$t $((end - start)) ${execs:-0} ${rate:-0} $crashes" > "$dir/summary.txt"
  if [ "${FUZZ_MERGE:-0}" = 1 ]; then
    local dest="$ROOT/tests/fuzz/corpus/$t" fresh="$dir/merged"
    rm -rf "$fresh"
    mkdir -p "$fresh"
    # Replaces the checked-in corpus only when the merge succeeded and kept something.
    # Edge coverage only (-use_counters=0): far fewer files than with hit counts, for a corpus small enough to keep.
    if "$bin" -merge=1 -use_counters=0 -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len="$(max_len "$t")" "$fresh" "$dest" \
      "$dir/corpus" > "$dir/merge.txt" 2>&1 && [ -n "$(ls -A "$fresh")" ]; then
      find "$dest" -type f ! -name 'regression-*' -delete
      cp "$fresh/"* "$dest/"
    else
      echo "$t: merge failed, tests/fuzz/corpus/$t left as it was (see $dir/merge.txt)" >&2
    fi
  fi
}

pids=()
for t in "${TARGETS[@]}"; do
  run_one "$t" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$PARALLEL" ]; then
    wait "${pids[0]}" || true
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || true; done

printf '%-12s %8s %12s %8s %8s\n' target seconds executions exec/s crashes
status=0
for t in "${TARGETS[@]}"; do
  if [ -f "$WORK/$t/summary.txt" ]; then
    read -r name secs execs rate crashes < "$WORK/$t/summary.txt"
    printf '%-12s %8s %12s %8s %8s\n' "$name" "$secs" "$execs" "$rate" "$crashes"
    [ "$crashes" -eq 0 ] || status=1
  else
    printf '%-12s %8s\n' "$t" "not run"
    status=1
  fi
done
[ $status -eq 0 ] || echo "findings: $WORK/<target>/artifacts/ (log: $WORK/<target>/log.txt)"
exit $status
