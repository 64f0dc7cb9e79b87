// exp over a block of float64 values, written so the compiler vectorises the loop (no calls, no branches): range
// reduction x = n ln2 + r with |r| <= ln2 / 2 (the shift trick rounds n), a degree-13 Taylor polynomial for e^r
// (truncation below 4e-18 relative) and 2^n from the exponent bits. Within a few ulp of std::exp on [-708, 709]
// (tests/kernels/fast_exp_test.cc); inputs below -708 give exp(-708) ~ 3e-308 instead of a subnormal or 0, above
// 709 exp(709). The SVM kernel rows use it where values are rounded to float (LIBSVM's Qfloat), which hides the
// difference in all but about one value in 10^8.
#pragma once

#include <bit>
#include <cstdint>

namespace tessel::kernels {

inline void ExpInPlace(double* x, int64_t n) {
  constexpr double kShift = 0x1.8p52;  // adding it rounds to an integer kept in the low mantissa bits
  constexpr double kLog2e = 1.4426950408889634;
  constexpr double kLn2Hi = 0x1.62e42fee00000p-1;  // ln 2 split so that m * kLn2Hi is exact for |m| < 2^11
  constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
  const auto shift_bits = static_cast<int64_t>(std::bit_cast<uint64_t>(kShift));
  for (int64_t k = 0; k < n; ++k) {
    double v = x[k];
    v = v < -708.0 ? -708.0 : v;
    v = v > 709.0 ? 709.0 : v;
    const double t = v * kLog2e + kShift;
    const double m = t - kShift;  // round(v / ln 2)
    const double r = (v - m * kLn2Hi) - m * kLn2Lo;
    double p = 1.0 / 6227020800.0;  // 1/13!
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    const int64_t e = static_cast<int64_t>(std::bit_cast<uint64_t>(t)) - shift_bits;  // m as an integer
    x[k] = p * std::bit_cast<double>(static_cast<uint64_t>(e + 1023) << 52);
  }
}

}  // namespace tessel::kernels
