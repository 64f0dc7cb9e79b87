// The binary C-SVC dual solved by SMO with second-order working-set selection (Fan, Chen, Lin, JMLR 2005)
// and sample elimination (Narasimhan et al. 2014; LIBSVM's shrinking, G_bar gradient reconstruction).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "kernels/svm_kernel.h"
#include "svm/round_counts.h"
#include "svm/svm_params.h"

namespace tessel::svm {

class ClassRowCache;  // class_rows.h

// min_a 0.5 a^T Q a + p^T a  subject to  y^T a = const,  0 <= a_i <= Cp (y_i = +1) or Cn (y_i = -1),
// with Q_ij = y_i y_j K(x_i, x_j) rounded to float (LIBSVM's Qfloat) and the gradient kept in float64. C-SVC has
// p = -1 and starts from alpha 0; nu-SVC, one-class and the regressions (LIBSVM's solve_nu_svc, solve_one_class,
// solve_epsilon_svr, solve_nu_svr) give their own p and starting alpha, and the nu formulations Solver_NU's
// selection, elimination and rho. A row may appear twice (the regressions' 2l variables over l rows: SVR_Q).
struct BinaryProblem {
  kernels::SvmKernelRows* kernel = nullptr;  // kernel over the dataset's rows
  std::span<const int32_t> rows;             // sample s is dataset row rows[s]
  std::span<const int8_t> y;                 // +1 or -1 per sample
  double Cp = 1;
  double Cn = 1;
  // One-vs-one pairs of more than two classes: the own-class halves of the Q rows, shared with the other pairs
  // (class_rows.h). Optional; the SMO solver reads it, the others ignore it. Same values either way.
  ClassRowCache* class_rows = nullptr;
  std::span<const double> p = {};       // the linear term per sample; empty: -1 (C-SVC)
  std::span<const double> alpha0 = {};  // the starting a per sample (not y a); empty: 0
  bool nu = false;                      // Solver_NU (nu-SVC, nu-SVR): selection, elimination and rho per label

  // True for C-SVC's problem (p = -1, alpha 0, Solver), which every solver takes (the others: SolverTakes).
  bool IsCsvc() const { return p.empty() && alpha0.empty() && !nu; }
};

// What a binary solver takes, a field of its table (SvmDeviceOps::batched_takes, BinarySolverTakes in svm_ops.h):
// every solver takes C-SVC's problem; `formulations` whether it also takes the other formulations' (a linear term p,
// a starting alpha, Solver_NU's selection: nu-SVC, one-class and the regressions, with -b 1 and -v).
struct SolverTakes {
  std::string_view name;  // the solver as a user chooses it
  bool formulations = true;
};
// The one check of what a solver takes: throws, naming the solver and the ones that take it, when `formulation`
// (a problem or a type other than C-SVC's) is not for it.
void CheckSolverTakes(const SolverTakes& takes, bool formulation);

struct SolverOptions {
  double eps = 1e-3;
  ShrinkingPolicy shrinking = ShrinkingPolicy::kPeriodic;
  int64_t cache_bytes = int64_t{100} << 20;
  int64_t max_iterations = -1;  // -1: max(10^7, 100 l)
};

struct SolverResult {
  std::vector<double> alpha;  // y_i * a_i per sample (LIBSVM's signed coefficients)
  double obj = 0;             // the dual objective at the solution
  double rho = 0;             // the decision function is sum_i alpha_i K(x_i, x) - rho
  double r = 0;               // Solver_NU's r (nu formulations): the scale of their C-SVC equivalent
  double gap = 0;             // the final maximal violation (< eps unless the iteration limit was hit)
  int64_t iterations = 0;
  int64_t kernel_evaluations = 0;
  int64_t shrink_checks = 0;    // elimination passes
  int64_t reconstructions = 0;  // gradient reconstructions (unshrinking and final checks)
  int64_t min_active = 0;       // the smallest active set reached
  int64_t bound_changes = 0;    // variables reaching or leaving C (each costs a full kernel row for G_bar)
  int64_t cache_hits = 0;
  int64_t cache_misses = 0;
  int nr_sv = 0;
  int nr_bsv = 0;
  bool hit_iteration_limit = false;
  double seconds = 0;
  RoundCounts device;  // the device loop's work (all zero on the other solvers)
};

// fn(name, r.field...) for each count of a solve that every solver keeps, of one result or field by field of several
// (SolverResult, the device loop's LoopResult).
template <class Fn, class... Result>
void ForEachSolveCount(Fn&& fn, Result&&... r) {
  fn("gap", r.gap...);
  fn("iterations", r.iterations...);
  fn("kernel_evaluations", r.kernel_evaluations...);
  fn("shrink_checks", r.shrink_checks...);
  fn("reconstructions", r.reconstructions...);
  fn("min_active", r.min_active...);
  fn("bound_changes", r.bound_changes...);
  fn("cache_hits", r.cache_hits...);
  fn("cache_misses", r.cache_misses...);
}

// fn(name, field) for each statistic of a SolverResult that the training report shows (TrainReport::ToJson), in the
// order the distributed trainer sends them between ranks (ShareResults, which adds hit_iteration_limit and r).
template <class Result, class Fn>
void ForEachResultStat(Result&& r, Fn&& fn) {
  fn("obj", r.obj);
  fn("rho", r.rho);
  ForEachSolveCount(fn, r);
  fn("nr_sv", r.nr_sv);
  fn("nr_bsv", r.nr_bsv);
  fn("seconds", r.seconds);
}

SolverResult SolveBinary(const BinaryProblem& problem, const SolverOptions& options);

}  // namespace tessel::svm
