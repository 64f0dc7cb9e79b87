// DistGcnTrainer: the per-rank epoch loop of distributed GCN training (sample, fetch, compute, gradient allreduce,
// Adam), distributed layer-wise full-neighbour evaluation, early stopping, rank-0 checkpoints. docs/distributed.md.
#include "train/gcn/dist_trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "core/log.h"
#include "kernels/dense.h"
#include "kernels/loss.h"
#include "kernels/sparse.h"
#include "sampling/dist_sampler.h"
#include "train/gcn/checkpoint.h"
#include "train/gcn/dist_features.h"

namespace tessel::train::gcn {
namespace {

// The same stream purposes as the single-process trainer, so one rank with full fanouts draws what it draws.
constexpr uint64_t kPurposeDropout = 0x100;  // + layer
constexpr uint64_t kPurposeShuffle = 0x200;
constexpr uint64_t kPurposeSample = 0x300;  // + layer
constexpr std::string_view kStatsPurpose = "stats";
constexpr std::string_view kSetupPurpose = "setup";

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

InputFeatures Input(const FeatureMatrix& f) {
  return f.is_sparse ? InputFeatures{nullptr, &f.sparse} : InputFeatures{&f.dense, nullptr};
}

// Bytes this rank has sent so far, all purposes.
uint64_t SentBytes(const comm::Communicator& comm) { return comm.Bytes().Total(); }

// Per-class confusion counts of one split, laid out for one allreduce: [count, correct, tp[C], fp[C], fn[C]].
void CountSplit(std::span<const int32_t> pred, std::span<const int32_t> labels, std::span<const int64_t> nodes,
                int32_t classes, std::span<int64_t> out) {
  const auto c = static_cast<size_t>(classes);
  for (int64_t u : nodes) {
    const int32_t y = labels[static_cast<size_t>(u)];
    const int32_t p = pred[static_cast<size_t>(u)];
    TESSEL_CHECK(y >= 0 && y < classes, "node {} has label {} outside [0, {})", u, y, classes);
    ++out[0];
    if (p == y) {
      ++out[1];
      ++out[2 + static_cast<size_t>(y)];
    } else {
      ++out[2 + 2 * c + static_cast<size_t>(y)];
      if (p >= 0 && p < classes) ++out[2 + c + static_cast<size_t>(p)];
    }
  }
}

// ClassMetrics from summed counts, with metrics.cc's definitions (F1 = 2TP / (2TP + FP + FN), macro average).
ClassMetrics MetricsFromCounts(std::span<const int64_t> in, int32_t classes) {
  const auto c = static_cast<size_t>(classes);
  ClassMetrics m;
  m.count = in[0];
  m.accuracy = m.count > 0 ? static_cast<double>(in[1]) / static_cast<double>(m.count) : 0.0;
  m.f1.resize(c);
  double sum = 0;
  for (size_t k = 0; k < c; ++k) {
    const int64_t tp = in[2 + k];
    const int64_t denom = 2 * tp + in[2 + c + k] + in[2 + 2 * c + k];
    m.f1[k] = denom > 0 ? 2.0 * static_cast<double>(tp) / static_cast<double>(denom) : 0.0;
    sum += m.f1[k];
  }
  m.macro_f1 = sum / static_cast<double>(c);
  return m;
}

std::vector<float> Flatten(const std::vector<Param>& params) {
  std::vector<float> out;
  for (const Param& p : params) out.insert(out.end(), p.value.View().begin(), p.value.View().end());
  return out;
}

}  // namespace

void DistTrainConfig::Validate() const {
  TESSEL_CHECK(static_cast<int>(train.fanouts.size()) == train.model.layers,
               "--fanouts gives {} fanouts but the model has {} layers (distributed training always samples: give "
               "one fanout per layer, input layer first, e.g. --fanouts 10,10; -1 = all neighbours)",
               train.fanouts.size(), train.model.layers);
  TESSEL_CHECK(feature_cache >= -1, "--feature-cache must be -1 (the whole halo), 0 (none) or a row count, got {}",
               feature_cache);
  skew.Validate();
  TrainConfig t = train;
  if (t.batch_size == 0) t.batch_size = 1;  // 0 means "all of this rank's seeds" here; fanouts still checked
  t.Validate();
}

nlohmann::json DistTrainConfig::ToJson() const {
  nlohmann::json j = train.ToJson();
  j["skew"] = skew.skew;
  j["skew_variance"] = skew.variance_budget;
  j["skew_max"] = skew.max_skew;
  j["feature_cache"] = feature_cache;
  j["distributed"] = true;
  return j;
}

nlohmann::json DistEpochStats::ToJson() const {
  return {{"epoch", epoch},
          {"steps", steps},
          {"loss", loss},
          {"train_acc", train_acc},
          {"val_acc", val_acc},
          {"sample_seconds", sample_seconds},
          {"fetch_seconds", fetch_seconds},
          {"compute_seconds", compute_seconds},
          {"allreduce_seconds", allreduce_seconds},
          {"eval_seconds", eval_seconds},
          {"epoch_seconds", epoch_seconds},
          {"feature_bytes", feature_bytes},
          {"sample_bytes", sample_bytes},
          {"gradient_bytes", gradient_bytes},
          {"eval_bytes", eval_bytes},
          {"total_bytes", total_bytes},
          {"seed_nodes", seed_nodes},
          {"sampled_edges", sampled_edges},
          {"remote_input_nodes", remote_input_nodes},
          {"remote_share", remote_share}};
}

nlohmann::json DistTrainResult::ToJson() const {
  nlohmann::json totals = nlohmann::json::object();  // every *_bytes and *_seconds field summed over the epochs
  double share = 0;
  for (const DistEpochStats& e : epochs) {
    share += e.remote_share;
    const nlohmann::json j = e.ToJson();
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& key = it.key();
      const nlohmann::json& value = it.value();
      if (key.ends_with("_bytes")) totals[key] = totals.value(key, uint64_t{0}) + value.get<uint64_t>();
      if (key.ends_with("_seconds")) totals[key] = totals.value(key, 0.0) + value.get<double>();
    }
  }
  const double n = epochs.empty() ? 1.0 : static_cast<double>(epochs.size());
  return {{"best_epoch", best_epoch},
          {"stopped_early", stopped_early},
          {"epochs_run", epochs.size()},
          {"train", train.ToJson()},
          {"val", val.ToJson()},
          {"test", test.ToJson()},
          {"setup_bytes", setup_bytes},
          {"feature_bytes_per_epoch", totals.value("feature_bytes", 0.0) / n},
          {"remote_share", share / n},
          {"mean_epoch_seconds", totals.value("epoch_seconds", 0.0) / n},
          {"totals", totals}};
}

