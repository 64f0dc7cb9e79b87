// The CUDA batched SVM solver and decision values against their host twins (SolveBinaryBatched, PredictSvm) on
// fresh random problems and heart_scale; skipped without a GPU (label gpu). Every test needs a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/device.h"
#include "core/error.h"
#include "core/rng.h"
#include "datasets/readers.h"
#include "svm/batch_solver.h"
#include "svm/device_loop.h"
#include "svm/svm_ops.h"
#include "svm/svm_train.h"
#include "tests/svm/svm_test_util.h"

namespace tessel::svm {
namespace {
using testing::MakeProblem;
using testing::Problem;
using testing::RandomDataset;

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
  const std::vector<kernels::SvmKernelParams>& ks = testing::EveryKernel();
  for (const auto& kp : ks) {
    for (const auto policy : {ShrinkingPolicy::kOff, ShrinkingPolicy::kEager, ShrinkingPolicy::kPeriodic}) {
      SolverOptions o;
      o.eps = 1e-7;
      o.shrinking = policy;
      BatchOptions b;
      b.working_set = 64;
      kernels::SvmKernelRows k(p.view, kp);
      const SolverResult host = SolveBinaryBatched({&k, p.rows, p.y, 1, 1}, o, b);
      const SolverResult gpu = SolveBinaryBatched(testing::CudaContext(), {&k, p.rows, p.y, 1, 1}, o, b);
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
    const SolverResult gpu = SolveBinaryBatched(testing::CudaContext(), {&k, p.rows, p.y, 1, 1}, o, b);
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
  gpu = PredictSvm(testing::CudaContext(), model, test);
  ASSERT_EQ(gpu.size(), host.size());
  int64_t differ = 0;
  for (size_t r = 0; r < host.size(); ++r) differ += host[r] != gpu[r];
  EXPECT_LE(differ, 1);  // only a decision value within rounding of 0 may flip
}

// The CUDA top-k of the device loop against its host twin: the same candidates in the same order, ties included.
TEST_F(SvmGpuTest, DeviceTopKMatchesTheTwin) {
  Problem p = MakeProblem(RandomDataset(20, 4, 0.5, {1, -1}, 55));
  kernels::SvmKernelRows k(p.view, {kernels::SvmKernelType::kLinear, 3, 0, 0});
  const std::unique_ptr<devloop::LoopDevice> gpu = SvmOps(testing::CudaContext()).loop_device(k);
  const std::unique_ptr<devloop::LoopDevice> twin = devloop::MakeTwinLoopDevice(k);
  Rng rng(StreamKey{56, 0, 0, 0, 1});
  for (const int64_t n : {int64_t{1}, int64_t{700}, int64_t{5000}, int64_t{70001}}) {
    std::vector<int32_t> act;
    std::vector<int8_t> y(static_cast<size_t>(n));
    std::vector<int8_t> st(static_cast<size_t>(n));
    std::vector<double> g(static_cast<size_t>(n));
    for (int64_t s = 0; s < n; ++s) {
      if (rng.Uniform() < 0.8) act.push_back(static_cast<int32_t>(s));
      y[s] = rng.Uniform() < 0.5 ? 1 : -1;
      st[s] = static_cast<int8_t>(rng.UniformInt(3));
      g[s] = static_cast<double>(rng.UniformInt(50)) / 8 - 3;  // many ties
    }
    const auto na = static_cast<int64_t>(act.size());
    const auto up = [](const auto& host) {
      using T = typename std::decay_t<decltype(host)>::value_type;
      void* d = device::Malloc(std::max<size_t>(host.size(), 1) * sizeof(T));
      if (!host.empty()) device::CopyToDevice(d, host.data(), host.size() * sizeof(T));
      return static_cast<T*>(d);
    };
    int32_t* d_act = up(act);
    int8_t* d_y = up(y);
    int8_t* d_st = up(st);
    double* d_g = up(g);
    for (const int64_t kk : {int64_t{2}, int64_t{64}, int64_t{1000}, int64_t{1024}}) {
      for (const int side : {0, 1}) {
        std::vector<double> tk(static_cast<size_t>(kk));
        std::vector<int32_t> ti(static_cast<size_t>(kk));
        twin->TopK(side, 0, na, act.data(), y.data(), st.data(), g.data(), kk, tk.data(), ti.data(), nullptr);
        auto* d_keys = static_cast<double*>(device::Malloc(sizeof(double) * kk));
        auto* d_ids = static_cast<int32_t*>(device::Malloc(sizeof(int32_t) * kk));
        void* scratch = device::Malloc(gpu->TopKScratchBytes(na, kk));
        gpu->TopK(side, 0, na, d_act, d_y, d_st, d_g, kk, d_keys, d_ids, scratch);
        std::vector<double> gk(static_cast<size_t>(kk));
        std::vector<int32_t> gi(static_cast<size_t>(kk));
        device::CopyToHost(gk.data(), d_keys, sizeof(double) * kk);
        device::CopyToHost(gi.data(), d_ids, sizeof(int32_t) * kk);
        EXPECT_EQ(gi, ti) << "n " << n << " k " << kk << " side " << side;
        for (int64_t t = 0; t < kk; ++t) {
          if (ti[t] >= 0) {
            EXPECT_EQ(gk[t], tk[t]);
          }
        }
        device::Free(scratch);
        device::Free(d_ids);
        device::Free(d_keys);
      }
      // Both sides in each launch: the twin's two calls.
      std::vector<double> tk[2];
      std::vector<int32_t> ti[2];
      double* d_keys[2];
      int32_t* d_ids[2];
      for (int side = 0; side < 2; ++side) {
        tk[side].resize(static_cast<size_t>(kk));
        ti[side].resize(static_cast<size_t>(kk));
        twin->TopK(side, 0, na, act.data(), y.data(), st.data(), g.data(), kk, tk[side].data(), ti[side].data(),
                   nullptr);
        d_keys[side] = static_cast<double*>(device::Malloc(sizeof(double) * kk));
        d_ids[side] = static_cast<int32_t*>(device::Malloc(sizeof(int32_t) * kk));
      }
      void* scratch = device::Malloc(gpu->TopKScratchBytes(na, kk));
      gpu->TopKBoth(0, na, d_act, d_y, d_st, d_g, kk, d_keys[0], d_ids[0], d_keys[1], d_ids[1], scratch);
      for (int side = 0; side < 2; ++side) {
        std::vector<double> gk(static_cast<size_t>(kk));
        std::vector<int32_t> gi(static_cast<size_t>(kk));
        device::CopyToHost(gk.data(), d_keys[side], sizeof(double) * kk);
        device::CopyToHost(gi.data(), d_ids[side], sizeof(int32_t) * kk);
        EXPECT_EQ(gi, ti[side]) << "both sides: n " << n << " k " << kk << " side " << side;
        for (int64_t t = 0; t < kk; ++t) {
          if (ti[side][t] >= 0) {
            EXPECT_EQ(gk[t], tk[side][t]);
          }
        }
        device::Free(d_ids[side]);
        device::Free(d_keys[side]);
      }
      device::Free(scratch);
    }
    device::Free(d_g);
    device::Free(d_st);
    device::Free(d_y);
    device::Free(d_act);
  }
}

// A solve on the GPU: the loop allocates nothing after its setup and makes its planned copies only.
TEST_F(SvmGpuTest, DeviceLoopRoundsAllocateNothing) {
  Problem p = MakeProblem(RandomDataset(3000, 30, 0.4, {1, -1}, 57));
  kernels::SvmKernelRows k(p.view, {kernels::SvmKernelType::kRbf, 3, 0.05, 0});
  const std::unique_ptr<devloop::LoopDevice> gpu = SvmOps(testing::CudaContext()).loop_device(k);
  SolverOptions o;
  o.eps = 1e-6;
  o.shrinking = ShrinkingPolicy::kOff;  // the active set never changes: cuSPARSE's column subsets never regrow
  BatchOptions b;
  b.working_set = 256;
  devloop::LoopResult loop;
  const SolverResult gpu_r = SolveOnLoopDevice(*gpu, {&k, p.rows, p.y, 1, 1}, o, b, nullptr, &loop);
  const SolverResult host = SolveBinaryBatched({&k, p.rows, p.y, 1, 1}, o, b);
  ExpectSameAnswer(p, host, gpu_r, o.eps, 1);
  EXPECT_GT(loop.rounds, 3);
  // cuSPARSE's SpMM may ask for a workspace larger than the one reserved at the setup: one growth, in round one.
  EXPECT_EQ(loop.after_first_round.allocations, 0);
  EXPECT_EQ(loop.loop.runtime_allocations, 0);
  EXPECT_EQ(loop.loop.h2d_copies, loop.rounds);
  // One download a round (its results with the next selection), one for the first selection.
  EXPECT_EQ(loop.loop.d2h_copies, loop.selections);
  EXPECT_EQ(loop.max_round_downloads, 1);
  EXPECT_EQ(loop.loop.synchronizations, loop.loop.d2h_copies);
  EXPECT_EQ(loop.loop.launches_seen, loop.loop.launches);  // the shared layer counts what the CUDA code launched
  EXPECT_GT(loop.cache_hits, 0);
}

TEST_F(SvmGpuTest, RejectsAWorkingSetBeyondOneBlock) {
  Problem p = MakeProblem(RandomDataset(50, 5, 0.5, {1, -1}, 54));
  const kernels::SvmKernelParams kp{kernels::SvmKernelType::kRbf, 3, 0.05, 0};
  kernels::SvmKernelRows k(p.view, kp);
  BatchOptions b;
  b.working_set = 2048;
  EXPECT_THROW(SolveBinaryBatched(testing::CudaContext(), {&k, p.rows, p.y, 1, 1}, {}, b), Error);
}

}  // namespace
}  // namespace tessel::svm
