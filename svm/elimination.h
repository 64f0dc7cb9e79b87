// The sample-elimination (shrinking) schedule of every C-SVC solver — the one-pair SMO (smo_solver.cc), the
// batched solver (batch_solver.cc) and its device loop (device_loop.cc) — as one named object: when to check
// for samples to eliminate, whether a check runs under the chosen policy, and when the eliminated samples are
// restored. Policies from Narasimhan, Vishnu, Holder, Hoisie, "Fast Support Vector Machines Using Parallel Adaptive
// Shrinking on Distributed Systems" (2014); the periodic constants are LIBSVM's (svm.cpp, Solver::Solve and
// do_shrinking). Plain C++ without dependencies, so the CUDA solver's host loop includes it too.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tessel::svm {

// When the solver tries to eliminate (shrink) samples that are bound and unlikely to move:
//   kOff:      never (every iteration works on all samples);
//   kEager:    "earliest possible": every iteration (every round for the batched solvers);
//   kPeriodic: every min(l, 1000) iterations, as LIBSVM (-h 1);
//   kLazy:     every min(l, 1000) iterations once the violation gap is below kLazyGapFactor * eps.
// Whatever the policy, the solver reconstructs the gradient and checks all samples before it stops.
enum class ShrinkingPolicy { kOff, kEager, kPeriodic, kLazy };

class EliminationSchedule {
 public:
  static constexpr int64_t kMaxPeriod = 1000;    // LIBSVM: a check every min(l, 1000) iterations
  static constexpr double kUnshrinkFactor = 10;  // LIBSVM: restore every sample once the gap is <= 10 eps
  static constexpr double kLazyGapFactor = 100;  // kLazy: no check until the gap is <= 100 eps

  // `l` samples, stopping tolerance `eps`.
  EliminationSchedule(ShrinkingPolicy policy, int64_t l, double eps)
      : policy_(policy),
        period_(std::min<int64_t>(l, kMaxPeriod)),
        unshrink_gap_(eps * kUnshrinkFactor),
        lazy_gap_(kLazyGapFactor * eps) {}

  ShrinkingPolicy policy() const { return policy_; }
  // Whether samples are ever eliminated (and so whether G_bar, the reconstruction state, must be kept).
  bool eliminates() const { return policy_ != ShrinkingPolicy::kOff; }
  // Iterations between two check points (kEager: every pass is a check point regardless).
  int64_t period() const { return period_; }

  // Whether this pass of the solver's loop is a check point, `since` iterations after the last one (the SMO
  // solver also logs its progress there). A solver that wants a check at its next pass sets since = period().
  bool Due(int64_t since) const { return policy_ == ShrinkingPolicy::kEager || since >= period_; }
  // At a check point: whether the policy eliminates now, given the last maximal violation gap.
  bool CheckNow(double last_gap) const {
    switch (policy_) {
      case ShrinkingPolicy::kOff:
        return false;
      case ShrinkingPolicy::kEager:
      case ShrinkingPolicy::kPeriodic:
        return true;
      case ShrinkingPolicy::kLazy:
        return last_gap <= lazy_gap_;
    }
    return false;
  }
  // During a check: whether to reconstruct the gradient and restore every sample first (LIBSVM does this once per
  // solve, the first time gmax1 + gmax2 falls to 10 eps; `done` says whether it has happened).
  bool Unshrink(bool done, double gmax1_plus_gmax2) const { return !done && gmax1_plus_gmax2 <= unshrink_gap_; }

 private:
  ShrinkingPolicy policy_;
  int64_t period_;
  double unshrink_gap_;
  double lazy_gap_;
};

// LIBSVM's do_shrinking sweep over the active positions [0, *active): every position that be_shrunk(k) marks
// goes behind the active end, swapped (swap(k, last)) with the last active position that is not marked. Ends
// with *active the count of kept positions; the order of the swaps is LIBSVM's, so its results are too.
template <class BeShrunk, class Swap>
void EliminateMarked(int64_t* active, BeShrunk be_shrunk, Swap swap) {
  for (int64_t k = 0; k < *active; ++k) {
    if (!be_shrunk(k)) continue;
    --*active;
    while (*active > k) {
      if (!be_shrunk(*active)) {
        swap(k, *active);
        break;
      }
      --*active;
    }
  }
}

}  // namespace tessel::svm
