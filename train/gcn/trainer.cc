// GcnTrainer: the one epoch loop of GCN training (steps from a GraphSource, gradient averaging over ranks, Adam),
// evaluation, early stopping with best-weight selection, statistics reduced over ranks, rank-0 checkpoints and
// resume. The sources are whole_graph_source.cc and part_source.cc.
#include "train/gcn/trainer.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <ctime>
#include <exception>
#include <string>
#include <utility>

#include "comm/auto_compress.h"
#include "core/clock.h"
#include "core/device.h"
#include "core/fault_inject.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "core/memory_budget.h"
#include "core/output_guard.h"
#include "core/parallel.h"
#include "core/params_json.h"
#include "core/pinned_memory.h"
#include "core/progress.h"
#include "core/worker.h"
#include "kernels/loss.h"
#include "sampling/neighbor_sampler.h"

namespace tessel::train::gcn {
namespace {

constexpr std::string_view kStatsPurpose = "stats";
constexpr std::string_view kSetupPurpose = "setup";

using Clock = std::chrono::steady_clock;

// Bytes this rank has sent so far, all purposes.
uint64_t SentBytes(const comm::Communicator& comm) { return comm.Bytes().Total(); }

}  // namespace

void CheckCheckpointTarget(const TrainConfig& c, bool force, std::span<const std::filesystem::path> inputs,
                           std::span<const std::filesystem::path> other_outputs, std::string_view flag) {
  if (c.checkpoint_dir.empty()) return;
  // Never the run's input, never a device, never a folder of other files or another kind (not even with --resume,
  // which would write there, or --force); existence alone is judged below.
  CheckOutputPath(c.checkpoint_dir, OutputKind::kCheckpointFolder, /*force=*/true, flag, inputs, other_outputs);
  // A checkpoint is another run's state: replaced only when asked, as every other output is.
  const bool cli = flag.starts_with("--");
  TESSEL_CHECK(c.resume || force || !HoldsOutputOf(c.checkpoint_dir, OutputKind::kCheckpointFolder),
               "{} {}: already holds a checkpoint; pass {} to continue it, {} to replace it, or choose another folder",
               flag, c.checkpoint_dir.string(), cli ? "--resume" : "resume=True", cli ? "--force" : "force=True");
}

void RefuseDistributedOptions(std::string_view flags) {
  TESSEL_CHECK(flags.empty(),
               "options that apply to distributed training only were given ({}); add --partitions DIR (made by "
               "`tessel partition`) or drop them",
               flags);
}

void TrainConfig::Validate(bool partitioned) const {
  TESSEL_CHECK(epochs >= 1, "--epochs must be >= 1, got {}", epochs);
  TESSEL_CHECK(model.layers >= 1, "--layers must be >= 1, got {}", model.layers);
  TESSEL_CHECK(model.hidden >= 1, "--hidden must be >= 1, got {}", model.hidden);
  TESSEL_CHECK(model.dropout >= 0.0F && model.dropout < 1.0F, "--dropout must be in [0, 1), got {}", model.dropout);
  TESSEL_CHECK(batch_size >= 0, "--batch-size must be >= 0 (0 = full graph), got {}", batch_size);
  TESSEL_CHECK(patience >= 0, "--patience must be >= 0 (0 = off), got {}", patience);
  TESSEL_CHECK(eval_every >= 0, "--eval-every must be >= 0 (0 = after the last epoch only), got {}", eval_every);
  TESSEL_CHECK(patience == 0 || eval_every > 0,
               "--patience {} needs evaluations during training, but --eval-every 0 evaluates after the last epoch "
               "only: give --eval-every N or drop --patience",
               patience);
  TESSEL_CHECK(checkpoint_every >= 1, "--checkpoint-every must be >= 1, got {}", checkpoint_every);
  TESSEL_CHECK(!resume || !checkpoint_dir.empty(), "--resume needs --checkpoint DIR");
  if (partitioned) {
    TESSEL_CHECK(dist.feature_cache >= DistOptions::kCacheFromBudget,
                 "--feature-cache must be -2 (sized by --feature-cache-budget), -1 (the whole halo), 0 (none) or a "
                 "row count, got {}",
                 dist.feature_cache);
    TESSEL_CHECK(dist.feature_cache_budget_mib >= -1 && dist.feature_cache_budget_mib <= (int64_t{1} << 40),
                 "--feature-cache-budget must be -1 (half of the rank's own feature bytes), 0 (no cache) or a size "
                 "in MiB, got {}",
                 dist.feature_cache_budget_mib);
    TESSEL_CHECK(dist.eval_fanouts.empty() || dist.eval_fanouts.size() == fanouts.size(),
                 "--eval-fanouts gives {} fanouts but --fanouts gives {} (one per layer); leave it out for 4x the "
                 "training fanouts",
                 dist.eval_fanouts.size(), fanouts.size());
    for (int f : dist.eval_fanouts) {
      TESSEL_CHECK(f == -1 || f >= 1, "--eval-fanouts: {} is not a fanout (-1 = all neighbours, or >= 1)", f);
    }
    dist.skew.Validate();
    // auto: chosen at set-up from --network's link and the codecs' measured cost (comm/auto_compress.h).
    for (const auto& [value, flag] :
         {std::pair{&dist.grad_compress, "--grad-compress"}, std::pair{&dist.feature_compress, "--feature-compress"}}) {
      TESSEL_CHECK(!value->automatic || !dist.network.empty(),
                   "{} auto picks the codec the time model finds fastest on the link: give the link with --network "
                   "BANDWIDTH,LATENCY (e.g. 1Gbit,20us), or name a codec",
                   flag);
    }
    const comm::CompressSpec& f = dist.feature_compress.spec;
    TESSEL_CHECK(f.method == comm::CompressMethod::kNone || f.method == comm::CompressMethod::kFp16 ||
                     f.method == comm::CompressMethod::kBf16 || f.method == comm::CompressMethod::kInt8 ||
                     f.method == comm::CompressMethod::kQsgd,
                 "--feature-compress {}: feature rows take none, fp16, bf16, int8 or qsgd[:LEVELS] ({} applies to "
                 "gradients: --grad-compress)",
                 dist.feature_compress.Text(), comm::CompressMethodName(f.method));
    TESSEL_CHECK(f.block == 0, "--feature-compress {}: feature rows keep one scale per row; drop the block size",
                 dist.feature_compress.Text());
    if (!dist.network.empty()) (void)comm::NetworkModel::Parse(dist.network, "--network");
    TESSEL_CHECK(dist.grad_staleness == 0 || dist.grad_staleness == 1,
                 "--grad-staleness must be 0 (synchronous) or 1 (pipelined, one step stale), got {}",
                 dist.grad_staleness);
    TESSEL_CHECK(features_on != FeaturePlacement::kHost,
                 "--features-on host applies to one process; a partitioned run keeps its rows on the device and "
                 "fetches the rest each step (docs/gpu.md): drop it");
  } else {
    const nlohmann::json mine = ParamsToJson(dist);
    const nlohmann::json defaults = ParamsToJson(DistOptions{});
    RefuseDistributedOptions(DistFlags(dist, [&](const ParamInfo& p) {
      const std::string name(p.name);
      return mine.at(name) != defaults.at(name);
    }));
  }
  TESSEL_CHECK(partitioned || batch_size > 0 || features_on != FeaturePlacement::kHost,
               "--features-on host needs sampled steps (--batch-size N): a full-batch step reads every feature row "
               "(its dropout and the weight gradient's transpose would put them on the device whole); use "
               "--batch-size or --features-on device");
  if (partitioned || batch_size > 0) {
    TESSEL_CHECK(static_cast<int>(fanouts.size()) == model.layers,
                 "--fanouts gives {} fanouts but the model has {} layers ({}give one per layer, input layer first, "
                 "for example --fanouts 10,25 for 2 layers; -1 = all neighbours)",
                 fanouts.size(), model.layers, partitioned ? "distributed training always samples: " : "");
    sampling::SamplerOptions{fanouts, replace, sampling::Aggregation::kGcn}.Validate();
    // A fanout beyond any real degree only asks for huge sampling buffers (with --replace, that many picks a node).
    constexpr int kMaxFanout = 1 << 16;
    for (const int f : fanouts) {
      TESSEL_CHECK(f <= kMaxFanout,
                   "--fanouts {}: at most {} neighbours are sampled per node; use -1 for all neighbours, or a "
                   "smaller fanout",
                   f, kMaxFanout);
    }
  }
  adam.Validate();
}

nlohmann::json TrainConfig::ToJson(bool partitioned) const {
  nlohmann::json j = ParamsToJson(*this);
  if (partitioned) {
    j.update(ParamsToJson(dist));
    j["distributed"] = true;
  }
  return j;
}

TrainConfig TrainConfig::FromJson(const nlohmann::json& j) {
  TrainConfig c;
  ParamsFromJson(j, &c);
  ParamsFromJson(j, &c.dist);
  if (!j.contains("normalize_features") && j.contains("row_normalize")) {
    // Written before --normalize-features: a bool, true meaning L1 rows.
    c.normalize_features = j.at("row_normalize").get<bool>() ? FeatureNorm::kL1 : FeatureNorm::kNone;
  }
  return c;
}

// JSON keys are the field names (nlohmann's macro: one list, no hand-written serialiser to fall out of step).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EpochStats, epoch, steps, loss, evaluated, train_acc, val_acc, train_seconds,
                                   sample_seconds, fetch_seconds, compute_seconds, forward_seconds, backward_seconds,
                                   optimizer_seconds, allreduce_seconds, eval_seconds, epoch_seconds, cpu_seconds,
                                   eta_seconds, feature_bytes, sample_bytes, gradient_bytes, eval_bytes, total_bytes,
                                   feature_raw_bytes, gradient_raw_bytes, eval_raw_bytes, sample_raw_bytes,
                                   compress_seconds, decompress_seconds, comm_seconds, predicted_epoch_seconds,
                                   seed_nodes, sampled_edges, remote_input_nodes, remote_share, fetched_rows,
                                   device_allocations, device_runtime_allocations, h2d_copies, h2d_bytes, d2h_copies,
                                   d2h_bytes, device_synchronizations, pinned_allocations)

