// The codecs of comm/compress.h (none, fp16, bf16, int8, QSGD, top-k) and top-k selection. Encoders and decoders
// are single loops over the data; the 16-bit ones use F16C where the CPU has it.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "comm/compress.h"
#include "comm/half.h"
#include "core/error.h"
#include "core/rng.h"

namespace tessel::comm {
namespace {

size_t Ix(int64_t i) { return static_cast<size_t>(i); }

int64_t Blocks(int64_t n, int64_t block) { return (n + block - 1) / block; }

// ---- Codecs.

// Round to nearest even for |v| <= 2^22 (adding and removing 1.5 * 2^23 leaves the rounded value): a plain add that
// vectorises, unlike std::nearbyint's library call.
inline float RoundToInt(float v) {
  constexpr float kMagic = 12582912.0F;  // 1.5 * 2^23
  return (v + kMagic) - kMagic;
}

// F16C conversions of 8 floats at a time where the CPU has them (checked once at run time; the build targets
// x86-64-v2, which lacks F16C), the portable scalar ones otherwise.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TESSEL_F16C 1
// The wire may start at any byte (rows packed back to back), so scalar tails go through memcpy.
__attribute__((target("avx,f16c"))) void EncodeHalfF16c(const float* x, size_t n, std::byte* h) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(h + 2 * i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; ++i) {
    const uint16_t b = FloatToHalf(x[i]);
    std::memcpy(h + 2 * i, &b, 2);
  }
}
__attribute__((target("avx,f16c"))) void DecodeHalfF16c(const std::byte* h, size_t n, float* out, bool accumulate) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + 2 * i)));
    if (accumulate) v = _mm256_add_ps(v, _mm256_loadu_ps(out + i));
    _mm256_storeu_ps(out + i, v);
  }
  for (; i < n; ++i) {
    uint16_t b;
    std::memcpy(&b, h + 2 * i, 2);
    out[i] = accumulate ? out[i] + HalfToFloat(b) : HalfToFloat(b);
  }
}
// CPUID leaf 1: F16C (ecx bit 29), AVX (bit 28) and OSXSAVE (bit 27), and the OS saves the YMM state (XCR0 bits 1
// and 2). Read directly: Clang's __builtin_cpu_supports does not know "f16c".
bool HaveF16c() {
  static const bool have = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
    if ((ecx & (1U << 29)) == 0 || (ecx & (1U << 28)) == 0 || (ecx & (1U << 27)) == 0) return false;
    uint32_t xcr0_lo = 0, xcr0_hi = 0;
    __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    return (xcr0_lo & 6U) == 6U;
  }();
  return have;
}
#else
#define TESSEL_F16C 0
#endif

class Fp32Codec final : public Codec {
 public:
  std::string_view Name() const override { return "none"; }
  int64_t EncodedBytes(int64_t n) const override { return n * 4; }
  void Encode(std::span<const float> x, uint64_t, std::span<std::byte> wire) const override {
    if (!x.empty()) std::memcpy(wire.data(), x.data(), x.size() * 4);
  }
  void Decode(std::span<const std::byte> wire, std::span<float> out, bool accumulate) const override {
    if (!accumulate) {
      if (!out.empty()) std::memcpy(out.data(), wire.data(), out.size() * 4);
      return;
    }
    for (size_t i = 0; i < out.size(); ++i) {
      float v;
      std::memcpy(&v, wire.data() + i * 4, 4);
      out[i] += v;
    }
  }
  std::optional<DataType> SumType() const override { return DataType::kFloat32; }
};

