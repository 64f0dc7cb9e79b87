// The simulated device counts what a GPU does (core/device.h Counters): the same training steps and the same SVM
// solve on a GPU and on the simulated device must launch, copy, allocate and synchronise the same number of times,
// and on the GPU the launches the CUDA code tallied at its launch sites (launches_seen) must be the launches the
// shared layer counted. Runs only where a GPU is present (skipped, visibly, elsewhere).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/device.h"
#include "svm/batch_solver.h"
#include "svm/device_loop.h"
#include "svm/svm_ops.h"
#include "tests/svm/svm_test_util.h"
#include "tests/train/gcn_test_util.h"
#include "train/gcn/trainer.h"

namespace tessel {
namespace {

using train::gcn::EpochStats;
using train::gcn::GcnTrainer;
using train::gcn::TrainConfig;
using train::gcn::TrainResult;

class DeviceCountsGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device::CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device: the simulated counts have no GPU to match";
  }
};

// Sampled GraphSAGE on Cora, blocks sampled on the device (the mini-batch step of docs/gpu.md).
TrainConfig SampledConfig(int epochs) {
  TrainConfig c;
  c.model.kind = train::gcn::ModelKind::kSage;
  c.model.layers = 2;
  c.model.hidden = 16;
  c.model.dropout = 0.5F;
  c.epochs = epochs;
  c.batch_size = 35;
  c.fanouts = {5, 5};
  c.normalize_features = train::gcn::FeatureNorm::kL1;
  return c;
}

struct TrainRun {
  TrainResult result;
  device::Counters counters;  // the whole run's
};

TrainRun TrainOnce(const TrainConfig& c) {
  Context ctx;
  ctx.device = Device::kCuda;  // the simulated device when one is installed
  const device::Counters before = device::ReadCounters();
  TrainRun r{GcnTrainer(train::gcn::test_util::BundledCora(), c, ctx).Train(), {}};
  r.counters = device::ReadCounters() - before;
  return r;
}

void ExpectSameEpochCounts(const EpochStats& gpu, const EpochStats& sim) {
  SCOPED_TRACE(::testing::Message() << "epoch " << gpu.epoch);
  EXPECT_EQ(gpu.device_launches, sim.device_launches);
  EXPECT_EQ(gpu.step_launches, sim.step_launches);
  EXPECT_EQ(gpu.step_synchronizations, sim.step_synchronizations);
  EXPECT_EQ(gpu.step_h2d_copies, sim.step_h2d_copies);
  EXPECT_EQ(gpu.step_d2h_copies, sim.step_d2h_copies);
  EXPECT_EQ(gpu.step_allocations, sim.step_allocations);
  EXPECT_EQ(gpu.h2d_copies, sim.h2d_copies);
  EXPECT_EQ(gpu.d2h_copies, sim.d2h_copies);
  EXPECT_EQ(gpu.device_synchronizations, sim.device_synchronizations);
  EXPECT_EQ(gpu.device_allocations, sim.device_allocations);
  EXPECT_EQ(gpu.max_step_launches, sim.max_step_launches);
  EXPECT_EQ(gpu.max_step_synchronizations, sim.max_step_synchronizations);
}

TEST_F(DeviceCountsGpuTest, MiniBatchStepsCountTheSameOnTheGpuAndTheSimulatedDevice) {
  const TrainRun gpu = TrainOnce(SampledConfig(4));
  // Two more epochs: what the CUDA code launched in them is what the shared layer counted (a first use may fill a
  // cached array once, so the steady epochs are compared).
  const TrainRun gpu_longer = TrainOnce(SampledConfig(6));
  EXPECT_EQ(gpu_longer.counters.launches_seen - gpu.counters.launches_seen,
            gpu_longer.counters.launches - gpu.counters.launches);
  EXPECT_GT(gpu.counters.launches, 0);
  TrainRun sim;
  {
    device::ScopedSimulatedDevice simulated;
    sim = TrainOnce(SampledConfig(4));
  }
  EXPECT_EQ(sim.counters.launches_seen, 0);
  ASSERT_EQ(gpu.result.epochs.size(), sim.result.epochs.size());
  for (size_t e = 2; e < gpu.result.epochs.size(); ++e)
    ExpectSameEpochCounts(gpu.result.epochs[e], sim.result.epochs[e]);
}

TEST_F(DeviceCountsGpuTest, SvmRoundsCountTheSameOnTheGpuAndTheSimulatedDevice) {
  using svm::testing::MakeProblem;
  using svm::testing::RandomDataset;
  svm::testing::Problem p = MakeProblem(RandomDataset(1500, 30, 0.5, {1, -1}, 61));
  kernels::SvmKernelRows k(p.view, {kernels::SvmKernelType::kRbf, 3, 0.05, 0});
  svm::SolverOptions o;
  o.eps = 1e-3;
  o.shrinking = svm::ShrinkingPolicy::kEager;  // elimination checks and active-set changes too
  svm::BatchOptions b;
  b.working_set = 64;
  const auto solve = [&](svm::devloop::LoopDevice& dev) {
    svm::devloop::LoopResult loop;
    svm::SolveOnLoopDevice(dev, {&k, p.rows, p.y, 1, 1}, o, b, nullptr, &loop);
    return loop;
  };
  const std::unique_ptr<svm::devloop::LoopDevice> cuda = svm::SvmOps(svm::testing::CudaContext()).loop_device(k);
  const svm::devloop::LoopResult gpu = solve(*cuda);
  svm::devloop::LoopResult sim;
  {
    device::ScopedSimulatedDevice simulated;
    const std::unique_ptr<svm::devloop::LoopDevice> twin = svm::devloop::MakeTwinLoopDevice(k);
    sim = solve(*twin);
  }
  EXPECT_EQ(gpu.loop.launches_seen, gpu.loop.launches);
  EXPECT_EQ(gpu.after_first_round.allocations, 0);
  EXPECT_EQ(sim.after_first_round.allocations, 0);
  EXPECT_EQ(gpu.max_round_downloads, sim.max_round_downloads);
  EXPECT_EQ(gpu.max_round_downloads, 1);
  // The CUDA rows are float64 products and the twin's the host kernel's: the same decisions, unless a tie falls
  // differently; then the totals differ with the rounds, and only the per-round figures are compared.
  if (gpu.rounds == sim.rounds && gpu.selections == sim.selections && gpu.active_changes == sim.active_changes &&
      gpu.reconstructions == sim.reconstructions && gpu.shrink_checks == sim.shrink_checks) {
    EXPECT_EQ(gpu.loop.launches, sim.loop.launches);
    EXPECT_EQ(gpu.loop.d2h_copies, sim.loop.d2h_copies);
    EXPECT_EQ(gpu.loop.h2d_copies, sim.loop.h2d_copies);
    EXPECT_EQ(gpu.loop.synchronizations, sim.loop.synchronizations);
  }
}

}  // namespace
}  // namespace tessel
