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
endif()
if(TESSEL_TESTS)
  find_package(GTest REQUIRED)             # libgtest-dev, libgmock-dev
endif()
