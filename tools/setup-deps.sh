#!/usr/bin/env bash
# Installs the Debian 12 packages tessel needs to build, test and run (docs/dependencies.md says why each).
# As root it runs apt-get; otherwise it prints the exact apt-get line and exits non-zero. Usage: setup-deps.sh [--bench]
set -euo pipefail

packages=(
  build-essential clang clang-format cmake ninja-build pkg-config gzip bzip2 python3
  libtbb-dev libmetis-dev libopenmpi-dev openmpi-bin libptscotch-dev libscotchparmetis-dev liblzma-dev
  libgtest-dev libgmock-dev libcli11-dev nlohmann-json3-dev libfmt-dev libspdlog-dev
  libopenblas-dev zlib1g-dev libbz2-dev libxxhash-dev
  libsvm-tools metis dpkg-dev
  python3-dev pybind11-dev python3-numpy python3-scipy python3-sklearn python3-pytest
)
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(python3-torch python3-numpy python3-scipy python3-matplotlib time dataset-fashion-mnist)
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

line="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  echo "tessel needs these Debian packages: ${missing[*]}" >&2
  echo "run as root:  $line" >&2
  exit 1
fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
