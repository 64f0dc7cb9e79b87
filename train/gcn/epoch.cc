// One epoch of GCN training, phase by phase (epoch.h).
#include "train/gcn/epoch.h"

#include <algorithm>
#include <exception>
#include <string_view>
#include <utility>

#include "core/clock.h"
#include "core/fault_inject.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "core/parallel.h"
#include "core/pinned_memory.h"
#include "core/worker.h"
#include "train/gcn/trainer.h"

namespace tessel::train::gcn {
namespace {

constexpr std::string_view kStatsPurpose = "stats";

using Clock = std::chrono::steady_clock;

// Seeds of step s for a rank with n training nodes: the s-th slice of bs (every node in the one step when bs is 0).
int64_t StepSeeds(int64_t n, int64_t s, int64_t bs) { return bs > 0 ? std::clamp<int64_t>(n - s * bs, 0, bs) : n; }

}  // namespace

GcnEpoch::GcnEpoch(GcnTrainer& trainer, int epoch)
    : t_(trainer),
      tally_(trainer.tally_),
      epoch_(epoch),
      first_(trainer.epoch_first_),
      t0_(Clock::now()),
      cpu0_(std::clock()),
      device0_(device::ReadCounters()),
      pinned0_(device::ReadPinnedCounters().allocations),
      bytes0_(SentBytes(trainer.comm_)),
      cost0_(trainer.comm_.Bytes().TotalCost()) {
  tally_ = EpochTally{};
  // A step's threads: the compute threads, and the pipeline's communicating one.
  tally_.step_times = StepTimes{std::vector<double>(static_cast<size_t>(t_.steps_), 0.0),
                                std::vector<double>(static_cast<size_t>(t_.steps_), 0.0),
                                ThreadLimit::Current() + (t_.Overlaps() ? 1 : 0)};
  if (t_.virtual_.Active()) {
    const int32_t first_part = t_.virtual_.first[static_cast<size_t>(t_.comm_.Rank())];
    orders_ = t_.part_train_;
    for (size_t i = 0; i < orders_.size(); ++i) {
      ShuffleSeeds(t_.KeyContext(first_part + static_cast<int>(i)), epoch_, orders_[i]);
    }
  } else {
    orders_ = {t_.source_->TrainNodes()};
    if (t_.source_->Samples()) ShuffleSeeds(t_.ctx_, epoch_, orders_[0]);
  }
}

std::span<const int64_t> GcnEpoch::SeedsOf(int64_t s, size_t i) const {
  if (i >= orders_.size()) return {};
  const std::vector<int64_t>& order = orders_[i];
  const int64_t bs = t_.config_.batch_size;
  const auto n_own = static_cast<int64_t>(order.size());
  return {order.data() + (bs > 0 ? std::min(n_own, s * bs) : 0), static_cast<size_t>(StepSeeds(n_own, s, bs))};
}

int64_t GcnEpoch::UnionOf(int64_t s) const {
  const int64_t bs = t_.config_.batch_size;
  int64_t union_size = 0;
  for (int64_t c : t_.train_counts_) union_size += StepSeeds(c, s, bs);
  return union_size;
}

void GcnEpoch::RunSteps(Progress& progress) {
  if (t_.virtual_.Active()) {
    RunVirtual(progress);
  } else if (t_.Overlaps()) {
    RunPipelined(progress);
  } else {
    RunSerial(progress);
  }
  // The last steps' input rows (a batch's largest array) are not read again before the next epoch refills the
  // batches: they go before the evaluation allocates its own.
  for (Batch& b : t_.batches_) {
    b.gathered = FeatureMatrix();
    b.x = nullptr;
    b.x_rows = {};
  }
  train_seconds_ = SecondsSince(t0_);
}

void GcnEpoch::RunSerial(Progress& progress) {
  for (int64_t s = first_; s < t_.steps_; ++s) {
    interrupt::Check("gcn training");
    const StepMark mark = MarkStep();
    loss_sum_ += t_.Step(SeedsOf(s), UnionOf(s), epoch_, s, true);
    EndStep(s, mark, 0.0, 0.0);
    progress.Add();
  }
}

// Sub-step i samples for part first[rank] + i with the K-rank run's keys for it (the sampler serves each rank's rows
// with that rank's i-th part's key and skew), so the batch is the one the K-rank run's rank takes at this step. Its
// gradient enters the sum scaled as that rank's would (PackGradients: seeds over the step's union), and one sum over
// ranks ends the step: the K-rank run's update up to the order of the float additions. A sub-step past this rank's
// parts (it holds fewer than another rank) samples no seeds but joins the sampler's exchanges.
// With the pipeline (GcnTrainer::Overlaps) the sub-steps form one sequence, f = s * subs + i: while the worker computes
// sub-step f, this thread samples and fetches f + 1 (which reads no weights), as RunPipelined does with steps; the
// gradients are always summed synchronously (no --grad-staleness), after a step's last sub-step.
void GcnEpoch::RunVirtual(Progress& progress) {
  const sampling::VirtualParts& vp = t_.virtual_;
  const int rank = t_.comm_.Rank();
  const int32_t first_part = vp.first[static_cast<size_t>(rank)];
  const int64_t subs = vp.SubSteps();
  const bool overlap = t_.Overlaps();
  if (overlap && !t_.worker_) t_.worker_ = std::make_unique<BackgroundWorker>();
  const int64_t end = t_.steps_ * subs;
  const auto prepare = [&](int64_t f) {
    const int64_t s = f / subs;
    const auto i = static_cast<int32_t>(f % subs);
    if (i == 0) (void)fault::FaultPoint("step", rank);  // TESSEL_FAULT tests: once per step, as without virtual ranks
    t_.Prepare(SeedsOf(s, static_cast<size_t>(i)), epoch_, s, &t_.batches_[f % 2], first_part + i);
  };
  if (overlap && first_ < t_.steps_) prepare(first_ * subs);
  StepMark mark;
  std::vector<float> sum;
  for (int64_t f = first_ * subs; f < end; ++f) {
    const int64_t s = f / subs;
    const auto i = static_cast<int32_t>(f % subs);
    if (i == 0) {
      interrupt::Check("gcn training");
      mark = MarkStep();
      sum.clear();
    }
    const auto n = static_cast<int64_t>(SeedsOf(s, static_cast<size_t>(i)).size());
    const Batch& cur = t_.batches_[f % 2];
    if (overlap) {
      double loss = 0;
      t_.worker_->RunAlongside([&, s, i, n] { loss = t_.Compute(cur, n, epoch_, s, first_part + i); },
                               [&] {
                                 if (f + 1 < end) prepare(f + 1);
                               });
      loss_sum_ += loss;
    } else {
      prepare(f);
      loss_sum_ += t_.Compute(cur, n, epoch_, s, first_part + i);
    }
    if (n > 0) {
      std::vector<float> g = PackGradients(t_.model_.params(), n, UnionOf(s));
      if (sum.empty()) {
        sum = std::move(g);
      } else {
        for (size_t k = 0; k < sum.size(); ++k) sum[k] += g[k];
      }
    }
    if (i + 1 < subs) continue;
    if (sum.empty()) sum = PackGradients(t_.model_.params(), 0, UnionOf(s));  // zeros: this rank had no seeds
    t_.FinishSum(sum, epoch_, s);
    EndStep(s, mark, 0.0, 0.0);
    progress.Add();
  }
}

// A pipeline of width two: while the worker thread runs forward/backward of step s, this thread (the one that owns
// the communicator) samples and fetches step s + 1. Sampling and fetching never read the weights and every draw is
// keyed by (epoch, step), so the result is the sequential order's.
// With --grad-staleness 1 this thread also sums step s - 1's gradient while step s computes, and the update after
// step s applies it; the last step's gradient is summed and applied at the end of the epoch.
void GcnEpoch::RunPipelined(Progress& progress) {
  comm::Communicator& comm = t_.comm_;
  if (!t_.worker_) t_.worker_ = std::make_unique<BackgroundWorker>();
  // The first epoch exchanges synchronously: a stale gradient costs most while the weights move fastest.
  const bool stale = t_.config_.dist.grad_staleness > 0 && comm.Size() > 1 && epoch_ > 1;
  std::vector<float> pending;  // step s - 1's gradient share, then its sum over ranks
  int64_t pending_step = 0;
  const auto sum_pending = [&] { t_.SumTimed(pending, epoch_, pending_step); };
  const auto apply = [&](std::span<const float> sum) {
    UnpackGradients(sum, t_.model_.params());
    t_.Update();
  };
  if (first_ >= t_.steps_) return;
  t_.Prepare(SeedsOf(first_), epoch_, first_, &t_.batches_[first_ % 2]);
  for (int64_t s = first_; s < t_.steps_; ++s) {
    interrupt::Check("gcn training");
    const Batch& cur = t_.batches_[s % 2];
    const auto n = static_cast<int64_t>(SeedsOf(s).size());
    double loss = 0;
    double compute_seconds = 0;
    double compute_cpu = 0;  // the worker thread's CPU seconds in it
    const StepMark mark = MarkStep();
    double thread_seconds = 0;  // this thread's part of the step
    t_.worker_->RunAlongside(
        [&, s, n] {
          const auto t0 = Clock::now();
          const double cpu0 = ThreadCpuSeconds();
          loss = t_.Compute(cur, n, epoch_, s);
          compute_seconds = SecondsSince(t0);
          compute_cpu = ThreadCpuSeconds() - cpu0;
        },
        [&] {
          if (s + 1 < t_.steps_) t_.Prepare(SeedsOf(s + 1), epoch_, s + 1, &t_.batches_[(s + 1) % 2]);
          if (stale && !pending.empty()) sum_pending();
          thread_seconds = SecondsSince(mark.t0);
        });
    double correction = 0;
    if (t_.network_) {
      // The serial formula counts this thread's calls at the model's time on top of everything; the step really
      // took the longer of the compute and this thread's work, which the model changes only in its calls.
      const comm::CallCost calls = comm.Bytes().TotalCost().Since(mark.cost0);
      const double modeled = calls.modeled;
      correction = std::max(compute_seconds, thread_seconds - calls.seconds + modeled) -
                   std::max(compute_seconds, thread_seconds) - (modeled - calls.seconds);
    }
    loss_sum_ += loss;
    if (stale) {
      std::vector<float> mine = PackGradients(t_.model_.params(), n, UnionOf(s));
      if (!pending.empty()) apply(pending);
      pending = std::move(mine);
      pending_step = s;
    } else {
      t_.Finish(n, UnionOf(s), epoch_, s, true);
    }
    EndStep(s, mark, correction, compute_cpu);
    progress.Add();
  }
  if (stale && !pending.empty()) {
    sum_pending();
    apply(pending);
  }
}

GcnEpoch::StepMark GcnEpoch::MarkStep() const {
  return {Clock::now(), t_.comm_.Bytes().TotalCost(), t_.network_ ? ThreadCpuSeconds() : 0.0, device::ReadCounters()};
}

void GcnEpoch::EndStep(int64_t s, const StepMark& m, double overlap_correction, double worker_cpu) {
  const device::Counters d = device::ReadCounters() - m.device0;
  device::Counters& sum = tally_.step_device;
  sum.launches += d.launches;
  sum.synchronizations += d.synchronizations;
  sum.h2d_copies += d.h2d_copies;
  sum.d2h_copies += d.d2h_copies;
  sum.allocations += d.allocations;
  tally_.max_step_launches = std::max(tally_.max_step_launches, d.launches);
  tally_.max_step_synchronizations = std::max(tally_.max_step_synchronizations, d.synchronizations);
  tally_.max_step_d2h_copies = std::max(tally_.max_step_d2h_copies, d.d2h_copies);
  if (!t_.network_) return;
  StepTimes& times = tally_.step_times;
  const double wall = SecondsSince(m.t0);
  const comm::CallCost calls = t_.comm_.Bytes().TotalCost().Since(m.cost0);
  const double modeled = calls.modeled;
  // The CPU the step needs, for the CPU bound at the epoch's end: its own work outside its calls, and its calls'
  // CPU on the named network. The communicator polls throughout a call, so a call takes CPU for as long as it lasts:
  // at most what it took here, and at most its modelled time.
  const double work =
      std::max(0.0, ThreadCpuSeconds() - m.cpu0 - calls.cpu) + worker_cpu + std::min(calls.cpu, calls.modeled);
  times.predicted[static_cast<size_t>(s)] = wall - calls.seconds + modeled + overlap_correction;
  times.work[static_cast<size_t>(s)] = work;
  times.wall += wall;
  times.calls += calls.seconds;
  times.modeled += modeled;
}

void GcnEpoch::Evaluate() {
  comm::Communicator& comm = t_.comm_;
  const auto t0 = Clock::now();
  const uint64_t eval_b0 = SentBytes(comm);
  evaluated_ = t_.Evaluates(epoch_);  // the same on every rank
  if (evaluated_)
    t_.source_->EvaluateSplits(t_.ctx_, t_.model_, epoch_, false, &train_, &val_, &test_, &eval_counters_);
  eval_b_ = SentBytes(comm) - eval_b0;
  eval_raw_b_ = eval_b_ - eval_counters_.feature_bytes + eval_counters_.feature_raw_bytes;
  eval_seconds_ = evaluated_ ? SecondsSince(t0) : 0.0;
  cpu_seconds_ = static_cast<double>(std::clock() - cpu0_) / CLOCKS_PER_SEC;
  cost_ = comm.Bytes().TotalCost().Since(cost0_);  // this epoch's, before the statistics'
}

// The time model (docs/comm.md): every step is synchronous (it ends in the gradient sum, or the next step's
// exchanges), so the epoch takes the sum over steps of the slowest rank's predicted step, plus the slowest rank's
// prediction of the rest (the first batch, the last stale sum, the evaluation).
// The CPU bound (docs/comm.md, "Time model"): a step takes at least the mean rank's CPU work over the cores its
// threads can use (fewer than one where ranks outnumber the machine's cores; one for the pipeline's two threads at
// one core per rank).
double GcnEpoch::PredictSeconds() {
  if (!t_.network_) return 0.0;
  comm::Communicator& comm = t_.comm_;
  const StepTimes& times = tally_.step_times;
  const double rest =
      (train_seconds_ + eval_seconds_ - times.wall) - (cost_.seconds - times.calls) + (cost_.modeled - times.modeled);
  std::vector<double> parts = times.predicted;
  parts.push_back(rest);
  comm.Allreduce<double>(parts, comm::ReduceOp::kMax, kStatsPurpose).ThrowIfError();
  std::vector<double> work = times.work;
  comm.Allreduce<double>(work, comm::ReduceOp::kSum, kStatsPurpose).ThrowIfError();
  return comm::SynchronousSeconds(parts, work, comm.Size(), std::min(t_.cores_, static_cast<double>(times.threads)));
}

// This epoch's statistics reduced over ranks: sums, then maxima of the times. The two vectors' layouts are read back
// by index below; a new figure goes at the end of its vector.
EpochStats GcnEpoch::Reduce(double predicted_seconds) {
  comm::Communicator& comm = t_.comm_;
  const StepCounters& c = tally_.counters;
  // On a device the steps' losses were summed there: one download an epoch (the same float64 sum as on the host).
  if (tally_.device_loss_steps > 0) loss_sum_ += t_.device_loss_.Host()[0];
  std::vector<double> sums = {loss_sum_,
                              static_cast<double>(tally_.seeds),
                              static_cast<double>(c.sampled_edges),
                              static_cast<double>(c.remote_picks),
                              static_cast<double>(c.remote_input_nodes),
                              static_cast<double>(c.feature_bytes),
                              static_cast<double>(c.sample_bytes),
                              static_cast<double>(tally_.gradient_b),
                              static_cast<double>(eval_b_),
                              static_cast<double>(SentBytes(comm) - bytes0_),
                              cpu_seconds_,
                              static_cast<double>(c.feature_raw_bytes),
                              static_cast<double>(t_.grad_compress_ ? tally_.grad_stats.raw_bytes : tally_.gradient_b)};
  // The device runtime's work this epoch (core/device.h counters of this process; an MPI rank is a process).
  const device::Counters dev = device::ReadCounters() - device0_;
  for (int64_t v :
       {dev.allocations, dev.runtime_allocations, dev.h2d_copies, dev.h2d_bytes, dev.d2h_copies, dev.d2h_bytes,
        dev.synchronizations, device::ReadPinnedCounters().allocations - pinned0_, c.fetched_rows}) {
    sums.push_back(static_cast<double>(v));
  }
  sums.push_back(static_cast<double>(eval_raw_b_));
  sums.push_back(static_cast<double>(c.sample_raw_bytes));
  const device::Counters& sd = tally_.step_device;
  for (int64_t v : {dev.launches, sd.launches, sd.synchronizations, sd.h2d_copies, sd.d2h_copies, sd.allocations})
    sums.push_back(static_cast<double>(v));
  comm.Allreduce<double>(sums, comm::ReduceOp::kSum, kStatsPurpose).ThrowIfError();
  const comm::CompressStats& g = tally_.grad_stats;
  std::vector<double> maxima = {c.sample_seconds,
                                c.fetch_seconds,
                                tally_.compute_s,
                                tally_.allreduce_s,
                                eval_seconds_,
                                train_seconds_,
                                train_seconds_ + eval_seconds_,
                                c.compress_seconds + g.encode_seconds + eval_counters_.compress_seconds,
                                c.decompress_seconds + g.decode_seconds + eval_counters_.decompress_seconds,
                                cost_.seconds,
                                predicted_seconds,
                                tally_.forward_s,
                                tally_.backward_s,
                                tally_.optimizer_s,
                                static_cast<double>(tally_.max_step_launches),
                                static_cast<double>(tally_.max_step_synchronizations),
                                static_cast<double>(tally_.max_step_d2h_copies)};
  comm.Allreduce<double>(maxima, comm::ReduceOp::kMax, kStatsPurpose).ThrowIfError();
  EpochStats st;
  st.epoch = epoch_;
  st.steps = t_.steps_;
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
  st.device_launches = static_cast<int64_t>(sums[24]);
  st.step_launches = static_cast<int64_t>(sums[25]);
  st.step_synchronizations = static_cast<int64_t>(sums[26]);
  st.step_h2d_copies = static_cast<int64_t>(sums[27]);
  st.step_d2h_copies = static_cast<int64_t>(sums[28]);
  st.step_allocations = static_cast<int64_t>(sums[29]);
  st.max_step_launches = static_cast<int64_t>(maxima[14]);
  st.max_step_synchronizations = static_cast<int64_t>(maxima[15]);
  st.max_step_d2h_copies = static_cast<int64_t>(maxima[16]);
  if (t_.ctx_.IsCuda()) {
    log::Debug(
        "epoch {}: device allocations {} ({} from the runtime), {} uploads ({} B), {} downloads ({} B), {} "
        "synchronisations",
        epoch_, st.device_allocations, st.device_runtime_allocations, st.h2d_copies, st.h2d_bytes, st.d2h_copies,
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
  st.evaluated = evaluated_;
  st.train_acc = train_.accuracy;
  st.val_acc = val_.accuracy;
  return st;
}

}  // namespace tessel::train::gcn
