// The distributed SVM (svm/dist_solver.h, dist_train.h) on K = 1..4 ranks of the thread communicator:
// without elimination the very iterations of the one-process solver; with every elimination policy the same
// optimum (objective within 1e-6 relative) and the same predictions, including ranks with no samples, ranks
// without one of the classes, uneven and interleaved ownership; data that differs between ranks fails every rank.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "comm/thread_comm.h"
#include "core/error.h"
#include "datasets/readers.h"
#include "svm/batch_solver.h"
#include "svm/dist_solver.h"
#include "svm/dist_train.h"
#include "svm/smo_solver.h"
#include "svm/svm_train.h"
#include "tests/svm/svm_test_util.h"

namespace tessel::svm {
namespace {
using testing::RandomDataset;

const std::string kSvmData = std::string(TESSEL_TEST_DATA) + "/svm/";

struct DistRun {
  SvmModel model;
  TrainReport report;
  std::vector<DistStats> stats;  // per pair (shared pairs)
  DistTrainStats totals;
};

// Trains on K thread ranks; every rank must return the same model (checked here); rank 0's is returned.
DistRun TrainOnRanks(int k, const datasets::SparseRowDataset& data, const SvmParams& params,
                     const DistTrainOptions& how) {
  std::vector<DistRun> runs(static_cast<size_t>(k));
  comm::ThreadGroup::Run(k, [&](comm::Communicator& c) {
    DistRun& r = runs[static_cast<size_t>(c.Rank())];
    r.model = TrainSvmDistributed(c, data, params, &r.report, &r.totals, how);
    r.stats = r.totals.pairs;
  });
  for (int r = 1; r < k; ++r) {
    EXPECT_EQ(runs[static_cast<size_t>(r)].model.sv_coef, runs[0].model.sv_coef) << "rank " << r;
    EXPECT_EQ(runs[static_cast<size_t>(r)].model.rho, runs[0].model.rho) << "rank " << r;
  }
  return std::move(runs[0]);
}

DistRun TrainOnRanks(int k, const datasets::SparseRowDataset& data, const SvmParams& params,
                     PairSchedule schedule = PairSchedule::kShared) {
  DistTrainOptions how;
  how.schedule = schedule;
  return TrainOnRanks(k, data, params, how);
}

// The distributed batched solver with working sets of q.
DistTrainOptions Batched(int q, PairSchedule schedule = PairSchedule::kShared) {
  DistTrainOptions how;
  how.schedule = schedule;
  how.batched = true;
  how.batch.working_set = q;
  return how;
}

// The one-process batched solver with working sets of q (the reference of the distributed one).
BinarySolver OneProcessBatched(int q) {
  BatchOptions b;
  b.working_set = q;
  return [b](const BinaryProblem& problem, const SolverOptions& o) { return SolveBinaryBatched(problem, o, b); };
}

// Rank `rank`'s share of global samples [0, n) under `owner`: their dataset rows, global ids and labels.
struct Share {
  std::vector<int32_t> rows;
  std::vector<int64_t> gids;
  std::vector<int8_t> y;
};
Share ShareOf(int rank, int64_t n, std::span<const int32_t> owner, std::span<const int32_t> rows,
              std::span<const int8_t> y) {
  Share s;
  for (int64_t g = 0; g < n; ++g) {
    if (owner[static_cast<size_t>(g)] != rank) continue;
    s.rows.push_back(rows[static_cast<size_t>(g)]);
    s.gids.push_back(g);
    s.y.push_back(y[static_cast<size_t>(g)]);
  }
  return s;
}

// Non-zeros per row of data (the distributed problem's nnz table).
std::vector<int32_t> RowNnz(const datasets::SparseRowDataset& data) {
  const auto indptr = data.indptr.Host();
  std::vector<int32_t> nnz(static_cast<size_t>(data.num_rows));
  for (int64_t r = 0; r < data.num_rows; ++r)
    nnz[static_cast<size_t>(r)] = static_cast<int32_t>(indptr[r + 1] - indptr[r]);
  return nnz;
}

void ExpectSamePredictions(const SvmModel& a, const SvmModel& b, const datasets::SparseRowDataset& data,
                           const std::string& what) {
  const auto pa = PredictSvm(a, data);
  const auto pb = PredictSvm(b, data);
  ASSERT_EQ(pa.size(), pb.size());
  int64_t differ = 0;
  for (size_t i = 0; i < pa.size(); ++i) differ += pa[i] != pb[i];
  EXPECT_EQ(differ, 0) << what;
}

// Without elimination the distributed solver makes the one-process solver's choices (ties to the larger id), so
// iterations match exactly and alphas agree to rounding of the rho/objective sums.
TEST(SvmDist, WithoutEliminationTheIterationsAreTheOneProcessSolvers) {
  const auto data = datasets::ReadLibsvm(kSvmData + "heart_scale");
  SvmParams p = testing::ParseLibsvmArgs("-c 4 -g 0.25 -h 0");
  TrainReport one;
  const SvmModel ref = TrainSvm(data, p, &one);
  for (const int k : {1, 2, 3, 4}) {
    const DistRun d = TrainOnRanks(k, data, p);
    ASSERT_EQ(d.report.pairs.size(), 1u);
    EXPECT_EQ(d.report.pairs[0].result.iterations, one.pairs[0].result.iterations) << "K = " << k;
    EXPECT_NEAR(d.report.pairs[0].result.obj, one.pairs[0].result.obj, 1e-12 * std::fabs(one.pairs[0].result.obj));
    EXPECT_NEAR(d.report.pairs[0].result.rho, one.pairs[0].result.rho, 1e-12);
    ASSERT_EQ(d.model.sv_coef.size(), ref.sv_coef.size()) << "K = " << k;
    for (size_t i = 0; i < ref.sv_coef.size(); ++i) EXPECT_EQ(d.model.sv_coef[i], ref.sv_coef[i]) << "K = " << k;
    ExpectSamePredictions(d.model, ref, data, "K = " + std::to_string(k));
    EXPECT_EQ(d.stats[0].min_local_active, d.stats[0].min_local_samples) << "nothing is eliminated";
  }
}

// Every policy and kernel: the objective within 1e-6 relative of the one-process solver, the same predictions.
TEST(SvmDist, EveryPolicyAndKernelReachesTheOneProcessOptimum) {
  const auto data = datasets::ReadLibsvm(kSvmData + "heart_scale");
  for (const std::string args : {"-c 4 -g 0.25", "-t 0 -c 0.5", "-t 1 -d 2 -g 0.125 -r 1 -c 2",
                                 "-t 3 -g 0.0625 -r -0.5 -c 1", "-c 4 -w1 2 -w-1 0.5 -e 0.0001"}) {
    for (const auto policy : {ShrinkingPolicy::kEager, ShrinkingPolicy::kPeriodic, ShrinkingPolicy::kLazy}) {
      SvmParams p = testing::ParseLibsvmArgs(args);
      p.shrinking = policy;
      p.eps = std::min(p.eps, 1e-5);  // ObjectiveBound-style: eps * sum C stays under 1e-6 |f| on heart_scale
      TrainReport one;
      const SvmModel ref = TrainSvm(data, p, &one);
      for (const int k : {2, 3}) {
        const std::string what = args + " " + std::string(ShrinkingName(policy)) + " K = " + std::to_string(k);
        const DistRun d = TrainOnRanks(k, data, p);
        const SolverResult& r = d.report.pairs[0].result;
        EXPECT_NEAR(r.obj, one.pairs[0].result.obj, 1e-6 * std::fabs(one.pairs[0].result.obj)) << what;
        EXPECT_LT(r.gap, p.eps) << what;
        ExpectSamePredictions(d.model, ref, data, what);
        if (policy == ShrinkingPolicy::kEager) {
          EXPECT_GT(r.shrink_checks, 0) << what;
          EXPECT_LT(r.min_active, data.num_rows) << what << ": eager elimination removed nothing";
        }
      }
    }
  }
}

// Against LIBSVM 3.24's recorded objectives (tests/data/svm/expected_libsvm.tsv) on heart_scale and letter_300
// (26 classes: 325 small pairs, shared unevenly by the ranks).
TEST(SvmDist, MatchesRecordedLibsvmObjectives) {
  struct Case {
    const char* file;
    const char* args;
    std::vector<double> obj;
  };
  const auto heart = datasets::ReadLibsvm(kSvmData + "heart_scale");
  for (const Case& c : {Case{"heart_scale", "", {-100.877288}}, Case{"heart_scale", "-c 8 -g 0.5 -h 0", {-183.971619}},
                        Case{"heart_scale", "-t 0 -c 0.5", {-47.239532}}}) {
    for (const int k : {2, 4}) {
      const DistRun d = TrainOnRanks(k, heart, testing::ParseLibsvmArgs(c.args));
      EXPECT_NEAR(d.report.pairs[0].result.obj, c.obj[0], 1e-5 * std::fabs(c.obj[0]) + 5e-7) << c.args << " K " << k;
    }
  }
  const auto letter = datasets::ReadLibsvm(kSvmData + "letter_300");
  const SvmParams p = testing::ParseLibsvmArgs("-c 16 -g 4");
  TrainReport one;
  const SvmModel ref = TrainSvm(letter, p, &one);
  const DistRun d = TrainOnRanks(3, letter, p);
  ASSERT_EQ(d.report.pairs.size(), one.pairs.size());
  ASSERT_EQ(d.report.pairs.size(), 325u);
  for (size_t t = 0; t < one.pairs.size(); ++t) {
    const double f = one.pairs[t].result.obj;
    EXPECT_NEAR(d.report.pairs[t].result.obj, f, 1e-6 * std::fabs(f) + 1e-9) << "pair " << t;
  }
  ExpectSamePredictions(d.model, ref, letter, "letter_300 K = 3");
  // The pairs' shares are uneven (classes are not spread evenly over the blocks).
  int64_t uneven = 0;
  for (const DistStats& s : d.stats) uneven += s.min_local_samples < s.max_local_samples;
  EXPECT_GT(uneven, 0);

  // Pairs spread over the ranks: each solved by the one-process solver, so the very model of one process.
  for (const int k : {2, 4}) {
    const DistRun spread = TrainOnRanks(k, letter, p, PairSchedule::kSpread);
    EXPECT_EQ(spread.totals.schedule, PairSchedule::kSpread);
    EXPECT_EQ(spread.model.sv_coef, ref.sv_coef) << "K = " << k;
    EXPECT_EQ(spread.model.rho, ref.rho) << "K = " << k;
    EXPECT_EQ(spread.report.iterations, one.iterations) << "K = " << k;
    EXPECT_GT(spread.totals.min_kernel_evaluations, 0) << "every rank solved pairs";
  }
  // Auto spreads 325 pairs over 3 ranks but shares a binary problem.
  EXPECT_EQ(TrainOnRanks(3, letter, p, PairSchedule::kAuto).totals.schedule, PairSchedule::kSpread);
  EXPECT_EQ(TrainOnRanks(3, heart, SvmParams{}, PairSchedule::kAuto).totals.schedule, PairSchedule::kShared);
}

// Classes sorted by row: with K = 2 each rank holds only one of the two classes.
TEST(SvmDist, RanksHoldingOneClassEach) {
  auto data = RandomDataset(400, 12, 0.6, {1, -1}, 11);
  std::vector<int64_t> order(static_cast<size_t>(data.num_rows));
  std::iota(order.begin(), order.end(), 0);
  const auto labels = data.labels.Host();
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return labels[a] > labels[b]; });
  std::vector<int64_t> indptr{0};
  std::vector<int32_t> indices;
  std::vector<double> values;
  std::vector<double> y;
  for (const int64_t r : order) {
    for (int64_t e = data.indptr.Host()[r]; e < data.indptr.Host()[r + 1]; ++e) {
      indices.push_back(data.indices.Host()[e]);
      values.push_back(data.values.Host()[e]);
    }
    indptr.push_back(static_cast<int64_t>(indices.size()));
    y.push_back(labels[r]);
  }
  data.indptr = Buffer<int64_t>(std::move(indptr));
  data.indices = Buffer<int32_t>(std::move(indices));
  data.values = Buffer<double>(std::move(values));
  data.labels = Buffer<double>(std::move(y));
  SvmParams p;
  p.C = 2;
  p.eps = 1e-6;
  TrainReport one;
  const SvmModel ref = TrainSvm(data, p, &one);
  const auto blocks = BalancedRowBlocks(data.indptr.Host(), 2);
  int64_t positives = 0;
  for (const double v : data.labels.Host()) positives += v > 0;
  ASSERT_LE(std::abs(blocks[1] - positives), 40) << "the test wants the class boundary near the block boundary";
  const DistRun d = TrainOnRanks(2, data, p);
  EXPECT_NEAR(d.report.pairs[0].result.obj, one.pairs[0].result.obj, 1e-6 * std::fabs(one.pairs[0].result.obj));
  ExpectSamePredictions(d.model, ref, data, "one class per rank");
}

