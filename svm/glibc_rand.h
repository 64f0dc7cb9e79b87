// glibc's rand(), which LIBSVM's shuffles use (svm-train never seeds it): reproduced so that tessel's folds are
// svm-train's on glibc systems (cross-validation, and the 5-fold fit of -b 1's probabilities).
#pragma once

#include <cstdint>

namespace tessel::svm {

// glibc's rand() (the TYPE_3 additive feedback generator of random_r) from a seed: srand(seed) then rand(). LIBSVM
// shuffles with rand() and svm-train never seeds it, so its folds are those of seed 1 on glibc systems.
class GlibcRand {
 public:
  explicit GlibcRand(uint32_t seed = 1);
  int32_t Next();  // in [0, 2^31)

 private:
  int32_t state_[31];
  int front_ = 3;  // glibc's fptr (rand_sep)
  int rear_ = 0;   // glibc's rptr
};

}  // namespace tessel::svm