nlohmann::json EpochStats::ToJson() const {
  nlohmann::json j = *this;
  if (!evaluated) {  // not measured this epoch (--eval-every): null, not a number that reads as an accuracy
    j["train_acc"] = nullptr;
    j["val_acc"] = nullptr;
  }
  return j;
}

namespace {
// An epoch's device counters (EpochStats), the steady state a run reports in its final object.
nlohmann::json DeviceCounts(const EpochStats& e) {
  return {{"allocations", e.device_allocations},
          {"runtime_allocations", e.device_runtime_allocations},
          {"h2d_copies", e.h2d_copies},
          {"h2d_bytes", e.h2d_bytes},
          {"d2h_copies", e.d2h_copies},
          {"d2h_bytes", e.d2h_bytes},
          {"synchronizations", e.device_synchronizations},
          {"pinned_allocations", e.pinned_allocations}};
}
// TrainResult::memory as JSON: per rank, and the largest peak RSS over part bytes (the benchmark's ratio).
nlohmann::json MemoryJson(const std::vector<RankMemory>& memory) {
  nlohmann::json ranks = nlohmann::json::array();
  double worst = 0;
  int64_t peak = 0;
  for (size_t r = 0; r < memory.size(); ++r) {
    const RankMemory& m = memory[r];
    const double ratio =
        m.part_bytes > 0 ? static_cast<double>(m.peak_rss_bytes) / static_cast<double>(m.part_bytes) : 0.0;
    worst = std::max(worst, ratio);
    peak = std::max(peak, m.peak_rss_bytes);
    ranks.push_back({{"rank", r},
                     {"peak_rss_bytes", m.peak_rss_bytes},
                     {"rss_anon_bytes", m.rss_anon_bytes},
                     {"peak_rss_anon_bytes", m.peak_rss_anon_bytes},
                     {"part_bytes", m.part_bytes},
                     {"peak_rss_per_part_byte", ratio}});
  }
  return {{"ranks", ranks}, {"max_peak_rss_bytes", peak}, {"max_peak_rss_per_part_byte", worst}};
}
}  // namespace

