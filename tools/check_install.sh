#!/usr/bin/env bash
# The C++ install check (docs/install.md): installs a build tree into a fresh temporary prefix with `cmake --install`,
# checks that the exported CMake package carries none of the project's own compile flags and no path of the build or
# source tree, configures and builds tests/install_consumer (find_package(tessel), Ninja) against it, runs the
# consumer and checks its line, runs <prefix>/bin/tessel --help, and removes everything it made.
#
# Usage: tools/check_install.sh [BUILD_DIR]      (default: build)
#        tools/check_install.sh --prefix DIR      an existing install instead (e.g. /usr after the .deb)
# Exit 0: passed; 77: skipped (the build has no tessel binary); anything else: failed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
mode=build
if [[ "${1:-}" == "--prefix" ]]; then
  mode=prefix
  prefix=${2:?"--prefix needs a directory"}
  build=""
else
  build=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "check_install: no build directory ${1:-build}" >&2; exit 1; }
  if [[ ! -x "$build/tools/tessel" ]]; then
    echo "check_install: skipped, $build has no tessel binary (build it first)"
    exit 77
  fi
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tessel-install-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "check_install: FAILED: $*" >&2
  exit 1
}
step() { printf 'check_install: %-44s %s s\n' "$1" "$(( SECONDS - t0 ))"; t0=$SECONDS; }
t0=$SECONDS
cxx=c++
if [[ $mode == build ]]; then
  prefix="$tmp/prefix"
  cmake --install "$build" --prefix "$prefix" > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install"; }
  # Build the consumer with the compiler that built the libraries (a Clang tree, say).
  cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
  step "cmake --install ($prefix)"
fi

cmakedir="$prefix/lib/cmake/tessel"
for f in tesselConfig.cmake tesselConfigVersion.cmake tesselTargets.cmake FindMETIS.cmake FindXXHASH.cmake \
         TesselImportedLibrary.cmake; do
  [[ -f "$cmakedir/$f" ]] || fail "missing $cmakedir/$f"
done
for f in bin/tessel include/tessel/core/buffer.h include/tessel/core/build_config.h \
         include/tessel/datasets/graph_builder.h include/tessel/svm/svm_train.h lib/libtessel_core.a \
         lib/libtessel_train.a lib/libtessel_svm.a; do
  [[ -e "$prefix/$f" ]] || fail "missing $prefix/$f"
done
# Consumers must not inherit our warnings, -Werror or -march (cmake/TesselCompilerFlags.cmake), and an installed
# package must not point back into the tree it was built from.
if grep -n -E -- '-Werror|-Wall|-Wextra|-Wconversion|-march=' "$cmakedir"/tesselTargets*.cmake; then
  fail "the exported targets carry the project's compile flags"
fi
if [[ $mode == build ]] && grep -n -F -e "$root" -e "$build" "$cmakedir"/*.cmake; then
  fail "the exported CMake files name the source or build tree"
fi

cmake -S "$root/tests/install_consumer" -B "$tmp/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > "$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; fail "consumer configure"; }
found=$(sed -n 's/^tessel_DIR:PATH=//p' "$tmp/consumer/CMakeCache.txt")
[[ "$(cd "$found" && pwd -P)" == "$(cd "$cmakedir" && pwd -P)" ]] || fail "find_package(tessel) found $found, not $cmakedir"
step "consumer configure (find_package(tessel))"
cmake --build "$tmp/consumer" > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "consumer build"; }
if grep -q -- '-Werror' "$tmp/consumer/compile_commands.json"; then
  fail "the consumer was compiled with -Werror it did not ask for"
fi
step "consumer build"

version=$(sed -n 's/^#define TESSEL_VERSION "\(.*\)"$/\1/p' "$prefix/include/tessel/core/build_config.h")
expected="tessel $version nodes=4 entries=8 degree2=3 self_loops_removed=1 duplicates_removed=2"
got=$("$tmp/consumer/tessel_consumer") || fail "the consumer exited with $?"
[[ "$got" == "$expected" ]] || fail "the consumer printed '$got', expected '$expected'"
help=$("$prefix/bin/tessel" --help) || fail "$prefix/bin/tessel --help exited with $?"
grep -q '^Subcommands:' <<< "$help" || fail "$prefix/bin/tessel --help printed no subcommands"
step "consumer run, tessel --help"
echo "check_install: passed ($got)"