template <uint16_t (*kTo)(float), float (*kFrom)(uint16_t)>
class Half16Codec final : public Codec {
 public:
  Half16Codec(std::string_view name, DataType type) : name_(name), type_(type) {}
  std::string_view Name() const override { return name_; }
  int64_t EncodedBytes(int64_t n) const override { return n * 2; }
  void Encode(std::span<const float> x, uint64_t, std::span<std::byte> wire) const override {
#if TESSEL_F16C
    if (type_ == DataType::kFloat16 && HaveF16c()) {
      return EncodeHalfF16c(x.data(), x.size(), wire.data());
    }
#endif
    for (size_t i = 0; i < x.size(); ++i) {
      const uint16_t h = kTo(x[i]);
      std::memcpy(wire.data() + i * 2, &h, 2);
    }
  }
  void Decode(std::span<const std::byte> wire, std::span<float> out, bool accumulate) const override {
#if TESSEL_F16C
    if (type_ == DataType::kFloat16 && HaveF16c()) {
      return DecodeHalfF16c(wire.data(), out.size(), out.data(), accumulate);
    }
#endif
    for (size_t i = 0; i < out.size(); ++i) {
      uint16_t h;
      std::memcpy(&h, wire.data() + i * 2, 2);
      out[i] = accumulate ? out[i] + kFrom(h) : kFrom(h);
    }
  }
  std::optional<DataType> SumType() const override { return type_; }

 private:
  std::string_view name_;
  DataType type_;
};

// [scale: float x blocks][q: int8 x n]; x ~ q * scale, scale = max|x| / 127 of the block, q rounded to nearest.
class Int8Codec final : public Codec {
 public:
  explicit Int8Codec(int64_t block) : block_(block) {}
  std::string_view Name() const override { return "int8"; }
  int64_t EncodedBytes(int64_t n) const override { return Blocks(n, block_) * 4 + n; }
  void Encode(std::span<const float> x, uint64_t, std::span<std::byte> wire) const override {
    const auto n = static_cast<int64_t>(x.size());
    const int64_t nb = Blocks(n, block_);
    auto* q = reinterpret_cast<int8_t*>(wire.data() + nb * 4);
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t lo = b * block_;
      const int64_t hi = std::min(n, lo + block_);
      float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // independent lanes: the loop vectorises without reassociation
      int64_t i8 = lo;
      for (; i8 + 8 <= hi; i8 += 8) {
        for (int l = 0; l < 8; ++l) {
          const float a = std::fabs(x[Ix(i8 + l)]);
          lanes[l] = a > lanes[l] ? a : lanes[l];
        }
      }
      float amax = 0;
      for (float a : lanes) amax = std::max(amax, a);
      for (; i8 < hi; ++i8) amax = std::max(amax, std::fabs(x[Ix(i8)]));
      const float scale = std::isfinite(amax) ? amax / 127.0F : 0.0F;
      std::memcpy(wire.data() + b * 4, &scale, 4);
      const float inv = scale > 0 ? 1.0F / scale : 0.0F;
      for (int64_t i = lo; i < hi; ++i) {
        float v = x[Ix(i)] * inv;
        v = v == v ? v : 0.0F;  // NaN -> 0 (no undefined conversion)
        v = v < -127.0F ? -127.0F : (v > 127.0F ? 127.0F : v);
        q[i] = static_cast<int8_t>(static_cast<int32_t>(RoundToInt(v)));
      }
    }
  }
  void Decode(std::span<const std::byte> wire, std::span<float> out, bool accumulate) const override {
    const auto n = static_cast<int64_t>(out.size());
    const int64_t nb = Blocks(n, block_);
    const auto* q = reinterpret_cast<const int8_t*>(wire.data() + nb * 4);
    for (int64_t b = 0; b < nb; ++b) {
      float scale;
      std::memcpy(&scale, wire.data() + b * 4, 4);
      const int64_t hi = std::min(n, (b + 1) * block_);
      for (int64_t i = b * block_; i < hi; ++i) {
        const float v = static_cast<float>(q[i]) * scale;
        out[Ix(i)] = accumulate ? out[Ix(i)] + v : v;
      }
    }
  }

 private:
  int64_t block_;
};