void AverageGradients(comm::Communicator& comm, std::vector<Param>& params, int64_t local_count, int64_t total_count) {
  TESSEL_CHECK(local_count >= 0 && total_count >= local_count && total_count > 0,
               "AverageGradients: local count {} and total {} (need 0 <= local <= total, total > 0)", local_count,
               total_count);
  size_t size = 0;
  for (const Param& p : params) size += static_cast<size_t>(p.value.size());
  std::vector<float> buf(size, 0.0F);
  if (local_count > 0) {
    const auto w = static_cast<float>(static_cast<double>(local_count) / static_cast<double>(total_count));
    size_t k = 0;
    for (const Param& p : params) {
      TESSEL_CHECK(p.grad.size() == p.value.size(), "AverageGradients: {} has no gradient of its shape", p.name);
      for (float g : p.grad.View()) buf[k++] = local_count == total_count ? g : g * w;
    }
  }
  comm.Allreduce<float>(buf, comm::ReduceOp::kSum, "gradients").ThrowIfError();
  size_t k = 0;
  for (Param& p : params) {
    p.grad.Resize(p.value.rows, p.value.cols);
    for (float& g : p.grad.Mut()) g = buf[k++];
  }
}

// Everything built per rank at construction.
struct DistGcnTrainer::Impl {
  sampling::DistNeighborSampler sampler;
  DistFeatureStore features;
  HaloExchanger halo;
  SparseMatrix eval_adj;              // [num_owned x num_local]: Â (GCN) or mean (SAGE) rows of the owned nodes
  std::vector<int32_t> labels;        // per owned node (-1 where unlabelled)
  std::vector<int64_t> train_counts;  // training nodes per rank
  int64_t steps = 0;                  // steps per epoch (max over ranks)
  // Per-epoch accumulators of this rank.
  double sample_s = 0, fetch_s = 0, compute_s = 0, allreduce_s = 0;
  uint64_t sample_b = 0, fetch_b = 0, grad_b = 0;
  int64_t seeds = 0, edges = 0, remote_picks = 0, remote_inputs = 0;
  void ResetEpoch() {
    sample_s = fetch_s = compute_s = allreduce_s = 0;
    sample_b = fetch_b = grad_b = 0;
    seeds = edges = remote_picks = remote_inputs = 0;
  }
};