nlohmann::json TrainResult::ToJson() const {
  nlohmann::json totals = nlohmann::json::object();  // every *_bytes and *_seconds field summed over the epochs
  double share = 0;
  int64_t seeds = 0;
  int64_t edges = 0;
  std::vector<double> epoch_s;
  std::vector<int> evaluated;
  for (const EpochStats& e : epochs) {
    if (e.evaluated) evaluated.push_back(e.epoch);
    share += e.remote_share;
    seeds += e.seed_nodes;
    edges += e.sampled_edges;
    epoch_s.push_back(e.epoch_seconds);
    const nlohmann::json j = e.ToJson();
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& key = it.key();
      if (key == "eta_seconds") continue;
      if (key.ends_with("_bytes")) totals[key] = totals.value(key, uint64_t{0}) + it.value().get<uint64_t>();
      if (key.ends_with("_seconds")) totals[key] = totals.value(key, 0.0) + it.value().get<double>();
    }
  }
  std::sort(epoch_s.begin(), epoch_s.end());
  const double n = epochs.empty() ? 1.0 : static_cast<double>(epochs.size());
  const double train_s = totals.value("train_seconds", 0.0);
  return {{"best_epoch", best_epoch},
          {"stopped_early", stopped_early},
          {"epochs_run", epochs.size()},
          {"evaluated_epochs", evaluated},
          {"train", train.ToJson()},
          {"val", val.ToJson()},
          {"test", test.ToJson()},
          {"setup_bytes", setup_bytes},
          {"mean_epoch_seconds", totals.value("epoch_seconds", 0.0) / n},
          {"median_epoch_seconds", epoch_s.empty() ? 0.0 : epoch_s[epoch_s.size() / 2]},
          {"mean_epoch_train_seconds", train_s / n},
          {"mean_epoch_cpu_seconds", totals.value("cpu_seconds", 0.0) / n},
          {"train_seed_nodes_per_second", train_s > 0 ? static_cast<double>(seeds) / train_s : 0.0},
          {"sampled_edges_per_second", train_s > 0 ? static_cast<double>(edges) / train_s : 0.0},
          {"feature_bytes_per_epoch", totals.value("feature_bytes", 0.0) / n},
          {"remote_share", share / n},
          {"device_last_epoch", DeviceCounts(epochs.empty() ? EpochStats{} : epochs.back())},
          {"memory", MemoryJson(memory)},
          {"totals", totals}};
}

std::vector<RankMemory> GatherMemory(comm::Communicator& comm, int64_t part_bytes, int64_t peak_anon) {
  const int64_t anon = memory::AnonResidentBytes();
  const std::array<int64_t, 4> mine = {memory::PeakResidentBytes(), anon, std::max(peak_anon, anon), part_bytes};
  std::vector<int64_t> all(mine.size() * static_cast<size_t>(comm.Size()));
  comm.Allgather<int64_t>(mine, all, kStatsPurpose).ThrowIfError();
  std::vector<RankMemory> out(static_cast<size_t>(comm.Size()));
  for (size_t r = 0; r < out.size(); ++r) {
    out[r] = RankMemory{all[4 * r], all[4 * r + 1], all[4 * r + 2], all[4 * r + 3]};
  }
  return out;
}

std::vector<float> PackGradients(const std::vector<Param>& params, int64_t local_count, int64_t total_count) {
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
  return buf;
}

void SumGradients(comm::Communicator& comm, std::vector<float>& buf, comm::CompressedAllreduce* compress, uint64_t step,
                  comm::CompressStats* stats) {
  if (compress != nullptr) {
    compress->Allreduce(comm, buf, step, "gradients", stats).ThrowIfError();
  } else {
    comm.Allreduce<float>(buf, comm::ReduceOp::kSum, "gradients").ThrowIfError();
  }
}

void UnpackGradients(std::span<const float> buf, std::vector<Param>& params) {
  size_t k = 0;
  for (Param& p : params) {
    TESSEL_CHECK(k + static_cast<size_t>(p.value.size()) <= buf.size(), "UnpackGradients: {} floats for the model",
                 buf.size());
    p.grad.Resize(p.value.rows, p.value.cols);
    for (float& g : p.grad.Mut()) g = buf[k++];
  }
}

void AverageGradients(comm::Communicator& comm, std::vector<Param>& params, int64_t local_count, int64_t total_count,
                      comm::CompressedAllreduce* compress, uint64_t step, comm::CompressStats* stats) {
  std::vector<float> buf = PackGradients(params, local_count, total_count);
  SumGradients(comm, buf, compress, step, stats);
  UnpackGradients(buf, params);
}

