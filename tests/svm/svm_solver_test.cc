// The SMO solver: optimality (KKT gap and objective recomputed from scratch), agreement with an independent
// dense float64 SMO run to 1e-10, every elimination policy reaching the same optimum, and results that do not
// depend on the cache budget or the thread count. Also the parameter checks and class grouping, and the
// working-set scans' row views (wss.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.h"
#include "core/parallel.h"
#include "svm/class_rows.h"
#include "svm/smo_solver.h"
#include "svm/svm_train.h"
#include "svm/wss.h"
#include "tests/svm/svm_test_util.h"

namespace tessel::svm {
namespace {
using testing::DenseKernel;
using testing::DenseRow;
using testing::RandomDataset;

struct Fixture {
  datasets::SparseRowDataset ds;
  kernels::SparseRowsView view;
  std::vector<int32_t> rows;
  std::vector<int8_t> y;
};

Fixture MakeFixture(int64_t n, uint64_t seed) {
  Fixture f{RandomDataset(n, 20, 0.5, {1, -1}, seed), {}, {}, {}};
  f.view = f.ds.Rows();
  for (int64_t r = 0; r < n; ++r) {
    f.rows.push_back(static_cast<int32_t>(r));
    f.y.push_back(f.ds.labels.Host()[r] > 0 ? 1 : -1);
  }
  return f;
}

// The dual objective and the maximal KKT violation of signed alphas (y_i a_i), from scratch in float64 with
// Q rounded to float as the solver's model of the problem.
struct Check {
  double obj;
  double gap;
};
Check Recompute(const Fixture& f, const kernels::SvmKernelParams& p, const std::vector<double>& signed_alpha, double cp,
                double cn) {
  const auto n = static_cast<int64_t>(f.rows.size());
  std::vector<std::vector<double>> x;
  for (int64_t r = 0; r < n; ++r) x.push_back(DenseRow(f.ds, r));
  std::vector<double> a(static_cast<size_t>(n));
  double ya = 0;
  for (int64_t i = 0; i < n; ++i) {
    a[i] = signed_alpha[i] * f.y[i];
    ya += signed_alpha[i];
  }
  EXPECT_NEAR(ya, 0, 1e-9);
  double obj = 0;
  double up = -std::numeric_limits<double>::infinity();  // max over I_up of -y G
  double low = std::numeric_limits<double>::infinity();  // min over I_low of -y G
  for (int64_t i = 0; i < n; ++i) {
    const double c = f.y[i] > 0 ? cp : cn;
    EXPECT_GE(a[i], 0);
    EXPECT_LE(a[i], c);
    double g = -1;
    for (int64_t j = 0; j < n; ++j) {
      const double k = DenseKernel(p, x[i], x[j]);
      g += static_cast<double>(static_cast<float>(f.y[i] * f.y[j] * k)) * a[j];
    }
    obj += a[i] * (g - 1);
    const double v = -f.y[i] * g;
    const bool in_up = (f.y[i] > 0 && a[i] < c) || (f.y[i] < 0 && a[i] > 0);
    const bool in_low = (f.y[i] > 0 && a[i] > 0) || (f.y[i] < 0 && a[i] < c);
    if (in_up) up = std::max(up, v);
    if (in_low) low = std::min(low, v);
  }
  return {obj / 2, up - low};
}

// An independent reference: dense float64 Q, maximal-violating-pair SMO without shrinking or caching.
double ReferenceObjective(const Fixture& f, const kernels::SvmKernelParams& p, double cp, double cn) {
  const auto n = static_cast<int64_t>(f.rows.size());
  std::vector<std::vector<double>> q(static_cast<size_t>(n), std::vector<double>(static_cast<size_t>(n)));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) q[i][j] = f.y[i] * f.y[j] * DenseKernel(p, DenseRow(f.ds, i), DenseRow(f.ds, j));
  std::vector<double> a(static_cast<size_t>(n), 0.0);
  std::vector<double> g(static_cast<size_t>(n), -1.0);
  for (int iter = 0; iter < 1000000; ++iter) {
    int64_t i = -1;
    int64_t j = -1;
    double gi = -std::numeric_limits<double>::infinity();
    double gj = std::numeric_limits<double>::infinity();
    for (int64_t t = 0; t < n; ++t) {
      const double c = f.y[t] > 0 ? cp : cn;
      const double v = -f.y[t] * g[t];
      if (((f.y[t] > 0 && a[t] < c) || (f.y[t] < 0 && a[t] > 0)) && v > gi) gi = v, i = t;
      if (((f.y[t] > 0 && a[t] > 0) || (f.y[t] < 0 && a[t] < c)) && v < gj) gj = v, j = t;
    }
    if (gi - gj < 1e-10) break;
    // Move along y_i d_i = +1, y_j d_j = -1 by t, clipped to the box.
    const double curv = std::max(q[i][i] + q[j][j] - 2 * f.y[i] * f.y[j] * q[i][j], 1e-12);
    double t = (gi - gj) / curv;
    const double ci = f.y[i] > 0 ? cp : cn;
    const double cj = f.y[j] > 0 ? cp : cn;
    t = std::min(t, f.y[i] > 0 ? ci - a[i] : a[i]);
    t = std::min(t, f.y[j] > 0 ? a[j] : cj - a[j]);
    const double di = f.y[i] * t;
    const double dj = -f.y[j] * t;
    a[i] += di;
    a[j] += dj;
    for (int64_t k = 0; k < n; ++k) g[k] += q[k][i] * di + q[k][j] * dj;
  }
  double obj = 0;
  for (int64_t k = 0; k < n; ++k) obj += a[k] * (g[k] - 1);
  return obj / 2;
}

SolverResult Solve(Fixture& f, const kernels::SvmKernelParams& p, double cp, double cn, SolverOptions o) {
  kernels::SvmKernelRows k(f.view, p);
  return SolveBinary({&k, f.rows, f.y, cp, cn}, o);
}

TEST(SvmSolverTest, OptimalForEveryKernelAndMatchesReference) {
  Fixture f = MakeFixture(150, 21);
  const std::vector<kernels::SvmKernelParams> kernels_ = {{kernels::SvmKernelType::kLinear, 3, 0, 0},
                                                          {kernels::SvmKernelType::kPolynomial, 2, 0.05, 1},
                                                          {kernels::SvmKernelType::kRbf, 3, 0.05, 0}};
  for (const auto& p : kernels_) {
    SolverOptions o;
    o.eps = 1e-6;
    const SolverResult r = Solve(f, p, 2.0, 0.5, o);
    const Check c = Recompute(f, p, r.alpha, 2.0, 0.5);
    EXPECT_LT(c.gap, 1e-6 + 1e-9) << SvmKernelName(p.type);
    EXPECT_NEAR(r.obj, c.obj, 1e-9 * std::fabs(c.obj));
    const double ref = ReferenceObjective(f, p, 2.0, 0.5);
    EXPECT_NEAR(r.obj, ref, 1e-6 * std::fabs(ref)) << SvmKernelName(p.type);
    EXPECT_GT(r.nr_sv, 0);
  }
}

TEST(SvmSolverTest, EveryEliminationPolicyReachesTheSameOptimum) {
  Fixture f = MakeFixture(1500, 22);
  const kernels::SvmKernelParams p{kernels::SvmKernelType::kRbf, 3, 0.05, 0};
  SolverOptions o;
  o.eps = 1e-3;
  o.shrinking = ShrinkingPolicy::kOff;
  const SolverResult off = Solve(f, p, 1, 1, o);
  EXPECT_EQ(off.min_active, 1500);
  for (const auto policy : {ShrinkingPolicy::kEager, ShrinkingPolicy::kPeriodic, ShrinkingPolicy::kLazy}) {
    o.shrinking = policy;
    const SolverResult r = Solve(f, p, 1, 1, o);
    const Check c = Recompute(f, p, r.alpha, 1, 1);
    EXPECT_LT(c.gap, 1e-3 + 1e-9) << ShrinkingName(policy);  // the final full check holds on every sample
    EXPECT_NEAR(r.obj, off.obj, 1e-5 * std::fabs(off.obj)) << ShrinkingName(policy);
    EXPECT_NEAR(r.rho, off.rho, 1e-3) << ShrinkingName(policy);
    EXPECT_GT(r.shrink_checks, 0) << ShrinkingName(policy);
    if (policy == ShrinkingPolicy::kEager) {
      EXPECT_LT(r.min_active, 1500);  // samples really were eliminated
      EXPECT_GT(r.reconstructions, 0);
    }
  }
}

// The schedule every solver follows: LIBSVM's constants for periodic, every pass for eager, the gap gate for lazy.
TEST(EliminationScheduleTest, PoliciesCheckWhereTheyPromise) {
  const double eps = 1e-3;
  const EliminationSchedule periodic(ShrinkingPolicy::kPeriodic, 5000, eps);
  EXPECT_EQ(periodic.period(), 1000);  // min(l, 1000)
  EXPECT_EQ(EliminationSchedule(ShrinkingPolicy::kPeriodic, 300, eps).period(), 300);
  EXPECT_FALSE(periodic.Due(999));
  EXPECT_TRUE(periodic.Due(1000));
  EXPECT_TRUE(periodic.CheckNow(1e9));
  EXPECT_TRUE(periodic.eliminates());
  const EliminationSchedule eager(ShrinkingPolicy::kEager, 5000, eps);
  EXPECT_TRUE(eager.Due(0));
  EXPECT_TRUE(eager.CheckNow(1e9));
  const EliminationSchedule lazy(ShrinkingPolicy::kLazy, 5000, eps);
  EXPECT_FALSE(lazy.Due(10));
  EXPECT_FALSE(lazy.CheckNow(0.11));  // above 100 eps
  EXPECT_TRUE(lazy.CheckNow(0.099));
  const EliminationSchedule off(ShrinkingPolicy::kOff, 5000, eps);
  EXPECT_TRUE(off.Due(1000)) << "a check point still comes (the SMO solver logs progress there)";
  EXPECT_FALSE(off.CheckNow(0.0));
  EXPECT_FALSE(off.eliminates());
  // Restore once, when gmax1 + gmax2 first falls to 10 eps.
  EXPECT_FALSE(periodic.Unshrink(false, 0.0101));
  EXPECT_TRUE(periodic.Unshrink(false, 0.0099));
  EXPECT_FALSE(periodic.Unshrink(true, 0.0));
}

TEST(SvmSolverTest, ResultDoesNotDependOnCacheOrThreads) {
  Fixture f = MakeFixture(2500, 23);
  const kernels::SvmKernelParams p{kernels::SvmKernelType::kRbf, 3, 0.1, 0};
  SolverOptions o;
  o.cache_bytes = int64_t{64} << 20;
  const SolverResult big = Solve(f, p, 4, 4, o);
  o.cache_bytes = 1;  // the two-row minimum: rows are evicted and recomputed all the time
  const SolverResult tiny = [&] {
    ThreadLimit one(1);
    return Solve(f, p, 4, 4, o);
  }();
  EXPECT_GT(tiny.kernel_evaluations, big.kernel_evaluations);
  EXPECT_EQ(big.iterations, tiny.iterations);
  EXPECT_EQ(big.obj, tiny.obj);
  EXPECT_EQ(big.rho, tiny.rho);
  EXPECT_EQ(big.alpha, tiny.alpha);
}

// The own-class rows kept once for all one-vs-one pairs (class_rows.h): each is the kernel's own Q row over the
// class (bit for bit), computed by its first caller and served to the later ones.
TEST(ClassRowCacheTest, OwnClassRowIsTheKernelRowComputedOnce) {
  auto ds = RandomDataset(90, 12, 0.6, {0, 1, 2}, 31);
  const ClassGroups g = GroupClasses(ds);
  std::vector<std::vector<int32_t>> members(g.labels.size());
  for (int64_t r = 0; r < ds.num_rows; ++r) members[g.row_class[r]].push_back(static_cast<int32_t>(r));
  EXPECT_EQ(ClassRowCache::Bytes(members),
            static_cast<int64_t>(sizeof(float)) *
                std::accumulate(members.begin(), members.end(), int64_t{0}, [](int64_t a, const auto& m) {
                  return a + static_cast<int64_t>(m.size() * m.size());
                }));
  ClassRowCache cache(ds.num_rows, members);
  kernels::SvmKernelRows kernel(ds.Rows(), {kernels::SvmKernelType::kRbf, 3, 0.2, 0});
  for (const int32_t r : {0, 17, 89}) {
    const int32_t c = cache.ClassOf(r);
    ASSERT_EQ(c, g.row_class[r]);
    const auto& cols = members[static_cast<size_t>(c)];
    ASSERT_EQ(cols[static_cast<size_t>(cache.IndexInClass(r))], r);
    std::vector<float> want(cols.size());
    kernel.QRow(r, 1, cols, {}, want);
    const int64_t evals = kernel.evaluations();
    const float* first = cache.OwnClassRow(r, kernel);
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(kernel.evaluations(), evals + static_cast<int64_t>(cols.size()));  // computed by this caller
    EXPECT_EQ(std::vector<float>(first, first + cols.size()), want);
    kernels::SvmKernelRows other = kernel.Share();  // another pair's kernel object
    EXPECT_EQ(cache.OwnClassRow(r, other), first);  // served, not recomputed
    EXPECT_EQ(other.evaluations(), 0);
  }
  EXPECT_EQ(cache.fills(), 3);
  EXPECT_EQ(cache.hits(), 3);
  EXPECT_THROW(ClassRowCache(10, {{0, 1}, {1, 2}}), Error);  // a row in two classes
}

// One-vs-one training with the pairs' own-class rows shared (a cache large enough) and computed by each pair
// (a cache too small to share them): the same model bit for bit, with fewer kernel evaluations.
TEST(SvmTrainTest, SharedOwnClassRowsGiveTheSameModel) {
  auto ds = RandomDataset(400, 16, 0.7, {1, 2, 3, 4, 5}, 32);
  SvmParams p;
  p.C = 4;
  p.kernel = {kernels::SvmKernelType::kRbf, 3, 0.1, 0};
  p.cache_mb = 64;  // 400^2 floats would fit twice over: the rows are shared
  TrainReport shared_report;
  const SvmModel shared = TrainSvm(ds, p, &shared_report);
  p.cache_mb = 0.05;  // under twice the shared rows' bytes: each pair computes its own
  TrainReport own_report;
  const SvmModel own = TrainSvm(ds, p, &own_report);
  ASSERT_EQ(shared_report.pairs.size(), 10U);
  for (size_t k = 0; k < shared_report.pairs.size(); ++k) {
    EXPECT_EQ(shared_report.pairs[k].result.obj, own_report.pairs[k].result.obj) << k;
    EXPECT_EQ(shared_report.pairs[k].result.rho, own_report.pairs[k].result.rho) << k;
    EXPECT_EQ(shared_report.pairs[k].result.iterations, own_report.pairs[k].result.iterations) << k;
  }
  EXPECT_EQ(shared.rho, own.rho);
  EXPECT_EQ(shared.sv_coef, own.sv_coef);
  EXPECT_LT(shared_report.kernel_evaluations, own_report.kernel_evaluations);
}

TEST(SvmSolverTest, IterationLimitStillReturnsAFeasiblePoint) {
  Fixture f = MakeFixture(300, 24);
  const kernels::SvmKernelParams p{kernels::SvmKernelType::kRbf, 3, 0.05, 0};
  SolverOptions o;
  o.max_iterations = 5;
  const SolverResult r = Solve(f, p, 1, 1, o);
  EXPECT_TRUE(r.hit_iteration_limit);
  EXPECT_EQ(r.iterations, 5);
  double ya = 0;
  for (double a : r.alpha) ya += a;
  EXPECT_NEAR(ya, 0, 1e-12);
}

// The scans of the regressions' rows read through the data rows' ids (QRowView with uid: (y_i y_t) K[uid t]) give
// the answers of the same rows gathered first (SVR_Q's signed rows), bit for bit: the second-index scans of
// Solver and Solver_NU (a label without a violator included), the gradient update, and Solver_NU's update, whose
// two max violators are NuMaxViolatorsOver's of the new G. Random states over 5,003 positions (several blocks and
// a scalar tail), pairs of positions on one data row as the regressions' a and a*.
TEST(WssScans, RowsReadThroughIdsGiveTheGatheredRowsAnswers) {
  const int64_t n = 5003;
  const int64_t rows = 2600;
  uint64_t state = 11;
  const auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) * 0x1p-53;
  };
  SampleState s;
  std::vector<int32_t> uid(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t) {
    s.y.push_back(next() < 0.5 ? 1 : -1);
    s.qd.push_back(0.5 + next());
    s.alpha.push_back(0);
    const double r = next();
    s.status.push_back(r < 0.3 ? batch::kLower : (r < 0.6 ? batch::kUpper : batch::kFree));
    s.g.push_back(2 * next() - 1);
    uid[static_cast<size_t>(t)] = static_cast<int32_t>(next() * rows);
  }
  std::vector<std::vector<float>> k(3, std::vector<float>(static_cast<size_t>(rows)));
  for (auto& row : k)
    for (float& v : row) v = static_cast<float>(next());
  const auto gathered = [&](const std::vector<float>& row, int8_t yi) {
    std::vector<float> q(static_cast<size_t>(n));
    for (int64_t t = 0; t < n; ++t) q[t] = (static_cast<float>(yi) * static_cast<float>(s.y[t])) * row[uid[t]];
    return q;
  };
  const auto same = [](const Candidate& a, const Candidate& b) {
    EXPECT_EQ(a.index, b.index);
    EXPECT_EQ(a.value, b.value);
  };
  const NuFirsts firsts = NuMaxViolatorsOver(n, s);
  ASSERT_GE(firsts.p.index, 0);
  ASSERT_GE(firsts.n.index, 0);
  const auto qp = gathered(k[0], 1);
  const auto qn = gathered(k[1], -1);
  const QRowView vp(k[0].data(), uid.data(), 1);
  const QRowView vn(k[1].data(), uid.data(), -1);
  {  // Solver: i of label -1, its row over both labels
    const SecondChoice a = SecondOrderOver(n, s, QRowView(qn.data()), firsts.n.value, 1.2, -2.0);
    const SecondChoice b = SecondOrderOver(n, s, vn, firsts.n.value, 1.2, -2.0);
    same(a.best, b.best);
    EXPECT_GE(b.best.index, 0);
    EXPECT_EQ(a.gmax2, b.gmax2);
  }
  for (const bool both : {true, false}) {  // Solver_NU: each label's row; then label -1 without a violator
    NuFirsts f = firsts;
    if (!both) f.n = {-kInf, -1};
    const NuSecondChoice a =
        NuSecondOrderOver(n, s, f, QRowView(qp.data()), 1.1, both ? QRowView(qn.data()) : QRowView(), 0.9);
    const NuSecondChoice b = NuSecondOrderOver(n, s, f, vp, 1.1, both ? vn : QRowView(), 0.9);
    same(a.best, b.best);
    EXPECT_GE(b.best.index, 0);
    EXPECT_EQ(a.gmaxp2, b.gmaxp2);
    EXPECT_EQ(a.gmaxn2, b.gmaxn2);
  }
  {  // the gradient update, then Solver_NU's fused first scan
    SampleState a = s;
    SampleState b = s;
    const QRowView vj(k[2].data(), uid.data(), 1);
    const auto qj = gathered(k[2], 1);
    same(UpdateGradientOver(n, &a, QRowView(qn.data()), QRowView(qj.data()), 0.25, -0.5),
         UpdateGradientOver(n, &b, vn, vj, 0.25, -0.5));
    EXPECT_EQ(a.g, b.g);
    const NuFirsts fused = UpdateGradientNuOver(n, &b, vn, vj, -0.125, 0.75);
    UpdateGradientOver(n, &a, QRowView(qn.data()), QRowView(qj.data()), -0.125, 0.75);
    EXPECT_EQ(a.g, b.g);
    const NuFirsts scanned = NuMaxViolatorsOver(n, a);
    same(fused.p, scanned.p);
    same(fused.n, scanned.n);
  }
}