// SolveBinaryDistributed directly: more ranks than samples, all samples on one rank, and interleaved ownership
// give the one-process optimum, with fused and unfused selection alike; without elimination exactly its iterations.
TEST(SvmDist, UnevenInterleavedAndEmptyShares) {
  const auto data = RandomDataset(150, 10, 0.5, {1, -1}, 5);
  const kernels::SparseRowsView view = data.Rows();
  std::vector<int32_t> rows(150);
  std::iota(rows.begin(), rows.end(), 0);
  std::vector<int8_t> y;
  for (const double v : data.labels.Host()) y.push_back(v > 0 ? 1 : -1);
  kernels::SvmKernelParams kp;
  kp.gamma = 0.2;
  for (const auto policy : {ShrinkingPolicy::kOff, ShrinkingPolicy::kEager}) {
    SolverOptions o;
    o.eps = 1e-6;
    o.shrinking = policy;
    kernels::SvmKernelRows ref_kernel(view, kp);
    const SolverResult ref = SolveBinary({&ref_kernel, rows, y, 1.5, 1.5}, o);
    const std::vector<int32_t> nnz = RowNnz(data);
    // Ownership schemes: round-robin over 4 ranks, everything on rank 2 of 3, and 3 samples over 5 ranks.
    struct Scheme {
      int k;
      int64_t n;
      std::function<int(int64_t)> owner;
    };
    std::vector<double> first_alpha;
    for (const Scheme& sc :
         {Scheme{4, 150, [](int64_t g) { return static_cast<int>(g % 4); }}, Scheme{3, 150, [](int64_t) { return 2; }},
          Scheme{5, 3, [](int64_t g) { return static_cast<int>(g); }}}) {
      std::vector<int32_t> owner(static_cast<size_t>(sc.n));
      for (int64_t g = 0; g < sc.n; ++g) owner[g] = sc.owner(g);
      const std::span<const int32_t> sub_rows(rows.data(), static_cast<size_t>(sc.n));
      const std::span<const int8_t> sub_y(y.data(), static_cast<size_t>(sc.n));
      kernels::SvmKernelRows small_kernel(view, kp);
      const SolverResult want = sc.n == 150 ? ref : SolveBinary({&small_kernel, sub_rows, sub_y, 1.5, 1.5}, o);
      for (const int fuse : {0, 1}) {
        std::vector<SolverResult> got(static_cast<size_t>(sc.k));
        comm::ThreadGroup::Run(sc.k, [&](comm::Communicator& c) {
          const Share share = ShareOf(c.Rank(), sc.n, owner, rows, y);
          kernels::SvmKernelRows kernel(view, kp);  // every rank may view all rows; it reads only its own
          DistBinaryProblem prob{&kernel,
                                 share.rows,
                                 share.gids,
                                 share.y,
                                 sc.n,
                                 owner,
                                 std::span<const int32_t>(nnz.data(), static_cast<size_t>(sc.n))};
          prob.Cp = prob.Cn = 1.5;
          prob.fuse = fuse;
          got[static_cast<size_t>(c.Rank())] = SolveBinaryDistributed(c, prob, o);
        });
        const std::string what = std::string(ShrinkingName(policy)) + " K = " + std::to_string(sc.k) +
                                 " n = " + std::to_string(sc.n) + " fuse " + std::to_string(fuse);
        for (const SolverResult& r : got) {
          EXPECT_NEAR(r.obj, want.obj, 1e-6 * std::fabs(want.obj) + 1e-12) << what;
          ASSERT_EQ(r.alpha.size(), want.alpha.size()) << what;
          if (policy == ShrinkingPolicy::kOff) {
            EXPECT_EQ(r.iterations, want.iterations) << what;
            EXPECT_EQ(r.alpha, want.alpha) << what;
          }
          EXPECT_EQ(r.alpha, got[0].alpha) << what << ": ranks disagree";
        }
        // Fused and unfused selection choose the same pairs: the same answer bit for bit.
        if (fuse == 0) first_alpha = got[0].alpha;
        EXPECT_EQ(got[0].alpha, first_alpha) << what;
      }
    }
  }
}