// What the constructors hand to the common one: the communicator, the run context, the checked configuration and
// the source built from them, and the bytes sent before the source was built.
struct GcnTrainer::Setup {
  std::unique_ptr<comm::Communicator> own_comm;
  comm::Communicator* comm = nullptr;
  Context ctx;
  TrainConfig config;
  std::unique_ptr<GraphSource> source;
  uint64_t bytes_before = 0;
};

namespace {

// The rank's view of the run; on a device, also the calling thread's current device (one GPU per rank: every
// allocation, copy and kernel of this rank goes to ctx.device_id, not to device 0).
Context RankContext(Context ctx, const comm::Communicator& comm) {
  ctx.rank = comm.Rank();
  ctx.world_size = comm.Size();
  ctx.MakeCurrent();
  return ctx;
}

}  // namespace

GcnTrainer::GcnTrainer(const datasets::NodeDataset& data, TrainConfig config, Context ctx)
    : GcnTrainer([&] {
        Setup s;
        s.own_comm = comm::MakeLocalCommunicator();
        s.comm = s.own_comm.get();
        s.ctx = RankContext(ctx, *s.comm);
        CheckTrainable(data, data.name.empty() ? "dataset" : data.name);
        config.model.in_dim = data.features.dim;
        config.model.num_classes = data.num_classes;
        config.Validate(false);
        s.config = std::move(config);
        s.source = MakeWholeGraphSource(data, s.config, s.ctx);
        return s;
      }()) {}

GcnTrainer::GcnTrainer(const partition::LocalPart& part, std::vector<int64_t> offsets, comm::Communicator& comm,
                       TrainConfig config, Context ctx)
    : GcnTrainer([&] {
        TESSEL_CHECK(part.part == comm.Rank() && part.num_parts == comm.Size(),
                     "rank {} of {} was given part {} of {}: run one rank per part (mpirun -np {})", comm.Rank(),
                     comm.Size(), part.part, part.num_parts, part.num_parts);
        TESSEL_CHECK(static_cast<int32_t>(offsets.size()) == part.num_parts + 1 &&
                         offsets[static_cast<size_t>(part.part)] == part.global_offset,
                     "node ranges disagree with part {} (partitions.json \"node_ranges\" and the part's offset)",
                     part.part);
        TESSEL_CHECK(!part.features.empty(), "part {}: the dataset has no node features", part.part);
        TESSEL_CHECK(part.labels.size() == static_cast<size_t>(part.num_owned) && part.num_classes > 1,
                     "part {}: the dataset has no labels (or fewer than 2 classes); a GCN needs labelled nodes",
                     part.part);
        Setup s;
        s.comm = &comm;
        s.ctx = RankContext(ctx, comm);
        config.model.in_dim = part.features.dim;
        config.model.num_classes = part.num_classes;
        config.Validate(true);
        if (config.dist.feature_compress.automatic) {  // collective: every rank makes the same choice
          const comm::NetworkModel net = comm::NetworkModel::Parse(config.dist.network, "--network");
          const comm::CompressChoice choice = comm::ChooseFeatureCompression(comm, net, part.features.dim);
          log::Info("gcn: --feature-compress auto on {}: {} per remote row", net.ToString(), choice.Summary());
          config.dist.feature_compress = {.spec = choice.spec};
        }
        s.config = std::move(config);
        s.bytes_before = SentBytes(comm);
        s.source = MakePartSource(part, std::move(offsets), comm, s.config, s.ctx);
        return s;
      }()) {}

GcnTrainer::GcnTrainer(Setup setup)
    : own_comm_(std::move(setup.own_comm)),
      comm_(*setup.comm),
      ctx_(setup.ctx),
      config_(std::move(setup.config)),
      source_(std::move(setup.source)),
      model_(config_.model, ctx_.seed),
      adam_(config_.adam) {
  if (config_.decay_all_layers) {
    for (Param& p : model_.params()) p.decay = true;
  }
  // Training nodes per rank (every rank derives the union batch size of every step from these) and steps.
  const auto n_train = static_cast<int64_t>(source_->TrainNodes().size());
  train_counts_.assign(static_cast<size_t>(comm_.Size()), 0);
  comm_.Allgather<int64_t>(std::span<const int64_t>(&n_train, 1), train_counts_, kSetupPurpose).ThrowIfError();
  int64_t total = 0;
  int64_t most = 0;
  for (int64_t c : train_counts_) {
    total += c;
    most = std::max(most, c);
  }
  TESSEL_CHECK(total > 0, "no rank has training nodes: the partition's dataset has an empty training split");
  const int64_t bs = config_.batch_size;
  steps_ = bs > 0 ? (most + bs - 1) / bs : 1;
  if (comm_.Size() > 1) {
    // Identical initial weights: the same seed gives them already; rank 0's are broadcast anyway.
    std::vector<float> w;
    for (const Param& p : model_.params()) w.insert(w.end(), p.value.View().begin(), p.value.View().end());
    comm_.Broadcast<float>(w, 0, kSetupPurpose).ThrowIfError();
    size_t k = 0;
    for (Param& p : model_.params()) {
      for (float& v : p.value.Mut()) v = w[k++];
    }
  }
  if (config_.dist.grad_compress.automatic) {  // collective: every rank makes the same choice
    int64_t elements = 0;
    for (const Param& p : model_.params()) elements += p.value.size();
    if (comm_.Size() > 1 && !config_.dist.network.empty()) {
      const comm::NetworkModel net = comm::NetworkModel::Parse(config_.dist.network, "--network");
      const comm::CompressChoice choice = comm::ChooseGradientCompression(comm_, net, elements);
      log::Info("gcn: --grad-compress auto on {}: {} per step", net.ToString(), choice.Summary());
      config_.dist.grad_compress = {.spec = choice.spec};
    } else {
      config_.dist.grad_compress = {};
    }
  }
  const comm::CompressSpec& grad_spec = config_.dist.grad_compress.spec;
  if (comm_.Size() > 1 && grad_spec.method != comm::CompressMethod::kNone) {
    std::vector<comm::MatrixShape> shapes;
    for (const Param& p : model_.params()) shapes.push_back({p.value.rows, p.value.cols});
    grad_compress_ = comm::MakeCompressedAllreduce(grad_spec, shapes, Mix64(ctx_.seed ^ 0x67726164ULL));
  }
  if (!config_.dist.network.empty()) {
    network_ = comm::NetworkModel::Parse(config_.dist.network, "--network");
    network_->Attach(comm_.Bytes(), comm_.Size());  // every call timed on it as it happens (its bucket keeps state)
    cores_ = ThreadLimit::CoresPerRank(comm_.LocalSize());
  }
  start_epoch_ = ResumeIfAsked(config_, CheckpointConfig(ConfigJson(), source_->scaling()), &best_, &model_, &adam_);
  setup_bytes_ = SentBytes(comm_) - setup.bytes_before;
  peak_anon_ = memory::AnonResidentBytes();
}

