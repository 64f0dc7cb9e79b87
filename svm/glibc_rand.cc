// glibc's random_r TYPE_3 generator and scikit-learn's bounded mt19937 draw (glibc_rand.h).
#include "svm/glibc_rand.h"

#include "core/error.h"

namespace tessel::svm {

GlibcRand::GlibcRand(uint32_t seed) {
  // glibc's __srandom_r: state[i] = 16807 state[i - 1] mod (2^31 - 1) by Schrage's method, then 310 discarded draws.
  int32_t word = static_cast<int32_t>(seed == 0 ? 1 : seed);
  state_[0] = word;
  for (int i = 1; i < 31; ++i) {
    const int32_t hi = word / 127773;
    const int32_t lo = word % 127773;
    word = 16807 * lo - 2836 * hi;
    if (word < 0) word += 2147483647;
    state_[i] = word;
  }
  for (int i = 0; i < 310; ++i) (void)Next();
}

int32_t GlibcRand::Next() {
  // glibc's __random_r: the front word gains the rear word (mod 2^32); the lowest bit is dropped.
  const uint32_t val = static_cast<uint32_t>(state_[front_]) + static_cast<uint32_t>(state_[rear_]);
  state_[front_] = static_cast<int32_t>(val);
  front_ = front_ + 1 == 31 ? 0 : front_ + 1;
  rear_ = rear_ + 1 == 31 ? 0 : rear_ + 1;
  return static_cast<int32_t>(val >> 1);
}

ShuffleRand::ShuffleRand(int64_t seed) : seed_(seed) {
  TESSEL_CHECK(seed < (int64_t{1} << 32), "random seed {} is above 2^32 - 1 (scikit-learn's seeds are 32-bit)", seed);
  Restart();
}

void ShuffleRand::Restart() {
  if (seed_ >= 0) mt_.seed(static_cast<uint32_t>(seed_));
}

int64_t ShuffleRand::Below(int64_t range) {
  TESSEL_CHECK(range > 0 && range <= INT32_MAX, "ShuffleRand: range {} outside [1, 2^31)", range);
  if (seed_ < 0) return glibc_.Next() % range;
  // scikit-learn's bounded_rand_int: the high half of x * range, redrawn while the low half falls in the biased
  // zone (Lemire's method with its threshold computed only when needed).
  const auto r = static_cast<uint32_t>(range);
  uint64_t m = uint64_t{static_cast<uint32_t>(mt_())} * r;
  auto low = static_cast<uint32_t>(m);
  if (low < r) {
    uint32_t t = -r;
    if (t >= r) {
      t -= r;
      if (t >= r) t %= r;
    }
    while (low < t) {
      m = uint64_t{static_cast<uint32_t>(mt_())} * r;
      low = static_cast<uint32_t>(m);
    }
  }
  return static_cast<int64_t>(m >> 32);
}

}  // namespace tessel::svm
