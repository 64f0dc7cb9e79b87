// The GCN trainer end to end: paper-setting accuracy on the bundled Cora (Planetoid split), sampled
// mini-batch training, exact resume from a checkpoint, prediction from a checkpoint, and clear errors for
// bad input (unknown model, fanout count, missing labels or split, non-finite features).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/device.h"
#include "core/error.h"
#include "core/memory_budget.h"
#include "datasets/readers.h"
#include "tests/train/gcn_test_util.h"
#include "train/gcn/train_common.h"
#include "train/gcn/trainer.h"

namespace tessel::train::gcn {
namespace {

namespace fs = std::filesystem;

const datasets::NodeDataset& Cora() { return test_util::BundledCora(); }

TrainConfig PaperConfig() {
  TrainConfig c;  // Kipf & Welling: 2 layers, hidden 16, dropout 0.5, lr 0.01, weight decay 5e-4, 200 epochs
  c.model.layers = 2;
  c.model.hidden = 16;
  c.model.dropout = 0.5F;
  c.adam.lr = 0.01F;
  c.adam.weight_decay = 5e-4F;
  c.epochs = 200;
  c.normalize_features = FeatureNorm::kL1;  // the paper's row normalisation of the bag-of-words features
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

// One process, sampled mini-batches: with overlap the next batch is sampled and gathered on the main thread while
// a second thread computes; losses and weights are bit-identical to the sequential order.
TEST(GcnTrainer, OverlapGivesTheSequentialResult) {
  TrainConfig c = PaperConfig();
  c.batch_size = 16;
  c.fanouts = {10, 10};
  c.epochs = 4;
  Context ctx;
  ctx.seed = 2;
  ctx.threads = 2;
  std::vector<double> losses[2];
  std::vector<float> weights[2];
  for (int overlap = 0; overlap < 2; ++overlap) {
    c.overlap = overlap == 1;
    GcnTrainer trainer(Cora(), c, ctx);
    EXPECT_EQ(trainer.Overlaps(), overlap == 1);
    for (const EpochStats& e : trainer.Train().epochs) losses[overlap].push_back(e.loss);
    for (const Param& p : trainer.model().params()) {
      weights[overlap].insert(weights[overlap].end(), p.value.View().begin(), p.value.View().end());
    }
  }
  EXPECT_EQ(losses[0], losses[1]);
  EXPECT_EQ(weights[0], weights[1]);
  ctx.threads = 1;  // one thread per process: nothing to overlap with
  c.overlap = true;
  EXPECT_FALSE(GcnTrainer(Cora(), c, ctx).Overlaps());
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

// --eval-every N evaluates after epochs N, 2N, ... and always after the last; 0 after the last only. Evaluation
// never changes training (the same losses and weights as every-epoch evaluation), an evaluated epoch measures what
// the every-epoch run measured at that epoch, the best is the best of the evaluated epochs (the first of equal
// ones), and the JSON says which epochs were evaluated (null accuracies for the others).
TEST(GcnTrainer, EvalEveryEvaluatesEveryNthAndTheLastEpoch) {
  TrainConfig c = PaperConfig();
  c.epochs = 10;
  Context ctx;
  ctx.seed = 3;
  GcnTrainer every(Cora(), c, ctx);
  const TrainResult ref = every.Train();
  ASSERT_EQ(ref.epochs.size(), 10U);
  for (const auto& [n, want] : std::vector<std::pair<int, std::vector<int>>>{
           {1, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}, {3, {3, 6, 9, 10}}, {5, {5, 10}}, {0, {10}}, {20, {10}}}) {
    c.eval_every = n;
    GcnTrainer t(Cora(), c, ctx);
    const TrainResult r = t.Train();
    ASSERT_EQ(r.epochs.size(), 10U) << n;
    std::vector<int> evaluated;
    int best = 0;
    double best_val = -1;
    for (const EpochStats& e : r.epochs) {
      const EpochStats& e1 = ref.epochs[static_cast<size_t>(e.epoch - 1)];
      EXPECT_EQ(e.loss, e1.loss) << "eval_every " << n << " epoch " << e.epoch;
      EXPECT_EQ(t.Evaluates(e.epoch), e.evaluated);
      const nlohmann::json j = e.ToJson();
      EXPECT_EQ(j.at("evaluated").get<bool>(), e.evaluated);
      if (!e.evaluated) {
        EXPECT_EQ(e.eval_seconds, 0.0);
        EXPECT_TRUE(j.at("val_acc").is_null());
        EXPECT_TRUE(j.at("train_acc").is_null());
        continue;
      }
      evaluated.push_back(e.epoch);
      EXPECT_EQ(e.val_acc, e1.val_acc) << "eval_every " << n << " epoch " << e.epoch;
      EXPECT_EQ(e.train_acc, e1.train_acc);
      if (e.val_acc > best_val) {
        best_val = e.val_acc;
        best = e.epoch;
      }
    }
    EXPECT_EQ(evaluated, want) << "eval_every " << n;
    EXPECT_EQ(r.ToJson().at("evaluated_epochs").get<std::vector<int>>(), want);
    EXPECT_EQ(r.best_epoch, best) << "eval_every " << n;
    // The result is the best evaluated epoch's weights, measured as that epoch measured them.
    EXPECT_EQ(r.val.accuracy, ref.epochs[static_cast<size_t>(best - 1)].val_acc) << "eval_every " << n;
    EXPECT_EQ(r.val.accuracy, best_val);
  }
  // Checked options.
  c.eval_every = -1;
  EXPECT_NE(ErrorOf([&] { c.Validate(); }).find("--eval-every must be >= 0"), std::string::npos);
  c.eval_every = 0;
  c.patience = 5;
  EXPECT_NE(ErrorOf([&] { c.Validate(); }).find("--patience 5 needs evaluations"), std::string::npos);
}

// Patience counts epochs, evaluated or not, since the best validation accuracy, and stops only at an evaluated
// epoch; the counters stay what a checkpoint requires (epochs_since = epochs done - best epoch).
TEST(GcnTrainer, PatienceCountsEpochsAndStopsAtAnEvaluation) {
  std::vector<Param> w(1);
  w[0].value = Matrix(1, 1);
  BestWeights b;
  b.Age(1);  // before the first evaluation
  EXPECT_EQ(b.epoch, 0);
  EXPECT_EQ(b.epochs_since, 1);
  EXPECT_FALSE(b.Update(2, 0.5, w, 3));
  EXPECT_EQ(b.epoch, 2);
  EXPECT_EQ(b.epochs_since, 0);
  b.Age(3);
  b.Age(4);
  EXPECT_EQ(b.epochs_since, 2);
  EXPECT_TRUE(b.Update(5, 0.4, w, 3));  // 3 epochs since epoch 2
  EXPECT_EQ(b.epochs_since, 3);
  EXPECT_FALSE(b.Update(5, 0.4, w, 4));
  // Every epoch evaluated: one more epoch each time, as before --eval-every.
  BestWeights e;
  EXPECT_FALSE(e.Update(1, 0.5, w, 2));
  EXPECT_FALSE(e.Update(2, 0.5, w, 2));  // equal is not better
  EXPECT_TRUE(e.Update(3, 0.4, w, 2));
  EXPECT_EQ(e.epoch, 1);

  // In the trainer: weights that barely move (lr 1e-9) keep the validation accuracy of epoch 3, the first
  // evaluated; with evaluations every 3 epochs and patience 4, epoch 6 is 3 epochs after it and epoch 9 stops.
  TrainConfig c = PaperConfig();
  c.adam.lr = 1e-9F;
  c.epochs = 30;
  c.eval_every = 3;
  c.patience = 4;
  Context ctx;
  GcnTrainer t(Cora(), c, ctx);
  const TrainResult r = t.Train();
  EXPECT_TRUE(r.stopped_early);
  ASSERT_EQ(r.epochs.size(), 9U);
  EXPECT_EQ(r.best_epoch, 3);
  EXPECT_TRUE(r.epochs.back().evaluated);
}

// A checkpoint written after an epoch without an evaluation (before any, or between two) resumes to the
// uninterrupted run's weights, best epoch and evaluated epochs.
TEST(GcnTrainer, ResumeBetweenEvaluationsEndsAsTheUninterruptedRun) {
  const fs::path dir = fs::path(testing::TempDir()) / "gcn_eval_every_ckpt";
  for (int n : {4, 0}) {
    fs::remove_all(dir);
    TrainConfig c = PaperConfig();
    c.epochs = 12;
    c.eval_every = n;
    Context ctx;
    ctx.seed = 5;
    GcnTrainer full(Cora(), c, ctx);
    const TrainResult rf = full.Train();
    {
      // The checkpoint an interrupted 12-epoch run leaves after epoch 5 (a 5-epoch run would evaluate its last
      // epoch, 5, which the 12-epoch run does not): train 12 with checkpoints every 5 and keep epoch 5's, copied
      // aside while epoch 6 reports (it is replaced after epoch 10).
      TrainConfig twelve = c;
      twelve.checkpoint_dir = dir;
      twelve.checkpoint_every = 5;
      GcnTrainer a(Cora(), twelve, ctx);
      int seen = 0;
      const fs::path saved = fs::path(testing::TempDir()) / "gcn_eval_every_ckpt5";
      fs::remove_all(saved);
      (void)a.Train([&](const EpochStats& s) {
        if (s.epoch == 6 && seen++ == 0) fs::copy(dir, saved, fs::copy_options::recursive);
      });
      fs::remove_all(dir);
      fs::rename(saved, dir);
    }
    const nlohmann::json ckpt = nlohmann::json::parse(std::ifstream(dir / "checkpoint.json"));
    EXPECT_EQ(ckpt.at("epochs_done").get<int>(), 5);
    EXPECT_EQ(ckpt.at("best_epoch").get<int>(), n == 4 ? 4 : 0);
    TrainConfig second = c;
    second.checkpoint_dir = dir;
    second.resume = true;
    GcnTrainer b(Cora(), second, ctx);
    const TrainResult rb = b.Train();
    ASSERT_EQ(rb.epochs.size(), 7U);
    EXPECT_EQ(rb.best_epoch, rf.best_epoch) << "eval_every " << n;
    EXPECT_EQ(rb.val.accuracy, rf.val.accuracy);
    EXPECT_EQ(rb.test.accuracy, rf.test.accuracy);
    for (size_t i = 0; i < full.model().params().size(); ++i) {
      EXPECT_EQ(full.model().params()[i].value.data.ToVector(), b.model().params()[i].value.data.ToVector());
    }
  }
  fs::remove_all(dir);
}

// Without a CUDA device (or a CUDA build), a sampled --device cuda run fails with the --device error every CUDA path
// gives, before the GPU sampler is built.
TEST(GcnTrainer, SampledOnCudaWithoutADeviceGivesTheDeviceError) {
  if (device::CudaDeviceCount() > 0) GTEST_SKIP() << "a CUDA device is visible";
  TrainConfig c;
  c.epochs = 1;
  c.batch_size = 35;
  c.fanouts = {5, 5};
  Context ctx;
  ctx.device = Device::kCuda;
  try {
    GcnTrainer(Cora(), c, ctx).Train();
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--device cuda"), std::string::npos) << e.what();
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
  // The distributed options belong to partitioned training: one process refuses them rather than ignoring them.
  c = PaperConfig();
  c.dist.skew.skew = 4.0;
  EXPECT_NE(ErrorOf([&] { GcnTrainer t(Cora(), c, ctx); }).find("apply to distributed training only"),
            std::string::npos);
  c = PaperConfig();
  c.dist.feature_cache = 0;
  EXPECT_NE(ErrorOf([&] { GcnTrainer t(Cora(), c, ctx); }).find("--partitions DIR"), std::string::npos);

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

// A 5 x 4 feature table: a varied column, a constant column, an all-zero row, a negative column; as dense and as
// CSR (the zeros left out), so both layouts of every scaling are checked against float64 loops over the table.
const double kTable[5][4] = {{1, 3, 0, -2}, {2, 3, 4, -1}, {0, 3, 0, 0}, {4, 3, 8, -5}, {0, 3, 0, 0}};

datasets::Features TableFeatures(bool sparse) {
  datasets::Features f;
  f.num_rows = 5;
  f.dim = 4;
  f.sparse = sparse;
  std::vector<float> dense;
  std::vector<int64_t> indptr{0};
  std::vector<int32_t> indices;
  std::vector<float> values;
  for (const auto& row : kTable) {
    for (int c = 0; c < 4; ++c) {
      dense.push_back(static_cast<float>(row[c]));
      if (row[c] != 0) {
        indices.push_back(c);
        values.push_back(static_cast<float>(row[c]));
      }
    }
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  if (sparse) {
    f.indptr = Buffer<int64_t>(std::move(indptr));
    f.indices = Buffer<int32_t>(std::move(indices));
    f.values = Buffer<float>(std::move(values));
  } else {
    f.dense = Buffer<float>(std::move(dense));
  }
  return f;
}

// The prepared matrix as a dense float64 table (sparse: zeros filled in).
std::vector<std::vector<double>> AsTable(const FeatureMatrix& m) {
  std::vector<std::vector<double>> t(static_cast<size_t>(m.rows()), std::vector<double>(static_cast<size_t>(m.cols())));
  if (m.is_sparse) {
    auto p = m.sparse.indptr.Host();
    auto idx = m.sparse.indices.Host();
    auto v = m.sparse.values.Host();
    for (int64_t r = 0; r < m.rows(); ++r) {
      for (int64_t e = p[r]; e < p[r + 1]; ++e) t[static_cast<size_t>(r)][static_cast<size_t>(idx[e])] = v[e];
    }
  } else {
    auto v = m.dense.View();
    for (int64_t r = 0; r < m.rows(); ++r) {
      for (int64_t c = 0; c < m.cols(); ++c) t[static_cast<size_t>(r)][static_cast<size_t>(c)] = v[r * m.cols() + c];
    }
  }
  return t;
}

TEST(FeatureScaling, EachNormMatchesItsFloat64Definition) {
  for (bool sparse : {false, true}) {
    const datasets::Features f = TableFeatures(sparse);
    const std::string what = sparse ? "sparse" : "dense";
    // none: the values as given.
    auto t = AsTable(PrepareFeatures(f, FitFeatureScaling(f, FeatureNorm::kNone)));
    for (int r = 0; r < 5; ++r) {
      for (int c = 0; c < 4; ++c) EXPECT_EQ(t[r][c], kTable[r][c]) << what;
    }
    // l1: rows divided by their L1 norm; the all-zero row stays zero.
    t = AsTable(PrepareFeatures(f, FitFeatureScaling(f, FeatureNorm::kL1)));
    for (int r = 0; r < 5; ++r) {
      double l1 = 0;
      for (double x : kTable[r]) l1 += std::abs(x);
      for (int c = 0; c < 4; ++c) {
        EXPECT_NEAR(t[r][c], l1 > 0 ? kTable[r][c] / l1 : 0.0, 1e-7) << what << " l1 " << r << "," << c;
      }
    }
    // standard: population mean and std per column in float64; the constant column is not divided.
    const FeatureScaling s = FitFeatureScaling(f, FeatureNorm::kStandard);
    ASSERT_EQ(s.mean.size(), 4U);
    t = AsTable(PrepareFeatures(f, s));
    for (int c = 0; c < 4; ++c) {
      double mean = 0;
      for (const auto& row : kTable) mean += row[c] / 5;
      double var = 0;
      for (const auto& row : kTable) var += (row[c] - mean) * (row[c] - mean) / 5;
      const double sd = var > 0 ? std::sqrt(var) : 1.0;
      EXPECT_NEAR(s.scale[c], sd, 1e-12) << what << " column " << c;
      EXPECT_NEAR(s.mean[c], sparse ? 0.0 : mean, 1e-12) << what << " column " << c;
      for (int r = 0; r < 5; ++r) {
        const double want = sparse ? kTable[r][c] / sd : (kTable[r][c] - mean) / sd;
        EXPECT_NEAR(t[r][c], want, 1e-6) << what << " standard " << r << "," << c;
      }
    }
    // Standardised dense columns have mean 0 and (non-constant ones) variance 1.
    if (!sparse) {
      for (int c = 0; c < 4; ++c) {
        double m = 0, v = 0;
        for (int r = 0; r < 5; ++r) m += t[r][c] / 5;
        for (int r = 0; r < 5; ++r) v += (t[r][c] - m) * (t[r][c] - m) / 5;
        EXPECT_NEAR(m, 0.0, 1e-6) << c;
        EXPECT_NEAR(v, c == 1 ? 0.0 : 1.0, 1e-5) << c;
      }
    }
  }
}

// Sparse features may declare billions of columns (a manifest's feature_dim): the per-column statistics of standard
// scaling are compared with the memory budget before they are allocated (found by probing: they grew past 11 GB
// under --max-memory 2G), with a message naming the option.
TEST(FeatureScaling, HugeColumnCountsAreCheckedBeforeAllocating) {
  datasets::Features f;
  f.sparse = true;
  f.num_rows = 1;
  f.dim = 2147483647;
  f.indptr = Buffer<int64_t>(std::vector<int64_t>{0, 1});
  f.indices = Buffer<int32_t>(std::vector<int32_t>{2147483646});
  f.values = Buffer<float>(std::vector<float>{1.0F});
  memory::SetLimit(int64_t{1} << 30);
  std::string message;
  try {
    FitFeatureScaling(f, FeatureNorm::kStandard);
  } catch (const Error& e) {
    message = e.what();
  }
  memory::SetLimit(0);
  EXPECT_NE(message.find("per-column statistics of 2147483647 feature columns"), std::string::npos) << message;
  EXPECT_NE(message.find("--normalize-features none or l1"), std::string::npos) << message;
  EXPECT_NO_THROW(FitFeatureScaling(f, FeatureNorm::kL1));  // no per-column arrays
}

// Two halves of the rows fitted as two "ranks" whose sums are exchanged give the one-piece statistics.
TEST(FeatureScaling, ShardedFitEqualsTheWholeFit) {
  const datasets::Features f = TableFeatures(false);
  const FeatureScaling whole = FitFeatureScaling(f, FeatureNorm::kStandard);
  auto half = [&](int64_t begin, int64_t end) {
    datasets::Features h;
    h.num_rows = end - begin;
    h.dim = 4;
    auto v = f.dense.Host();
    h.dense = Buffer<float>(std::vector<float>(v.begin() + begin * 4, v.begin() + end * 4));
    return h;
  };
  const datasets::Features a = half(0, 2);
  const datasets::Features b = half(2, 5);
  // Rank b's partial sums of each pass, computed with an identity reduction, then added to rank a's.
  std::vector<std::vector<double>> b_parts;
  FitFeatureScaling(b, FeatureNorm::kStandard, [&](std::span<double> x) { b_parts.emplace_back(x.begin(), x.end()); });
  ASSERT_EQ(b_parts.size(), 2U);
  // Pass 2 of b used b's own mean; recompute b's deviations around the global mean from the table instead.
  const double n = 5;
  std::vector<double> dev_b(4, 0.0);
  for (int r = 2; r < 5; ++r) {
    for (int c = 0; c < 4; ++c) {
      const double mean = (b_parts[0][static_cast<size_t>(c)] + kTable[0][c] + kTable[1][c]) / n;
      dev_b[static_cast<size_t>(c)] += (kTable[r][c] - mean) * (kTable[r][c] - mean);
    }
  }
  int pass = 0;
  const FeatureScaling sharded = FitFeatureScaling(a, FeatureNorm::kStandard, [&](std::span<double> x) {
    const std::vector<double>& other = pass++ == 0 ? b_parts[0] : dev_b;
    for (size_t i = 0; i < x.size(); ++i) x[i] += other[i];
  });
  for (int c = 0; c < 4; ++c) {
    EXPECT_NEAR(sharded.mean[c], whole.mean[c], 1e-12) << c;
    EXPECT_NEAR(sharded.scale[c], whole.scale[c], 1e-12) << c;
  }
}

TEST(FeatureScaling, NamesJsonAndOldCheckpoints) {
  EXPECT_EQ(ParseFeatureNorm("standard"), FeatureNorm::kStandard);
  EXPECT_NE(ErrorOf([] { ParseFeatureNorm("l2"); }).find("choose none"), std::string::npos);
  const FeatureScaling s = FitFeatureScaling(TableFeatures(false), FeatureNorm::kStandard);
  const FeatureScaling back = FeatureScaling::FromJson(nlohmann::json::parse(s.ToJson().dump()));
  EXPECT_EQ(back.mean, s.mean);  // exact: JSON numbers keep every bit of a double
  EXPECT_EQ(back.scale, s.scale);
  nlohmann::json bad = s.ToJson();
  bad["scale"][0] = 0.0;
  EXPECT_NE(ErrorOf([&] { FeatureScaling::FromJson(bad); }).find("scale > 0"), std::string::npos);
  // A configuration written before --normalize-features had a bool; true meant L1 rows.
  nlohmann::json old = PaperConfig().ToJson();
  old.erase("normalize_features");
  old["row_normalize"] = true;
  EXPECT_EQ(TrainConfig::FromJson(old).normalize_features, FeatureNorm::kL1);
  old["row_normalize"] = false;
  EXPECT_EQ(TrainConfig::FromJson(old).normalize_features, FeatureNorm::kNone);
  EXPECT_EQ(TrainConfig().normalize_features, FeatureNorm::kNone) << "the default scales nothing, as PyG";
}

// One config type for both modes: the echo of a one-process run names no distributed option, a partitioned run's
// adds them and "distributed"; reading either back restores every field.
TEST(GcnTrainer, ConfigJsonOfBothModesRoundTrips) {
  TrainConfig c = PaperConfig();
  c.fanouts = {5, 5};
  c.dist.skew.skew = 3.0;
  c.dist.feature_cache = 7;
  const nlohmann::json one = PaperConfig().ToJson(false);
  EXPECT_FALSE(one.contains("skew"));
  EXPECT_FALSE(one.contains("distributed"));
  const nlohmann::json parts = c.ToJson(true);
  EXPECT_EQ(parts.at("skew").get<double>(), 3.0);
  EXPECT_EQ(parts.at("feature_cache").get<int64_t>(), 7);
  EXPECT_TRUE(parts.at("distributed").get<bool>());
  const TrainConfig back = TrainConfig::FromJson(parts);
  EXPECT_EQ(back.ToJson(true), parts);
  EXPECT_EQ(TrainConfig::FromJson(one).ToJson(false), one);
}

// Standard scaling is fitted once on the training data and stored with the checkpoint: prediction on the same
// nodes gives the trainer's probabilities, and prediction on changed features still uses the stored statistics.
TEST(FeatureScaling, StandardScalingTravelsWithTheCheckpoint) {
  const fs::path dir = fs::path(testing::TempDir()) / "gcn_standard_ckpt";
  fs::remove_all(dir);
  TrainConfig c = PaperConfig();
  c.epochs = 3;
  c.normalize_features = FeatureNorm::kStandard;
  c.checkpoint_dir = dir;
  Context ctx;
  ctx.seed = 3;
  GcnTrainer trainer(Cora(), c, ctx);
  trainer.Train();
  std::ifstream in(dir / "checkpoint.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  const FeatureScaling stored = FeatureScaling::FromJson(j.at("config").at("feature_scaling"));
  const FeatureScaling fitted = FitFeatureScaling(Cora().features, FeatureNorm::kStandard);
  EXPECT_EQ(stored.scale, fitted.scale);
  EXPECT_EQ(trainer.PredictProbabilities().data.ToVector(), PredictFromCheckpoint(ctx, Cora(), dir).data.ToVector());
  TrainConfig loaded;
  PredictFromCheckpoint(ctx, Cora(), dir, &loaded);
  EXPECT_EQ(loaded.normalize_features, FeatureNorm::kStandard);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessel::train::gcn