// The batched solver over the ranks merges the ranks' candidates into the one-process working set and solves the
// same subproblem everywhere: without elimination the very rounds, steps and alphas of SolveBinaryBatched.
TEST(SvmDistBatched, WithoutEliminationTheStepsAreTheOneProcessSolvers) {
  const auto data = datasets::ReadLibsvm(kSvmData + "heart_scale");
  SvmParams p = testing::ParseLibsvmArgs("-c 4 -g 0.25 -h 0");
  for (const int q : {8, 64}) {
    TrainReport one;
    const SvmModel ref = TrainSvm(data, p, &one, OneProcessBatched(q));
    for (const int k : {1, 2, 3, 4}) {
      const std::string what = "q = " + std::to_string(q) + " K = " + std::to_string(k);
      const DistRun d = TrainOnRanks(k, data, p, Batched(q));
      ASSERT_EQ(d.report.pairs.size(), 1u);
      EXPECT_EQ(d.report.pairs[0].result.iterations, one.pairs[0].result.iterations) << what;
      EXPECT_NEAR(d.report.pairs[0].result.obj, one.pairs[0].result.obj, 1e-12 * std::fabs(one.pairs[0].result.obj))
          << what;
      EXPECT_EQ(d.model.sv_coef, ref.sv_coef) << what;
      ExpectSamePredictions(d.model, ref, data, what);
      ASSERT_EQ(d.stats.size(), 1u);
      EXPECT_GT(d.stats[0].rounds, 1) << what;
      // Two collectives a round (candidates, then the working set's rows) plus the setup and the result.
      EXPECT_LE(d.stats[0].collectives, 2 * d.stats[0].rounds + 16) << what;
    }
  }
}

