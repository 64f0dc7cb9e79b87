// The GCN trainer's device data flow, counted on the simulated device (core/device.h): the CUDA path's wrappers
// over host twins of the raw kernels, so a CPU-only build checks what a GPU run allocates and copies. The training
// itself must match the CPU's.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/device.h"
#include "datasets/generators.h"
#include "tests/train/gcn_test_util.h"
#include "train/gcn/trainer.h"

namespace tessel::train::gcn {
namespace {

const datasets::NodeDataset& Cora() { return test_util::BundledCora(); }

const datasets::NodeDataset& DenseCora() { return test_util::BundledDenseCora(); }

struct FlowCase {
  const char* name;
  bool sampled;  // mini-batch (batch 35, fanouts 5,5: 4 steps an epoch) or whole graph (1 step)
  bool dense;    // dense or sparse input features
  ModelKind kind;
  int64_t pool_requests;       // whole graph: device allocations an epoch, all served by the pool (docs/gpu.md)
  bool host_sampling = false;  // sampled: --no-device-sampling (the CPU sampler; its blocks go up every step)
  bool host_features = false;  // --features-on host: mapped host memory the gathers read in place
};

TrainConfig Config(const FlowCase& f) {
  TrainConfig c;
  c.model.kind = f.kind;
  c.model.layers = 2;
  c.model.hidden = 16;
  c.model.dropout = 0.5F;
  c.epochs = 6;
  c.normalize_features = FeatureNorm::kL1;
  if (f.sampled) {
    c.batch_size = 35;
    c.fanouts = {5, 5};
  }
  c.device_sampling = !f.host_sampling;
  c.features_on = f.host_features ? FeaturePlacement::kHost : FeaturePlacement::kDevice;
  return c;
}

class GcnDeviceFlow : public ::testing::TestWithParam<FlowCase> {};

// From the third epoch on (the pool warm), every epoch makes no runtime allocation (cudaMalloc), no
// synchronisation and exactly the planned copies:
//  - whole graph: no upload at all (graph, features, weights, labels and loss rows stay resident);
//  - sampled: blocks sampled on the device (GpuNeighborSampler, on the simulated device its host twin) and input
//    rows gathered there (dense or sparse). Per step, uploads of the seeds and their labels only (the loss rows
//    0..n-1 stay while n does); one download of 4 values a layer (sizes, error flags: the sample's one read), with
//    sparse features the input layer's source ids in the same read (dense rows are gathered from their device
//    copy);
//  - both: two downloads an epoch besides, the loss summed on the device over the steps (8 B) and the
//    evaluation's confusion counts (3 splits x (3 C + 1) x 8 B; not a prediction per node).
// A whole-graph epoch makes the same fixed number of pool requests every epoch (the counts docs/gpu.md gives),
// and the losses and accuracies equal the CPU's.
TEST_P(GcnDeviceFlow, SteadyStateStepsAllocateNothingAndCopyOnlyThePlan) {
  const FlowCase& f = GetParam();
  const datasets::NodeDataset& data = f.dense ? DenseCora() : Cora();
  const TrainConfig config = Config(f);
  Context cpu;
  const TrainResult on_cpu = GcnTrainer(data, config, cpu).Train();

  device::ScopedSimulatedDevice sim;
  Context ctx;
  ctx.device = Device::kCuda;
  const TrainResult r = GcnTrainer(data, config, ctx).Train();
  ASSERT_EQ(r.epochs.size(), on_cpu.epochs.size());
  for (size_t e = 0; e < r.epochs.size(); ++e) {
    EXPECT_NEAR(r.epochs[e].loss, on_cpu.epochs[e].loss, 1e-5) << "epoch " << e + 1;
    EXPECT_NEAR(r.epochs[e].val_acc, on_cpu.epochs[e].val_acc, 1e-9) << "epoch " << e + 1;
  }
  const auto eval_bytes = static_cast<int64_t>(3 * (3 * data.num_classes + 1) * sizeof(int64_t));
  const int64_t steps = f.sampled ? 4 : 1;
  // Sampled on the device (GpuNeighborSampler): per step the seeds and their labels go up; the blocks are written
  // on the device and the input rows gathered there. The sample reads back one small staged array at its end (each
  // layer's sizes and two error flags: its rows own fanout slots each, its arrays are sized by the fanout bound, so
  // nothing is read before or between the layers), with sparse features the input layer's source ids in it (the
  // model's input rows).
  // Sampled on the CPU (--no-device-sampling): per step the input rows' ids (the rows are gathered on the device),
  // each block's 3 CSR arrays and the labels go up, and nothing comes back.
  const int64_t per_step_uploads = !f.sampled ? 0 : (f.host_sampling ? 1 + 3 * config.model.layers + 1 : 2);
  // Device sampling: one download (every layer's sizes, and for sparse features the input rows' ids, whose gather
  // sizes its output on the host); dense rows are gathered from the ids on the device.
  const int64_t per_step_downloads = f.sampled && !f.host_sampling ? 1 : 0;
  for (size_t e = 2; e < r.epochs.size(); ++e) {
    const EpochStats& s = r.epochs[e];
    SCOPED_TRACE(::testing::Message() << f.name << ", epoch " << s.epoch);
    EXPECT_EQ(s.steps, steps);
    EXPECT_EQ(s.device_runtime_allocations, 0);
    EXPECT_EQ(s.device_synchronizations, s.d2h_copies);  // only the downloads wait for the device
    EXPECT_EQ(s.h2d_copies, steps * per_step_uploads);
    if (!f.sampled) {
      EXPECT_EQ(s.h2d_bytes, 0U);
      EXPECT_EQ(s.device_allocations, f.pool_requests);  // sampled shapes vary from step to step
    }
    // The epoch's loss total and the evaluation's counts, and the sampler's reads.
    EXPECT_EQ(s.d2h_copies, 2 + steps * per_step_downloads);
    if (!f.sampled) {
      EXPECT_EQ(s.d2h_bytes, static_cast<uint64_t>(8 + eval_bytes));
    } else if (!f.host_sampling) {  // besides: per layer 4 values of 8 B, and the input layer's source ids
      EXPECT_GE(s.d2h_bytes, static_cast<uint64_t>(8 + eval_bytes + steps * config.model.layers * 32));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Simulated, GcnDeviceFlow,
    ::testing::Values(FlowCase{"whole_sparse_gcn", false, false, ModelKind::kGcn, 2},
                      FlowCase{"whole_dense_gcn", false, true, ModelKind::kGcn, 2},
                      FlowCase{"whole_sparse_sage", false, false, ModelKind::kSage, 6},
                      FlowCase{"sampled_sparse_gcn", true, false, ModelKind::kGcn, 0},
                      FlowCase{"sampled_dense_gcn", true, true, ModelKind::kGcn, 0},
                      FlowCase{"sampled_dense_sage", true, true, ModelKind::kSage, 0},
                      FlowCase{"sampled_sparse_sage", true, false, ModelKind::kSage, 0},
                      FlowCase{"host_sampled_sparse_gcn", true, false, ModelKind::kGcn, 0, true},
                      FlowCase{"host_sampled_dense_sage", true, true, ModelKind::kSage, 0, true},
                      FlowCase{"mapped_sampled_dense_gcn", true, true, ModelKind::kGcn, 0, false, true},
                      FlowCase{"mapped_sampled_sparse_sage", true, false, ModelKind::kSage, 0, false, true}),
    [](const ::testing::TestParamInfo<FlowCase>& param) { return std::string(param.param.name); });

// The mini-batch step's work on the device (issue 49), counted as a GPU would count it: a sampled SAGE step on the
// device waits for it once (the sampler's one read of every layer's sizes, its arrays sized by the fanout bound) and
// launches at most kStepLaunches kernels (the sampler's 1 + 4 a layer, the model's forward, backward and
// optimizer: 29), every step alike. The goal of 15 launches or one graph a step needs the model's launches
// fused or captured; this bounds what is done.
// Dense features: the input rows are gathered from the sampler's device ids, so a step waits once.
TEST(GcnDeviceStep, ASampledDenseStepWaitsOnce) {
  constexpr int64_t kStepLaunches = 38;
  TrainConfig c = Config(FlowCase{"", true, true, ModelKind::kSage, 0});
  c.epochs = 3;
  device::ScopedSimulatedDevice sim;
  Context ctx;
  ctx.device = Device::kCuda;
  const TrainResult r = GcnTrainer(DenseCora(), c, ctx).Train();
  for (const EpochStats& s : r.epochs) {
    SCOPED_TRACE(::testing::Message() << "epoch " << s.epoch);
    EXPECT_EQ(s.max_step_synchronizations, 1);
    EXPECT_EQ(s.step_synchronizations, s.steps);
    EXPECT_EQ(s.max_step_d2h_copies, 1);
    EXPECT_LE(s.max_step_launches, kStepLaunches);
    EXPECT_GE(s.step_launches, s.steps * (1 + 4 * c.model.layers));  // at least the sampler's
    EXPECT_LE(s.step_launches, s.steps * kStepLaunches);
    EXPECT_LT(s.step_launches, s.device_launches) << "the evaluation's launches are not a step's";
  }
}

// The full-batch evaluation on the device (its confusion counts reduced there, WholeGraphSource::EvaluateSplits)
// gives the CPU run's accuracies and F1 exactly, every epoch and at the end, on Cora (sparse features) and a CSBM
// graph (dense), and an epoch downloads the loss and the counts only: no prediction per node.
TEST(GcnDeviceEval, FullBatchMetricsOnTheDeviceEqualTheCpusExactly) {
  datasets::CsbmOptions o;
  o.num_nodes = 3000;
  o.num_classes = 6;
  o.avg_degree = 8;
  o.homophily = 0.8;
  o.feature_dim = 24;
  o.signal = 1.5;
  o.seed = 4;
  const datasets::NodeDataset csbm = datasets::GenerateCsbm(o);
  for (const datasets::NodeDataset* data : {&Cora(), &csbm}) {
    SCOPED_TRACE(data->name);
    TrainConfig c = Config(FlowCase{"", false, data == &csbm, ModelKind::kGcn, 0});
    c.epochs = 5;
    const TrainResult on_cpu = GcnTrainer(*data, c, Context{}).Train();
    device::ScopedSimulatedDevice sim;
    Context ctx;
    ctx.device = Device::kCuda;
    const TrainResult r = GcnTrainer(*data, c, ctx).Train();
    ASSERT_EQ(r.epochs.size(), on_cpu.epochs.size());
    for (size_t e = 0; e < r.epochs.size(); ++e) {
      EXPECT_EQ(r.epochs[e].train_acc, on_cpu.epochs[e].train_acc) << "epoch " << e + 1;
      EXPECT_EQ(r.epochs[e].val_acc, on_cpu.epochs[e].val_acc) << "epoch " << e + 1;
      EXPECT_EQ(r.epochs[e].d2h_bytes, 8 + 3 * (3 * data->num_classes + 1) * sizeof(int64_t));
    }
    for (const auto& [got, want] :
         {std::pair{&r.train, &on_cpu.train}, std::pair{&r.val, &on_cpu.val}, std::pair{&r.test, &on_cpu.test}}) {
      EXPECT_EQ(got->accuracy, want->accuracy);
      EXPECT_EQ(got->macro_f1, want->macro_f1);
      EXPECT_EQ(got->f1, want->f1);
      EXPECT_EQ(got->count, want->count);
    }
    // Not a degenerate score: the model has learnt something, and not everything.
    EXPECT_GT(r.test.accuracy, 1.5 / static_cast<double>(data->num_classes));
    EXPECT_LT(r.test.accuracy, 1.0);
  }
}

// Bytes of the prepared features (L1 rows of Cora: the same arrays, dense or CSR, as the trainer keeps).
int64_t FeatureBytes(const datasets::NodeDataset& data) {
  return FeatureBytes(PrepareFeatures(data.features, FeatureScaling{FeatureNorm::kL1, {}, {}}));
}

uint64_t TotalUploads(const TrainResult& r) {
  uint64_t bytes = 0;
  for (const EpochStats& e : r.epochs) bytes += e.h2d_bytes;
  return bytes;
}

// --features-on host: the features are mapped, never uploaded. The same sampled run with them on the device
// uploads exactly their bytes more over the whole run (once, on first use), and nothing else differs: the losses
// are equal and steady epochs copy the plan above (GcnDeviceFlow's mapped_* cases).
TEST(GcnFeaturePlacement, MappedFeaturesAreNeverUploaded) {
  for (bool dense : {true, false}) {
    const datasets::NodeDataset& data = dense ? DenseCora() : Cora();
    TrainConfig c = Config(FlowCase{"", true, dense, ModelKind::kGcn, 0});
    c.epochs = 3;
    device::ScopedSimulatedDevice sim;
    Context ctx;
    ctx.device = Device::kCuda;
    c.features_on = FeaturePlacement::kDevice;
    const TrainResult on_device = GcnTrainer(data, c, ctx).Train();
    c.features_on = FeaturePlacement::kHost;
    const device::PinnedCounters pinned0 = device::ReadPinnedCounters();
    const TrainResult mapped = GcnTrainer(data, c, ctx).Train();
    EXPECT_EQ(device::ReadPinnedCounters().allocations - pinned0.allocations, dense ? 1 : 3) << "one per array";
    EXPECT_EQ(device::ReadPinnedCounters().in_use_bytes, pinned0.in_use_bytes) << "freed with the trainer";
    EXPECT_EQ(TotalUploads(on_device) - TotalUploads(mapped), static_cast<uint64_t>(FeatureBytes(data)))
        << (dense ? "dense" : "sparse");
    ASSERT_EQ(mapped.epochs.size(), on_device.epochs.size());
    for (size_t e = 0; e < mapped.epochs.size(); ++e) {
      EXPECT_EQ(mapped.epochs[e].loss, on_device.epochs[e].loss) << "epoch " << e + 1;
    }
  }
}

// --features-on auto: a sampled run whose features take more than half of the device's free memory keeps them in
// mapped host memory and trains as the CPU does; asked to put them on the device, the same run fails for memory.
TEST(GcnFeaturePlacement, AutoKeepsFeaturesLargerThanHalfTheDeviceOnTheHost) {
  const datasets::NodeDataset& data = DenseCora();
  const int64_t bytes = FeatureBytes(data);
  TrainConfig c = Config(FlowCase{"", true, true, ModelKind::kGcn, 0});
  c.epochs = 2;
  c.features_on = FeaturePlacement::kAuto;
  const TrainResult on_cpu = GcnTrainer(data, c, Context{}).Train();
  {
    device::ScopedSimulatedDevice sim(bytes * 21 / 20);  // the features take more than half of it
    Context ctx;
    ctx.device = Device::kCuda;
    const device::PinnedCounters pinned0 = device::ReadPinnedCounters();
    GcnTrainer trainer(data, c, ctx);
    EXPECT_EQ(device::ReadPinnedCounters().allocations - pinned0.allocations, 1) << "mapped";
    const TrainResult r = trainer.Train();
    ASSERT_EQ(r.epochs.size(), on_cpu.epochs.size());
    for (size_t e = 0; e < r.epochs.size(); ++e) EXPECT_NEAR(r.epochs[e].loss, on_cpu.epochs[e].loss, 1e-5);
    c.features_on = FeaturePlacement::kDevice;
    EXPECT_THROW(GcnTrainer(data, c, ctx).Train(), Error) << "they do not fit beside the rest";
  }
  {
    device::ScopedSimulatedDevice sim(bytes * 4);  // room enough: on the device
    Context ctx;
    ctx.device = Device::kCuda;
    c.features_on = FeaturePlacement::kAuto;
    const device::PinnedCounters pinned0 = device::ReadPinnedCounters();
    GcnTrainer trainer(data, c, ctx);
    EXPECT_EQ(device::ReadPinnedCounters().allocations, pinned0.allocations) << "on the device";
  }
}

// Mapped features are for sampled runs: a full-batch step would put them on the device whole.
TEST(GcnFeaturePlacement, FullBatchRunsRefuseHostFeatures) {
  TrainConfig c = Config(FlowCase{"", false, true, ModelKind::kGcn, 0});
  c.features_on = FeaturePlacement::kHost;
  EXPECT_THROW(c.Validate(false), Error);
  c.batch_size = 35;
  c.fanouts = {5, 5};
  EXPECT_NO_THROW(c.Validate(false));
}

// A trainer runs on the device its context names: it makes it the calling thread's current device (one GPU per
// rank), so nothing of a rank lands on device 0 by default.
TEST(GcnFeaturePlacement, TheTrainerSelectsItsDevice) {
  device::ScopedSimulatedDevice sim(-1, 2);
  Context ctx;
  ctx.device = Device::kCuda;
  ctx.device_id = 1;
  TrainConfig c = Config(FlowCase{"", false, false, ModelKind::kGcn, 0});
  c.epochs = 1;
  GcnTrainer trainer(Cora(), c, ctx);
  EXPECT_EQ(device::CurrentDevice(), 1);
  device::SetDevice(0);
  ctx.device_id = 2;
  EXPECT_THROW(GcnTrainer(Cora(), c, ctx), Error) << "2 devices visible";
}

}  // namespace
}  // namespace tessel::train::gcn
