// LIBSVM's other formulations (nu-SVC, one-class, epsilon-SVR, nu-SVR) beyond the conformance cases: the answer
// does not depend on the elimination policy or the thread count; nu-SVC's C-SVC equivalence (LIBSVM: a nu-SVC
// solution is the C-SVC one with C = 1 / r); model files of every type round-trip and predict alike; what only
// C-SVC supports so far is refused with a message, never solved wrongly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/error.h"
#include "core/parallel.h"
#include "core/spin_team.h"
#include "datasets/readers.h"
#include "svm/batch_solver.h"
#include "svm/svm_model.h"
#include "svm/svm_train.h"
#include "tests/svm/svm_test_util.h"

namespace tessel::svm {
namespace {
namespace fs = std::filesystem;

const fs::path kData = fs::path(TESSEL_TEST_DATA) / "svm";

datasets::SparseRowDataset Heart() { return datasets::ReadLibsvm(kData / "heart_scale"); }

SvmParams Params(SvmType type) {
  SvmParams p;
  p.type = type;
  return p;
}

class SvmTypesTest : public ::testing::TestWithParam<SvmType> {};

TEST_P(SvmTypesTest, EveryEliminationPolicyAndThreadCountGivesTheSameSolution) {
  const auto data = Heart();
  TrainReport base;
  SvmParams p = Params(GetParam());
  p.shrinking = ShrinkingPolicy::kOff;
  const SvmModel reference = TrainSvm(data, p, &base);
  const std::vector<double> reference_pred = PredictSvm(reference, data);
  for (const auto policy : {ShrinkingPolicy::kEager, ShrinkingPolicy::kPeriodic, ShrinkingPolicy::kLazy}) {
    for (const int threads : {1, 2}) {
      ThreadLimit limit(threads);
      p.shrinking = policy;
      TrainReport rep;
      const SvmModel m = TrainSvm(data, p, &rep);
      ASSERT_EQ(rep.pairs.size(), base.pairs.size());
      for (size_t k = 0; k < rep.pairs.size(); ++k) {
        // The same optimum within the stopping tolerance (eps 1e-3 on the gap bounds the objective's error).
        EXPECT_NEAR(rep.pairs[k].result.obj, base.pairs[k].result.obj, 1e-4 * std::fabs(base.pairs[k].result.obj))
            << ShrinkingName(policy) << " threads " << threads;
        EXPECT_LT(rep.pairs[k].result.gap, p.eps);
      }
      const std::vector<double> pred = PredictSvm(m, data);
      int64_t same = 0;
      for (size_t r = 0; r < pred.size(); ++r)
        same += IsRegression(GetParam()) ? std::fabs(pred[r] - reference_pred[r]) < 1e-2 : pred[r] == reference_pred[r];
      EXPECT_GE(same, static_cast<int64_t>(pred.size()) - 2) << ShrinkingName(policy);
    }
  }
}

TEST_P(SvmTypesTest, ModelFilesRoundTripAndPredictAlike) {
  const auto data = Heart();
  const SvmModel m = TrainSvm(data, Params(GetParam()));
  EXPECT_EQ(m.type, GetParam());
  const fs::path dir = fs::temp_directory_path() / ("tessel_svm_types_" + std::string(SvmTypeName(GetParam())));
  fs::create_directories(dir);
  SaveSvmModel(m, dir / "m.model");
  const SvmModel back = LoadSvmModel(dir / "m.model");
  EXPECT_EQ(back.type, m.type);
  EXPECT_EQ(back.nr_class, m.nr_class);
  EXPECT_EQ(back.labels, m.labels);
  EXPECT_EQ(back.nr_sv, m.nr_sv);
  EXPECT_EQ(back.rho, m.rho);
  EXPECT_EQ(back.sv_coef, m.sv_coef);
  EXPECT_EQ(PredictSvm(back, data), PredictSvm(m, data));
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Types, SvmTypesTest,
                         ::testing::Values(SvmType::kNuSvc, SvmType::kOneClass, SvmType::kEpsilonSvr, SvmType::kNuSvr),
                         [](const auto& param_info) { return std::string(SvmTypeName(param_info.param)); });

// LIBSVM's nu-SVC / C-SVC relation: a nu-SVC solution scaled by r is the C-SVC solution with C = 1 / r, so training
// C-SVC with that C gives the same decision function.
TEST(SvmNuSvc, IsTheCSvcWithCOneOverR) {
  const auto data = Heart();
  SvmParams nu = Params(SvmType::kNuSvc);
  nu.nu = 0.25;
  nu.eps = 1e-6;
  TrainReport rep;
  const SvmModel nu_model = TrainSvm(data, nu, &rep);
  // The solver's r (LIBSVM logs C = 1 / r): the C-SVC with that C has the same decision function.
  ASSERT_EQ(rep.pairs.size(), 1u);
  const double r = rep.pairs[0].result.r;
  ASSERT_GT(r, 0);
  SvmParams c = Params(SvmType::kCSvc);
  c.C = 1 / r;
  c.eps = 1e-6;
  const SvmModel c_model = TrainSvm(data, c);
  ASSERT_EQ(nu_model.rho.size(), 1u);
  EXPECT_NEAR(nu_model.rho[0], c_model.rho[0], 1e-3 * (1 + std::fabs(c_model.rho[0])));
  EXPECT_EQ(PredictSvm(nu_model, data), PredictSvm(c_model, data));
}

// The regressions' 2 l variables read one kernel row per data row (LIBSVM's SVR_Q): every kernel value comes from a
// cache miss of a row over the l distinct rows, the G_bar updates included, so evaluations = misses x l; with a
// cache of a few rows, rows are evicted and computed again, and the solution does not change.
// A solve on a team of spinning threads (core/spin_team.h: `train svm` in one process) is the oneTBB solve bit for
// bit: 3,000 rows (two classes; integer regression targets, so many ties in the scans) split into blocks over both
// members. (Several classes' pairs run concurrently on oneTBB's threads, without teams.)
TEST(SvmSpinTeam, GivesTheSameModelAsOneTbb) {
  const auto two = testing::RandomDataset(3000, 8, 1.0, {-1, 1}, 11);
  const auto five = testing::RandomDataset(3000, 8, 1.0, {1, 2, 3, 4, 5}, 11);
  const ThreadLimit limit(2);
  for (const SvmType type :
       {SvmType::kCSvc, SvmType::kNuSvc, SvmType::kOneClass, SvmType::kEpsilonSvr, SvmType::kNuSvr}) {
    const auto& data = IsRegression(type) ? five : two;
    SvmParams p = Params(type);
    p.kernel.gamma = 0.125;
    p.nu = 0.3;
    const SvmModel tbb = TrainSvm(data, p, nullptr);
    const int64_t before = SpinTeam::Started();
    struct Enabled {  // teams on for this solve only, whatever it throws
      Enabled() { SpinTeam::Enable(true); }
      ~Enabled() { SpinTeam::Enable(false); }
    };
    SvmModel team;
    {
      const Enabled on;
      team = TrainSvm(data, p, nullptr);
    }
    EXPECT_GT(SpinTeam::Started(), before) << SvmTypeName(type) << ": no team ran the solve";
    EXPECT_EQ(team.sv_coef, tbb.sv_coef) << SvmTypeName(type);
    EXPECT_EQ(team.rho, tbb.rho) << SvmTypeName(type);
    EXPECT_EQ(team.sv_rows, tbb.sv_rows) << SvmTypeName(type);
  }
}

TEST(SvmRegressionRows, AreCachedOncePerDataRow) {
  const auto data = Heart();
  for (const SvmType type : {SvmType::kEpsilonSvr, SvmType::kNuSvr}) {
    SvmParams p = Params(type);
    TrainReport big;
    const SvmModel ref = TrainSvm(data, p, &big);
    p.cache_mb = 0.002;  // two rows of 270 floats
    TrainReport small;
    const SvmModel m = TrainSvm(data, p, &small);
    for (const TrainReport* r : {&big, &small}) {
      const SolverResult& res = r->pairs[0].result;
      EXPECT_GT(res.cache_misses, 0);
      EXPECT_EQ(res.kernel_evaluations, res.cache_misses * data.num_rows) << SvmTypeName(type);
    }
    EXPECT_GT(small.pairs[0].result.cache_misses, big.pairs[0].result.cache_misses) << SvmTypeName(type);
    EXPECT_LE(big.pairs[0].result.cache_misses, data.num_rows) << "each row computed at most once with room for all";
    EXPECT_EQ(m.sv_coef, ref.sv_coef) << SvmTypeName(type);
    EXPECT_EQ(m.rho, ref.rho) << SvmTypeName(type);
  }
}

// The regressions' G_bar kept per distinct row (smo_solver.cc: G_bar[q] = y_q h[uid q]) is the per-variable G_bar
// bit for bit: the same 2 l variables over rows stored twice (2 l distinct rows, so a Q row and G_bar per variable)
// give the very same solution under eager elimination, whose gradient reconstructions read G_bar; nu-SVR's starting
// alpha puts variables at C before the first step.
TEST(SvmRegressionRows, GradientReconstructionMatchesRowsStoredTwice) {
  const auto data = Heart();
  const auto view = data.Rows();
  const int64_t l = data.num_rows;
  const auto labels = data.labels.Host();
  std::vector<int64_t> indptr{0};
  std::vector<int32_t> indices;
  std::vector<double> values;
  for (int copy = 0; copy < 2; ++copy) {
    for (int64_t r = 0; r < l; ++r) {
      const auto idx = view.RowIndices(r);
      const auto val = view.RowValues(r);
      indices.insert(indices.end(), idx.begin(), idx.end());
      values.insert(values.end(), val.begin(), val.end());
      indptr.push_back(static_cast<int64_t>(indices.size()));
    }
  }
  const kernels::SparseRowsView twice{indptr, indices, values, view.num_cols};
  const kernels::SvmKernelParams kp{kernels::SvmKernelType::kRbf, 3, 1.0 / 13, 0};
  for (const bool nu : {false, true}) {
    std::vector<int32_t> once_rows(static_cast<size_t>(2 * l));
    std::vector<int32_t> twice_rows(static_cast<size_t>(2 * l));
    std::vector<int8_t> y(static_cast<size_t>(2 * l));
    std::vector<double> linear(static_cast<size_t>(2 * l));
    std::vector<double> alpha0;
    for (int64_t k = 0; k < 2 * l; ++k) {
      once_rows[k] = static_cast<int32_t>(k % l);
      twice_rows[k] = static_cast<int32_t>(k);
      y[k] = k < l ? 1 : -1;
      linear[k] = (nu ? 0.0 : 0.1) + (k < l ? -labels[k] : labels[k - l]);
    }
    if (nu) {  // solve_nu_svr's start with C = 1, nu = 0.5
      alpha0.assign(static_cast<size_t>(2 * l), 0.0);
      double sum = 0.5 * static_cast<double>(l) / 2;
      for (int64_t k = 0; k < l; ++k) {
        alpha0[k] = alpha0[k + l] = std::min(sum, 1.0);
        sum -= alpha0[k];
      }
    }
    kernels::SvmKernelRows k_once(view, kp);
    kernels::SvmKernelRows k_twice(twice, kp);
    SolverOptions o;
    o.shrinking = ShrinkingPolicy::kEager;
    BinaryProblem a{&k_once, once_rows, y, 1.0, 1.0};
    BinaryProblem b{&k_twice, twice_rows, y, 1.0, 1.0};
    for (BinaryProblem* q : {&a, &b}) {
      q->p = linear;
      q->alpha0 = alpha0;
      q->nu = nu;
    }
    const SolverResult ra = SolveBinary(a, o);
    const SolverResult rb = SolveBinary(b, o);
    EXPECT_GT(ra.reconstructions, 0) << "nu " << nu;
    EXPECT_EQ(ra.kernel_evaluations, ra.cache_misses * l) << "rows of the l distinct rows (SVR_Q)";
    EXPECT_EQ(ra.iterations, rb.iterations) << "nu " << nu;
    EXPECT_EQ(ra.alpha, rb.alpha) << "nu " << nu;
    EXPECT_EQ(ra.obj, rb.obj) << "nu " << nu;
    EXPECT_EQ(ra.rho, rb.rho) << "nu " << nu;
  }
}

TEST(SvmNuSvc, RefusesAnInfeasibleNuNamingTheClasses) {
  SvmParams p = Params(SvmType::kNuSvc);
  p.nu = 0.95;
  try {
    TrainSvm(Heart(), p);
    FAIL() << "an infeasible nu was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nu = 0.95 is infeasible for classes 1 and -1"), std::string::npos)
        << e.what();
  }
}