// Every policy and kernel: the one-process optimum (1e-6 relative), LIBSVM's recorded objective (1e-5), the same
// predictions; uneven working sets (q larger than some ranks' shares) included.
TEST(SvmDistBatched, EveryPolicyAndKernelReachesTheOptimum) {
  const auto data = datasets::ReadLibsvm(kSvmData + "heart_scale");
  struct Case {
    const char* args;
    double libsvm_obj;  // tests/data/svm/expected_libsvm.tsv, or 0 when not recorded
  };
  for (const Case& c : {Case{"-c 1", -100.877288}, Case{"-t 0 -c 0.5", -47.239532}, Case{"-c 4 -g 0.25", 0},
                        Case{"-t 1 -d 2 -g 0.125 -r 1 -c 2", 0}, Case{"-c 4 -w1 2 -w-1 0.5 -e 0.0001", 0}}) {
    for (const auto policy : {ShrinkingPolicy::kEager, ShrinkingPolicy::kPeriodic, ShrinkingPolicy::kLazy}) {
      SvmParams p = testing::ParseLibsvmArgs(c.args);
      p.shrinking = policy;
      TrainReport one;
      const SvmModel ref = TrainSvm(data, p, &one, OneProcessBatched(16));
      for (const int k : {2, 3}) {
        const std::string what =
            std::string(c.args) + " " + std::string(ShrinkingName(policy)) + " K = " + std::to_string(k);
        const DistRun d = TrainOnRanks(k, data, p, Batched(16));
        const SolverResult& r = d.report.pairs[0].result;
        EXPECT_NEAR(r.obj, one.pairs[0].result.obj, 1e-6 * std::fabs(one.pairs[0].result.obj)) << what;
        if (c.libsvm_obj != 0) {
          EXPECT_NEAR(r.obj, c.libsvm_obj, 1e-5 * std::fabs(c.libsvm_obj) + 5e-7) << what;
        }
        EXPECT_LT(r.gap, p.eps) << what;
        ExpectSamePredictions(d.model, ref, data, what);
        if (policy == ShrinkingPolicy::kEager) {
          EXPECT_GT(r.shrink_checks, 0) << what;
          EXPECT_LT(r.min_active, data.num_rows) << what << ": eager elimination removed nothing";
        }
      }
    }
  }
}

