// The whole graph in one process as a GraphSource (trainer.h): full-graph steps over the normalised adjacency, or
// sampled mini-batches (sampling::SamplerFor: NeighborSampler, GpuNeighborSampler on a device); evaluation by
// full-graph inference. Also PredictFromCheckpoint.
#include <algorithm>
#include <array>
#include <chrono>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <utility>

#include "core/device.h"
#include "core/log.h"
#include "core/memory_budget.h"
#include "core/params_json.h"
#include "kernels/gather.h"
#include "kernels/loss.h"
#include "kernels/sparse.h"
#include "sampling/block_sampler.h"
#include "train/gcn/trainer.h"

namespace tessel::train::gcn {
namespace {

bool GraphSymmetric(const datasets::AnyGraph& g) {
  return std::visit([](const auto& x) { return x.IsSymmetric(); }, g);
}

// The aggregation matrix of full-graph layers and its transpose (empty when symmetric).
void BuildAdjacency(const Context& ctx, const datasets::AnyGraph& graph, ModelKind kind, SparseMatrix* adj,
                    SparseMatrix* adj_t) {
  *adj = kind == ModelKind::kGcn ? GcnNormalizedAdjacency(graph) : MeanAdjacency(graph);
  if (kind == ModelKind::kSage || !GraphSymmetric(graph)) *adj_t = kernels::Transpose(ctx, *adj);
}

class WholeGraphSource final : public GraphSource {
 public:
  WholeGraphSource(const datasets::NodeDataset& data, const TrainConfig& c, const Context& ctx)
      : data_(data),
        scaling_(FitFeatureScaling(data.features, c.normalize_features)),
        features_(PrepareFeatures(data.features, scaling_)),
        labels_(data.labels.ToVector()),
        label_buf_(Buffer<int32_t>::CopyOf(labels_)) {
    // The splits' nodes one after the other, for the evaluation's counts (uploaded once on a device).
    std::vector<int64_t> split_rows;
    for (const Buffer<int64_t>* split : {&data.train, &data.val, &data.test}) {
      const std::span<const int64_t> nodes = split->Host();
      split_rows.insert(split_rows.end(), nodes.begin(), nodes.end());
      split_ends_.push_back(static_cast<int64_t>(split_rows.size()));
    }
    split_rows_ = Buffer<int64_t>(std::move(split_rows));
    if (c.batch_size == 0) {
      // A full-graph step keeps every layer's output, pre-dropout copy and gradient for all nodes: refused by name
      // before training starts (a huge --layers would otherwise grow until the machine runs out of memory).
      const double count = static_cast<double>(data.num_nodes()) * static_cast<double>(c.model.layers) *
                           static_cast<double>(std::max(c.model.hidden, c.model.num_classes));
      memory::CheckArray(count >= 9e18 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(count),
                         3 * static_cast<int64_t>(sizeof(float)),
                         fmt::format("full-graph training's activations ({} nodes, --layers {}, --hidden {})",
                                     data.num_nodes(), c.model.layers, c.model.hidden),
                         "lower --layers or --hidden, or train in mini-batches with --batch-size N");
    }
    if (ctx.IsCuda()) PlaceFeatures(c);
    BuildAdjacency(ctx, data.graph, c.model.kind, &adj_, &adj_t_);
    const SparseMatrix* t = adj_t_.indptr.empty() ? &adj_ : &adj_t_;
    full_graphs_.assign(static_cast<size_t>(c.model.layers), LayerGraph{&adj_, t});
    if (c.batch_size > 0) {
      sampling::SamplerOptions options{
          c.fanouts, c.replace,
          c.model.kind == ModelKind::kGcn ? sampling::Aggregation::kGcn : sampling::Aggregation::kMean};
      // On a device the graph stays there and the blocks are sampled there (the same blocks as the CPU sampler's
      // for the same key): no block goes up per step. --no-device-sampling samples on the CPU.
      Context where = ctx;
      if (!c.device_sampling) where.device = Device::kCpu;
      sampler_ = sampling::SamplerFor(where).make(data.graph, std::move(options), ctx.device_id);
    }
  }

  std::vector<int64_t> TrainNodes() const override { return data_.train.ToVector(); }
  bool Samples() const override { return sampler_ != nullptr; }
  bool Partitioned() const override { return false; }