namespace {

// Â or mean-aggregation rows of the owned nodes over local ids, with the halo degrees from their owners (one
// HaloExchanger round). Entry order and weights follow data.cc's Normalized: self term first for GCN.
SparseMatrix EvalAdjacency(const partition::LocalPart& part, const HaloExchanger& halo, bool gcn) {
  const int64_t n = part.num_owned;
  const auto p = part.graph.indptr().Host();
  const auto idx = part.graph.indices().Host();
  Matrix own_deg(n, 1);
  auto od = own_deg.Mut();
  for (int64_t u = 0; u < n; ++u) {
    int64_t d = 0;
    for (int64_t e = p[u]; e < p[u + 1]; ++e) d += idx[e] != u ? 1 : 0;
    od[u] = static_cast<float>(d);
  }
  const Matrix deg_all = halo.Exchange(own_deg);  // [num_local x 1]; degrees < 2^24 are exact in float
  const auto dv = deg_all.View();
  auto deg = [&](int64_t v) { return static_cast<double>(dv[static_cast<size_t>(v)]) + (gcn ? 1.0 : 0.0); };
  std::vector<int64_t> out_p(static_cast<size_t>(n + 1), 0);
  for (int64_t u = 0; u < n; ++u) out_p[u + 1] = out_p[u] + static_cast<int64_t>(od[u]) + (gcn ? 1 : 0);
  std::vector<int32_t> out_i(static_cast<size_t>(out_p.back()));
  std::vector<float> out_v(out_i.size());
  for (int64_t u = 0; u < n; ++u) {
    int64_t k = out_p[u];
    if (gcn) {
      out_i[k] = static_cast<int32_t>(u);
      out_v[k++] = static_cast<float>(1.0 / deg(u));
    }
    for (int64_t e = p[u]; e < p[u + 1]; ++e) {
      const int64_t v = idx[e];
      if (v == u) continue;
      out_i[k] = static_cast<int32_t>(v);
      out_v[k++] = static_cast<float>(gcn ? 1.0 / std::sqrt(deg(u) * deg(v)) : 1.0 / deg(u));
    }
  }
  return SparseMatrix{n, part.num_local(), Buffer<int64_t>(std::move(out_p)), Buffer<int32_t>(std::move(out_i)),
                      Buffer<float>(std::move(out_v))};
}

}  // namespace

