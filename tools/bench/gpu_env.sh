# Sourced by gpu_bench.sh and gpu_profile.sh: the environment of a GPU machine that has CUDA but no Debian packages.
#   gpu_env_packages CARRY   unpacks CARRY/debs/*.deb into a private prefix (dpkg -x runs no maintainer scripts and
#                            never touches /), puts its libraries on the loader's path, sets cmake_extra for a build
#                            against them, and makes the CUDA runtime and the libraries tessel opens by soname
#                            (cuBLAS, cuSPARSE) findable.
#   gpu_env_prebuilt BUILD REPO
#                            checks a build carried from elsewhere (gpu_bench_prepare.sh --build) and gives this
#                            checkout the source folder's name it was built in (the tests find tests/data by it).

gpu_env_packages() {
  local carry=$1 prefix=/tmp/tessel-prefix f l t d lib found
  cmake_extra=()
  if ls "$carry"/debs/*.deb >/dev/null 2>&1; then
    echo "== unpacking $(ls "$carry"/debs/*.deb | wc -l) packages into $prefix" >&2
    rm -rf "$prefix"
    mkdir -p "$prefix"
    for f in "$carry"/debs/*.deb; do dpkg -x "$f" "$prefix" || { echo "error: cannot unpack $f" >&2; return 1; }; done
    local libdir=$prefix/usr/lib/x86_64-linux-gnu
    # Development symlinks that point at /lib/... (zlib, bzip2) must point into the prefix, whose runtime packages
    # were carried too: the machine's own versions may have other file names.
    find "$prefix" -type l | while read -r l; do
      t=$(readlink "$l")
      if [[ "$t" == /* && -e "$prefix$t" ]]; then ln -sf "$prefix$t" "$l"; fi
    done
    # Debian's alternatives symlinks are not made by dpkg -x: point the BLAS names at OpenBLAS ourselves.
    for l in libblas.so libblas.so.3 libopenblas.so libopenblas.so.0; do
      [[ -e "$libdir/openblas-pthread/$l" ]] && ln -sf "openblas-pthread/$l" "$libdir/$l"
    done
    export CMAKE_PREFIX_PATH=$prefix/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
    export LD_LIBRARY_PATH=$libdir:$libdir/openblas-pthread:$prefix/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export PATH=$prefix/usr/bin:$PATH
    cmake_extra=(-DCMAKE_LIBRARY_PATH="$libdir/openblas-pthread;$libdir" -DCMAKE_INCLUDE_PATH="$prefix/usr/include")
  else
    echo "== no packages under $carry/debs: using the system's libraries" >&2
  fi
  # cuBLAS and cuSPARSE are opened by soname at their first call: make the toolkit's folder visible to dlopen.
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
    [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
  done
  # Where the loader still misses one, look under /usr/local and /opt (pip's nvidia-* wheels keep them there).
  for lib in libcudart.so.13 libcublas.so.13 libcusparse.so.12; do
    if ! ldconfig -p | grep -q "$lib" && ! compgen -G "{${LD_LIBRARY_PATH//:/,}}/$lib" >/dev/null; then
      found=$(timeout 20 find /usr/local /opt -name "$lib" -print -quit 2>/dev/null)
      if [[ -n "$found" ]]; then
        export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$(dirname "$found")
        echo "found $lib in $(dirname "$found")" >&2
      else
        echo "warning: $lib not found" >&2
      fi
    fi
  done
}

gpu_env_prebuilt() {
  local build=$1 repo=$2 src
  [[ -x "$build/tools/tessel" ]] \
    || { echo "error: $build/tools/tessel not found (make it: gpu_bench_prepare.sh --build)" >&2; return 1; }
  src=$(cat "$build/SOURCE_DIR" 2>/dev/null || true)
  if [[ -n "$src" && "$src" != "$repo" && ! -e "$src" ]]; then
    mkdir -p "$(dirname "$src")" && ln -s "$repo" "$src" && echo "linked $src -> $repo" >&2
  fi
  return 0
}
