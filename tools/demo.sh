#!/usr/bin/env bash
# The README's demo: convert the bundled Cora (tests/data/cora) into a native dataset, print `tessel info`, then
# train a GCN on it (paper settings) and print its test accuracy.
# Usage: tools/demo.sh BUILD_DIR. Outputs go to BUILD_DIR/demo/.
set -euo pipefail
build=${1:-build}
tessel="$build/tools/tessel"
out="$build/demo"
mkdir -p "$out"
"$tessel" convert --from nodetable tests/data/cora/cora --name cora --output "$out/cora" --force
"$tessel" info "$out/cora"
# --force: a second `make demo` replaces the first one's checkpoint (as convert --force replaces its dataset).
"$tessel" train gcn --dataset "$out/cora" --normalize-features l1 --checkpoint "$out/cora-gcn" --force
