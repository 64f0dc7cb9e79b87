// The dropout mask as a pure function of (stream, element index), shared by the CPU kernels, the fused gather
// kernels and the CUDA kernels (as sampling/pick_math.h is for sampling): nothing is stored between the forward
// and the backward pass, the backward regenerates the mask.
//
// Counter-based: the random words are SplitMix64 outputs of the stream's base (Mix64(base + k * golden), Steele,
// Lea & Flood 2014), so any element's mask is computed without the ones before it and the result does not depend on
// the thread count, the chunking or the device. Elements come in groups of 64 (element i is bit i % 64 of group
// i / 64) and one group's 64 mask bits are built from the keep probability's binary expansion, 16 bits deep: with
// keep = 0.b1 b2 ... b16 and one random word r_k per digit, m = 0; for k = 16 .. 1: m = b_k ? (m | r_k) : (m & r_k)
// leaves every bit set with probability exactly keep (each step maps P to (1 + P) / 2 or P / 2). Digits below the
// lowest set one change nothing and are skipped, so keep = 1/2 (dropout 0.5) costs one 64-bit word per 64 elements
// and any probability at most 16. The keep probability is the nearest multiple of 2^-16 to 1 - p (at least 2^-16);
// the scale 1 / keep uses that same value, so the estimate stays unbiased.
#pragma once

#include <cstdint>

#include "core/host_device.h"
#include "core/rng.h"

namespace tessel::kernels {

struct DropoutSpec {
  uint64_t base = 0;    // the stream's base word (Rng(key)())
  uint32_t keep16 = 0;  // keep probability in units of 2^-16, in [1, 65536]; 65536 = keep everything
  uint32_t first = 0;   // the lowest set digit of keep16 (digits first .. 15 from the top are drawn)
  float scale = 1.0F;   // 1 / keep: 65536 / keep16
  TESSEL_HOST_DEVICE bool Active() const { return keep16 < 65536U; }
};

TESSEL_HOST_DEVICE inline DropoutSpec MakeDropoutSpec(float p, uint64_t base) {
  DropoutSpec s;
  s.base = base;
  double keep = 1.0 - static_cast<double>(p);
  if (keep > 1.0) keep = 1.0;
  auto k = static_cast<int64_t>(keep * 65536.0 + 0.5);
  if (k < 1) k = 1;
  if (k > 65536) k = 65536;
  s.keep16 = static_cast<uint32_t>(k);
  uint32_t first = 0;
  while (first < 16 && ((s.keep16 >> first) & 1U) == 0) ++first;
  s.first = first;
  s.scale = static_cast<float>(65536.0 / static_cast<double>(s.keep16));
  return s;
}

// The mask bits of elements [64 g, 64 g + 64): bit b set = element 64 g + b kept.
TESSEL_HOST_DEVICE inline uint64_t DropoutMaskWord(const DropoutSpec& s, uint64_t g) {
  if (s.keep16 >= 65536U) return ~uint64_t{0};
  uint64_t m = 0;
  // Digit d (1 = the most significant, worth 1/2) is bit 16 - d of keep16; process d = 16 - first down to 1.
  for (uint32_t bit = s.first; bit < 16; ++bit) {
    const uint64_t r = Mix64(s.base + (g * 16 + bit) * 0x9e3779b97f4a7c15ULL);
    m = ((s.keep16 >> bit) & 1U) != 0 ? (m | r) : (m & r);
  }
  return m;
}

// Whether element i is kept (one element; the kernels work a word at a time).
TESSEL_HOST_DEVICE inline bool DropoutKeep(const DropoutSpec& s, uint64_t i) {
  return ((DropoutMaskWord(s, i >> 6) >> (i & 63)) & 1U) != 0;
}

}  // namespace tessel::kernels
