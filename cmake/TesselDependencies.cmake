# Every third-party dependency, each from a Debian package (see docs/dependencies.md and tools/setup-deps.sh).
find_package(Threads REQUIRED)
find_package(TBB REQUIRED)                 # libtbb-dev: parallel_for, task arenas
find_package(METIS REQUIRED)               # libmetis-dev: k-way partitioning
find_package(CLI11 REQUIRED)               # libcli11-dev: command-line parsing
find_package(nlohmann_json 3.10 REQUIRED)  # nlohmann-json3-dev: manifests, metrics
find_package(fmt REQUIRED)                 # libfmt-dev: formatting
find_package(spdlog REQUIRED)              # libspdlog-dev: logging
find_package(ZLIB REQUIRED)                # zlib1g-dev: .gz inputs
find_package(BZip2 REQUIRED)               # libbz2-dev: .bz2 inputs
find_package(XXHASH REQUIRED)              # libxxhash-dev: array checksums
set(BLA_VENDOR OpenBLAS)
find_package(BLAS REQUIRED)                # libopenblas-dev: CPU GEMM
if(TESSEL_MPI)
  find_package(MPI REQUIRED COMPONENTS CXX)  # libopenmpi-dev, openmpi-bin
  # libptscotch-dev, libscotchparmetis-dev: distributed partitioning (`mpirun tessel partition`) through ParMETIS's
  # API, 64-bit. Optional: without it the distributed METIS path refuses with a message naming the packages.
  find_package(PTScotchParMETIS)
endif()
set(TESSEL_HAVE_PARMETIS OFF)
if(TESSEL_MPI AND PTScotchParMETIS_FOUND)
  set(TESSEL_HAVE_PARMETIS ON)
endif()
if(TESSEL_TESTS)
  find_package(GTest REQUIRED)             # libgtest-dev, libgmock-dev
endif()

# The Python package (python/): Debian's python3-dev and pybind11-dev. Debian's interpreter is preferred over
# another python3 on PATH, since NumPy, SciPy and scikit-learn come from Debian packages (tools/setup-deps.sh).
set(TESSEL_HAVE_PYTHON OFF)
if(NOT TESSEL_PYTHON STREQUAL "OFF" AND NOT TESSEL_SANITIZE AND NOT TESSEL_FUZZ)
  if(NOT DEFINED Python3_EXECUTABLE AND NOT SKBUILD AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  if(TESSEL_PYTHON STREQUAL "ON")
    find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module)
    find_package(pybind11 CONFIG REQUIRED)
  else()
    find_package(Python3 COMPONENTS Interpreter Development.Module)
    if(Python3_FOUND)
      find_package(pybind11 CONFIG QUIET)
    endif()
  endif()
  if(Python3_FOUND AND pybind11_FOUND)
    set(TESSEL_HAVE_PYTHON ON)
  elseif(TESSEL_PYTHON STREQUAL "AUTO")
    message(STATUS "tessel: the Python package is not built (needs python3-dev and pybind11-dev)")
  endif()
endif()
