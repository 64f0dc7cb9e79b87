// GcnTrainer: the epoch loop (full-batch or sampled mini-batch), evaluation by full-graph inference, early
// stopping with best-weight selection, checkpoints and resume. Streams: (seed, rank, epoch, batch, purpose).
#include "train/gcn/trainer.h"

#include <algorithm>
#include <chrono>
#include <ctime>

#include "core/params_json.h"
#include "kernels/gather.h"
#include "kernels/loss.h"
#include "kernels/sparse.h"
#include "sampling/neighbor_sampler.h"

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

}  // namespace

void TrainConfig::Validate() const {
  TESSEL_CHECK(epochs >= 1, "--epochs must be >= 1, got {}", epochs);
  TESSEL_CHECK(batch_size >= 0, "--batch-size must be >= 0 (0 = full graph), got {}", batch_size);
  TESSEL_CHECK(patience >= 0, "--patience must be >= 0 (0 = off), got {}", patience);
  TESSEL_CHECK(checkpoint_every >= 1, "--checkpoint-every must be >= 1, got {}", checkpoint_every);
  TESSEL_CHECK(!resume || !checkpoint_dir.empty(), "--resume needs --checkpoint DIR");
  if (batch_size > 0) {
    TESSEL_CHECK(static_cast<int>(fanouts.size()) == model.layers,
                 "--fanouts gives {} fanouts but the model has {} layers (give one per layer, input layer first, "
                 "for example --fanouts 10,25 for 2 layers)",
                 fanouts.size(), model.layers);
    sampling::SamplerOptions{fanouts, replace, sampling::Aggregation::kGcn}.Validate();
  }
  adam.Validate();
}

nlohmann::json TrainConfig::ToJson() const { return ParamsToJson(*this); }

TrainConfig TrainConfig::FromJson(const nlohmann::json& j) {
  TrainConfig c;
  ParamsFromJson(j, &c);
  if (!j.contains("normalize_features") && j.contains("row_normalize")) {
    // Written before --normalize-features: a bool, true meaning L1 rows.
    c.normalize_features = j.at("row_normalize").get<bool>() ? FeatureNorm::kL1 : FeatureNorm::kNone;
  }
  return c;
}

// JSON keys are the field names (nlohmann's macro: one list, no hand-written serialiser to fall out of step).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EpochStats, epoch, loss, train_acc, val_acc, train_seconds, eval_seconds,
                                   sample_seconds, cpu_seconds, seed_nodes, sampled_edges, eta_seconds)

nlohmann::json EpochStats::ToJson() const { return *this; }

nlohmann::json TrainResult::ToJson() const {
  return {{"best_epoch", best_epoch},    {"stopped_early", stopped_early},
          {"epochs_run", epochs.size()}, {"train", train.ToJson()},
          {"val", val.ToJson()},         {"test", test.ToJson()}};
}

struct GcnTrainer::SamplerHolder {
  sampling::NeighborSampler sampler;
};

GcnTrainer::GcnTrainer(const datasets::NodeDataset& data, TrainConfig config, Context ctx)
    : data_(data),
      config_([&] {
        CheckTrainable(data, data.name.empty() ? "dataset" : data.name);
        config.model.in_dim = data.features.dim;
        config.model.num_classes = data.num_classes;
        config.Validate();
        return config;
      }()),
      ctx_(ctx),
      scaling_(FitFeatureScaling(data.features, config_.normalize_features)),
      features_(PrepareFeatures(data.features, scaling_)),
      model_(config_.model, ctx.seed),
      adam_(config_.adam),
      labels_(data.labels.ToVector()) {
  BuildAdjacency(ctx_, data.graph, config_.model.kind, &adj_, &adj_t_);
  const SparseMatrix* t = adj_t_.indptr.empty() ? &adj_ : &adj_t_;
  full_graphs_.assign(static_cast<size_t>(config_.model.layers), LayerGraph{&adj_, t});
  if (config_.decay_all_layers) {
    for (Param& p : model_.params()) p.decay = true;
  }
  if (config_.batch_size > 0) {
    sampler_ = std::make_unique<SamplerHolder>(SamplerHolder{sampling::NeighborSampler(
        data.graph, sampling::SamplerOptions{config_.fanouts, config_.replace,
                                             config_.model.kind == ModelKind::kGcn ? sampling::Aggregation::kGcn
                                                                                   : sampling::Aggregation::kMean})});
  }
  start_epoch_ = ResumeIfAsked(config_, CheckpointConfig(config_.ToJson(), scaling_), &best_, &model_, &adam_);
}

GcnTrainer::~GcnTrainer() = default;

double GcnTrainer::TrainFullBatch(int epoch, EpochStats* stats) {
  const Matrix& logits =
      model_.Forward(ctx_, InputOf(features_), full_graphs_, true, TrainKey(ctx_, epoch, 0, kPurposeDropout));
  Matrix grad;
  const double loss = kernels::SoftmaxCrossEntropy(ctx_, logits, labels_, data_.train.Host(), &grad);
  model_.Backward(ctx_, grad);
  adam_.Step(ctx_, model_.params());
  stats->seed_nodes = static_cast<int64_t>(data_.train.size());
  return loss;
}