DistGcnTrainer::DistGcnTrainer(const partition::LocalPart& part, std::vector<int64_t> offsets, comm::Communicator& comm,
                               DistTrainConfig config, Context ctx)
    : part_(part),
      offsets_(std::move(offsets)),
      comm_(comm),
      config_([&] {
        TESSEL_CHECK(part.part == comm.Rank() && part.num_parts == comm.Size(),
                     "rank {} of {} was given part {} of {}: run one rank per part (mpirun -np {})", comm.Rank(),
                     comm.Size(), part.part, part.num_parts, part.num_parts);
        TESSEL_CHECK(static_cast<int32_t>(offsets_.size()) == part.num_parts + 1 &&
                         offsets_[static_cast<size_t>(part.part)] == part.global_offset,
                     "node ranges disagree with part {} (partitions.json \"node_ranges\" and the part's offset)",
                     part.part);
        TESSEL_CHECK(!part.features.empty(), "part {}: the dataset has no node features", part.part);
        TESSEL_CHECK(part.labels.size() == static_cast<size_t>(part.num_owned) && part.num_classes > 1,
                     "part {}: the dataset has no labels (or fewer than 2 classes); a GCN needs labelled nodes",
                     part.part);
        config.train.model.in_dim = part.features.dim;
        config.train.model.num_classes = part.num_classes;
        config.Validate();
        return config;
      }()),
      ctx_([&] {
        ctx.rank = comm.Rank();
        ctx.world_size = comm.Size();
        return ctx;
      }()),
      model_(config_.train.model, ctx_.seed),
      adam_(config_.train.adam) {
  const uint64_t setup0 = SentBytes(comm_);
  const bool gcn = config_.train.model.kind == ModelKind::kGcn;
  sampling::SamplerOptions so{config_.train.fanouts, config_.train.replace,
                              gcn ? sampling::Aggregation::kGcn : sampling::Aggregation::kMean};
  // Built in place (no moves): the sampler keeps views into its own arrays.
  impl_.reset(new Impl{sampling::DistNeighborSampler(part_, offsets_, comm_, so, config_.skew),
                       DistFeatureStore(ctx_, part_, offsets_, comm_, config_.train.row_normalize,
                                        FeatureCacheOptions{config_.feature_cache}),
                       HaloExchanger(part_, comm_),
                       SparseMatrix{},
                       part_.labels.ToVector(),
                       {},
                       0});
  impl_->eval_adj = EvalAdjacency(part_, impl_->halo, gcn);
  // Training nodes per rank (every rank derives the union batch size of every step from these) and steps.
  const auto n_train = static_cast<int64_t>(part_.train.size());
  impl_->train_counts.assign(static_cast<size_t>(comm_.Size()), 0);
  comm_.Allgather<int64_t>(std::span<const int64_t>(&n_train, 1), impl_->train_counts, kSetupPurpose).ThrowIfError();
  int64_t total = 0;
  int64_t most = 0;
  for (int64_t c : impl_->train_counts) {
    total += c;
    most = std::max(most, c);
  }
  TESSEL_CHECK(total > 0, "no rank has training nodes: the partition's dataset has an empty training split");
  const int64_t bs = config_.train.batch_size;
  impl_->steps = bs > 0 ? (most + bs - 1) / bs : 1;
  if (config_.train.decay_all_layers) {
    for (Param& p : model_.params()) p.decay = true;
  }
  // Identical initial weights: the same seed gives them already; rank 0's are broadcast anyway.
  std::vector<float> w = Flatten(model_.params());
  comm_.Broadcast<float>(w, 0, kSetupPurpose).ThrowIfError();
  size_t k = 0;
  for (Param& p : model_.params()) {
    for (float& v : p.value.Mut()) v = w[k++];
  }
  if (config_.train.resume && std::filesystem::exists(config_.train.checkpoint_dir / "checkpoint.json")) {
    TrainState s = LoadCheckpoint(config_.train.checkpoint_dir);
    nlohmann::json want = config_.ToJson();
    nlohmann::json have = s.config;
    for (const char* key : {"epochs", "patience"}) {
      want.erase(key);
      have.erase(key);
    }
    TESSEL_CHECK(want == have,
                 "--resume: the checkpoint in {} was trained with different settings ({}); use the same options or "
                 "a new --checkpoint folder",
                 config_.train.checkpoint_dir.string(), have.dump());
    auto& params = model_.params();
    TESSEL_CHECK(s.params.size() == params.size(), "--resume: checkpoint has {} tensors, the model {}", s.params.size(),
                 params.size());
    for (size_t i = 0; i < params.size(); ++i) params[i].value = std::move(s.params[i]);
    adam_.Restore(s.adam_steps, std::move(s.moments));
    best_params_ = std::move(s.best_params);
    best_epoch_ = s.best_epoch;
    best_val_acc_ = s.best_val_acc;
    epochs_since_best_ = s.epochs_since_best;
    start_epoch_ = s.epochs_done;
    log::Info("resuming from {} after epoch {}", config_.train.checkpoint_dir.string(), start_epoch_);
  }
  setup_bytes_ = SentBytes(comm_) - setup0;
}

DistGcnTrainer::~DistGcnTrainer() = default;