// SolveBinaryDistributedBatched directly: interleaved ownership, everything on one rank, more ranks than samples.
TEST(SvmDistBatched, UnevenInterleavedAndEmptyShares) {
  const auto data = RandomDataset(150, 10, 0.5, {1, -1}, 5);
  const kernels::SparseRowsView view = data.Rows();
  std::vector<int32_t> rows(150);
  std::iota(rows.begin(), rows.end(), 0);
  std::vector<int8_t> y;
  for (const double v : data.labels.Host()) y.push_back(v > 0 ? 1 : -1);
  const std::vector<int32_t> nnz = RowNnz(data);
  kernels::SvmKernelParams kp;
  kp.gamma = 0.2;
  BatchOptions b;
  b.working_set = 10;
  for (const auto policy : {ShrinkingPolicy::kOff, ShrinkingPolicy::kEager, ShrinkingPolicy::kPeriodic}) {
    SolverOptions o;
    o.eps = 1e-6;
    o.shrinking = policy;
    struct Scheme {
      int k;
      int64_t n;
      std::function<int(int64_t)> owner;
    };
    for (const Scheme& sc :
         {Scheme{4, 150, [](int64_t g) { return static_cast<int>(g % 4); }}, Scheme{3, 150, [](int64_t) { return 2; }},
          Scheme{5, 3, [](int64_t g) { return static_cast<int>(g); }}}) {
      const std::span<const int32_t> sub_rows(rows.data(), static_cast<size_t>(sc.n));
      const std::span<const int8_t> sub_y(y.data(), static_cast<size_t>(sc.n));
      kernels::SvmKernelRows ref_kernel(view, kp);
      const SolverResult want = SolveBinaryBatched({&ref_kernel, sub_rows, sub_y, 1.5, 1.5}, o, b);
      std::vector<int32_t> owner(static_cast<size_t>(sc.n));
      for (int64_t g = 0; g < sc.n; ++g) owner[g] = sc.owner(g);
      std::vector<SolverResult> got(static_cast<size_t>(sc.k));
      comm::ThreadGroup::Run(sc.k, [&](comm::Communicator& c) {
        const Share share = ShareOf(c.Rank(), sc.n, owner, rows, y);
        kernels::SvmKernelRows kernel(view, kp);
        DistBinaryProblem prob{&kernel,
                               share.rows,
                               share.gids,
                               share.y,
                               sc.n,
                               owner,
                               std::span<const int32_t>(nnz.data(), static_cast<size_t>(sc.n))};
        prob.Cp = prob.Cn = 1.5;
        got[static_cast<size_t>(c.Rank())] = SolveBinaryDistributedBatched(c, prob, o, b);
      });
      const std::string what =
          std::string(ShrinkingName(policy)) + " K = " + std::to_string(sc.k) + " n = " + std::to_string(sc.n);
      for (const SolverResult& r : got) {
        EXPECT_NEAR(r.obj, want.obj, 1e-6 * std::fabs(want.obj) + 1e-12) << what;
        ASSERT_EQ(r.alpha.size(), want.alpha.size()) << what;
        if (policy == ShrinkingPolicy::kOff) {
          EXPECT_EQ(r.iterations, want.iterations) << what;
          EXPECT_EQ(r.alpha, want.alpha) << what;
        }
        EXPECT_EQ(r.alpha, got[0].alpha) << what << ": ranks disagree";
      }
    }
  }
}

