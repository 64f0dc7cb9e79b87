// TESSEL_CLONE_AVX2: a function attribute that compiles the function twice, for the x86-64-v2 baseline and for
// AVX2, the loader picking one by the CPU (GCC/Clang target_clones, an ifunc). "avx2" is a feature test
// (__builtin_cpu_supports); "arch=haswell" would test the CPU model and pick the baseline on every later one. No
// FMA is enabled, so no multiply-add is contracted: a clone's float results are the baseline's, bit for bit. Off
// under AddressSanitizer (ifunc resolvers run before its runtime), outside x86-64 Linux, and with
// -DTESSEL_NO_AVX2_CLONES (the baseline alone: how fast the code is on a machine without AVX2, measured on one with;
// it also turns off core/simd4.h's AVX2 instantiations). Kernels written with explicit 32-byte vectors use
// core/simd4.h instead: a clone's baseline would get the same 32-byte types, which GCC lowers lane by lane.
#pragma once

#if defined(__x86_64__) && defined(__linux__) && !defined(__SANITIZE_ADDRESS__) && !defined(TESSEL_NO_AVX2_CLONES)
#define TESSEL_CLONE_AVX2 __attribute__((target_clones("avx2", "default")))
#else
#define TESSEL_CLONE_AVX2
#endif
