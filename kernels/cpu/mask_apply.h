// Applying dropout mask bits (kernels/dropout_math.h) to float rows on the CPU, eight values per mask byte through
// a 256-entry table of lane masks, so the loops are branch-free and vectorise (an AND of the scaled value's bits
// with 0 or ~0: exactly `keep ? x * scale : 0`, the value the reference computes). Private to kernels/cpu/.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace tessel::kernels::cpu {

struct MaskLut {
  uint32_t lanes[256][8];
};
constexpr MaskLut MakeMaskLut() {
  MaskLut l{};
  for (uint32_t b = 0; b < 256; ++b) {
    for (uint32_t k = 0; k < 8; ++k) l.lanes[b][k] = ((b >> k) & 1U) != 0 ? 0xFFFFFFFFU : 0U;
  }
  return l;
}
inline constexpr MaskLut kMaskLut = MakeMaskLut();

inline float Masked(float v, uint32_t lane) { return std::bit_cast<float>(std::bit_cast<uint32_t>(v) & lane); }

// Bit `bit` of the array of 64-bit words.
inline bool MaskBit(const uint64_t* words, int64_t bit) { return ((words[bit >> 6] >> (bit & 63)) & 1U) != 0; }

// out[k] = (bit bit0 + k set) ? in[k] * scale : 0 for k < n. out may be in.
inline void ApplyMaskBits(const uint64_t* words, int64_t bit0, const float* in, int64_t n, float scale, float* out) {
  int64_t k = 0;
  if ((bit0 & 7) == 0) {
    for (; k + 8 <= n; k += 8) {
      const int64_t b = bit0 + k;
      const uint32_t* lane = kMaskLut.lanes[(words[b >> 6] >> (b & 63)) & 0xFFU];
      for (int j = 0; j < 8; ++j) out[k + j] = Masked(in[k + j] * scale, lane[j]);
    }
  }
  for (; k < n; ++k) out[k] = MaskBit(words, bit0 + k) ? in[k] * scale : 0.0F;
}

// Four floats and four lane masks as GCC/Clang vector extensions (SSE registers at the x86-64-v2 baseline; the
// compilers did not vectorise the byte-table loop on their own).
using V4f = float __attribute__((vector_size(16)));
using V4u = uint32_t __attribute__((vector_size(16)));
inline V4f Load4(const float* p) {
  V4f v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline V4u Lanes4(const uint32_t* p) {
  V4u v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void Store4(float* p, V4f v) { std::memcpy(p, &v, sizeof(v)); }

// acc[k] += w * ((bit bit0 + k set) ? in[k] * scale : 0) for k < n.
inline void AxpyMaskBits(float w, const uint64_t* words, int64_t bit0, const float* __restrict in, int64_t n,
                         float scale, float* __restrict acc) {
  int64_t k = 0;
  if ((bit0 & 7) == 0) {
    for (; k + 8 <= n; k += 8) {
      const int64_t b = bit0 + k;
      const uint32_t* lane = kMaskLut.lanes[(words[b >> 6] >> (b & 63)) & 0xFFU];
      const V4f lo = reinterpret_cast<V4f>(reinterpret_cast<V4u>(Load4(in + k) * scale) & Lanes4(lane));
      const V4f hi = reinterpret_cast<V4f>(reinterpret_cast<V4u>(Load4(in + k + 4) * scale) & Lanes4(lane + 4));
      Store4(acc + k, Load4(acc + k) + w * lo);
      Store4(acc + k + 4, Load4(acc + k + 4) + w * hi);
    }
  }
  for (; k < n; ++k) acc[k] += w * (MaskBit(words, bit0 + k) ? in[k] * scale : 0.0F);
}

// acc[k] += w * in[k] for k < n (no mask).
inline void Axpy(float w, const float* __restrict in, int64_t n, float* __restrict acc) {
  int64_t k = 0;
  for (; k + 4 <= n; k += 4) Store4(acc + k, Load4(acc + k) + w * Load4(in + k));
  for (; k < n; ++k) acc[k] += w * in[k];
}

// Prefetch the `bytes` bytes at p (one hint per 64-byte line).
inline void PrefetchRow(const float* p, int64_t bytes) {
  const char* c = reinterpret_cast<const char*>(p);
  for (int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(c + o);
}

// One word's 64 bits over n <= 64 values starting at bit `off` of it.
inline void ApplyMask(const float* in, int64_t n, uint64_t word, int64_t off, float scale, float* out) {
  ApplyMaskBits(&word, off, in, n, scale, out);
}

}  // namespace tessel::kernels::cpu