// Spread pairs run each rank's one-process solver of choice (here the batched one): the one-process model.
TEST(SvmDistBatched, SpreadPairsUseTheChosenSolver) {
  const auto letter = datasets::ReadLibsvm(kSvmData + "letter_300");
  const SvmParams p = testing::ParseLibsvmArgs("-c 16 -g 4");
  TrainReport one;
  const SvmModel ref = TrainSvm(letter, p, &one, OneProcessBatched(32));
  DistTrainOptions how = Batched(32, PairSchedule::kSpread);
  how.spread_solver = OneProcessBatched(32);
  const DistRun d = TrainOnRanks(3, letter, p, how);
  EXPECT_EQ(d.model.sv_coef, ref.sv_coef);
  EXPECT_EQ(d.model.rho, ref.rho);
  EXPECT_EQ(d.report.iterations, one.iterations);
}

// A solver that cannot share a pair (CUDA) is refused on every rank with the caller's message, never a hang.
TEST(SvmDistBatched, SharedRefusalEndsEveryRank) {
  const auto data = datasets::ReadLibsvm(kSvmData + "heart_scale");
  DistTrainOptions how;
  how.shared_refusal = "no sharing on purpose";
  std::vector<std::string> messages(2);
  EXPECT_THROW(comm::ThreadGroup::Run(2,
                                      [&](comm::Communicator& c) {
                                        try {
                                          TrainSvmDistributed(c, data, SvmParams{}, nullptr, nullptr, how);
                                        } catch (const Error& e) {
                                          messages[static_cast<size_t>(c.Rank())] = e.what();
                                          throw;
                                        }
                                      }),
               Error);
  for (const auto& m : messages) EXPECT_NE(m.find("no sharing on purpose"), std::string::npos) << m;
}

