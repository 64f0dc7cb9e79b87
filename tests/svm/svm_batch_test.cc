// The batched working-set solver (host reference of the CUDA solver) against the SMO solver: the same dual
// objective within the bound implied by the stopping rule, the KKT gap recomputed from scratch, the same
// predictions, every elimination policy, working-set sizes from 2 to beyond l, and heart_scale.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <vector>

#include "core/error.h"
#include "datasets/readers.h"
#include "svm/batch_solver.h"
#include "svm/smo_solver.h"
#include "tests/svm/svm_test_util.h"

namespace tessel::svm {
namespace {
using testing::MakeProblem;
using testing::Problem;
using testing::RandomDataset;

SolverResult Smo(Problem& p, const kernels::SvmKernelParams& kp, double cp, double cn, const SolverOptions& o) {
  kernels::SvmKernelRows k(p.view, kp);
  return SolveBinary({&k, p.rows, p.y, cp, cn}, o);
}
SolverResult Batch(Problem& p, const kernels::SvmKernelParams& kp, double cp, double cn, const SolverOptions& o,
                   const BatchOptions& b, BatchStats* stats = nullptr) {
  kernels::SvmKernelRows k(p.view, kp);
  return SolveBinaryBatched({&k, p.rows, p.y, cp, cn}, o, b, stats);
}

// Decision values sum_j alpha_j K(x_j, x_r) - rho on the training rows, in float64.
std::vector<double> Decisions(Problem& p, const kernels::SvmKernelParams& kp, const SolverResult& r) {
  kernels::SvmKernelRows k(p.view, kp);
  const auto n = static_cast<int64_t>(p.rows.size());
  std::vector<double> out(static_cast<size_t>(n), -r.rho);
  std::vector<double> row(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    if (r.alpha[j] == 0) continue;
    k.KRow(j, p.rows, row);
    for (int64_t i = 0; i < n; ++i) out[i] += r.alpha[j] * row[i];
  }
  return out;
}

// Tolerance argument: both solvers stop at a feasible a with m(a) - M(a) < eps. By convexity
// f(a) - f* <= grad f(a)^T (a - a*) = sum_i (G_i + b y_i)(a_i - a*_i) for any b (y^T (a - a*) = 0); taking b
// between M(a) and m(a) makes every term at most eps |a_i - a*_i|, so f(a) - f* <= eps sum_i C_i. Two such
// answers differ by at most that much, and the tests pick eps so the bound is below 1e-6 |f|.
double ObjectiveBound(const Problem& p, double eps, double cp, double cn) {
  double sum_c = 0;
  for (const int8_t y : p.y) sum_c += y > 0 ? cp : cn;
  return eps * sum_c;
}

void ExpectSameAnswer(Problem& p, const kernels::SvmKernelParams& kp, double cp, double cn, const SolverResult& smo,
                      const SolverResult& bat, double eps) {
  const double bound = ObjectiveBound(p, eps, cp, cn);
  ASSERT_LE(bound, 1e-6 * std::fabs(smo.obj)) << "eps too loose for the 1e-6 test";
  EXPECT_LE(std::fabs(bat.obj - smo.obj), bound) << SvmKernelName(kp.type);
  EXPECT_LT(bat.gap, eps);
  double ya = 0;
  for (size_t i = 0; i < bat.alpha.size(); ++i) {
    const double c = p.y[i] > 0 ? cp : cn;
    ya += bat.alpha[i];
    EXPECT_GE(bat.alpha[i] * p.y[i], 0);
    EXPECT_LE(bat.alpha[i] * p.y[i], c);
  }
  EXPECT_NEAR(ya, 0, 1e-9);
  const std::vector<double> ds = Decisions(p, kp, smo);
  const std::vector<double> db = Decisions(p, kp, bat);
  int64_t differ = 0;
  for (size_t i = 0; i < ds.size(); ++i) differ += (ds[i] > 0) != (db[i] > 0) && std::fabs(ds[i]) > 1e-4;
  EXPECT_EQ(differ, 0) << SvmKernelName(kp.type);
}

TEST(SvmBatchTest, MatchesSmoForEveryKernel) {
  Problem p = MakeProblem(RandomDataset(300, 20, 0.5, {1, -1}, 41));
  const std::vector<kernels::SvmKernelParams>& ks = testing::EveryKernel();
  for (const auto& kp : ks) {
    SolverOptions o;
    o.eps = 1e-8;
    BatchOptions b;
    b.working_set = 32;
    BatchStats stats;
    const SolverResult smo = Smo(p, kp, 2.0, 0.5, o);
    const SolverResult bat = Batch(p, kp, 2.0, 0.5, o, b, &stats);
    ExpectSameAnswer(p, kp, 2.0, 0.5, smo, bat, o.eps);
    EXPECT_GT(stats.rounds, 1) << SvmKernelName(kp.type);
    EXPECT_LT(stats.rounds, bat.iterations) << SvmKernelName(kp.type);  // several SMO steps per round
  }
}

TEST(SvmBatchTest, WorkingSetSizesFromTwoToBeyondTheSamples) {
  Problem p = MakeProblem(RandomDataset(200, 15, 0.6, {1, -1}, 42));
  const kernels::SvmKernelParams kp{kernels::SvmKernelType::kRbf, 3, 0.1, 0};
  SolverOptions o;
  o.eps = 1e-8;
  const SolverResult smo = Smo(p, kp, 1, 1, o);
  for (const int q : {2, 8, 64, 512}) {
    BatchOptions b;
    b.working_set = q;
    const SolverResult bat = Batch(p, kp, 1, 1, o, b);
    ExpectSameAnswer(p, kp, 1, 1, smo, bat, o.eps);
  }
}

TEST(SvmBatchTest, EveryEliminationPolicyReachesTheSameOptimum) {
  Problem p = MakeProblem(RandomDataset(1500, 20, 0.5, {1, -1}, 43));
  const kernels::SvmKernelParams kp{kernels::SvmKernelType::kRbf, 3, 0.05, 0};
  SolverOptions o;
  o.eps = 1e-3;
  o.shrinking = ShrinkingPolicy::kOff;
  BatchOptions b;
  b.working_set = 64;
  const SolverResult off = Batch(p, kp, 1, 1, o, b);
  EXPECT_EQ(off.min_active, 1500);
  EXPECT_EQ(off.reconstructions, 0);
  const SolverResult smo = Smo(p, kp, 1, 1, o);
  EXPECT_NEAR(off.obj, smo.obj, ObjectiveBound(p, o.eps, 1, 1));
  for (const auto policy : {ShrinkingPolicy::kEager, ShrinkingPolicy::kPeriodic, ShrinkingPolicy::kLazy}) {
    o.shrinking = policy;
    const SolverResult r = Batch(p, kp, 1, 1, o, b);
    EXPECT_LT(r.gap, 1e-3) << ShrinkingName(policy);  // the final check ran on all samples
    EXPECT_NEAR(r.obj, off.obj, ObjectiveBound(p, o.eps, 1, 1)) << ShrinkingName(policy);
    EXPECT_GT(r.shrink_checks, 0) << ShrinkingName(policy);
    if (policy == ShrinkingPolicy::kEager) {
      EXPECT_LT(r.min_active, 1500);
      EXPECT_GT(r.reconstructions, 0);
      EXPECT_GT(r.bound_changes, 0);
    }
  }
  // A tight eps: elimination and reconstruction still land on the SMO optimum.
  o.eps = 1e-9;
  o.shrinking = ShrinkingPolicy::kEager;
  const SolverResult tight = Batch(p, kp, 1, 1, o, b);
  o.shrinking = ShrinkingPolicy::kPeriodic;
  const SolverResult tight_smo = Smo(p, kp, 1, 1, o);
  ExpectSameAnswer(p, kp, 1, 1, tight_smo, tight, o.eps);
}

TEST(SvmBatchTest, HeartScaleMatchesSmo) {
  const auto path = std::filesystem::path(TESSEL_TEST_DATA) / "svm" / "heart_scale";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " missing";
  Problem p = MakeProblem(datasets::ReadLibsvm(path));
  for (const auto& kp : {kernels::SvmKernelParams{kernels::SvmKernelType::kRbf, 3, 1.0 / 13, 0},
                         kernels::SvmKernelParams{kernels::SvmKernelType::kLinear, 3, 0, 0}}) {
    SolverOptions o;
    o.eps = 1e-9;
    BatchOptions b;
    b.working_set = 16;
    const SolverResult smo = Smo(p, kp, 1, 1, o);
    const SolverResult bat = Batch(p, kp, 1, 1, o, b);
    ExpectSameAnswer(p, kp, 1, 1, smo, bat, o.eps);
    EXPECT_EQ(bat.nr_sv, smo.nr_sv) << SvmKernelName(kp.type);
    EXPECT_EQ(bat.nr_bsv, smo.nr_bsv) << SvmKernelName(kp.type);
    EXPECT_NEAR(bat.rho, smo.rho, 1e-5) << SvmKernelName(kp.type);
  }
}

TEST(SvmBatchTest, IterationLimitStillReturnsAFeasiblePoint) {
  Problem p = MakeProblem(RandomDataset(300, 20, 0.5, {1, -1}, 44));
  const kernels::SvmKernelParams kp{kernels::SvmKernelType::kRbf, 3, 0.05, 0};
  SolverOptions o;
  o.max_iterations = 5;
  BatchOptions b;
  b.working_set = 16;
  const SolverResult r = Batch(p, kp, 1, 1, o, b);
  EXPECT_TRUE(r.hit_iteration_limit);
  EXPECT_EQ(r.iterations, 5);
  double ya = 0;
  for (const double a : r.alpha) ya += a;
  EXPECT_NEAR(ya, 0, 1e-12);
}

TEST(SvmBatchTest, RejectsBadOptions) {
  Problem p = MakeProblem(RandomDataset(20, 5, 0.5, {1, -1}, 45));
  const kernels::SvmKernelParams kp{kernels::SvmKernelType::kRbf, 3, 0.05, 0};
  for (const int q : {0, 1, 3}) {
    BatchOptions b;
    b.working_set = q;
    EXPECT_THROW(Batch(p, kp, 1, 1, {}, b), Error) << q;
  }
  BatchOptions b;
  b.inner_factor = 1.5;
  EXPECT_THROW(Batch(p, kp, 1, 1, {}, b), Error);
}

}  // namespace
}  // namespace tessel::svm