// The second-index scan (SecondOrderOver: vector lanes, blocks, the baseline's skipped divisions) against LIBSVM's
// serial loop, written out here, on values chosen to strain it: gradients from 1e-200 to 1e160 (squares that
// underflow and overflow), repeated values (ties, by position and by distinct keys), Q entries making a_ij zero or
// negative (TAU), tiny and huge diagonals, and a uniform diagonal (SampleState::qd_uniform). The same position and the
// same value, bit for bit.
TEST(WssScans, SecondOrderScanIsTheSerialLoopsAnswer) {
  uint64_t state = 29;
  const auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) * 0x1p-53;
  };
  const double scales[] = {1e-200, 1e-155, 1e-9, 1, 1e3, 1e150, 1e160};
  for (int round = 0; round < 7 * 6; ++round) {
    const int64_t n = 1 + static_cast<int64_t>(next() * 3000);
    const double scale = scales[round % 7];
    const int mode = round / 7;  // 0-2: spread values, 3-5: few distinct values (many exact ties at the best)
    const bool uniform = mode % 3 != 2;
    const bool few = mode >= 3;
    SampleState s;
    std::vector<float> q(static_cast<size_t>(n));
    std::vector<int64_t> key(static_cast<size_t>(n));
    for (int64_t t = 0; t < n; ++t) {
      s.y.push_back(next() < 0.5 ? 1 : -1);
      s.qd.push_back(uniform ? 1.0 : (next() < 0.05 ? 1e-300 : (next() < 0.05 ? 1e200 : 0.5 + next())));
      s.alpha.push_back(0);
      const double r = next();
      s.status.push_back(r < 0.3 ? batch::kLower : (r < 0.6 ? batch::kUpper : batch::kFree));
      s.g.push_back(scale * (few ? std::floor(next() * 3) - 1 : 2 * next() - 1));
      const double u = next();
      q[static_cast<size_t>(t)] = few ? static_cast<float>(std::floor(u * 3) - 1)
                                      : (u < 0.1 ? 1.0f : (u < 0.15 ? -1.0f : static_cast<float>(2 * next() - 1)));
      key[static_cast<size_t>(t)] = (t * 2654435761) % (int64_t{1} << 32);  // distinct, as global ids, out of order
    }
    if (uniform) s.NoteDiagonal();
    const Candidate first = MaxViolatorOver(n, s);
    if (first.index < 0) continue;
    const double qd_i = s.qd[static_cast<size_t>(first.index)];
    const double yi2 = 2.0 * s.y[static_cast<size_t>(first.index)];
    for (const bool keyed : {false, true}) {
      // LIBSVM's Solver::select_working_set, second loop (ties: the later position, or the larger key).
      double gmax2 = -kInf;
      double obj_min = kInf;
      int64_t at = -1;
      for (int64_t j = 0; j < n; ++j) {
        const auto u = static_cast<size_t>(j);
        double grad_diff;
        double quad;
        if (s.y[u] > 0) {
          if (s.status[u] == batch::kLower) continue;
          grad_diff = first.value + s.g[u];
          gmax2 = std::max(gmax2, s.g[u]);
          quad = (qd_i + s.qd[u]) - yi2 * static_cast<double>(q[u]);
        } else {
          if (s.status[u] == batch::kUpper) continue;
          grad_diff = first.value + -s.g[u];
          gmax2 = std::max(gmax2, -s.g[u]);
          quad = (qd_i + s.qd[u]) - -yi2 * static_cast<double>(q[u]);
        }
        if (!(grad_diff > 0)) continue;
        const double obj = -(grad_diff * grad_diff) / (quad > 0 ? quad : batch::kTau);
        const bool take = keyed ? at < 0 || obj < obj_min || (obj == obj_min && key[u] > key[static_cast<size_t>(at)])
                                : obj <= obj_min;
        if (take) {
          obj_min = obj;
          at = j;
        }
      }
      const SecondChoice c =
          SecondOrderOver(n, s, QRowView(q.data()), first.value, qd_i, yi2, keyed ? key.data() : nullptr);
      SCOPED_TRACE(::testing::Message() << "round " << round << ", n " << n << (keyed ? ", keyed" : ""));
      EXPECT_EQ(c.best.index, at);
      if (at >= 0) {
        EXPECT_EQ(std::bit_cast<uint64_t>(c.best.value), std::bit_cast<uint64_t>(obj_min));
      }
      EXPECT_EQ(c.gmax2, gmax2);
    }
  }
}