void GraphSource::EvaluateSplits(const Context& ctx, GcnModel& model, int /*epoch*/, bool /*final*/,
                                 ClassMetrics* train, ClassMetrics* val, ClassMetrics* test,
                                 StepCounters* /*counters*/) {
  const Matrix& logits = Logits(ctx, model);
  std::vector<int32_t> pred(static_cast<size_t>(logits.rows));
  kernels::RowArgmax(ctx, logits, pred);
  Metrics(pred, train, val, test);
}

GcnTrainer::~GcnTrainer() = default;

nlohmann::json GcnTrainer::ConfigJson() const { return config_.ToJson(source_->Partitioned()); }

void GcnTrainer::Prepare(std::span<const int64_t> seeds, int epoch, int64_t batch, Batch* b) {
  source_->MakeBatch(ctx_, seeds, TrainKey(ctx_, epoch, batch, kPurposeSample), b, &counters_);
  seeds_ += static_cast<int64_t>(seeds.size());
}

double GcnTrainer::Compute(const Batch& b, int64_t seed_count, int epoch, int64_t batch) {
  const auto t0 = Clock::now();
  double loss_sum = 0;
  if (b.rows != nullptr && !b.rows->empty()) {
    const Matrix& logits = model_.Forward(ctx_, *b.x, b.x_rows, b.graphs, true,
                                          TrainKey(ctx_, epoch, batch, kPurposeDropout), b.x_row_ids);
    const auto weight = static_cast<double>(seed_count);
    if (ctx_.IsCuda()) {
      // The loss stays on the device, summed over the epoch's steps, and is read once at its end (EpochLoss).
      kernels::SoftmaxCrossEntropyAdd(ctx_, logits, *b.labels, *b.rows, weight, device_loss_steps_ == 0, &grad_logits_,
                                      &device_loss_);
      ++device_loss_steps_;
    } else {
      loss_sum = kernels::SoftmaxCrossEntropy(ctx_, logits, *b.labels, *b.rows, &grad_logits_) * weight;
    }
    const auto t1 = Clock::now();
    forward_s_ += std::chrono::duration<double>(t1 - t0).count();
    model_.Backward(ctx_, grad_logits_);
    backward_s_ += SecondsSince(t1);
  }
  compute_s_ += SecondsSince(t0);
  return loss_sum;
}

void GcnTrainer::Finish(int64_t seed_count, int64_t total_seeds, int epoch, int64_t batch, bool update) {
  if (comm_.Size() > 1) {  // one rank's gradient is already the mean over the whole batch
    const auto t0 = Clock::now();
    const uint64_t b0 = SentBytes(comm_);
    const uint64_t call = static_cast<uint64_t>(epoch) * static_cast<uint64_t>(steps_) + static_cast<uint64_t>(batch);
    AverageGradients(comm_, model_.params(), seed_count, total_seeds, grad_compress_.get(), call, &grad_stats_);
    allreduce_s_ += SecondsSince(t0);
    gradient_b_ += SentBytes(comm_) - b0;
  }
  if (update) {
    const auto t0 = Clock::now();
    adam_.Step(ctx_, model_.params());
    const double dt = SecondsSince(t0);
    compute_s_ += dt;
    optimizer_s_ += dt;
  }
}

GcnTrainer::StepMark GcnTrainer::MarkStep() const {
  return {Clock::now(), comm_.Bytes().TotalCost(), network_ ? ThreadCpuSeconds() : 0.0};
}

void GcnTrainer::EndStep(int64_t s, const StepMark& m, double overlap_correction, double worker_cpu) {
  if (!network_) return;
  const double wall = SecondsSince(m.t0);
  const comm::CallCost calls = comm_.Bytes().TotalCost().Since(m.cost0);
  const double modeled = calls.modeled;
  // The CPU the step needs, for the CPU bound at the epoch's end: its own work outside its calls, and its calls'
  // CPU on the named network. The communicator polls throughout a call, so a call takes CPU for as long as it lasts:
  // at most what it took here, and at most its modelled time.
  const double work =
      std::max(0.0, ThreadCpuSeconds() - m.cpu0 - calls.cpu) + worker_cpu + std::min(calls.cpu, calls.modeled);
  step_times_.predicted[static_cast<size_t>(s)] = wall - calls.seconds + modeled + overlap_correction;
  step_times_.work[static_cast<size_t>(s)] = work;
  step_times_.wall += wall;
  step_times_.calls += calls.seconds;
  step_times_.modeled += modeled;
}