  void MakeBatch(const Context& ctx, std::span<const int64_t> seeds, const StreamKey& sample_key, Batch* b,
                 StepCounters* counters) override {
    b->x_row_ids = nullptr;
    if (!Samples()) {  // the whole graph: every layer over Â, the loss over the seeds' rows
      b->blocks.clear();
      b->graphs = full_graphs_;
      b->x = &features_;
      b->x_rows = {};
      b->labels = &label_buf_;
      if (rows_buf_.size() != seeds.size() || !std::equal(seeds.begin(), seeds.end(), rows_buf_.Host().begin())) {
        rows_buf_ = Buffer<int64_t>::CopyOf(seeds);  // the same every epoch: uploaded once on a device
      }
      b->rows = &rows_buf_;
      return;
    }
    auto t0 = std::chrono::steady_clock::now();
    // Dense rows on a device are gathered from the sampler's device ids alone: their host copy is not downloaded.
    const bool device_gather = sampler_->BlocksOnDevice() && ctx.IsCuda() && !features_.is_sparse;
    b->blocks = sampler_->Sample(seeds, sample_key, !device_gather);
    counters->sample_seconds += SecondsSince(t0);
    b->graphs.clear();
    for (const auto& blk : b->blocks) {
      counters->sampled_edges += blk.num_edges();
      b->graphs.push_back(LayerGraph{&blk.adj, nullptr});
    }
    // The input rows are the first block's source nodes. They are read from the whole feature matrix inside the
    // model's first layer (dense: gathered by its kernels with dropout fused; sparse on a device: GatherSparseRows
    // there, from the ids the GPU sampler left on the device, or uploaded once). Sparse rows on the CPU are
    // gathered here, where --overlap runs it beside the previous step's compute. Dense rows on a device: x_rows is
    // empty and the model reads x_row_ids alone.
    const auto& src = b->blocks.front().src_nodes;
    b->x = &features_;
    b->x_rows = src;
    if (sampler_->BlocksOnDevice()) {
      b->x_row_ids = &b->blocks.front().device_src;
    } else if (features_.is_sparse && !ctx.IsCuda()) {
      t0 = std::chrono::steady_clock::now();
      b->gathered.is_sparse = true;
      b->gathered.sparse = kernels::GatherSparseRows(ctx, features_.sparse, src);
      counters->fetch_seconds += SecondsSince(t0);
      b->x = &b->gathered;
      b->x_rows = {};
    }
    SetSeedLabels(
        seeds, [&](int64_t seed) { return labels_[static_cast<size_t>(seed)]; }, b);
  }

  const Matrix& Logits(const Context& ctx, GcnModel& model) override {
    return model.Forward(ctx, features_, full_graphs_, false, StreamKey{});
  }

  // Full-neighbour inference, then the splits' confusion counts reduced where the logits are (kernels::
  // ArgmaxConfusion): on a device a few hundred bytes come back instead of a prediction per node. The metrics are
  // Metrics' (Evaluate's) bit for bit.
  void EvaluateSplits(const Context& ctx, GcnModel& model, int /*epoch*/, bool /*final*/, ClassMetrics* train,
                      ClassMetrics* val, ClassMetrics* test, StepCounters* /*counters*/) override {
    const Matrix& logits = Logits(ctx, model);
    const std::vector<int64_t> counts = kernels::ArgmaxConfusion(ctx, logits, label_buf_, split_rows_, split_ends_);
    const auto per_split = counts.size() / split_ends_.size();
    const std::array<ClassMetrics*, 3> out{train, val, test};
    const std::array<const char*, 3> names{"train", "val", "test"};
    for (size_t s = 0; s < out.size(); ++s) {
      const int64_t count = split_ends_[s] - (s == 0 ? 0 : split_ends_[s - 1]);
      *out[s] = MetricsFromConfusion(std::span<const int64_t>(counts).subspan(s * per_split, per_split),
                                     data_.num_classes, count, names[s]);
    }
  }

  void Metrics(std::span<const int32_t> pred, ClassMetrics* train, ClassMetrics* val, ClassMetrics* test) override {
    *train = Evaluate(pred, labels_, data_.train.Host(), data_.num_classes);
    *val = Evaluate(pred, labels_, data_.val.Host(), data_.num_classes);
    *test = Evaluate(pred, labels_, data_.test.Host(), data_.num_classes);
  }

  const FeatureScaling& scaling() const override { return scaling_; }

