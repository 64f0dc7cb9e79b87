// Seeded random streams: a stream is derived from (seed, rank, epoch, batch, purpose), so every draw of
// a run is reproducible and independent of thread scheduling. Engine: xoshiro256** seeded by SplitMix64.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/host_device.h"  // the engine is callable from CUDA device code: a kernel draws the CPU's streams

namespace tessel {

__extension__ using Uint128 = unsigned __int128;  // GCC/Clang extension; __extension__ keeps -Wpedantic quiet

// SplitMix64 finaliser: a bijective 64-bit mixer (Steele, Lea, Flood 2014).
TESSEL_HOST_DEVICE constexpr uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The coordinates of one stream. Two streams with any coordinate different are independent.
struct StreamKey {
  uint64_t seed = 0;
  uint64_t rank = 0;
  uint64_t epoch = 0;
  uint64_t batch = 0;
  uint64_t purpose = 0;  // distinguishes uses in one step (sampling, dropout, shuffling, ...)
};

// xoshiro256** (Blackman & Vigna 2018). Satisfies UniformRandomBitGenerator, but prefer the member
// distributions: std:: distributions differ between standard libraries, ours do not.
class Rng {
 public:
  using result_type = uint64_t;

  TESSEL_HOST_DEVICE explicit Rng(uint64_t seed = 0) { Reseed(seed); }
  TESSEL_HOST_DEVICE explicit Rng(const StreamKey& key) {
    uint64_t h = Mix64(key.seed);
    h = Mix64(h ^ key.rank);
    h = Mix64(h ^ key.epoch);
    h = Mix64(h ^ key.batch);
    h = Mix64(h ^ key.purpose);
    Reseed(h);
  }

  TESSEL_HOST_DEVICE void Reseed(uint64_t seed) {
    uint64_t x = seed;
    for (auto& s : s_) {
      x += 0x9e3779b97f4a7c15ULL;
      s = Mix64(x);
    }
  }

  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<uint64_t>::max(); }

  TESSEL_HOST_DEVICE result_type operator()() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform double in [0, 1) with 53 random bits.
  TESSEL_HOST_DEVICE double Uniform() { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n), n > 0, without modulo bias (Lemire 2019).
  TESSEL_HOST_DEVICE uint64_t UniformInt(uint64_t n) {
    Uint128 m = static_cast<Uint128>((*this)()) * n;
    auto low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<Uint128>((*this)()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }
  // Standard normal by the Marsaglia polar method (one value per call; the spare is kept).
  TESSEL_HOST_DEVICE double Normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u = 0;
    double v = 0;
    double s = 0;
    do {
      u = 2.0 * Uniform() - 1.0;
      v = 2.0 * Uniform() - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double f = std::sqrt(-2.0 * std::log(s) / s);
    spare_ = v * f;
    has_spare_ = true;
    return u * f;
  }

 private:
  TESSEL_HOST_DEVICE static constexpr uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4] = {};
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace tessel
