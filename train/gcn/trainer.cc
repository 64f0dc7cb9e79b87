// GcnTrainer: set-up (the communicator, the checked configuration, the source, identical initial weights, the
// codecs and the time model, resume), the three parts of a step, and the loop over epochs; the epoch's phases are in
// epoch.cc, the configuration's rules in train_config.cc, the statistics' JSON in train_result.cc. The sources are
// whole_graph_source.cc and part_source.cc.
#include "train/gcn/trainer.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "comm/auto_compress.h"
#include "core/clock.h"
#include "core/fault_inject.h"
#include "core/log.h"
#include "core/memory_budget.h"
#include "core/parallel.h"
#include "core/peer_failure.h"
#include "core/progress.h"
#include "kernels/loss.h"

namespace tessel::train::gcn {
namespace {

constexpr std::string_view kSetupPurpose = "setup";

using Clock = std::chrono::steady_clock;

}  // namespace

// What the constructors hand to the common one: the communicator, the run context, the checked configuration and
// the source built from them, and the bytes sent before the source was built.
struct GcnTrainer::Setup {
  std::unique_ptr<comm::Communicator> own_comm;
  comm::Communicator* comm = nullptr;
  Context ctx;
  TrainConfig config;
  std::unique_ptr<GraphSource> source;
  uint64_t bytes_before = 0;
  sampling::VirtualParts virtual_parts;
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
                       TrainConfig config, Context ctx, sampling::VirtualParts virtual_parts)
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
          const comm::NetworkModel& net = *config.dist.network;
          const comm::CompressChoice choice = comm::ChooseFeatureCompression(comm, net, part.features.dim);
          log::Info("gcn: --feature-compress auto on {}: {} per remote row", net.ToString(), choice.Summary());
          config.dist.feature_compress = {.spec = choice.spec};
        }
        s.config = std::move(config);
        s.bytes_before = SentBytes(comm);
        s.virtual_parts = std::move(virtual_parts);
        s.source = MakePartSource(part, std::move(offsets), comm, s.config, s.ctx, s.virtual_parts);
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
  // Training nodes per rank, or per part with virtual ranks (every rank derives the union batch size of every step
  // from these), and steps.
  virtual_ = std::move(setup.virtual_parts);
  if (virtual_.Active()) {
    CountPartTrainNodes();
  } else {
    const auto n_train = static_cast<int64_t>(source_->TrainNodes().size());
    train_counts_.assign(static_cast<size_t>(comm_.Size()), 0);
    comm_.Allgather<int64_t>(std::span<const int64_t>(&n_train, 1), train_counts_, kSetupPurpose).ThrowIfError();
  }
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
    if (comm_.Size() > 1 && config_.dist.network) {
      const comm::NetworkModel& net = *config_.dist.network;
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
  if (config_.dist.network) {
    network_ = config_.dist.network.model;
    network_->Attach(comm_.Bytes(), comm_.Size());  // every call timed on it as it happens (its bucket keeps state)
    cores_ = ThreadLimit::CoresPerRank(comm_.LocalSize());
  }
  resumed_ = ResumeIfAsked(config_, CheckpointConfig(ConfigJson(), source_->scaling()), &best_, &model_, &adam_);
  start_epoch_ = resumed_.epochs_done;
  first_step_ = FirstStep(resumed_, steps_);
  epochs_ended_ = start_epoch_;
  setup_bytes_ = SentBytes(comm_) - setup.bytes_before;
  peak_anon_ = memory::AnonResidentBytes();
}

GcnTrainer::~GcnTrainer() = default;

void GcnTrainer::CountPartTrainNodes() {
  // A merged part lists its parts' training nodes one part after the other, each in that part's order: split at the
  // parts' boundaries, every part's list is the K-rank run's rank's.
  const auto rank = static_cast<int32_t>(comm_.Rank());
  const int32_t lo = virtual_.first[static_cast<size_t>(rank)];
  part_train_.assign(static_cast<size_t>(virtual_.Count(rank)), {});
  for (int64_t u : source_->TrainNodes()) {
    const int32_t i = virtual_.PartOf(u) - lo;
    TESSEL_CHECK(i >= 0 && i < virtual_.Count(rank), "rank {}: training node {} lies outside its parts {} to {}", rank,
                 u, lo, lo + virtual_.Count(rank) - 1);
    part_train_[static_cast<size_t>(i)].push_back(u);
  }
  train_counts_.assign(static_cast<size_t>(virtual_.Parts()), 0);
  for (size_t i = 0; i < part_train_.size(); ++i) {
    train_counts_[static_cast<size_t>(lo) + i] = static_cast<int64_t>(part_train_[i].size());
  }
  comm_.Allreduce<int64_t>(train_counts_, comm::ReduceOp::kSum, kSetupPurpose).ThrowIfError();
}

