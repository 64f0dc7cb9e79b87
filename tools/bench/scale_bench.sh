#!/usr/bin/env bash
# Scale: memory of partitioning and of distributed training against the part a rank owns, on generated CSBM graphs
# (average degree 20, 128 features, 8 classes, split 0.6/0.2/0.2, seed 1: the graphs of issue 34's table).
#   1. Partitioning: the serial command (METIS, one process, /usr/bin/time peak RSS) against `mpirun -np PRANKS tessel
#      partition` (the default distributed partitioner, --dist-partitioner coarsen since issue 51, ParMETIS before; every
#      rank's peak RSS, the part of it inside the partitioner, the edge cut and
#      the time of each step).
#   2. Training: `mpirun -np K tessel train gcn --partitions` on the distributed partition, EPOCHS epochs; per rank
#      the peak RSS, its anonymous (private) part and the bytes of its part folder (the run's --json "memory"), and
#      the test accuracy against the same run on the serial METIS partition.
# Writes a Markdown report to stdout (and to OUT when set); progress to stderr. Builds nothing.
#
# Usage: tools/bench/scale_bench.sh BUILD_DIR
# Settings (environment): NODES="250000 2000000"  KS="4 16" (parts = training ranks)  PRANKS=4 (partitioning ranks)
#   EPOCHS=2  BATCH=1024  FANOUTS=10,10  THREADS=1 (per training rank)  EXTRA="" (more train flags)  OUT=
#   KEEP=DIR (keep the generated graphs and partitions there and reuse them)
set -euo pipefail
if [[ $# -lt 1 || "$1" == "-h" || "$1" == "--help" ]]; then
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
build=$1
tessel="$(cd "$build" && pwd)/tools/tessel"
[[ -x "$tessel" ]] || { echo "error: $tessel not found; build it: ninja -C $build tessel" >&2; exit 1; }
command -v mpirun >/dev/null || { echo "error: mpirun not found (apt-get install openmpi-bin)" >&2; exit 1; }
command -v jq >/dev/null || { echo "error: scale_bench.sh needs jq (apt-get install jq)" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "error: scale_bench.sh needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
NODES=${NODES:-250000 2000000}
KS=${KS:-4 16}
PRANKS=${PRANKS:-4}
EPOCHS=${EPOCHS:-2}
BATCH=${BATCH:-1024}
FANOUTS=${FANOUTS:-10,10}
THREADS=${THREADS:-1}
EXTRA=${EXTRA:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [[ -n "${KEEP:-}" ]]; then
  work=$KEEP
  mkdir -p "$work"
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/tessel_scale_bench.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
T() { "$tessel" --log-level warn "$@"; }
mib() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1048576 }'; }
help_kib=$(/usr/bin/time -f %M "$tessel" --help 2>&1 >/dev/null | tail -1)

part_rows=()
train_rows=()
for n in $NODES; do
  data="$work/csbm$n"
  if [[ ! -d "$data" ]]; then
    echo "== generating $n nodes" >&2
    T generate csbm -n "$n" --avg-degree 20 --features 128 --classes 8 --split 0.6,0.2,0.2 --seed 1 -o "$data" >/dev/null
  fi
  data_bytes=$(du -sbL "$data" | cut -f1)
  for k in $KS; do
    serial="$work/serial-$n-$k"
    dist="$work/dist-$n-$k"
    if [[ ! -f "$serial.json" ]]; then
      echo "== $n nodes: serial METIS into $k parts" >&2
      rm -rf "$serial"
      /usr/bin/time -o "$serial.time" -f "%M %e" "$tessel" --log-level warn partition "$data" -k "$k" -o "$serial" \
        --json >"$serial.json"
    fi
    if [[ ! -f "$dist.json" ]]; then
      echo "== $n nodes: $PRANKS ranks, distributed partitioner into $k parts" >&2
      rm -rf "$dist"
      /usr/bin/time -o "$dist.time" -f "%M %e" mpirun --oversubscribe -np "$PRANKS" "$tessel" --log-level warn \
        partition "$data" -k "$k" -o "$dist" --json >"$dist.json"
    fi
    read -r s_kib s_wall <"$serial.time"
    d_wall=$(cut -d' ' -f2 "$dist.time")
    part_rows+=("$(jq -r --arg n "$n" --arg k "$k" --arg skib "$s_kib" --arg swall "$s_wall" --arg dwall "$d_wall" \
      --arg share "$((data_bytes / PRANKS))" --slurpfile s "$serial.json" '
      def mib: . / 1048576 | floor;
      "| \($n) | \($k) | \($s[0].edge_cut) | \(.edge_cut) (\((.edge_cut / $s[0].edge_cut * 100 - 100) * 10 | round / 10)%) | \($skib | tonumber / 1024 | floor) MiB | \([.ranks[].peak_rss_bytes] | max | mib) MiB | \([.ranks[].partitioner_rss_bytes] | max | mib) MiB | \([.ranks[].peak_rss_outside_partitioner_bytes] | max | mib) MiB | \($share | tonumber | mib) MiB | \($swall) s | \($dwall) s (ParMETIS \(.seconds.parmetis * 10 | round / 10) s) | \(.imbalance.nodes * 1000 | round / 1000) / \(.imbalance.edges * 1000 | round / 1000) / \(.imbalance.train * 1000 | round / 1000) |"
      ' "$dist.json")")
    for which in dist serial; do
      [[ "$which" == serial && "$n" != "${NODES##* }" ]] && continue  # accuracy baseline on the largest graph
      run="$work/train-$which-$n-$k"
      if [[ ! -f "$run.json" ]]; then
        echo "== $n nodes: training on $k ranks, $which partition" >&2
        mpirun --oversubscribe -np "$k" "$tessel" --log-level warn train gcn --partitions "$work/$which-$n-$k" \
          --epochs "$EPOCHS" --batch-size "$BATCH" --fanouts "$FANOUTS" --threads "$THREADS" --seed 1 $EXTRA \
          --json >"$run.json"
      fi
    done
    baseline="$work/train-serial-$n-$k.json"
    [[ -f "$baseline" ]] || baseline="$work/train-dist-$n-$k.json"  # no serial-partition run for this size
    train_rows+=("$(jq -r --arg n "$n" --arg k "$k" --arg help "$help_kib" --slurpfile s "$baseline" '
      def mib: . / 1048576 | floor;
      (.memory.ranks | map(.peak_rss_bytes) | max) as $peak |
      (.memory.ranks | map(.peak_rss_anon_bytes) | max) as $anon |
      (.memory.ranks | map(.part_bytes) | max) as $part |
      (.memory.ranks | map(.peak_rss_per_part_byte) | max) as $ratio |
      (.memory.ranks | map((.peak_rss_bytes - ($help | tonumber) * 1024) / .part_bytes) | max) as $ratio_lib |
      (.memory.ranks | map(.peak_rss_anon_bytes / .part_bytes) | max) as $ratio_anon |
      "| \($n) | \($k) | \($part | mib) MiB | \($peak | mib) MiB | \($ratio * 100 | round / 100) | \($ratio_lib * 100 | round / 100) | \($anon | mib) MiB | \($ratio_anon * 100 | round / 100) | \(.test.accuracy * 10000 | round / 100)% | \(if $n == "'"${NODES##* }"'" then "\($s[0].test.accuracy * 10000 | round / 100)%" else "–" end) |"
      ' "$work/train-dist-$n-$k.json")")
  done
done

report() {
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo); \`tessel --help\`"
  echo "alone: $((help_kib / 1024)) MiB peak RSS. Command: \`NODES=\"$NODES\" KS=\"$KS\" PRANKS=$PRANKS EPOCHS=$EPOCHS"
  echo "BATCH=$BATCH FANOUTS=$FANOUTS tools/bench/scale_bench.sh build\`."
  echo
  echo "| nodes | K | serial METIS cut | distributed cut (vs serial) | serial peak RSS | distributed peak RSS per rank | of which inside ParMETIS | per rank outside ParMETIS | dataset bytes / $PRANKS | serial wall | distributed wall | imbalance nodes / edges / train |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${part_rows[@]}"
  echo
  echo "| nodes | K | own part (largest) | peak RSS per rank | peak RSS / own part | (peak RSS − \`--help\` RSS) / own part | peak anonymous RSS | anonymous / own part | test accuracy, distributed partition | same run, serial METIS partition |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${train_rows[@]}"
}
if [[ -n "${OUT:-}" ]]; then report | tee "$OUT"; else report; fi
