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
#include "datasets/readers.h"
#include "tests/train/gcn_test_util.h"
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
