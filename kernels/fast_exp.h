// exp over a block of float64 values, written so the compiler vectorises the loop (no calls, no branches): range
// reduction x = n ln2 + r with |r| <= ln2 / 2 (the shift trick rounds n), a degree-13 Taylor polynomial for e^r
// (truncation below 4e-18 relative) by Estrin's scheme and 2^n from the exponent bits. Within 2 ulp of std::exp on
// [-708, 709] (tests/kernels/fast_exp_test.cc asks for 4); inputs below -708 give exp(-708) ~ 3e-308 instead of a
// subnormal or 0, above 709 exp(709). The SVM kernel rows use it where values are rounded to float (LIBSVM's
// Qfloat), which hides the difference: none of 2*10^7 values on [-40, 0] rounds to another float than std::exp's.
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
    // Estrin's scheme: the pairs, then r^2, r^4, r^8 combine them, so the dependent chain is 4 multiply-adds long
    // instead of Horner's 13 (the lanes' latency, not the adders' throughput, bounded this loop).
    const double r2 = r * r;
    const double r4 = r2 * r2;
    const double a0 = 1.0 + r;
    const double a1 = 0.5 + r * (1.0 / 6.0);
    const double a2 = 1.0 / 24.0 + r * (1.0 / 120.0);
    const double a3 = 1.0 / 720.0 + r * (1.0 / 5040.0);
    const double a4 = 1.0 / 40320.0 + r * (1.0 / 362880.0);
    const double a5 = 1.0 / 3628800.0 + r * (1.0 / 39916800.0);
    const double a6 = 1.0 / 479001600.0 + r * (1.0 / 6227020800.0);
    const double b0 = a0 + r2 * a1;
    const double b1 = a2 + r2 * a3;
    const double b2 = a4 + r2 * a5;
    const double d0 = b0 + r4 * b1;
    const double d1 = b2 + r4 * a6;
    const double p = d0 + (r4 * r4) * d1;
    const int64_t e = static_cast<int64_t>(std::bit_cast<uint64_t>(t)) - shift_bits;  // m as an integer
    x[k] = p * std::bit_cast<double>(static_cast<uint64_t>(e + 1023) << 52);
  }
}

}  // namespace tessel::kernels