double GcnTrainer::TrainMiniBatch(int epoch, EpochStats* stats) {
  std::vector<int64_t> order = data_.train.ToVector();
  ShuffleSeeds(ctx_, epoch, order);
  const auto n = static_cast<int64_t>(order.size());
  double loss_sum = 0;
  for (int64_t b = 0, begin = 0; begin < n; ++b, begin += config_.batch_size) {
    const int64_t end = std::min(n, begin + config_.batch_size);
    std::span<const int64_t> seeds(order.data() + begin, static_cast<size_t>(end - begin));
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<sampling::Block> blocks = sampler_->sampler.Sample(seeds, TrainKey(ctx_, epoch, b, kPurposeSample));
    stats->sample_seconds += SecondsSince(t0);
    for (const auto& blk : blocks) stats->sampled_edges += blk.num_edges();
    // Input rows of the first block's source nodes.
    const auto& src = blocks.front().src_nodes;
    FeatureMatrix x;
    x.is_sparse = features_.is_sparse;
    if (x.is_sparse) {
      x.sparse = kernels::GatherSparseRows(ctx_, features_.sparse, src);
    } else {
      kernels::GatherRows(ctx_, features_.dense, Buffer<int64_t>::CopyOf(src), &x.dense);
    }
    std::vector<int32_t> labels(seeds.size());
    for (size_t i = 0; i < seeds.size(); ++i) labels[i] = labels_[static_cast<size_t>(seeds[i])];
    const double loss =
        BlocksForwardBackward(ctx_, model_, x, blocks, labels, TrainKey(ctx_, epoch, b, kPurposeDropout));
    adam_.Step(ctx_, model_.params());
    loss_sum += loss * static_cast<double>(seeds.size());
  }
  stats->seed_nodes = n;
  return n > 0 ? loss_sum / static_cast<double>(n) : 0.0;
}

Matrix GcnTrainer::PredictProbabilities() {
  const Matrix& logits = model_.Forward(ctx_, InputOf(features_), full_graphs_, false, StreamKey{});
  Matrix probs;
  kernels::RowSoftmax(ctx_, logits, &probs);
  return probs;
}

void GcnTrainer::SaveState(int epochs_done) const {
  SaveCheckpoint(config_.checkpoint_dir,
                 CaptureState(CheckpointConfig(config_.ToJson(), scaling_), epochs_done, best_, model_, adam_));
}

TrainResult GcnTrainer::Train(const std::function<void(const EpochStats&)>& on_epoch) {
  TrainResult result;
  std::vector<int32_t> pred(labels_.size());
  double time_sum = 0;
  auto evaluate = [&] {
    const Matrix& logits = model_.Forward(ctx_, InputOf(features_), full_graphs_, false, StreamKey{});
    kernels::RowArgmax(ctx_, logits, pred);
  };
  const int32_t classes = data_.num_classes;
  for (int epoch = start_epoch_ + 1; epoch <= config_.epochs; ++epoch) {
    EpochStats st;
    st.epoch = epoch;
    const std::clock_t c0 = std::clock();
    auto t0 = std::chrono::steady_clock::now();
    st.loss = config_.batch_size > 0 ? TrainMiniBatch(epoch, &st) : TrainFullBatch(epoch, &st);
    CheckLoss(epoch, st.loss);
    st.train_seconds = SecondsSince(t0);
    t0 = std::chrono::steady_clock::now();
    evaluate();
    st.train_acc = Evaluate(pred, labels_, data_.train.Host(), classes).accuracy;
    st.val_acc = Evaluate(pred, labels_, data_.val.Host(), classes).accuracy;
    st.eval_seconds = SecondsSince(t0);
    st.cpu_seconds = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    const bool stop = best_.Update(epoch, st.val_acc, model_.params(), config_.patience);
    time_sum += st.train_seconds + st.eval_seconds;
    const int done = epoch - start_epoch_;
    st.eta_seconds = stop ? 0.0 : time_sum / done * (config_.epochs - epoch);
    result.epochs.push_back(st);
    if (on_epoch) on_epoch(st);
    if (CheckpointDue(config_, epoch, stop)) SaveState(epoch);
    if (stop) {
      result.stopped_early = true;
      break;
    }
  }
  // Evaluate the best-validation weights.
  best_.Restore(model_.params());
  evaluate();
  result.best_epoch = best_.epoch;
  result.train = Evaluate(pred, labels_, data_.train.Host(), classes);
  result.val = Evaluate(pred, labels_, data_.val.Host(), classes);
  result.test = Evaluate(pred, labels_, data_.test.Host(), classes);
  return result;
}

Matrix PredictFromCheckpoint(const Context& ctx, const datasets::NodeDataset& data, const std::filesystem::path& dir,
                             TrainConfig* config) {
  TrainState s = LoadCheckpoint(dir);
  TrainConfig c = TrainConfig::FromJson(s.config);
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
  // Standard scaling uses the training data's column statistics (saved with the checkpoint); none and l1 need none.
  const FeatureScaling scaling = s.config.contains("feature_scaling")
                                     ? FeatureScaling::FromJson(s.config.at("feature_scaling"))
                                     : FitFeatureScaling(data.features, c.normalize_features);
  TESSEL_CHECK(scaling.norm == c.normalize_features,
               "{}: the checkpoint's feature scaling ({}) is not its "
               "configuration's ({}); the checkpoint is damaged",
               dir.string(), FeatureNormName(scaling.norm), FeatureNormName(c.normalize_features));
  FeatureMatrix f = PrepareFeatures(data.features, scaling);
  SparseMatrix adj;
  SparseMatrix adj_t;
  BuildAdjacency(ctx, data.graph, c.model.kind, &adj, &adj_t);
  std::vector<LayerGraph> graphs(static_cast<size_t>(c.model.layers), LayerGraph{&adj, &adj});
  const Matrix& logits = model.Forward(ctx, InputOf(f), graphs, false, StreamKey{});
  Matrix probs;
  kernels::RowSoftmax(ctx, logits, &probs);
  if (config != nullptr) *config = c;
  return probs;
}

}  // namespace tessel::train::gcn
