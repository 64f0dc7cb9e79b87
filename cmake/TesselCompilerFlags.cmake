# Warning and sanitizer flags shared by every tessel target (through the tessel_flags interface library).
# tessel_flags is exported with the libraries (cmake/TesselInstall.cmake) because tessel_core links it publicly, but
# every compile option is BUILD_INTERFACE-only: a project that does find_package(tessel) must not inherit -Werror,
# our warning set or -march. Only the sanitizer link options are exported, since a sanitized static library cannot be
# linked without its runtime.
add_library(tessel_flags INTERFACE)
target_compile_options(tessel_flags INTERFACE
  $<BUILD_INTERFACE:$<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wconversion
    -Wno-sign-conversion>>)
if(TESSEL_WERROR)
  target_compile_options(tessel_flags INTERFACE $<BUILD_INTERFACE:$<$<COMPILE_LANGUAGE:CXX>:-Werror>>)
endif()
if(TESSEL_SANITIZE)
  target_compile_options(tessel_flags INTERFACE
    $<BUILD_INTERFACE:$<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer
      -fno-sanitize-recover=undefined>>)
  target_link_options(tessel_flags INTERFACE -fsanitize=address,undefined)
endif()
if(TESSEL_FUZZ)
  # `make fuzz` (tests/fuzz): coverage for libFuzzer plus ASan and UBSan in every tessel target; the fuzz_<target>
  # executables add -fsanitize=fuzzer at link time (tests/fuzz/CMakeLists.txt).
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TESSEL_FUZZ=ON needs Clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  if(NOT TESSEL_TESTS)
    message(FATAL_ERROR "TESSEL_FUZZ=ON needs TESSEL_TESTS=ON (the fuzz targets live in tests/fuzz)")
  endif()
  target_compile_options(tessel_flags INTERFACE
    $<BUILD_INTERFACE:$<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
      -fno-sanitize-recover=undefined>>)
  target_link_options(tessel_flags INTERFACE -fsanitize=address,undefined)
endif()
target_compile_options(tessel_flags INTERFACE
  $<BUILD_INTERFACE:$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CONFIG:Release>>:-march=x86-64-v2>>)
