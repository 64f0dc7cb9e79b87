// C-SVC training parameters with LIBSVM's meanings and defaults (svm-train flags in the comments), and the
// sample-elimination (shrinking) policies of Narasimhan, Vishnu, Holder, Hoisie (2014).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "kernels/svm_kernel.h"
#include "train/svm/elimination.h"

namespace tessel::train::svm {

// ShrinkingPolicy and its schedule: train/svm/elimination.h.
std::string_view ShrinkingName(ShrinkingPolicy policy);
// "off" | "eager" | "periodic" | "lazy" (also LIBSVM's -h values "0" = off, "1" = periodic).
ShrinkingPolicy ParseShrinking(std::string_view name);

struct ClassWeight {
  int32_t label = 0;
  double weight = 1;  // multiplies C for this class (-wLABEL WEIGHT)
};

struct SvmParams {
  kernels::SvmKernelParams kernel;   // -t, -d, -g, -r; gamma 0 = 1 / num_features
  double C = 1;                      // -c
  double eps = 1e-3;                 // -e: stop when the maximal violation gap is below eps
  double cache_mb = 100;             // -m: kernel-row cache budget in MB (split between concurrent pairs)
  std::vector<ClassWeight> weights;  // -w
  ShrinkingPolicy shrinking = ShrinkingPolicy::kPeriodic;  // -h 1 = periodic
  int64_t max_iterations = -1;                             // -1: LIBSVM's max(10^7, 100 l)

  // Throws tessel::Error naming the bad value and the fix (C <= 0, gamma < 0, eps <= 0, ...).
  void Validate() const;
};

}  // namespace tessel::train::svm