// murmur3's 32-bit finaliser: a bijective mixer, vectorisable (32-bit multiplies).
inline uint32_t Fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bU;
  h ^= h >> 13;
  h *= 0xc2b2ae35U;
  h ^= h >> 16;
  return h;
}

// Fixed-width codes packed little-endian into bytes through a 64-bit accumulator (one store per 32 bits).
class BitWriter {
 public:
  BitWriter(std::byte* out, int bits) : out_(out), bits_(bits) {}
  void Put(uint32_t code) {
    acc_ |= static_cast<uint64_t>(code) << filled_;
    filled_ += bits_;
    if (filled_ >= 32) {
      const auto word = static_cast<uint32_t>(acc_);
      std::memcpy(out_, &word, 4);
      out_ += 4;
      acc_ >>= 32;
      filled_ -= 32;
    }
  }
  void Flush() {
    while (filled_ > 0) {
      *out_++ = static_cast<std::byte>(acc_ & 0xffU);
      acc_ >>= 8;
      filled_ -= 8;
    }
  }

 private:
  std::byte* out_;
  int bits_;
  uint64_t acc_ = 0;
  int filled_ = 0;
};

class BitReader {
 public:
  BitReader(const std::byte* in, int64_t bytes, int bits)
      : in_(in), left_(bytes), bits_(bits), mask_((uint64_t{1} << bits) - 1) {}
  uint32_t Get() {
    if (filled_ < bits_) {
      if (left_ >= 4) {
        uint32_t word;
        std::memcpy(&word, in_, 4);
        in_ += 4;
        left_ -= 4;
        acc_ |= static_cast<uint64_t>(word) << filled_;
        filled_ += 32;
      } else {
        while (left_ > 0 && filled_ < bits_) {
          acc_ |= static_cast<uint64_t>(*in_++) << filled_;
          --left_;
          filled_ += 8;
        }
      }
    }
    const auto code = static_cast<uint32_t>(acc_ & mask_);
    acc_ >>= bits_;
    filled_ -= bits_;
    return code;
  }

 private:
  const std::byte* in_;
  int64_t left_;
  int bits_;
  uint64_t mask_;
  uint64_t acc_ = 0;
  int filled_ = 0;
};

