// The binary C-SVC dual solved with batched working sets (ThunderSVM: Wen, Shi, Li, He, Chen, "ThunderSVM: A Fast
// SVM Library on GPUs and CPUs", JMLR 2018): the host reference of the algorithm the CUDA solver runs.
#pragma once

#include <cstdint>
#include <vector>

#include "datasets/dataset.h"
#include "svm/smo_solver.h"
#include "svm/svm_model.h"

namespace tessel::svm {

// Each round selects a working set of q samples (q/2 from the top of I_up and the rest from the bottom of I_low
// by -y G), computes their q kernel rows over the active samples at once, solves the q-variable subproblem by
// SMO (LIBSVM's second-order pair and clipping) until its gap falls under max(eps, gap0 / 10), and updates the
// whole gradient with the rows. It stops with LIBSVM's rule (maximal violation < eps) and computes LIBSVM's rho
// and objective. Elimination follows SolverOptions::shrinking as the SMO solver: bound samples that cannot
// violate leave the active set; G_bar keeps the bound part of the gradient so eliminated gradients are
// reconstructed, once when the gap first falls under 10 eps and before the final check on all samples.
struct BatchOptions {
  int working_set = 256;                 // q: samples per round (even, >= 2; the CUDA solver needs q <= 1024)
  int64_t inner_limit = -1;              // SMO steps per round (-1: 10 q)
  double inner_factor = 0.1;             // a round stops once its gap < max(eps, inner_factor * its first gap)
  void Validate(bool nu = false) const;  // throws naming the bad field; `nu`: Solver_NU's rounds
  // The options of `--working-set` on the CPU or CUDA: 0 = the default, 256 on the CPU and 1024 on CUDA; throws
  // unless the size is even and >= 2, and at most 1024 on CUDA (one thread block).
  static BatchOptions ForWorkingSet(int working_set, bool cuda);
};

// The result has SolveBinary's meaning: `iterations` counts SMO steps over all rounds, `shrink_checks` the
// elimination passes; `cache_*` stay 0 (rows are recomputed every round).
struct BatchStats {
  int64_t rounds = 0;
};

// What SolveBinaryBatched takes (the CPU table's batched_takes): C-SVC's problem, as the device loop it is the
// reference of (svm_ops.h kDeviceLoopTakes).
inline constexpr SolverTakes kHostBatchedTakes{"SolveBinaryBatched (the device loop's host reference)", false};

SolverResult SolveBinaryBatched(const BinaryProblem& problem, const SolverOptions& options,
                                const BatchOptions& batch = {}, BatchStats* stats = nullptr);

// The same algorithm on a CUDA device: SolveBinaryBatched(ctx, ...) in svm/svm_ops.h.

}  // namespace tessel::svm