double DistGcnTrainer::Step(std::span<const int64_t> seeds, int64_t total_seeds, int epoch, int64_t batch,
                            bool update) {
  Impl& m = *impl_;
  const StreamKey key{.seed = ctx_.seed,
                      .rank = static_cast<uint64_t>(ctx_.rank),
                      .epoch = static_cast<uint64_t>(epoch),
                      .batch = static_cast<uint64_t>(batch),
                      .purpose = 0};
  auto t0 = Clock::now();
  uint64_t b0 = SentBytes(comm_);
  StreamKey sample_key = key;
  sample_key.purpose = kPurposeSample;
  std::vector<sampling::Block> blocks = m.sampler.Sample(seeds, sample_key);
  m.sample_s += Seconds(t0);
  const sampling::SampleStats& ss = m.sampler.last_stats();
  m.edges += ss.sampled_edges;
  m.remote_picks += ss.remote_picks;
  m.remote_inputs += ss.remote_input_nodes;
  m.seeds += static_cast<int64_t>(seeds.size());
  uint64_t b1 = SentBytes(comm_);
  m.sample_b += b1 - b0;

  t0 = Clock::now();
  const std::span<const int64_t> inputs =
      blocks.empty() ? std::span<const int64_t>() : std::span<const int64_t>(blocks.front().src_nodes);
  FeatureMatrix x = m.features.Fetch(inputs, nullptr);
  m.fetch_s += Seconds(t0);
  b0 = SentBytes(comm_);
  m.fetch_b += b0 - b1;

  t0 = Clock::now();
  double loss_sum = 0;
  if (!seeds.empty()) {
    std::vector<LayerGraph> graphs;
    for (const auto& blk : blocks) graphs.push_back(LayerGraph{&blk.adj, nullptr});
    std::vector<int32_t> labels(seeds.size());
    std::vector<int64_t> rows(seeds.size());
    for (size_t i = 0; i < seeds.size(); ++i) {
      const int64_t local = seeds[i] - part_.global_offset;
      TESSEL_CHECK(local >= 0 && local < part_.num_owned, "seed {} is not owned by rank {}", seeds[i], ctx_.rank);
      labels[i] = m.labels[static_cast<size_t>(local)];
      rows[i] = static_cast<int64_t>(i);
    }
    StreamKey drop_key = key;
    drop_key.purpose = kPurposeDropout;
    const Matrix& logits = model_.Forward(ctx_, Input(x), graphs, true, drop_key);
    Matrix grad;
    loss_sum = kernels::SoftmaxCrossEntropy(ctx_, logits, labels, rows, &grad) * static_cast<double>(seeds.size());
    model_.Backward(ctx_, grad);
  }
  m.compute_s += Seconds(t0);

  t0 = Clock::now();
  b0 = SentBytes(comm_);
  AverageGradients(comm_, model_.params(), static_cast<int64_t>(seeds.size()), total_seeds);
  m.allreduce_s += Seconds(t0);
  m.grad_b += SentBytes(comm_) - b0;

  if (update) {
    t0 = Clock::now();
    adam_.Step(ctx_, model_.params());
    m.compute_s += Seconds(t0);
  }
  return loss_sum;
}

std::vector<int32_t> DistGcnTrainer::PredictOwned() {
  Impl& m = *impl_;
  const ModelConfig& mc = config_.train.model;
  const bool sage = mc.kind == ModelKind::kSage;
  const auto& params = model_.params();
  const size_t per_layer = 1 + (sage ? 1 : 0) + (mc.bias ? 1 : 0);
  const FeatureMatrix& x = m.features.owned();
  Matrix h;  // owned rows of the previous layer's output
  for (int l = 0; l < mc.layers; ++l) {
    const size_t first = static_cast<size_t>(l) * per_layer;
    const Matrix& w = params[first].value;
    const bool sparse_in = l == 0 && x.is_sparse;
    const Matrix& in = l == 0 && !x.is_sparse ? x.dense : h;
    Matrix t;  // [num_owned x out]: transform first, then aggregate (model.cc's order)
    if (sparse_in) {
      kernels::SpMM(ctx_, x.sparse, w, &t);
    } else {
      kernels::Gemm(ctx_, in, false, w, false, 1.0F, 0.0F, &t);
    }
    const Matrix t_all = m.halo.Exchange(t);  // [num_local x out]
    Matrix z;
    kernels::SpMM(ctx_, m.eval_adj, t_all, &z);
    if (sage) {
      const Matrix& w_self = params[first + 1].value;
      if (sparse_in) {
        Matrix self;
        kernels::SpMM(ctx_, x.sparse, w_self, &self);
        auto sv = self.View();
        auto zv = z.Mut();
        for (size_t i = 0; i < zv.size(); ++i) zv[i] += sv[i];
      } else {
        kernels::Gemm(ctx_, in, false, w_self, false, 1.0F, 1.0F, &z);
      }
    }
    if (mc.bias) kernels::AddBias(ctx_, params[first + per_layer - 1].value, &z);
    if (l < mc.layers - 1) kernels::Relu(ctx_, z, &z);
    h = std::move(z);
  }
  std::vector<int32_t> pred(static_cast<size_t>(part_.num_owned));
  kernels::RowArgmax(ctx_, h, pred);
  return pred;
}