double GcnTrainer::Step(std::span<const int64_t> seeds, int64_t total_seeds, int epoch, int64_t batch, bool update) {
  Prepare(seeds, epoch, batch, &batches_[0]);
  const auto n = static_cast<int64_t>(seeds.size());
  const double loss_sum = Compute(batches_[0], n, epoch, batch);
  Finish(n, total_seeds, epoch, batch, update);
  return loss_sum;
}

bool GcnTrainer::Evaluates(int epoch) const {
  return epoch == config_.epochs || (config_.eval_every > 0 && epoch % config_.eval_every == 0);
}

bool GcnTrainer::Overlaps() const {
  // Never on a device: its batch state exists once (the GPU sampler's blocks, the partitioned feature table and
  // its row ids), so preparing the next batch would overwrite what the current step reads.
  return config_.overlap && source_->Samples() && steps_ > 1 && !ctx_.IsCuda() &&
         (ctx_.threads != 1 || config_.dist.grad_staleness > 0);
}

std::vector<int32_t> GcnTrainer::PredictOwned() {
  const Matrix& logits = source_->Logits(ctx_, model_);
  std::vector<int32_t> pred(static_cast<size_t>(logits.rows));
  kernels::RowArgmax(ctx_, logits, pred);
  return pred;
}

Matrix GcnTrainer::PredictProbabilities() {
  Matrix probs;
  kernels::RowSoftmax(ctx_, source_->Logits(ctx_, model_), &probs);
  return probs;
}

void GcnTrainer::SaveState(int epochs_done) const {
  if (comm_.Rank() != 0) return;
  SaveCheckpoint(config_.checkpoint_dir,
                 CaptureState(CheckpointConfig(ConfigJson(), source_->scaling()), epochs_done, best_, model_, adam_));
}