// What `--solver batch` runs on the CPU: the distributed batched solver on one rank, with a kernel-row cache. The
// host twin's steps and alphas exactly without elimination, its optimum with it, and far fewer kernel evaluations
// once rows are reused across rounds.
TEST(SvmDistBatched, CachedOneProcessSolverTakesTheHostTwinsSteps) {
  const auto data = RandomDataset(600, 20, 0.4, {1, -1}, 9);
  const kernels::SparseRowsView view = data.Rows();
  std::vector<int32_t> rows(600);
  std::iota(rows.begin(), rows.end(), 0);
  std::vector<int8_t> y;
  for (const double v : data.labels.Host()) y.push_back(v > 0 ? 1 : -1);
  kernels::SvmKernelParams kp;
  kp.gamma = 0.1;
  BatchOptions b;
  b.working_set = 32;
  for (const auto policy : {ShrinkingPolicy::kOff, ShrinkingPolicy::kPeriodic, ShrinkingPolicy::kEager}) {
    SolverOptions o;
    o.eps = 1e-5;
    o.shrinking = policy;
    o.cache_bytes = int64_t{64} << 20;
    kernels::SvmKernelRows k1(view, kp);
    kernels::SvmKernelRows k2(view, kp);
    BatchStats s1;
    BatchStats s2;
    const SolverResult twin = SolveBinaryBatched({&k1, rows, y, 2.0, 2.0}, o, b, &s1);
    const SolverResult cached = SolveBinaryBatchedCached({&k2, rows, y, 2.0, 2.0}, o, b, &s2);
    const std::string what(ShrinkingName(policy));
    EXPECT_NEAR(cached.obj, twin.obj, 1e-6 * std::fabs(twin.obj)) << what;
    EXPECT_LT(cached.gap, o.eps) << what;
    if (policy == ShrinkingPolicy::kOff) {
      EXPECT_EQ(cached.iterations, twin.iterations) << what;
      EXPECT_EQ(s2.rounds, s1.rounds) << what;
      EXPECT_EQ(cached.alpha, twin.alpha) << what;
    }
    EXPECT_GT(cached.cache_hits, 0) << what;
    EXPECT_LT(cached.kernel_evaluations, twin.kernel_evaluations / 2) << what;
  }
}

// Rebalancing moves active samples (state and row) between ranks; the choices depend only on values and global
// ids, so the answer is bit for bit the one without it, whether a rank starts with everything, nothing or a share.
TEST(SvmDist, RebalancingKeepsTheIterations) {
  const auto data = RandomDataset(300, 12, 0.5, {1, -1}, 21);
  const kernels::SparseRowsView view = data.Rows();
  std::vector<int32_t> rows(300);
  std::iota(rows.begin(), rows.end(), 0);
  std::vector<int8_t> y;
  for (const double v : data.labels.Host()) y.push_back(v > 0 ? 1 : -1);
  const std::vector<int32_t> nnz = RowNnz(data);
  kernels::SvmKernelParams kp;
  kp.gamma = 0.15;
  struct Scheme {
    int k;
    std::function<int(int64_t)> owner;
  };
  for (const auto policy : {ShrinkingPolicy::kEager, ShrinkingPolicy::kPeriodic}) {
    SolverOptions o;
    o.eps = 1e-6;
    o.shrinking = policy;
    o.cache_bytes = int64_t{1} << 20;
    for (const Scheme& sc : {Scheme{3, [](int64_t) { return 2; }}, Scheme{4, [](int64_t g) { return g < 40 ? 0 : 3; }},
                             Scheme{2, [](int64_t g) { return static_cast<int>(g % 2); }}}) {
      std::vector<int32_t> owner(300);
      for (int64_t g = 0; g < 300; ++g) owner[g] = sc.owner(g);
      for (const int fuse : {0, 1}) {
        std::vector<SolverResult> got[2];
        std::vector<DistStats> stats[2];
        for (const int rebalance : {0, 1}) {
          got[rebalance].resize(static_cast<size_t>(sc.k));
          stats[rebalance].resize(static_cast<size_t>(sc.k));
          comm::ThreadGroup::Run(sc.k, [&](comm::Communicator& c) {
            const Share share = ShareOf(c.Rank(), 300, owner, rows, y);
            // Each rank's kernel views only its own rows, as in training: received rows need a kernel of their own.
            std::vector<int64_t> ip{0};
            std::vector<int32_t> ix;
            std::vector<double> vx;
            for (const int32_t r : share.rows) {
              const auto idx = view.RowIndices(r);
              const auto val = view.RowValues(r);
              ix.insert(ix.end(), idx.begin(), idx.end());
              vx.insert(vx.end(), val.begin(), val.end());
              ip.push_back(static_cast<int64_t>(ix.size()));
            }
            std::vector<int32_t> local(share.rows.size());
            std::iota(local.begin(), local.end(), 0);
            kernels::SvmKernelRows kernel(kernels::SparseRowsView{ip, ix, vx, view.num_cols}, kp);
            DistBinaryProblem prob{&kernel, local, share.gids, share.y, 300, owner, nnz};
            prob.Cp = prob.Cn = 2.0;
            prob.fuse = fuse;
            prob.rebalance = rebalance == 1 ? 1.0001 : 0.0;
            const auto r = static_cast<size_t>(c.Rank());
            got[rebalance][r] = SolveBinaryDistributed(c, prob, o, &stats[rebalance][r]);
          });
        }
        const std::string what =
            std::string(ShrinkingName(policy)) + " K = " + std::to_string(sc.k) + " fuse " + std::to_string(fuse);
        EXPECT_EQ(stats[0][0].rebalances, 0) << what;
        EXPECT_GT(stats[1][0].rebalances, 0) << what;
        EXPECT_GT(stats[1][0].moved_samples, 0) << what;
        for (int r = 0; r < sc.k; ++r) {
          EXPECT_EQ(got[1][static_cast<size_t>(r)].iterations, got[0][0].iterations) << what;
          EXPECT_EQ(got[1][static_cast<size_t>(r)].alpha, got[0][0].alpha) << what << " rank " << r;
          EXPECT_NEAR(got[1][static_cast<size_t>(r)].obj, got[0][0].obj, 1e-12 * std::fabs(got[0][0].obj)) << what;
        }
        // Balanced shares: the smallest active share grows.
        EXPECT_GE(stats[1][0].min_local_active, stats[0][0].min_local_active) << what;
      }
    }
  }
}

