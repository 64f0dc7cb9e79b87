// Four-lane vectors for kernels written once and compiled for two machines (the SVM scans and dot products).
//
// simd4::Native: GCC/Clang 32-byte vector extensions (four doubles, four int64 lane masks), for code compiled with
// AVX2 (TESSEL_TARGET_AVX2 functions). simd4::Pair: the same four lanes as two 16-byte vectors with the same
// operators, for the x86-64-v2 baseline: there GCC lowers 32-byte vector operations piecewise, lane by lane through
// general registers (2-8 times slower than two 16-byte operations; `-Wvector-operation-performance`). A kernel is a
// struct with a static `template <class F> Run(...)` over the family (F::D, F::L), and Dispatch<Kernel>(args...)
// runs its AVX2 instantiation where the CPU has AVX2 (HasAvx2), else the baseline one. Both do the same IEEE operations
// lane by lane in the same order, so their results are equal bit for bit. A lane's double and int64 views convert by
// __builtin_bit_cast (an expression, so no function of the baseline's target sits between AVX2 code and its 32-byte
// vectors).
#pragma once

#include <cstdint>
#include <cstdlib>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tessel::simd4 {

// The AVX2 instantiations: a function attribute (GCC/Clang), empty where there is no x86-64 or AVX2 dispatch.
#if defined(__x86_64__) && !defined(TESSEL_NO_AVX2_CLONES)
#define TESSEL_SIMD4_AVX2 1
#define TESSEL_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define TESSEL_SIMD4_AVX2 0
#define TESSEL_TARGET_AVX2
#endif

// Whether the AVX2 instantiations run here: x86-64 CPUs with AVX2, unless the environment variable TESSEL_NO_AVX2
// is set (the test suite runs the SVM tests again so, checking the baseline on a machine with AVX2); never
// elsewhere or with -DTESSEL_NO_AVX2_CLONES (a build measuring the baseline).
inline bool HasAvx2() {
#if TESSEL_SIMD4_AVX2
  static const bool has = __builtin_cpu_supports("avx2") && std::getenv("TESSEL_NO_AVX2") == nullptr;
  return has;
#else
  return false;
#endif
}

struct Native {
  using D = double __attribute__((vector_size(32)));
  using L = int64_t __attribute__((vector_size(32)));
  static constexpr bool kNative = true;
};

using V2d = double __attribute__((vector_size(16)));
using V2l = int64_t __attribute__((vector_size(16)));

// Four int64 lanes (masks: -1 or 0 per lane, as vector comparisons give).
struct PairL {
  V2l lo, hi;
  PairL() = default;  // value-initialised ({}): zeros
  PairL(V2l l, V2l h) : lo(l), hi(h) {}
  PairL(int64_t a, int64_t b, int64_t c, int64_t d) : lo{a, b}, hi{c, d} {}
  int64_t operator[](int k) const { return k < 2 ? lo[k] : hi[k - 2]; }
  friend PairL operator&(const PairL& a, const PairL& b) { return {a.lo & b.lo, a.hi & b.hi}; }
  friend PairL operator|(const PairL& a, const PairL& b) { return {a.lo | b.lo, a.hi | b.hi}; }
  friend PairL operator^(const PairL& a, const PairL& b) { return {a.lo ^ b.lo, a.hi ^ b.hi}; }
  friend PairL operator~(const PairL& a) { return {~a.lo, ~a.hi}; }
  friend PairL operator!=(const PairL& a, const PairL& b) { return {a.lo != b.lo, a.hi != b.hi}; }
  friend PairL operator>(const PairL& a, const PairL& b) { return {a.lo > b.lo, a.hi > b.hi}; }
  friend PairL operator>(const PairL& a, int64_t b) { return a > PairL(b, b, b, b); }
};

// Four double lanes.
struct PairD {
  V2d lo, hi;
  PairD() = default;  // value-initialised ({}): zeros
  PairD(V2d l, V2d h) : lo(l), hi(h) {}
  PairD(double a, double b, double c, double d) : lo{a, b}, hi{c, d} {}
  double operator[](int k) const { return k < 2 ? lo[k] : hi[k - 2]; }
  friend PairD operator+(const PairD& a, const PairD& b) { return {a.lo + b.lo, a.hi + b.hi}; }
  friend PairD operator-(const PairD& a, const PairD& b) { return {a.lo - b.lo, a.hi - b.hi}; }
  friend PairD operator*(const PairD& a, const PairD& b) { return {a.lo * b.lo, a.hi * b.hi}; }
  friend PairD operator/(const PairD& a, const PairD& b) { return {a.lo / b.lo, a.hi / b.hi}; }
  friend PairD operator*(const PairD& a, double b) { return {a.lo * b, a.hi * b}; }
  friend PairD operator-(const PairD& a) { return {-a.lo, -a.hi}; }
  PairD& operator+=(const PairD& b) {
    lo += b.lo;
    hi += b.hi;
    return *this;
  }
  friend PairL operator<(const PairD& a, const PairD& b) { return {a.lo < b.lo, a.hi < b.hi}; }
  friend PairL operator<=(const PairD& a, const PairD& b) { return {a.lo <= b.lo, a.hi <= b.hi}; }
  friend PairL operator>(const PairD& a, const PairD& b) { return {a.lo > b.lo, a.hi > b.hi}; }
  friend PairL operator>=(const PairD& a, const PairD& b) { return {a.lo >= b.lo, a.hi >= b.hi}; }
  friend PairL operator==(const PairD& a, const PairD& b) { return {a.lo == b.lo, a.hi == b.hi}; }
};

struct Pair {
  using D = PairD;
  using L = PairL;
  static constexpr bool kNative = false;
  // Whether any lane of a mask is set (SSE2's pmovmskb on x86-64). The baseline's alone: the AVX2 kernels do not
  // branch on masks (svm/wss.cc).
  [[gnu::always_inline]] static bool Any(const L& m) {
#if defined(__x86_64__)
    return _mm_movemask_epi8(__builtin_bit_cast(__m128i, m.lo | m.hi)) != 0;
#else
    return (m[0] | m[1] | m[2] | m[3]) != 0;
#endif
  }
};

#if TESSEL_SIMD4_AVX2
// Kernel::Run<Native> compiled for AVX2 (Run is always_inline, so its body takes this function's target).
template <class Kernel, class... Args>
TESSEL_TARGET_AVX2 void RunAvx2(Args... args) {
  Kernel::template Run<Native>(args...);
}
#endif

// Kernel::Run<F>(args...) with F = Native in an AVX2 function where HasAvx2(), else F = Pair: the same values.
template <class Kernel, class... Args>
void Dispatch(Args... args) {
#if TESSEL_SIMD4_AVX2
  if (HasAvx2()) {
    RunAvx2<Kernel>(args...);
    return;
  }
#endif
  Kernel::template Run<Pair>(args...);
}

}  // namespace tessel::simd4
