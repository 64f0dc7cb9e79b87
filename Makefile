# Entry points for people and CI. `make demo` and `make test` are the README's two commands; both install missing
# Debian packages first (tools/setup-deps.sh), configure with CMake + Ninja and build in Release.
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: deps configure build demo test asan format format-check tidy bench-deps clean

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

# AddressSanitizer + UndefinedBehaviorSanitizer build of the whole suite (CUDA off: the sanitizers do not see device code).
asan: deps
	@cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSEL_SANITIZE=ON -DTESSEL_CUDA=OFF \
	  -DTESSEL_BENCH=OFF $(CMAKE_FLAGS) > $(ASAN_BUILD).configure.log 2>&1 || { cat $(ASAN_BUILD).configure.log; exit 1; }
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS) --timeout 1200

SOURCES = $(shell git ls-files '*.h' '*.cc' '*.cu' '*.cuh')
format:
	@clang-format -i $(SOURCES)
format-check:
	@clang-format --dry-run --Werror $(SOURCES)
tidy: configure
	@clang-tidy -p $(BUILD) --quiet $(filter %.cc,$(SOURCES))

bench-deps:
	@tools/setup-deps.sh --bench

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(BUILD).configure.log $(ASAN_BUILD).configure.log