TEST(SvmTypesRefusal, BatchedSolversTakeOnlyCSvc) {
  const auto data = Heart();
  SvmParams p = Params(SvmType::kEpsilonSvr);
  const BinarySolver batched = [](const BinaryProblem& problem, const SolverOptions& o) {
    return SolveBinaryBatched(problem, o);
  };
  try {
    TrainSvm(data, p, nullptr, batched);
    FAIL() << "the batched solver took an epsilon-SVR problem";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("trains C-SVC only"), std::string::npos) << e.what();
  }
}

TEST(SvmTypesRefusal, ValidateNamesTheFlag) {
  SvmParams p = Params(SvmType::kNuSvr);
  p.nu = 0;
  EXPECT_THROW(p.Validate(), Error);
  p.nu = 1.5;
  EXPECT_THROW(p.Validate(), Error);
  SvmParams e = Params(SvmType::kEpsilonSvr);
  e.p = -0.1;
  try {
    e.Validate();
    FAIL();
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("(-p"), std::string::npos) << err.what();
  }
  EXPECT_EQ(ParseSvmType("3"), SvmType::kEpsilonSvr);
  EXPECT_EQ(ParseSvmType("nu_svr"), SvmType::kNuSvr);
  EXPECT_THROW(ParseSvmType("5"), Error);
}

}  // namespace
}  // namespace tessel::svm
