// The generators LIBSVM's shuffles draw from (cross-validation's folds, the 5-fold fits of -b 1's probabilities):
// glibc's rand(), which svm-train never seeds, reproduced so that tessel's folds are svm-train's on glibc systems;
// and scikit-learn's fork's (its newrand.h: std::mt19937 seeded from the estimator's random_state), so that
// tessel.SVC(probability=True, random_state=S) draws sklearn.svm.SVC's folds.
#pragma once

#include <cstdint>
#include <random>

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

// What LIBSVM's shuffles draw a position in [0, range) from. seed < 0: svm-train's, glibc's rand() from seed 1 and
// rand() % range. seed >= 0 (below 2^32): scikit-learn's fork, std::mt19937 seeded with it and Lemire's bounded
// draw (bounded_rand_int); the fork's svm_train reseeds at every call, nested ones included (the probability fits'
// five models), which Restart reproduces (for svm-train's rand() it does nothing).
class ShuffleRand {
 public:
  explicit ShuffleRand(int64_t seed = -1);
  int64_t Below(int64_t range);
  void Restart();
  bool ScikitLearn() const { return seed_ >= 0; }

 private:
  int64_t seed_;
  GlibcRand glibc_;
  std::mt19937 mt_;
};

}  // namespace tessel::svm