Context GcnTrainer::KeyContext(int key_part) const {
  Context c = ctx_;
  if (key_part >= 0) c.rank = key_part;
  return c;
}

nlohmann::json GcnTrainer::ConfigJson() const { return config_.ToJson(source_->Partitioned()); }

void GcnTrainer::Prepare(std::span<const int64_t> seeds, int epoch, int64_t batch, Batch* b, int key_part) {
  if (key_part < 0) (void)fault::FaultPoint("step", comm_.Rank());  // TESSEL_FAULT tests (core/fault_inject.h)
  source_->MakeBatch(ctx_, seeds, TrainKey(KeyContext(key_part), epoch, batch, kPurposeSample), b, &tally_.counters);
  tally_.seeds += static_cast<int64_t>(seeds.size());
}

double GcnTrainer::Compute(const Batch& b, int64_t seed_count, int epoch, int64_t batch, int key_part) {
  const auto t0 = Clock::now();
  double loss_sum = 0;
  if (b.rows != nullptr && !b.rows->empty()) {
    const Matrix& logits = model_.Forward(ctx_, *b.x, b.x_rows, b.graphs, true,
                                          TrainKey(KeyContext(key_part), epoch, batch, kPurposeDropout), b.x_row_ids);
    const auto weight = static_cast<double>(seed_count);
    if (ctx_.IsCuda()) {
      // The loss stays on the device, summed over the epoch's steps, and is read once at its end (EpochLoss).
      kernels::SoftmaxCrossEntropyAdd(ctx_, logits, *b.labels, *b.rows, weight, tally_.device_loss_steps == 0,
                                      &grad_logits_, &device_loss_);
      ++tally_.device_loss_steps;
    } else {
      loss_sum = kernels::SoftmaxCrossEntropy(ctx_, logits, *b.labels, *b.rows, &grad_logits_) * weight;
    }
    const auto t1 = Clock::now();
    tally_.forward_s += std::chrono::duration<double>(t1 - t0).count();
    model_.Backward(ctx_, grad_logits_);
    tally_.backward_s += SecondsSince(t1);
  }
  tally_.compute_s += SecondsSince(t0);
  return loss_sum;
}

void GcnTrainer::Finish(int64_t seed_count, int64_t total_seeds, int epoch, int64_t batch, bool update) {
  if (comm_.Size() > 1) {  // one rank's gradient is already the mean over the whole batch
    std::vector<float> buf = PackGradients(model_.params(), seed_count, total_seeds);  // AverageGradients, timed
    SumTimed(buf, epoch, batch);
    UnpackGradients(buf, model_.params());
  }
  if (update) Update();
}

void GcnTrainer::FinishSum(std::vector<float>& sum, int epoch, int64_t batch) {
  if (comm_.Size() > 1) SumTimed(sum, epoch, batch);
  UnpackGradients(sum, model_.params());
  Update();
}

void GcnTrainer::SumTimed(std::vector<float>& buf, int epoch, int64_t batch) {
  const auto t0 = Clock::now();
  const uint64_t b0 = SentBytes(comm_);
  const uint64_t call = static_cast<uint64_t>(epoch) * static_cast<uint64_t>(steps_) + static_cast<uint64_t>(batch);
  SumGradients(comm_, buf, grad_compress_.get(), call, &tally_.grad_stats);
  tally_.allreduce_s += SecondsSince(t0);
  tally_.gradient_b += SentBytes(comm_) - b0;
}

void GcnTrainer::Update() {
  const auto t0 = Clock::now();
  adam_.Step(ctx_, model_.params());
  const double dt = SecondsSince(t0);
  tally_.compute_s += dt;
  tally_.optimizer_s += dt;
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
  // With virtual ranks the pipeline runs over the sub-steps and never delays a gradient (RunVirtual), so
  // --grad-staleness 1 does not ask for it there.
  return config_.overlap && source_->Samples() && steps_ > 1 && !ctx_.IsCuda() &&
         (ctx_.threads != 1 || (config_.dist.grad_staleness > 0 && !virtual_.Active()));
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
  TrainState s = CaptureState(CheckpointConfig(ConfigJson(), source_->scaling()), epochs_done, best_, model_, adam_);
  s.ranks = comm_.Size();
  SaveCheckpointLocked(config_.checkpoint_dir, s, /*only_if_newer=*/false);
}

