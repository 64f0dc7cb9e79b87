// IEEE binary16 (fp16) and bfloat16 conversions on the host, round to nearest even, with infinities, NaN and fp16
// subnormals: the wire formats of the 16-bit compressors and of the kFloat16 / kBFloat16 reductions.
#pragma once

#include <bit>
#include <cstdint>

namespace tessel::comm {

// float -> fp16 bits, round to nearest even (values above 65504 round to infinity, NaN stays NaN). After
// F. Giesen's float_to_half_fast3_rtne (public domain): one branch for the subnormal/overflow cases.
inline uint16_t FloatToHalf(float f) {
  constexpr uint32_t kF32Infty = 255U << 23;
  constexpr uint32_t kF16Max = (127U + 16U) << 23;
  constexpr uint32_t kDenormMagic = ((127U - 15U) + (23U - 10U) + 1U) << 23;
  constexpr uint32_t kSignMask = 0x80000000U;
  uint32_t u = std::bit_cast<uint32_t>(f);
  const uint32_t sign = u & kSignMask;
  u ^= sign;
  uint16_t o = 0;
  if (u >= kF16Max) {                       // overflow to infinity, or NaN (all exponent bits set)
    o = (u > kF32Infty) ? 0x7e00 : 0x7c00;  // quiet NaN : infinity
  } else if (u < (113U << 23)) {            // result is an fp16 subnormal or zero
    const float magic = std::bit_cast<float>(kDenormMagic);
    const float sum = std::bit_cast<float>(u) + magic;  // the FPU rounds to nearest even
    o = static_cast<uint16_t>(std::bit_cast<uint32_t>(sum) - kDenormMagic);
  } else {
    const uint32_t mant_odd = (u >> 13) & 1U;               // the resulting mantissa is odd
    u += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffU;  // rebias the exponent, round bias part 1
    u += mant_odd;                                          // round bias part 2 (ties to even)
    o = static_cast<uint16_t>(u >> 13);
  }
  return static_cast<uint16_t>(o | (sign >> 16));
}

// fp16 bits -> float (exact).
inline float HalfToFloat(uint16_t h) {
  constexpr uint32_t kShiftedExp = 0x7c00U << 13;  // exponent mask after the shift
  const float magic = std::bit_cast<float>(113U << 23);
  uint32_t o = (static_cast<uint32_t>(h) & 0x7fffU) << 13;  // exponent and mantissa bits
  const uint32_t exp = kShiftedExp & o;
  o += (127U - 15U) << 23;  // exponent adjust
  if (exp == kShiftedExp) {
    o += (128U - 16U) << 23;  // Inf/NaN: extra exponent adjust
  } else if (exp == 0) {
    o += 1U << 23;  // zero/subnormal: renormalise through the FPU
    o = std::bit_cast<uint32_t>(std::bit_cast<float>(o) - magic);
  }
  o |= (static_cast<uint32_t>(h) & 0x8000U) << 16;
  return std::bit_cast<float>(o);
}

// float -> bfloat16 bits (the top half of the float), round to nearest even; NaN stays a quiet NaN.
inline uint16_t FloatToBFloat16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffU) > 0x7f800000U) return static_cast<uint16_t>((u >> 16) | 0x40U);
  const uint32_t rounding = 0x7fffU + ((u >> 16) & 1U);
  return static_cast<uint16_t>((u + rounding) >> 16);
}

inline float BFloat16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

}  // namespace tessel::comm
