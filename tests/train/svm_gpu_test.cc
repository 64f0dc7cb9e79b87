// The CUDA batched SVM solver and decision values against their host twins (SolveBinaryBatched, PredictSvm) on
// fresh random problems and heart_scale; skipped without a GPU (label gpu). Every test needs a device.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "core/device.h"
#include "core/error.h"
#include "datasets/readers.h"
#include "tests/train/svm_test_util.h"
#include "train/svm/batch_solver.h"
#include "train/svm/svm_ops.h"
#include "train/svm/svm_train.h"

namespace tessel::train::svm {
namespace {
using testing::MakeProblem;
using testing::Problem;
using testing::RandomDataset;

Context Cuda() {
  Context c;
  c.device = Device::kCuda;
  return c;
}

class SvmGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device::CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

// Both stop with gap < eps, so each objective is within eps * sum C of the optimum (svm_batch_test.cc).
void ExpectSameAnswer(const Problem& p, const SolverResult& host, const SolverResult& gpu, double eps, double c) {
  const double bound = eps * c * static_cast<double>(p.rows.size());
  EXPECT_LE(std::fabs(gpu.obj - host.obj), bound);
  EXPECT_LE(std::fabs(gpu.obj - host.obj), 1e-6 * std::fabs(host.obj));
  EXPECT_LT(gpu.gap, eps);
  EXPECT_NEAR(gpu.rho, host.rho, 1e-4);
  double ya = 0;
  for (size_t i = 0; i < gpu.alpha.size(); ++i) {
    ya += gpu.alpha[i];
    EXPECT_GE(gpu.alpha[i] * p.y[i], 0);
    EXPECT_LE(gpu.alpha[i] * p.y[i], c);
  }
  EXPECT_NEAR(ya, 0, 1e-9);
}

TEST_F(SvmGpuTest, BatchSolverMatchesHostTwinForEveryKernelAndPolicy) {
  Problem p = MakeProblem(RandomDataset(1200, 30, 0.4, {1, -1}, 51));
  const std::vector<kernels::SvmKernelParams> ks = {{kernels::SvmKernelType::kLinear, 3, 0, 0},
                                                    {kernels::SvmKernelType::kPolynomial, 2, 0.05, 1},
                                                    {kernels::SvmKernelType::kRbf, 3, 0.05, 0},
                                                    {kernels::SvmKernelType::kSigmoid, 3, 0.01, -0.5}};
  for (const auto& kp : ks) {
    for (const auto policy : {ShrinkingPolicy::kOff, ShrinkingPolicy::kEager, ShrinkingPolicy::kPeriodic}) {
      SolverOptions o;
      o.eps = 1e-7;
      o.shrinking = policy;
      BatchOptions b;
      b.working_set = 64;
      kernels::SvmKernelRows k(p.view, kp);
      const SolverResult host = SolveBinaryBatched({&k, p.rows, p.y, 1, 1}, o, b);
      const SolverResult gpu = SolveBinaryBatched(Cuda(), {&k, p.rows, p.y, 1, 1}, o, b);
      SCOPED_TRACE(std::string(SvmKernelName(kp.type)) + " " + std::string(ShrinkingName(policy)));
      ExpectSameAnswer(p, host, gpu, o.eps, 1);
      if (policy == ShrinkingPolicy::kEager) {
        EXPECT_LT(gpu.min_active, 1200);
      }
    }
  }
}

TEST_F(SvmGpuTest, FullBlockWorkingSetAndHeartScale) {
  const auto path = std::filesystem::path(TESSEL_TEST_DATA) / "svm" / "heart_scale";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " missing";
  Problem p = MakeProblem(datasets::ReadLibsvm(path));
  const kernels::SvmKernelParams kp{kernels::SvmKernelType::kRbf, 3, 1.0 / 13, 0};
  SolverOptions o;
  o.eps = 1e-9;
  for (const int q : {16, 1024}) {
    BatchOptions b;
    b.working_set = q;
    kernels::SvmKernelRows k(p.view, kp);
    const SolverResult host = SolveBinaryBatched({&k, p.rows, p.y, 1, 1}, o, b);
    const SolverResult gpu = SolveBinaryBatched(Cuda(), {&k, p.rows, p.y, 1, 1}, o, b);
    ExpectSameAnswer(p, host, gpu, o.eps, 1);
    EXPECT_EQ(gpu.nr_sv, host.nr_sv);
  }
}

TEST_F(SvmGpuTest, DecisionValuesPredictAsTheHost) {
  // Three classes (one-vs-one voting) and an RBF model trained on the host; predictions on fresh rows.
  const datasets::SparseRowDataset train = RandomDataset(400, 25, 0.5, {1, 2, 3}, 52);
  const datasets::SparseRowDataset test = RandomDataset(300, 25, 0.5, {1, 2, 3}, 53);
  SvmParams params;
  params.kernel = {kernels::SvmKernelType::kRbf, 3, 0.05, 0};
  const SvmModel model = TrainSvm(train, params);
  const std::vector<double> host = PredictSvm(model, test);
  std::vector<double> gpu(host.size(), -12345.0);  // poisoned
  gpu = PredictSvm(Cuda(), model, test);
  ASSERT_EQ(gpu.size(), host.size());
  int64_t differ = 0;
  for (size_t r = 0; r < host.size(); ++r) differ += host[r] != gpu[r];
  EXPECT_LE(differ, 1);  // only a decision value within rounding of 0 may flip
}

TEST_F(SvmGpuTest, RejectsAWorkingSetBeyondOneBlock) {
  Problem p = MakeProblem(RandomDataset(50, 5, 0.5, {1, -1}, 54));
  const kernels::SvmKernelParams kp{kernels::SvmKernelType::kRbf, 3, 0.05, 0};
  kernels::SvmKernelRows k(p.view, kp);
  BatchOptions b;
  b.working_set = 2048;
  EXPECT_THROW(SolveBinaryBatched(Cuda(), {&k, p.rows, p.y, 1, 1}, {}, b), Error);
}

}  // namespace
}  // namespace tessel::train::svm
