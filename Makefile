# Entry points for people and CI. `make demo` and `make test` are the README's two commands; both install missing
# Debian packages first (tools/setup-deps.sh), configure with CMake + Ninja and build in Release.
BUILD ?= build
ASAN_BUILD ?= build-asan
CLANG_BUILD ?= build-clang
FUZZ_BUILD ?= build-fuzz
PACKAGE_BUILD ?= build-package
FUZZ_SECONDS ?= 600
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: deps configure build demo test test-clang asan fuzz ci format format-check tidy bench-deps clean \
  package install-check

deps:
	@tools/setup-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) > $(BUILD).configure.log 2>&1 \
	  || { cat $(BUILD).configure.log; exit 1; }

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@tools/demo.sh $(BUILD)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600

# The same suite built by Clang (CUDA off: nvcc keeps GCC as its host compiler in the main build; benchmarks off:
# `make test` builds them). The real-data tests are left to `make test`: they exercise the same code paths on
# bigger inputs.
test-clang: deps
	@cmake -S . -B $(CLANG_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_CXX_COMPILER=clang++ -DTESSEL_CUDA=OFF -DTESSEL_BENCH=OFF $(CMAKE_FLAGS) > $(CLANG_BUILD).configure.log 2>&1 \
	  || { cat $(CLANG_BUILD).configure.log; exit 1; }
	@cmake --build $(CLANG_BUILD) -j $(JOBS)
	@cd $(CLANG_BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600 -LE realdata

# What CI runs (.ci/run): the README's test command (GCC, CUDA compiled), then the sanitizer build, which is the Clang
# build too (two trees, not three: Clang's warnings do not depend on the optimisation level, so -Werror under the
# sanitizer build checks what test-clang's Release build checks, and a clean clone builds in about two thirds of the
# time it took with a separate Clang tree).
ci: test asan format-check

# AddressSanitizer + UndefinedBehaviorSanitizer build of the suite, compiled by Clang (CUDA off: the sanitizers do
# not see device code; the real-data tests are left to `make test`, as for test-clang, to keep CI within its hour on
# two cores). Line tables only (-gline-tables-only): the sanitizers' reports keep file:line, the build skips full
# debug info. ASAN_CXX=g++ builds it with GCC instead.
ASAN_CXX ?= clang++
ASAN_CC ?= $(if $(filter g++%,$(ASAN_CXX)),gcc,clang)
ASAN_DEBUG ?= $(if $(filter g++%,$(ASAN_CXX)),-g1,-gline-tables-only)
asan: deps
	@cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=$(ASAN_CC) \
	  -DCMAKE_CXX_COMPILER=$(ASAN_CXX) "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 $(ASAN_DEBUG) -DNDEBUG" \
	  -DTESSEL_SANITIZE=ON -DTESSEL_CUDA=OFF -DTESSEL_BENCH=OFF $(CMAKE_FLAGS) > $(ASAN_BUILD).configure.log 2>&1 \
	  || { cat $(ASAN_BUILD).configure.log; exit 1; }
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS) --timeout 1200 -LE realdata

# libFuzzer on every input reader and the CLI parser (tests/fuzz): Clang with -fsanitize=fuzzer,address,undefined,
# FUZZ_SECONDS per target from a scratch copy of tests/fuzz/corpus, then a summary (target, seconds, executions,
# exec/s, crashes). tools/fuzz.sh documents FUZZ_PARALLEL, FUZZ_MERGE and FUZZ_ARGS. The corpus itself is replayed
# by ctest in every build (tests fuzz_replay_*, label fuzz).
fuzz: deps
	@cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_CXX_COMPILER=clang++ -DTESSEL_FUZZ=ON -DTESSEL_CUDA=OFF -DTESSEL_BENCH=OFF $(CMAKE_FLAGS) \
	  > $(FUZZ_BUILD).configure.log 2>&1 || { cat $(FUZZ_BUILD).configure.log; exit 1; }
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target tessel_fuzz_targets
	@FUZZ_SECONDS=$(FUZZ_SECONDS) tools/fuzz.sh $(FUZZ_BUILD)

SOURCES = $(shell git ls-files '*.h' '*.cc' '*.cu' '*.cuh')
format:
	@clang-format -i $(SOURCES)
format-check:
	@clang-format --dry-run --Werror $(SOURCES)
tidy: configure
	@clang-tidy -p $(BUILD) --quiet $(filter %.cc,$(SOURCES))

bench-deps:
	@tools/setup-deps.sh --bench

# The Debian package (docs/install.md): cpack -G DEB in a CPU-only Release tree of the libraries and the binary
# ($(PACKAGE_BUILD); a CUDA build's binary would need /usr/local/cuda, which no Debian package provides). Writes
# $(PACKAGE_BUILD)/tessel_<version>_amd64.deb.
package: deps
	@cmake -S . -B $(PACKAGE_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_CUDA=OFF -DTESSEL_TESTS=OFF \
	  -DTESSEL_BENCH=OFF -DTESSEL_PYTHON=OFF $(CMAKE_FLAGS) > $(PACKAGE_BUILD).configure.log 2>&1 \
	  || { cat $(PACKAGE_BUILD).configure.log; exit 1; }
	@cmake --build $(PACKAGE_BUILD) -j $(JOBS)
	@cd $(PACKAGE_BUILD) && cpack -G DEB

# `cmake --install` of $(BUILD) into a temporary prefix and a find_package(tessel) consumer built against it
# (tools/check_install.sh; also the ctest install_check).
install-check: build
	@tools/check_install.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(CLANG_BUILD) $(FUZZ_BUILD) $(PACKAGE_BUILD) $(BUILD).configure.log $(ASAN_BUILD).configure.log \
	  $(CLANG_BUILD).configure.log $(FUZZ_BUILD).configure.log
