// DistGcnTrainer: the per-rank epoch loop of distributed GCN training (sample, fetch, compute, gradient allreduce,
// Adam), early stopping, rank-0 checkpoints; evaluation is dist_eval.h's. docs/distributed.md.
#include "train/gcn/dist_trainer.h"

#include <algorithm>
#include <chrono>
#include <string_view>
#include <utility>

#include "core/params_json.h"
#include "sampling/dist_sampler.h"
#include "train/gcn/checkpoint.h"
#include "train/gcn/dist_eval.h"
#include "train/gcn/dist_features.h"
#include "train/gcn/sample_exchange.h"

namespace tessel::train::gcn {
namespace {

constexpr std::string_view kStatsPurpose = "stats";
constexpr std::string_view kSetupPurpose = "setup";

using Clock = std::chrono::steady_clock;

// Bytes this rank has sent so far, all purposes.
uint64_t SentBytes(const comm::Communicator& comm) { return comm.Bytes().Total(); }

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
  j.update(ParamsToJson(*this));
  j["distributed"] = true;
  return j;
}

// JSON keys are the field names (nlohmann's macro: one list, no hand-written serialiser to fall out of step).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DistEpochStats, epoch, steps, loss, train_acc, val_acc, sample_seconds,
                                   fetch_seconds, compute_seconds, allreduce_seconds, eval_seconds, epoch_seconds,
                                   feature_bytes, sample_bytes, gradient_bytes, eval_bytes, total_bytes, seed_nodes,
                                   sampled_edges, remote_input_nodes, remote_share)

nlohmann::json DistEpochStats::ToJson() const { return *this; }

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
  DistEvaluator eval;
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
  impl_.reset(new Impl{MakeDistSampler(part_, offsets_, comm_, so, config_.skew),
                       DistFeatureStore(ctx_, part_, offsets_, comm_, config_.train.normalize_features,
                                        FeatureCacheOptions{config_.feature_cache}),
                       DistEvaluator(part_, comm_, config_.train.model.kind),
                       part_.labels.ToVector(),
                       {},
                       0});
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
  start_epoch_ = ResumeIfAsked(config_.train, CheckpointConfig(config_.ToJson(), impl_->features.scaling()), &best_,
                               &model_, &adam_);
  setup_bytes_ = SentBytes(comm_) - setup0;
}

DistGcnTrainer::~DistGcnTrainer() = default;

double DistGcnTrainer::Step(std::span<const int64_t> seeds, int64_t total_seeds, int epoch, int64_t batch,
                            bool update) {
  Impl& m = *impl_;
  auto t0 = Clock::now();
  uint64_t b0 = SentBytes(comm_);
  std::vector<sampling::Block> blocks = m.sampler.Sample(seeds, TrainKey(ctx_, epoch, batch, kPurposeSample));
  m.sample_s += SecondsSince(t0);
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
  m.fetch_s += SecondsSince(t0);
  b0 = SentBytes(comm_);
  m.fetch_b += b0 - b1;

  t0 = Clock::now();
  double loss_sum = 0;
  if (!seeds.empty()) {
    std::vector<int32_t> labels(seeds.size());
    for (size_t i = 0; i < seeds.size(); ++i) {
      const int64_t local = seeds[i] - part_.global_offset;
      TESSEL_CHECK(local >= 0 && local < part_.num_owned, "seed {} is not owned by rank {}", seeds[i], ctx_.rank);
      labels[i] = m.labels[static_cast<size_t>(local)];
    }
    loss_sum = BlocksForwardBackward(ctx_, model_, x, blocks, labels, TrainKey(ctx_, epoch, batch, kPurposeDropout)) *
               static_cast<double>(seeds.size());
  }
  m.compute_s += SecondsSince(t0);

  t0 = Clock::now();
  b0 = SentBytes(comm_);
  AverageGradients(comm_, model_.params(), static_cast<int64_t>(seeds.size()), total_seeds);
  m.allreduce_s += SecondsSince(t0);
  m.grad_b += SentBytes(comm_) - b0;

  if (update) {
    t0 = Clock::now();
    adam_.Step(ctx_, model_.params());
    m.compute_s += SecondsSince(t0);
  }
  return loss_sum;
}

std::vector<int32_t> DistGcnTrainer::PredictOwned() {
  return impl_->eval.Predict(ctx_, model_, impl_->features.owned());
}

void DistGcnTrainer::SaveState(int epochs_done) const {
  if (comm_.Rank() != 0) return;
  SaveCheckpoint(
      config_.train.checkpoint_dir,
      CaptureState(CheckpointConfig(config_.ToJson(), impl_->features.scaling()), epochs_done, best_, model_, adam_));
}

DistTrainResult DistGcnTrainer::Train(const std::function<void(const DistEpochStats&)>& on_epoch) {
  Impl& m = *impl_;
  DistTrainResult result;
  result.setup_bytes = setup_bytes_;
  // Global metrics of the current weights over the three splits: one prediction pass, one count allreduce.
  auto evaluate = [&](ClassMetrics* train, ClassMetrics* val, ClassMetrics* test) {
    m.eval.Metrics(PredictOwned(), m.labels, train, val, test);
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
    ShuffleSeeds(ctx_, epoch, order);
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
    const double train_seconds = SecondsSince(epoch_t0);
    auto t0 = Clock::now();
    const uint64_t eval_b0 = SentBytes(comm_);
    DistEpochStats st;
    ClassMetrics tr, va, te;
    evaluate(&tr, &va, &te);
    const uint64_t eval_b = SentBytes(comm_) - eval_b0;
    const double eval_seconds = SecondsSince(t0);
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
    CheckLoss(epoch, st.loss);
    // Every rank holds the same val accuracy, so every rank takes the same decisions.
    const bool stop = best_.Update(epoch, st.val_acc, model_.params(), config_.train.patience);
    result.epochs.push_back(st);
    if (on_epoch) on_epoch(st);
    if (CheckpointDue(config_.train, epoch, stop)) SaveState(epoch);
    if (stop) {
      result.stopped_early = true;
      break;
    }
  }
  best_.Restore(model_.params());
  evaluate(&result.train, &result.val, &result.test);
  result.best_epoch = best_.epoch;
  return result;
}

}  // namespace tessel::train::gcn