TEST(SvmParamsTest, RejectsBadValuesWithTheFlagToFix) {
  SvmParams p;
  p.C = 0;
  try {
    p.Validate();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("-c"), std::string::npos) << e.what();
  }
  p.C = 1;
  p.kernel.gamma = -1;
  EXPECT_THROW(p.Validate(), Error);
  p.kernel.gamma = 0;
  p.eps = 0;
  EXPECT_THROW(p.Validate(), Error);
  p.eps = 1e-3;
  p.cache_mb = -1;
  EXPECT_THROW(p.Validate(), Error);
  p.cache_mb = 1;
  p.weights = {{1, -2}};
  EXPECT_THROW(p.Validate(), Error);
  p.weights = {{1, 0}};  // C = 0 for a class: refused, naming -w
  try {
    p.Validate();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("-w1"), std::string::npos) << e.what();
  }
  p.weights.clear();
  // C only where the formulation has one (svm_check_parameter): nu-SVC and one-class take any -c.
  p.C = -5;
  for (const SvmType type : {SvmType::kNuSvc, SvmType::kOneClass}) {
    p.type = type;
    EXPECT_NO_THROW(p.Validate());
  }
  for (const SvmType type : {SvmType::kCSvc, SvmType::kEpsilonSvr, SvmType::kNuSvr}) {
    p.type = type;
    EXPECT_THROW(p.Validate(), Error);
  }
  p.C = 1;
  p.type = SvmType::kOneClass;
  p.nu = 1;  // every sample at its bound: rho infinite
  try {
    p.Validate();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("-n below 1"), std::string::npos) << e.what();
  }
  p.type = SvmType::kNuSvc;
  EXPECT_NO_THROW(p.Validate());
  EXPECT_EQ(ParseShrinking("0"), ShrinkingPolicy::kOff);
  EXPECT_EQ(ParseShrinking("lazy"), ShrinkingPolicy::kLazy);
  EXPECT_THROW(ParseShrinking("sometimes"), Error);
}

TEST(SvmTrainTest, ClassOrderFollowsLibsvm) {
  auto ds = RandomDataset(20, 5, 0.5, {3}, 25);
  auto labels = ds.labels.MutableHost();
  const double seq[] = {-1, 1, -1, 1};
  for (int r = 0; r < 4; ++r) labels[r] = seq[r];
  for (int r = 4; r < 20; ++r) labels[r] = r % 2 ? 1 : -1;
  EXPECT_EQ(GroupClasses(ds).labels, (std::vector<int32_t>{1, -1}));  // -1/+1: +1 first
  labels[0] = 7;
  labels[1] = 2;
  EXPECT_EQ(GroupClasses(ds).labels, (std::vector<int32_t>{7, 2, -1, 1}));  // first appearance
  labels[0] = 0.5;
  EXPECT_THROW(GroupClasses(ds), Error);
}

TEST(SvmTrainTest, SingleClassIsAClearError) {
  const auto ds = RandomDataset(30, 5, 0.5, {4}, 26);
  try {
    TrainSvm(ds, SvmParams{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("single class"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessel::svm