// QSGD: [norm: float x blocks][codes: w bits x n, little-endian bit order], code = level << 1 | sign, level in
// [0, s] drawn so that E[level] = s |x| / norm (unbiased), w = 1 + bit_width(s).
class QsgdCodec final : public Codec {
 public:
  QsgdCodec(int levels, int64_t block)
      : s_(levels), block_(block), bits_(1 + std::bit_width(static_cast<unsigned>(levels))) {}
  std::string_view Name() const override { return "qsgd"; }
  int64_t EncodedBytes(int64_t n) const override { return Blocks(n, block_) * 4 + (n * bits_ + 7) / 8; }
  void Encode(std::span<const float> x, uint64_t seed, std::span<std::byte> wire) const override {
    const auto n = static_cast<int64_t>(x.size());
    const int64_t nb = Blocks(n, block_);
    const auto key = static_cast<uint32_t>(Mix64(seed));
    const auto key2 = static_cast<uint32_t>(Mix64(seed) >> 32);
    std::vector<float> scale(Ix(nb));
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t lo = b * block_;
      const int64_t hi = std::min(n, lo + block_);
      double sq = 0;
      for (int64_t i = lo; i < hi; ++i) sq += static_cast<double>(x[Ix(i)]) * x[Ix(i)];
      float norm = static_cast<float>(std::sqrt(sq));
      if (!std::isfinite(norm)) norm = 0;
      std::memcpy(wire.data() + b * 4, &norm, 4);
      scale[Ix(b)] = norm > 0 ? static_cast<float>(s_) / norm : 0.0F;
    }
    const auto top = static_cast<float>(s_);
    std::byte* out = wire.data() + nb * 4;
    uint8_t codes[kChunk];
    for (int64_t c0 = 0; c0 < n; c0 += kChunk) {
      const int64_t c1 = std::min(n, c0 + kChunk);
      for (int64_t i0 = c0; i0 < c1;) {  // the part of each block inside this chunk
        const int64_t b = i0 / block_;
        const int64_t i1 = std::min(c1, (b + 1) * block_);
        const float sc = scale[Ix(b)];
        // One counter-based uniform per element (two murmur3 finalisers of the element's index and the key), so the
        // loop has no carried state and vectorises.
        for (int64_t i = i0; i < i1; ++i) {
          const float v = x[Ix(i)];
          float a = std::fabs(v) * sc;
          a = a < top ? a : top;  // NaN -> top (its block's norm is 0, so it decodes to 0)
          const float floor_a = static_cast<float>(static_cast<int32_t>(a));
          const uint32_t h = Fmix32(Fmix32(static_cast<uint32_t>(i) ^ key) + key2);
          const float u = static_cast<float>(h >> 8) * 0x1.0p-24F;
          const float level = floor_a + (u < a - floor_a ? 1.0F : 0.0F);
          const auto l = static_cast<uint32_t>(static_cast<int32_t>(level));
          const uint32_t sign = (std::bit_cast<uint32_t>(v) >> 31) & static_cast<uint32_t>(l != 0);
          codes[i - c0] = static_cast<uint8_t>((l << 1) | sign);
        }
        i0 = i1;
      }
      Pack(codes, c1 - c0, out + c0 / 8 * bits_);
    }
  }
  // The packed groups form one little-endian bit stream, so decoding reads it sequentially (faster here than
  // unpacking eight at a time: the float loop then runs over a whole block).
  void Decode(std::span<const std::byte> wire, std::span<float> out, bool accumulate) const override {
    const auto n = static_cast<int64_t>(out.size());
    const int64_t nb = Blocks(n, block_);
    BitReader in(wire.data() + nb * 4, (n * bits_ + 7) / 8, bits_);
    std::vector<uint8_t> codes(static_cast<size_t>(std::min(n, block_)));
    for (int64_t b = 0; b < nb; ++b) {
      float norm;
      std::memcpy(&norm, wire.data() + b * 4, 4);
      const float unit = norm / static_cast<float>(s_);
      const int64_t lo = b * block_;
      const int64_t len = std::min(n, lo + block_) - lo;
      for (int64_t j = 0; j < len; ++j) codes[Ix(j)] = static_cast<uint8_t>(in.Get());
      float* o = out.data() + lo;
      // Level times the unit, the sign bit moved into the float's sign: a loop without branches that vectorises.
      for (int64_t j = 0; j < len; ++j) {
        const uint32_t code = codes[Ix(j)];
        const float mag = static_cast<float>(code >> 1) * unit;
        const float v = std::bit_cast<float>(std::bit_cast<uint32_t>(mag) ^ ((code & 1U) << 31));
        o[j] = accumulate ? o[j] + v : v;
      }
    }
  }

 private:
  static constexpr int64_t kChunk = 4096;  // codes per pass; a multiple of 8, so every chunk starts on a byte

  // Eight w-bit codes fill exactly w bytes: whole groups go through one 64-bit word each (w a compile-time constant,
  // so the shifts and the w-byte copy inline), a last partial group through the bit writer. The result is the same
  // little-endian bit stream as writing the codes one by one.
  template <int W>
  static void PackW(const uint8_t* codes, int64_t groups, std::byte* out) {
    for (int64_t g = 0; g < groups; ++g) {
      uint64_t word = 0;
      for (int j = 0; j < 8; ++j) word |= static_cast<uint64_t>(codes[g * 8 + j]) << (j * W);
      std::memcpy(out + g * W, &word, W);
    }
  }
  void Pack(const uint8_t* codes, int64_t count, std::byte* out) const {
    const int64_t groups = count / 8;
    // bits_ is 1 + bit_width(s) for s in 1..127: 2 to 8, PackW<bits_> through the table of the seven widths.
    constexpr std::array<void (*)(const uint8_t*, int64_t, std::byte*), 7> kPackW{
        PackW<2>, PackW<3>, PackW<4>, PackW<5>, PackW<6>, PackW<7>, PackW<8>};
    kPackW[static_cast<size_t>(std::clamp(bits_, 2, 8) - 2)](codes, groups, out);
    BitWriter tail(out + groups * bits_, bits_);
    for (int64_t i = groups * 8; i < count; ++i) tail.Put(codes[i]);
    tail.Flush();
  }

  int s_;
  int64_t block_;
  int bits_;
};

