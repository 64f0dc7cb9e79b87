// glibc's random_r TYPE_3 generator (glibc_rand.h).
#include "svm/glibc_rand.h"

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

}  // namespace tessel::svm
