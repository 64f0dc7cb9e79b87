// The GCN trainer end to end: paper-setting accuracy on the bundled Cora (Planetoid split), sampled
// mini-batch training, exact resume from a checkpoint, prediction from a checkpoint, and clear errors for
// bad input (unknown model, fanout count, missing labels or split, non-finite features).
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <string>

#include "datasets/readers.h"
#include "train/gcn/trainer.h"

namespace tessel::train::gcn {
namespace {

namespace fs = std::filesystem;

const datasets::NodeDataset& Cora() {
  static const datasets::NodeDataset data = [] {
    auto d = datasets::ReadNodeTable(datasets::NodeTableFromPrefix(fs::path(TESSEL_TEST_DATA) / "cora" / "cora"));
    d.name = "cora";
    return d;
  }();
  return data;
}

TrainConfig PaperConfig() {
  TrainConfig c;  // Kipf & Welling: 2 layers, hidden 16, dropout 0.5, lr 0.01, weight decay 5e-4, 200 epochs
  c.model.layers = 2;
  c.model.hidden = 16;
  c.model.dropout = 0.5F;
  c.adam.lr = 0.01F;
  c.adam.weight_decay = 5e-4F;
  c.epochs = 200;
  return c;
}

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GcnTrainer, CoraFullBatchReachesPaperAccuracy) {
  const auto& cora = Cora();
  ASSERT_EQ(cora.num_nodes(), 2708);
  ASSERT_EQ(cora.train.size(), 140U);
  Context ctx;
  ctx.seed = 0;
  GcnTrainer trainer(cora, PaperConfig(), ctx);
  TrainResult r = trainer.Train();
  EXPECT_EQ(r.epochs.size(), 200U);
  EXPECT_LT(r.epochs.back().loss, r.epochs.front().loss);
  EXPECT_GE(r.test.accuracy, 0.79) << "test accuracy of the best-validation weights";
  EXPECT_EQ(r.test.count, 1000);
  EXPECT_EQ(r.test.f1.size(), 7U);
  EXPECT_GT(r.test.macro_f1, 0.7);
}

TEST(GcnTrainer, CoraSampledMiniBatchLearns) {
  TrainConfig c = PaperConfig();
  c.batch_size = 32;
  c.fanouts = {10, 10};
  c.epochs = 60;
  Context ctx;
  ctx.seed = 1;
  for (auto kind : {ModelKind::kGcn, ModelKind::kSage}) {
    c.model.kind = kind;
    GcnTrainer trainer(Cora(), c, ctx);
    TrainResult r = trainer.Train();
    EXPECT_GE(r.test.accuracy, 0.74) << ModelKindName(kind);
    EXPECT_GT(r.epochs.back().sampled_edges, 0);
    EXPECT_EQ(r.epochs.back().seed_nodes, 140);
  }
}

TEST(GcnTrainer, ResumedRunEndsWithTheSameWeights) {
  const fs::path dir = fs::path(testing::TempDir()) / "gcn_resume_ckpt";
  fs::remove_all(dir);
  for (int64_t batch : {int64_t{0}, int64_t{64}}) {
    TrainConfig c = PaperConfig();
    c.epochs = 12;
    c.batch_size = batch;
    c.fanouts = {5, 5};
    Context ctx;
    ctx.seed = 7;
    GcnTrainer full(Cora(), c, ctx);
    full.Train();
    // Interrupted after 5 epochs (checkpoint every 5), then resumed to 12.
    TrainConfig first = c;
    first.epochs = 5;
    first.checkpoint_dir = dir;
    first.checkpoint_every = 5;
    GcnTrainer a(Cora(), first, ctx);
    a.Train();
    ASSERT_TRUE(fs::exists(dir / "checkpoint.json"));
    TrainConfig second = c;
    second.checkpoint_dir = dir;
    second.resume = true;
    GcnTrainer b(Cora(), second, ctx);
    TrainResult rb = b.Train();
    ASSERT_EQ(rb.epochs.size(), 7U);
    EXPECT_EQ(rb.epochs.front().epoch, 6);
    for (size_t i = 0; i < full.model().params().size(); ++i) {
      EXPECT_EQ(full.model().params()[i].value.data.ToVector(), b.model().params()[i].value.data.ToVector())
          << "batch " << batch << " " << full.model().params()[i].name;
    }
    // Prediction from the checkpoint uses the best-validation weights, the ones the trainer ends with.
    Matrix p = PredictFromCheckpoint(ctx, Cora(), dir);
    Matrix q = b.PredictProbabilities();
    EXPECT_EQ(p.data.ToVector(), q.data.ToVector());
    // Different settings cannot resume this checkpoint.
    TrainConfig other = second;
    other.model.hidden = 8;
    EXPECT_NE(ErrorOf([&] { GcnTrainer t(Cora(), other, ctx); }).find("different settings"), std::string::npos);
    fs::remove_all(dir);
  }
}

TEST(GcnTrainer, BadInputGivesClearErrors) {
  const Context ctx;
  EXPECT_NE(ErrorOf([] { ParseModelKind("gat"); }).find("use gcn or sage"), std::string::npos);
  TrainConfig c = PaperConfig();
  c.batch_size = 16;
  c.fanouts = {10};
  EXPECT_NE(ErrorOf([&] { GcnTrainer t(Cora(), c, ctx); }).find("1 fanouts but the model has 2 layers"),
            std::string::npos);
  c.fanouts = {10, 0};
  EXPECT_NE(ErrorOf([&] { GcnTrainer t(Cora(), c, ctx); }).find("not a fanout"), std::string::npos);

  datasets::NodeDataset no_split;
  no_split.graph = Cora().graph.index() == 0 ? datasets::AnyGraph(std::get<0>(Cora().graph).Clone())
                                             : datasets::AnyGraph(std::get<1>(Cora().graph).Clone());
  no_split.features.num_rows = Cora().features.num_rows;
  no_split.features.dim = Cora().features.dim;
  no_split.features.sparse = Cora().features.sparse;
  no_split.features.dense = Cora().features.dense.Clone();
  no_split.features.indptr = Cora().features.indptr.Clone();
  no_split.features.indices = Cora().features.indices.Clone();
  no_split.features.values = Cora().features.values.Clone();
  EXPECT_NE(ErrorOf([&] { GcnTrainer t(no_split, PaperConfig(), ctx); }).find("no labels"), std::string::npos);
  no_split.labels = Cora().labels.Clone();
  no_split.num_classes = Cora().num_classes;
  EXPECT_NE(ErrorOf([&] { GcnTrainer t(no_split, PaperConfig(), ctx); }).find("--random-split"), std::string::npos);

  no_split.train = Cora().train.Clone();
  no_split.val = Cora().val.Clone();
  no_split.test = Cora().test.Clone();
  auto& values = no_split.features.sparse ? no_split.features.values : no_split.features.dense;
  values.MutableHost()[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(ErrorOf([&] { GcnTrainer t(no_split, PaperConfig(), ctx); }).find("must be finite"), std::string::npos);
  values.MutableHost()[5] = std::numeric_limits<float>::infinity();
  EXPECT_NE(ErrorOf([&] { GcnTrainer t(no_split, PaperConfig(), ctx); }).find("is inf"), std::string::npos);
}

}  // namespace
}  // namespace tessel::train::gcn