 private:
  // --features-on (on a device; the trainer has set it): host, or auto for a sampled run whose features would take
  // more than half of the device's free memory, keeps them in mapped host memory, read in place by the first
  // layer's gathers; otherwise they go up on first use, as every other array.
  void PlaceFeatures(const TrainConfig& c) {
    const int64_t bytes = FeatureBytes(features_);
    bool host = c.features_on == FeaturePlacement::kHost;
    if (c.features_on == FeaturePlacement::kAuto && c.batch_size > 0) {
      const device::MemoryInfo mem = device::ReadMemoryInfo();
      host = bytes > mem.free_bytes / 2;
      if (host) {
        log::Info(
            "features: {:.1f} MB would take more than half of the device's {:.1f} MB free; they stay in mapped "
            "host memory and each step's rows are read in place (--features-on device to override)",
            static_cast<double>(bytes) / 1e6, static_cast<double>(mem.free_bytes) / 1e6);
      }
    }
    if (host) MapFeaturesToHost(&features_);
  }

  const datasets::NodeDataset& data_;
  FeatureScaling scaling_;
  FeatureMatrix features_;
  std::vector<int32_t> labels_;
  Buffer<int32_t> label_buf_;        // labels_ as the loss takes them (resident on a device)
  Buffer<int64_t> rows_buf_;         // a whole-graph step's loss rows (the training nodes)
  Buffer<int64_t> split_rows_;       // the train, val and test nodes, in that order (the evaluation's rows)
  std::vector<int64_t> split_ends_;  // where each of the three ends in split_rows_
  SparseMatrix adj_;
  SparseMatrix adj_t_;  // empty when adj_ is symmetric
  std::vector<LayerGraph> full_graphs_;
  std::unique_ptr<sampling::BlockSampler> sampler_;  // mini-batch steps (the CPU's, or the device's)
};

}  // namespace

std::unique_ptr<GraphSource> MakeWholeGraphSource(const datasets::NodeDataset& data, const TrainConfig& c,
                                                  const Context& ctx) {
  return std::make_unique<WholeGraphSource>(data, c, ctx);
}

Matrix PredictFromCheckpoint(const Context& ctx, const datasets::NodeDataset& data, const std::filesystem::path& dir,
                             TrainConfig* config) {
  ctx.MakeCurrent();  // this thread's device, as a trainer's rank sets it
  TrainState s = LoadCheckpoint(dir);
  const TrainConfig c = CheckedCheckpointConfig(dir, s);  // its configuration and tensors, checked together
  TESSEL_CHECK(!data.features.empty(), "{}: the dataset has no node features", data.name);
  TESSEL_CHECK(data.features.dim == c.model.in_dim,
               "the dataset has {} feature columns but the checkpoint in {} "
               "was trained on {}",
               data.features.dim, dir.string(), c.model.in_dim);
  GcnModel model(c.model, 0);
  auto& params = model.params();
  std::vector<Matrix>& weights = s.best_params.empty() ? s.params : s.best_params;
  TESSEL_CHECK(weights.size() == params.size(), "{}: checkpoint has {} tensors, the model {}", dir.string(),
               weights.size(), params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    TESSEL_CHECK(weights[i].rows == params[i].value.rows && weights[i].cols == params[i].value.cols,
                 "{}: tensor {} has the wrong shape", dir.string(), params[i].name);
    params[i].value = std::move(weights[i]);
  }
  // The training data's scaling, saved with the checkpoint (LoadCheckpoint refuses one that needs it and lacks it,
  // CheckedCheckpointConfig one that is not its configuration's); a version 1 checkpoint of none or l1 scaling has
  // none, and those need no fitted statistics.
  const FeatureScaling scaling = s.config.contains("feature_scaling")
                                     ? FeatureScaling::FromJson(s.config.at("feature_scaling"))
                                     : FitFeatureScaling(data.features, c.normalize_features);
  FeatureMatrix f = PrepareFeatures(data.features, scaling);
  SparseMatrix adj;
  SparseMatrix adj_t;
  BuildAdjacency(ctx, data.graph, c.model.kind, &adj, &adj_t);
  std::vector<LayerGraph> graphs(static_cast<size_t>(c.model.layers), LayerGraph{&adj, &adj});
  const Matrix& logits = model.Forward(ctx, f, graphs, false, StreamKey{});
  Matrix probs;
  kernels::RowSoftmax(ctx, logits, &probs);
  if (config != nullptr) *config = c;
  return probs;
}

}  // namespace tessel::train::gcn