TEST(SvmDist, BalancedRowBlocks) {
  // Rows of 1, 1, 1, 1, 10, 10 non-zeros (mean 4): weights 5, 5, 5, 5, 14, 14 of 48.
  const std::vector<int64_t> indptr{0, 1, 2, 3, 4, 14, 24};
  const auto b2 = BalancedRowBlocks(indptr, 2);
  EXPECT_EQ(b2, (std::vector<int64_t>{0, 4, 6}));
  const auto b8 = BalancedRowBlocks(indptr, 8);
  ASSERT_EQ(b8.size(), 9u);
  EXPECT_EQ(b8.front(), 0);
  EXPECT_EQ(b8.back(), 6);
  for (size_t k = 1; k < b8.size(); ++k) EXPECT_LE(b8[k - 1], b8[k]);
  EXPECT_EQ(BalancedRowBlocks(std::vector<int64_t>{0}, 3), (std::vector<int64_t>{0, 0, 0, 0}));
}

// Bad input fails every rank with a message, never a hang: ranks that read different data, more ranks than rows.
TEST(SvmDist, BadInputFailsEveryRank) {
  const auto data = datasets::ReadLibsvm(kSvmData + "heart_scale");
  auto wider = datasets::ReadLibsvm(kSvmData + "heart_scale");
  wider.num_features += 1;  // as if one rank read a file with one more feature
  std::vector<std::string> messages(3);
  EXPECT_THROW(comm::ThreadGroup::Run(3,
                                      [&](comm::Communicator& c) {
                                        try {
                                          TrainSvmDistributed(c, c.Rank() == 1 ? wider : data, SvmParams{});
                                        } catch (const Error& e) {
                                          messages[static_cast<size_t>(c.Rank())] = e.what();
                                          throw;
                                        }
                                      }),
               Error);
  for (const auto& m : messages) EXPECT_NE(m.find("the ranks read different data"), std::string::npos) << m;

  const auto tiny = RandomDataset(3, 4, 0.9, {1, -1}, 2);
  std::vector<std::string> tiny_messages(4);
  EXPECT_THROW(comm::ThreadGroup::Run(4,
                                      [&](comm::Communicator& c) {
                                        try {
                                          TrainSvmDistributed(c, tiny, SvmParams{});
                                        } catch (const Error& e) {
                                          tiny_messages[static_cast<size_t>(c.Rank())] = e.what();
                                          throw;
                                        }
                                      }),
               Error);
  for (const auto& m : tiny_messages) EXPECT_NE(m.find("4 ranks for 3 rows"), std::string::npos) << m;
}

}  // namespace
}  // namespace tessel::svm