void GcnTrainer::SaveJustInTime() const {
  TrainState s = CaptureState(CheckpointConfig(ConfigJson(), source_->scaling()), epochs_ended_, best_, model_, adam_);
  if (epochs_ended_ < config_.epochs) {  // inside an epoch (or between two): the steps of it in the weights
    s.epoch_steps_done = std::min(steps_, epoch_first_ + (adam_.steps() - epoch_adam0_));
    s.epoch_steps = steps_;
  }
  s.ranks = comm_.Size();
  s.just_in_time = true;
  const bool wrote = SaveCheckpointLocked(config_.checkpoint_dir, s, /*only_if_newer=*/true);
  // `tessel launch` reads the Adam steps of this line (app/launch.cc).
  log::Warn("rank {} at the failure: {} Adam steps (epoch {}, {} of {} steps done); just-in-time state {} {}",
            comm_.Rank(), s.adam_steps, epochs_ended_ + 1, s.epoch_steps_done, steps_,
            wrote ? "written to" : "already as new in", config_.checkpoint_dir.string());
}

TrainResult GcnTrainer::Train(const std::function<void(const EpochStats&)>& on_epoch) {
  ctx_.MakeCurrent();  // the calling thread may not be the constructing one
  // A rank that fails ends the job; the survivors first write the state of the last completed step (--checkpoint).
  struct JitHook {
    explicit JitHook(const GcnTrainer* t) : on(t != nullptr) {
      if (on) peer_failure::SetHook([t] { t->SaveJustInTime(); });
    }
    ~JitHook() { Off(); }
    void Off() {
      if (on) peer_failure::SetHook({});
      on = false;
    }
    bool on;
  } jit(comm_.Size() > 1 && !config_.checkpoint_dir.empty() ? this : nullptr);
  if (config_.dist.grad_staleness > 0 && comm_.Size() > 1 && (!Overlaps() || virtual_.Active()) && comm_.Rank() == 0) {
    log::Warn(
        "--grad-staleness 1 needs the two-thread pipeline (--overlap, sampled steps, more than one step per epoch, "
        "the CPU) and one part per rank; this run exchanges its gradients synchronously");
  }
  TrainResult result;
  result.setup_bytes = setup_bytes_;
  double time_sum = 0;
  // A line every 10 s when training is slow (a hub's whole neighbourhood, a large graph on few cores).
  Progress progress("training", static_cast<int64_t>(config_.epochs - start_epoch_) * steps_, "steps");
  for (int epoch = start_epoch_ + 1; epoch <= config_.epochs; ++epoch) {
    epoch_first_ = epoch == start_epoch_ + 1 ? first_step_ : 0;
    epoch_adam0_ = adam_.steps();
    (void)fault::FaultPoint("epoch", comm_.Rank());  // TESSEL_FAULT tests (core/fault_inject.h)
    GcnEpoch e(*this, epoch);
    e.RunSteps(progress);
    e.Evaluate();
    const double predicted = e.PredictSeconds();
    EpochStats st = e.Reduce(predicted);
    const bool stop = EndEpoch(st, &time_sum, on_epoch);
    result.epochs.push_back(st);
    if (stop) {
      result.stopped_early = true;
      break;
    }
  }
  // Evaluate the best-validation weights. The training is over (its last state is in the scheduled checkpoint): a
  // failure from here on writes nothing, so the best weights never pass for the last ones.
  jit.Off();
  best_.Restore(model_.params());
  source_->EvaluateSplits(ctx_, model_, config_.epochs, true, &result.train, &result.val, &result.test, nullptr);
  result.best_epoch = best_.epoch;
  result.memory = GatherMemory(comm_, source_->PartBytes(), peak_anon_);
  return result;
}

bool GcnTrainer::EndEpoch(EpochStats& st, double* time_sum, const std::function<void(const EpochStats&)>& on_epoch) {
  CheckLoss(st.epoch, st.loss);
  // Every rank holds the same val accuracy, so every rank takes the same decisions. An epoch without an evaluation
  // only ages the best (patience counts epochs, and is checked when an epoch is evaluated).
  bool stop = false;
  if (st.evaluated) {
    stop = best_.Update(st.epoch, st.val_acc, model_.params(), config_.patience);
  } else {
    best_.Age(st.epoch);
  }
  epochs_ended_ = st.epoch;  // from here the just-in-time state is this epoch's end (best_ includes it)
  epoch_first_ = 0;
  epoch_adam0_ = adam_.steps();
  *time_sum += st.epoch_seconds;
  st.eta_seconds = stop ? 0.0 : *time_sum / (st.epoch - start_epoch_) * (config_.epochs - st.epoch);
  peak_anon_ = std::max(peak_anon_, memory::AnonResidentBytes());
  if (on_epoch) on_epoch(st);
  if (CheckpointDue(config_, st.epoch, stop)) SaveState(st.epoch);
  return stop;
}

}  // namespace tessel::train::gcn