void DistGcnTrainer::SaveState(int epochs_done) const {
  if (comm_.Rank() != 0) return;
  TrainState s;
  s.config = config_.ToJson();
  s.epochs_done = epochs_done;
  s.best_epoch = best_epoch_;
  s.best_val_acc = best_val_acc_;
  s.epochs_since_best = epochs_since_best_;
  s.adam_steps = adam_.steps();
  for (const Param& p : model_.params()) s.params.push_back(p.value.Clone());
  for (const Matrix& mm : const_cast<Adam&>(adam_).moments()) s.moments.push_back(mm.Clone());
  for (const Matrix& mm : best_params_) s.best_params.push_back(mm.Clone());
  SaveCheckpoint(config_.train.checkpoint_dir, s);
}

DistTrainResult DistGcnTrainer::Train(const std::function<void(const DistEpochStats&)>& on_epoch) {
  Impl& m = *impl_;
  DistTrainResult result;
  result.setup_bytes = setup_bytes_;
  const int32_t classes = part_.num_classes;
  const size_t split_len = 2 + 3 * static_cast<size_t>(classes);
  // Global metrics of the current weights over the three splits: one prediction pass, one count allreduce.
  auto evaluate = [&](ClassMetrics* train, ClassMetrics* val, ClassMetrics* test) {
    const std::vector<int32_t> pred = PredictOwned();
    std::vector<int64_t> counts(3 * split_len, 0);
    const Buffer<int64_t>* splits[3] = {&part_.train, &part_.val, &part_.test};
    for (size_t s = 0; s < 3; ++s) {
      CountSplit(pred, m.labels, splits[s]->Host(), classes,
                 std::span<int64_t>(counts).subspan(s * split_len, split_len));
    }
    comm_.Allreduce<int64_t>(counts, comm::ReduceOp::kSum, kStatsPurpose).ThrowIfError();
    ClassMetrics* out[3] = {train, val, test};
    for (size_t s = 0; s < 3; ++s) {
      *out[s] = MetricsFromCounts(std::span<const int64_t>(counts).subspan(s * split_len, split_len), classes);
    }
  };
  const int64_t bs = config_.train.batch_size;
  const auto n_own = static_cast<int64_t>(part_.train.size());
  for (int epoch = start_epoch_ + 1; epoch <= config_.train.epochs; ++epoch) {
    const auto epoch_t0 = Clock::now();
    m.ResetEpoch();
    const uint64_t bytes0 = SentBytes(comm_);
    // This rank's training nodes in global ids, shuffled by the (seed, rank, epoch) stream.
    std::vector<int64_t> order = part_.train.ToVector();
    for (int64_t& u : order) u += part_.global_offset;
    Rng shuffle(StreamKey{.seed = ctx_.seed,
                          .rank = static_cast<uint64_t>(ctx_.rank),
                          .epoch = static_cast<uint64_t>(epoch),
                          .batch = 0,
                          .purpose = kPurposeShuffle});
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[shuffle.UniformInt(i)]);
    double loss_sum = 0;
    for (int64_t s = 0; s < m.steps; ++s) {
      auto take = [&](int64_t n) { return bs > 0 ? std::clamp<int64_t>(n - s * bs, 0, bs) : n; };
      int64_t union_size = 0;
      for (int64_t c : m.train_counts) union_size += take(c);
      const int64_t mine = take(n_own);
      const std::span<const int64_t> seeds(order.data() + (bs > 0 ? std::min(n_own, s * bs) : 0),
                                           static_cast<size_t>(mine));
      loss_sum += Step(seeds, union_size, epoch, s, true);
    }
    const double train_seconds = Seconds(epoch_t0);
    auto t0 = Clock::now();
    const uint64_t eval_b0 = SentBytes(comm_);
    DistEpochStats st;
    ClassMetrics tr, va, te;
    evaluate(&tr, &va, &te);
    const uint64_t eval_b = SentBytes(comm_) - eval_b0;
    const double eval_seconds = Seconds(t0);
    // Reduce this epoch's statistics: sums, then maxima of the times.
    std::vector<double> sums = {loss_sum,
                                static_cast<double>(m.seeds),
                                static_cast<double>(m.edges),
                                static_cast<double>(m.remote_picks),
                                static_cast<double>(m.remote_inputs),
                                static_cast<double>(m.fetch_b),
                                static_cast<double>(m.sample_b),
                                static_cast<double>(m.grad_b),
                                static_cast<double>(eval_b),
                                static_cast<double>(SentBytes(comm_) - bytes0)};
    comm_.Allreduce<double>(sums, comm::ReduceOp::kSum, kStatsPurpose).ThrowIfError();
    std::vector<double> maxima = {m.sample_s,    m.fetch_s,    m.compute_s,
                                  m.allreduce_s, eval_seconds, train_seconds + eval_seconds};
    comm_.Allreduce<double>(maxima, comm::ReduceOp::kMax, kStatsPurpose).ThrowIfError();
    st.epoch = epoch;
    st.steps = m.steps;
    st.seed_nodes = static_cast<int64_t>(sums[1]);
    st.loss = sums[1] > 0 ? sums[0] / sums[1] : 0.0;
    st.sampled_edges = static_cast<int64_t>(sums[2]);
    st.remote_share = sums[2] > 0 ? sums[3] / sums[2] : 0.0;
    st.remote_input_nodes = static_cast<int64_t>(sums[4]);
    st.feature_bytes = static_cast<uint64_t>(sums[5]);
    st.sample_bytes = static_cast<uint64_t>(sums[6]);
    st.gradient_bytes = static_cast<uint64_t>(sums[7]);
    st.eval_bytes = static_cast<uint64_t>(sums[8]);
    st.total_bytes = static_cast<uint64_t>(sums[9]);
    st.sample_seconds = maxima[0];
    st.fetch_seconds = maxima[1];
    st.compute_seconds = maxima[2];
    st.allreduce_seconds = maxima[3];
    st.eval_seconds = maxima[4];
    st.epoch_seconds = maxima[5];
    st.train_acc = tr.accuracy;
    st.val_acc = va.accuracy;
    TESSEL_CHECK(std::isfinite(st.loss), "epoch {}: the loss is {} (lower --lr, or check the features)", epoch,
                 st.loss);
    // Every rank holds the same val accuracy, so every rank takes the same decisions.
    if (st.val_acc > best_val_acc_) {
      best_val_acc_ = st.val_acc;
      best_epoch_ = epoch;
      epochs_since_best_ = 0;
      best_params_.clear();
      for (const Param& p : model_.params()) best_params_.push_back(p.value.Clone());
    } else {
      ++epochs_since_best_;
    }
    const bool stop = config_.train.patience > 0 && epochs_since_best_ >= config_.train.patience;
    result.epochs.push_back(st);
    if (on_epoch) on_epoch(st);
    if (!config_.train.checkpoint_dir.empty() &&
        (epoch % config_.train.checkpoint_every == 0 || epoch == config_.train.epochs || stop)) {
      SaveState(epoch);
    }
    if (stop) {
      result.stopped_early = true;
      break;
    }
  }
  auto& params = model_.params();
  if (best_params_.size() == params.size()) {
    for (size_t i = 0; i < params.size(); ++i) params[i].value = best_params_[i].Clone();
  }
  evaluate(&result.train, &result.val, &result.test);
  result.best_epoch = best_epoch_;
  return result;
}

}  // namespace tessel::train::gcn
