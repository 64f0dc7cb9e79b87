#!/usr/bin/env bash
# Makes the virtual environment that tools/bench/minibatch_bench.sh and distdgl_bench.sh run DGL from (default
# /opt/dgl-venv; first argument to change it). DGL 2.1.0 needs PyTorch >= 1.13 with its graphbolt library built for
# that exact torch (2.0.0 .. 2.2.1); Debian 12's python3-torch reports 1.13.0a0 and is refused, so the venv takes
# torch 2.2.1 from PyPI (about 2.5 GB with its CUDA libraries; the benchmarks use the CPU only) and pins numpy < 2.
# Usage: tools/bench/setup-dgl.sh [VENV_DIR]
set -euo pipefail
venv=${1:-/opt/dgl-venv}
/usr/bin/python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet torch==2.2.1 torchdata==0.7.1 dgl==2.1.0 "numpy<2" "scipy<1.14" "pandas<2.3" \
  pydantic pyyaml psutil requests tqdm networkx
"$venv/bin/python" -c 'import dgl, torch; from dgl.dataloading import NeighborSampler; print("dgl", dgl.__version__, "torch", torch.__version__)'