// [index: uint32 x k][value: float x k], indices ascending.
class TopKCodec final : public Codec {
 public:
  explicit TopKCodec(double ratio) : ratio_(ratio) {}
  std::string_view Name() const override { return "topk"; }
  int64_t EncodedBytes(int64_t n) const override { return KeepCount(n, ratio_) * 8; }
  void Encode(std::span<const float> x, uint64_t, std::span<std::byte> wire) const override {
    const int64_t k = KeepCount(static_cast<int64_t>(x.size()), ratio_);
    const std::vector<uint32_t> idx = TopKIndices(x, k);
    if (k == 0) return;
    std::memcpy(wire.data(), idx.data(), Ix(k) * 4);
    for (int64_t j = 0; j < k; ++j) std::memcpy(wire.data() + (k + j) * 4, &x[idx[Ix(j)]], 4);
  }
  void SubtractFrom(std::span<const std::byte> wire, std::span<float> x) const override {
    ForEachPair(wire, x.size(), [&](uint32_t i, float v) { x[i] -= v; });  // copies: exactly 0 after this
  }
  void Decode(std::span<const std::byte> wire, std::span<float> out, bool accumulate) const override {
    if (!accumulate) std::fill(out.begin(), out.end(), 0.0F);
    ForEachPair(wire, out.size(), [&](uint32_t i, float v) { out[i] += v; });
  }

 private:
  // fn(index, value) for every pair of a wire of n elements, the index checked against n.
  template <typename Fn>
  void ForEachPair(std::span<const std::byte> wire, size_t n, Fn&& fn) const {
    const int64_t k = KeepCount(static_cast<int64_t>(n), ratio_);
    for (int64_t j = 0; j < k; ++j) {
      uint32_t i;
      float v;
      std::memcpy(&i, wire.data() + j * 4, 4);
      std::memcpy(&v, wire.data() + (k + j) * 4, 4);
      TESSEL_CHECK(i < n, "topk: index {} out of range ({} elements)", i, n);
      fn(i, v);
    }
  }

  double ratio_;
};

}  // namespace

void Codec::SubtractFrom(std::span<const std::byte> wire, std::span<float> x) const {
  std::vector<float> decoded(x.size());
  Decode(wire, decoded, false);
  for (size_t i = 0; i < x.size(); ++i) x[i] -= decoded[i];
}

int64_t KeepCount(int64_t n, double ratio) {
  if (n <= 0) return 0;
  const auto k = static_cast<int64_t>(std::ceil(ratio * static_cast<double>(n)));
  return std::clamp<int64_t>(k, 1, n);
}