TrainResult GcnTrainer::Train(const std::function<void(const EpochStats&)>& on_epoch) {
  ctx_.MakeCurrent();  // the calling thread may not be the constructing one
  if (config_.dist.grad_staleness > 0 && comm_.Size() > 1 && !Overlaps() && comm_.Rank() == 0) {
    log::Warn(
        "--grad-staleness 1 needs the two-thread pipeline (--overlap, sampled steps, more than one step per epoch, "
        "the CPU); this run exchanges its gradients synchronously");
  }
  TrainResult result;
  result.setup_bytes = setup_bytes_;
  const int64_t bs = config_.batch_size;
  const std::vector<int64_t> train_nodes = source_->TrainNodes();
  const auto n_own = static_cast<int64_t>(train_nodes.size());
  double time_sum = 0;
  // A line every 10 s when training is slow (a hub's whole neighbourhood, a large graph on few cores).
  Progress progress("training", static_cast<int64_t>(config_.epochs - start_epoch_) * steps_, "steps");
  for (int epoch = start_epoch_ + 1; epoch <= config_.epochs; ++epoch) {
    (void)fault::FaultPoint("epoch", comm_.Rank());  // TESSEL_FAULT tests (core/fault_inject.h)
    const auto epoch_t0 = Clock::now();
    const std::clock_t c0 = std::clock();
    const device::Counters device0 = device::ReadCounters();
    const int64_t pinned0 = device::ReadPinnedCounters().allocations;
    counters_ = StepCounters{};
    compute_s_ = allreduce_s_ = forward_s_ = backward_s_ = optimizer_s_ = 0;
    // A step's threads: the compute threads, and the pipeline's communicating one.
    step_times_ =
        StepTimes{std::vector<double>(static_cast<size_t>(steps_), 0.0),
                  std::vector<double>(static_cast<size_t>(steps_), 0.0), ThreadLimit::Current() + (Overlaps() ? 1 : 0)};
    gradient_b_ = 0;
    grad_stats_ = comm::CompressStats{};
    seeds_ = 0;
    const uint64_t bytes0 = SentBytes(comm_);
    const comm::CallCost cost0 = comm_.Bytes().TotalCost();
    // This rank's training nodes, shuffled by the (seed, rank, epoch) stream when steps sample.
    std::vector<int64_t> order = train_nodes;
    if (source_->Samples()) ShuffleSeeds(ctx_, epoch, order);
    double loss_sum = 0;
    device_loss_steps_ = 0;
    auto take = [&](int64_t n, int64_t s) { return bs > 0 ? std::clamp<int64_t>(n - s * bs, 0, bs) : n; };
    auto seeds_of = [&](int64_t s) {
      return std::span<const int64_t>(order.data() + (bs > 0 ? std::min(n_own, s * bs) : 0),
                                      static_cast<size_t>(take(n_own, s)));
    };
    auto union_of = [&](int64_t s) {
      int64_t union_size = 0;
      for (int64_t c : train_counts_) union_size += take(c, s);
      return union_size;
    };
    if (!Overlaps()) {
      for (int64_t s = 0; s < steps_; ++s) {
        interrupt::Check("gcn training");
        const StepMark mark = MarkStep();
        loss_sum += Step(seeds_of(s), union_of(s), epoch, s, true);
        EndStep(s, mark, 0.0, 0.0);
        progress.Add();
      }
    } else {
      // A pipeline of width two: while the worker thread runs forward/backward of step s, this thread (the one that
      // owns the communicator) samples and fetches step s + 1. Sampling and fetching never read the weights and
      // every draw is keyed by (epoch, step), so the result is the sequential order's.
      // With --grad-staleness 1 this thread also sums step s - 1's gradient while step s computes, and the update
      // after step s applies it; the last step's gradient is summed and applied at the end of the epoch.
      if (!worker_) worker_ = std::make_unique<BackgroundWorker>();
      // The first epoch exchanges synchronously: a stale gradient costs most while the weights move fastest.
      const bool stale = config_.dist.grad_staleness > 0 && comm_.Size() > 1 && epoch > 1;
      std::vector<float> pending;  // step s - 1's gradient share, then its sum over ranks
      uint64_t pending_call = 0;
      const auto step_call = [&](int64_t s) {
        return static_cast<uint64_t>(epoch) * static_cast<uint64_t>(steps_) + static_cast<uint64_t>(s);
      };
      const auto sum_pending = [&] {
        const auto t0 = Clock::now();
        const uint64_t b0 = SentBytes(comm_);
        SumGradients(comm_, pending, grad_compress_.get(), pending_call, &grad_stats_);
        allreduce_s_ += SecondsSince(t0);
        gradient_b_ += SentBytes(comm_) - b0;
      };
      const auto apply = [&](std::span<const float> sum) {
        UnpackGradients(sum, model_.params());
        const auto t0 = Clock::now();
        adam_.Step(ctx_, model_.params());
        const double dt = SecondsSince(t0);
        compute_s_ += dt;
        optimizer_s_ += dt;
      };
      Prepare(seeds_of(0), epoch, 0, &batches_[0]);
      for (int64_t s = 0; s < steps_; ++s) {
        interrupt::Check("gcn training");
        const Batch& cur = batches_[s % 2];
        const auto n = static_cast<int64_t>(seeds_of(s).size());
        double loss = 0;
        double compute_seconds = 0;
        double compute_cpu = 0;  // the worker thread's CPU seconds in it
        const StepMark mark = MarkStep();
        const auto step_t0 = mark.t0;
        const comm::CallCost call0 = mark.cost0;
        worker_->Start([&, s, n] {
          const auto t0 = Clock::now();
          const double cpu0 = ThreadCpuSeconds();
          loss = Compute(cur, n, epoch, s);
          compute_seconds = SecondsSince(t0);
          compute_cpu = ThreadCpuSeconds() - cpu0;
        });
        try {
          if (s + 1 < steps_) Prepare(seeds_of(s + 1), epoch, s + 1, &batches_[(s + 1) % 2]);
          if (stale && !pending.empty()) sum_pending();
        } catch (...) {
          try {
            worker_->Wait();  // the job reads this frame: let it end before unwinding
          } catch (...) {     // the preparation's error is the one reported
          }
          throw;
        }
        const double thread_seconds = SecondsSince(step_t0);
        worker_->Wait();
        double correction = 0;
        if (network_) {
          // The serial formula counts this thread's calls at the model's time on top of everything; the step
          // really took the longer of the compute and this thread's work, which the model changes only in its calls.
          const comm::CallCost calls = comm_.Bytes().TotalCost().Since(call0);
          const double modeled = calls.modeled;
          correction = std::max(compute_seconds, thread_seconds - calls.seconds + modeled) -
                       std::max(compute_seconds, thread_seconds) - (modeled - calls.seconds);
        }
        loss_sum += loss;
        if (stale) {
          std::vector<float> mine = PackGradients(model_.params(), n, union_of(s));
          if (!pending.empty()) apply(pending);
          pending = std::move(mine);
          pending_call = step_call(s);
        } else {
          Finish(n, union_of(s), epoch, s, true);
        }
        EndStep(s, mark, correction, compute_cpu);
        progress.Add();
      }
      if (stale && !pending.empty()) {
        sum_pending();
        apply(pending);
      }
    }
    const double train_seconds = SecondsSince(epoch_t0);
    const auto t0 = Clock::now();
    const uint64_t eval_b0 = SentBytes(comm_);
    ClassMetrics tr, va, te;
    StepCounters eval_counters;  // the evaluation's rows: on the wire and uncompressed, and its coding seconds
    const bool evaluated = Evaluates(epoch);  // the same on every rank
    if (evaluated) source_->EvaluateSplits(ctx_, model_, epoch, false, &tr, &va, &te, &eval_counters);
    const uint64_t eval_b = SentBytes(comm_) - eval_b0;
    const uint64_t eval_raw_b = eval_b - eval_counters.feature_bytes + eval_counters.feature_raw_bytes;
    const double eval_seconds = evaluated ? SecondsSince(t0) : 0.0;
    const double cpu_seconds = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    const comm::CallCost cost = comm_.Bytes().TotalCost().Since(cost0);  // this epoch's, before the statistics'
    // The time model (docs/comm.md): every step is synchronous (it ends in the gradient sum, or the next step's
    // exchanges), so the epoch takes the sum over steps of the slowest rank's predicted step, plus the slowest
    // rank's prediction of the rest (the first batch, the last stale sum, the evaluation).
    // The CPU bound (docs/comm.md, "Time model"): a step takes at least the mean rank's CPU work over the cores
    // its threads can use (fewer than one where ranks outnumber the machine's cores; one for the pipeline's two
    // threads at one core per rank).
    double predicted = 0;
    if (network_) {
      const double rest = (train_seconds + eval_seconds - step_times_.wall) - (cost.seconds - step_times_.calls) +
                          (cost.modeled - step_times_.modeled);
      std::vector<double> parts = step_times_.predicted;
      parts.push_back(rest);
      comm_.Allreduce<double>(parts, comm::ReduceOp::kMax, kStatsPurpose).ThrowIfError();
      std::vector<double> work = step_times_.work;
      comm_.Allreduce<double>(work, comm::ReduceOp::kSum, kStatsPurpose).ThrowIfError();
      predicted = comm::SynchronousSeconds(parts, work, comm_.Size(),
                                           std::min(cores_, static_cast<double>(step_times_.threads)));
    }

    // Reduce this epoch's statistics: sums, then maxima of the times.
    // On a device the steps' losses were summed there: one download an epoch (the same float64 sum as on the host).
    if (device_loss_steps_ > 0) loss_sum += device_loss_.Host()[0];
    std::vector<double> sums = {loss_sum,
                                static_cast<double>(seeds_),
                                static_cast<double>(counters_.sampled_edges),
                                static_cast<double>(counters_.remote_picks),
                                static_cast<double>(counters_.remote_input_nodes),
                                static_cast<double>(counters_.feature_bytes),
                                static_cast<double>(counters_.sample_bytes),
                                static_cast<double>(gradient_b_),
                                static_cast<double>(eval_b),
                                static_cast<double>(SentBytes(comm_) - bytes0),
                                cpu_seconds,
                                static_cast<double>(counters_.feature_raw_bytes),
                                static_cast<double>(grad_compress_ ? grad_stats_.raw_bytes : gradient_b_)};
    // The device runtime's work this epoch (core/device.h counters of this process; an MPI rank is a process).
    const device::Counters dev = device::ReadCounters() - device0;
    for (int64_t v :
         {dev.allocations, dev.runtime_allocations, dev.h2d_copies, dev.h2d_bytes, dev.d2h_copies, dev.d2h_bytes,
          dev.synchronizations, device::ReadPinnedCounters().allocations - pinned0, counters_.fetched_rows}) {
      sums.push_back(static_cast<double>(v));
    }
    sums.push_back(static_cast<double>(eval_raw_b));
    sums.push_back(static_cast<double>(counters_.sample_raw_bytes));
    comm_.Allreduce<double>(sums, comm::ReduceOp::kSum, kStatsPurpose).ThrowIfError();
    std::vector<double> maxima = {
        counters_.sample_seconds,
        counters_.fetch_seconds,
        compute_s_,
        allreduce_s_,
        eval_seconds,
        train_seconds,
        train_seconds + eval_seconds,
        counters_.compress_seconds + grad_stats_.encode_seconds + eval_counters.compress_seconds,
        counters_.decompress_seconds + grad_stats_.decode_seconds + eval_counters.decompress_seconds,
        cost.seconds,
        predicted,
        forward_s_,
        backward_s_,
        optimizer_s_};
    comm_.Allreduce<double>(maxima, comm::ReduceOp::kMax, kStatsPurpose).ThrowIfError();
    EpochStats st;
    st.epoch = epoch;
    st.steps = steps_;
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
    st.cpu_seconds = sums[10];
    st.feature_raw_bytes = static_cast<uint64_t>(sums[11]);
    st.gradient_raw_bytes = static_cast<uint64_t>(sums[12]);
    st.device_allocations = static_cast<int64_t>(sums[13]);
    st.device_runtime_allocations = static_cast<int64_t>(sums[14]);
    st.h2d_copies = static_cast<int64_t>(sums[15]);
    st.h2d_bytes = static_cast<uint64_t>(sums[16]);
    st.d2h_copies = static_cast<int64_t>(sums[17]);
    st.d2h_bytes = static_cast<uint64_t>(sums[18]);
    st.device_synchronizations = static_cast<int64_t>(sums[19]);
    st.pinned_allocations = static_cast<int64_t>(sums[20]);
    st.fetched_rows = static_cast<int64_t>(sums[21]);
    st.eval_raw_bytes = static_cast<uint64_t>(sums[22]);
    st.sample_raw_bytes = static_cast<uint64_t>(sums[23]);
    if (ctx_.IsCuda()) {
      log::Debug(
          "epoch {}: device allocations {} ({} from the runtime), {} uploads ({} B), {} downloads ({} B), {} "
          "synchronisations",
          epoch, st.device_allocations, st.device_runtime_allocations, st.h2d_copies, st.h2d_bytes, st.d2h_copies,
          st.d2h_bytes, st.device_synchronizations);
    }
    st.compress_seconds = maxima[7];
    st.decompress_seconds = maxima[8];
    st.comm_seconds = maxima[9];
    st.predicted_epoch_seconds = maxima[10];
    st.sample_seconds = maxima[0];
    st.fetch_seconds = maxima[1];
    st.compute_seconds = maxima[2];
    st.forward_seconds = maxima[11];
    st.backward_seconds = maxima[12];
    st.optimizer_seconds = maxima[13];
    st.allreduce_seconds = maxima[3];
    st.eval_seconds = maxima[4];
    st.train_seconds = maxima[5];
    st.epoch_seconds = maxima[6];
    st.evaluated = evaluated;
    st.train_acc = tr.accuracy;
    st.val_acc = va.accuracy;
    CheckLoss(epoch, st.loss);
    // Every rank holds the same val accuracy, so every rank takes the same decisions. An epoch without an evaluation
    // only ages the best (patience counts epochs, and is checked when an epoch is evaluated).
    bool stop = false;
    if (evaluated) {
      stop = best_.Update(epoch, st.val_acc, model_.params(), config_.patience);
    } else {
      best_.Age(epoch);
    }
    time_sum += st.epoch_seconds;
    st.eta_seconds = stop ? 0.0 : time_sum / (epoch - start_epoch_) * (config_.epochs - epoch);
    result.epochs.push_back(st);
    peak_anon_ = std::max(peak_anon_, memory::AnonResidentBytes());
    if (on_epoch) on_epoch(st);
    if (CheckpointDue(config_, epoch, stop)) SaveState(epoch);
    if (stop) {
      result.stopped_early = true;
      break;
    }
  }
  // Evaluate the best-validation weights.
  best_.Restore(model_.params());
  source_->EvaluateSplits(ctx_, model_, config_.epochs, true, &result.train, &result.val, &result.test, nullptr);
  result.best_epoch = best_.epoch;
  result.memory = GatherMemory(comm_, source_->PartBytes(), peak_anon_);
  return result;
}

}  // namespace tessel::train::gcn