std::vector<uint32_t> TopKIndices(std::span<const float> x, int64_t k) {
  TESSEL_CHECK(x.size() <= UINT32_MAX, "topk: {} elements exceed the 32-bit index", x.size());
  const auto n = static_cast<int64_t>(x.size());
  k = std::clamp<int64_t>(k, 0, n);
  std::vector<uint32_t> idx;
  if (k == 0) return idx;
  idx.reserve(Ix(k));
  auto key = [](float v) {
    const float a = std::fabs(v);
    return a == a ? a : std::numeric_limits<float>::infinity();  // NaN first: a total order
  };
  if (k == n) {
    idx.resize(Ix(n));
    std::iota(idx.begin(), idx.end(), 0U);
    return idx;
  }
  // Candidates: on large inputs, the elements at or above a threshold estimated from a strided sample (generous, so
  // the k largest are almost always all in); every element otherwise, or when the estimate fell short.
  std::vector<uint32_t> cand;
  constexpr int64_t kSample = 1 << 14;
  if (n > 8 * kSample && k < n / 8) {
    std::vector<float> sample(Ix(kSample));
    for (int64_t j = 0; j < kSample; ++j) sample[Ix(j)] = key(x[Ix(j * (n / kSample))]);
    const int64_t r = std::min<int64_t>(kSample - 1, 2 * k * kSample / n + 32);
    std::nth_element(sample.begin(), sample.begin() + r, sample.end(), std::greater<float>());
    const float low = sample[Ix(r)];
    // Branch-free compaction in blocks: every index is written, the end advances only past kept ones (NaN is kept:
    // !(NaN < low)); the capacity grows before a block could overflow it.
    constexpr int64_t kBlock = 4096;
    size_t m = 0;
    cand.resize(Ix(2 * (r + 1) * (n / kSample) + kBlock));
    for (int64_t b = 0; b < n; b += kBlock) {
      if (cand.size() < m + kBlock) cand.resize(2 * cand.size() + kBlock);
      const int64_t e = std::min(n, b + kBlock);
      for (int64_t i = b; i < e; ++i) {
        cand[m] = static_cast<uint32_t>(i);
        m += std::fabs(x[Ix(i)]) < low ? 0 : 1;
      }
    }
    cand.resize(m);
    if (static_cast<int64_t>(cand.size()) < k) cand.clear();
  }
  if (cand.empty()) {
    cand.resize(Ix(n));
    std::iota(cand.begin(), cand.end(), 0U);
  }
  // The k-th largest magnitude among the candidates (every element above it is a candidate), then one ascending pass:
  // everything above it and as many elements equal to it as fit, smaller indices first.
  std::vector<float> mags(cand.size());
  for (size_t j = 0; j < cand.size(); ++j) mags[j] = key(x[cand[j]]);
  std::nth_element(mags.begin(), mags.begin() + (k - 1), mags.end(), std::greater<float>());
  const float threshold = mags[Ix(k - 1)];
  int64_t above = 0;
  for (uint32_t i : cand) above += key(x[i]) > threshold ? 1 : 0;
  int64_t ties_left = k - above;
  for (uint32_t i : cand) {
    const float m = key(x[i]);
    if (m > threshold || (m == threshold && ties_left-- > 0)) idx.push_back(i);
  }
  return idx;
}

std::unique_ptr<Codec> MakeCodec(const CompressSpec& spec, int64_t default_block) {
  const int64_t block = spec.block > 0 ? spec.block : std::max<int64_t>(1, default_block);
  switch (spec.method) {
    case CompressMethod::kNone:
      return std::make_unique<Fp32Codec>();
    case CompressMethod::kFp16:
      return std::make_unique<Half16Codec<FloatToHalf, HalfToFloat>>("fp16", DataType::kFloat16);
    case CompressMethod::kBf16:
      return std::make_unique<Half16Codec<FloatToBFloat16, BFloat16ToFloat>>("bf16", DataType::kBFloat16);
    case CompressMethod::kInt8:
      return std::make_unique<Int8Codec>(block);
    case CompressMethod::kQsgd:
      return std::make_unique<QsgdCodec>(spec.levels, block);
    case CompressMethod::kTopK:
      return std::make_unique<TopKCodec>(spec.ratio);
    default:
      throw Error(fmt::format("{} is a compressed allreduce, not a codec: it cannot compress feature rows (use {})",
                              CompressMethodName(spec.method), RowCodecForms(/*names_only=*/true)));
  }
}

}  // namespace tessel::comm
