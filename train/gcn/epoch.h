// One epoch of GCN training as its named phases (GcnTrainer::Train runs them in this order, every rank alike):
//
//   1. RunSteps        every step of the epoch: serially, or as the two-thread pipeline (the next batch sampled and
//                      fetched, and with --grad-staleness 1 the previous gradient summed, while a step computes), or
//                      with virtual ranks as one sub-step per part a rank holds and one gradient sum
//   2. Evaluate        the accuracies, when the epoch is evaluated (--eval-every); collective
//   3. PredictSeconds  the time model's epoch time on --network (docs/comm.md, "Time model"); collective, 0 without
//   4. Reduce          this rank's tally reduced over ranks into the EpochStats every rank then holds; collective
//
// after which the trainer decides (best weights, early stopping) and checkpoints (GcnTrainer::EndEpoch). What a
// step adds to the epoch's figures is the EpochTally below; the time model's view of each step is in StepTimes.
// The order of the collectives is part of the protocol: every rank calls them in this order.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <span>
#include <vector>

#include "comm/communicator.h"
#include "comm/compress.h"
#include "core/device.h"
#include "core/progress.h"
#include "train/gcn/graph_source.h"
#include "train/gcn/metrics.h"
#include "train/gcn/train_result.h"

namespace tessel::train::gcn {

class GcnTrainer;

// Bytes this rank has sent so far, all purposes (the trainer's and the epoch's byte figures are differences of it).
inline uint64_t SentBytes(const comm::Communicator& comm) { return comm.Bytes().Total(); }

// The time model's view of an epoch's steps (docs/comm.md, "Time model"): per step, this rank's predicted seconds
// (its wall time with its calls' measured seconds replaced by the model's, an overlapped step as the longer of its two
// threads), and the wall, measured-call and modelled seconds of all steps together. `work` per step: the CPU seconds
// this rank needs (its communicating thread and the pipeline's compute thread outside the calls, and the calls' CPU
// at most for their modelled time; oneTBB's other workers are not counted, so the bound is a lower one), for the CPU
// bound.
struct StepTimes {
  std::vector<double> predicted;
  std::vector<double> work;
  int threads = 1;  // threads working in a step (the pipeline's communicating one included)
  double wall = 0, calls = 0, modeled = 0;
};

// What this rank measured in the epoch in progress: the steps' batches (StepCounters), the seconds of the step's
// parts, the gradient exchange's bytes and codec figures, the seeds visited. Reset when an epoch starts; the
// trainer's step parts (Prepare, Compute, Finish) add to it; GcnEpoch::Reduce sums it over ranks.
struct EpochTally {
  StepCounters counters;
  double compute_s = 0, allreduce_s = 0, forward_s = 0, backward_s = 0, optimizer_s = 0;
  uint64_t gradient_b = 0;
  comm::CompressStats grad_stats;
  int64_t seeds = 0;
  int64_t device_loss_steps = 0;  // on a device: the steps whose losses were summed there (read once, in Reduce)
  StepTimes step_times;
  // The device runtime's work of the steps (core/device.h counters, from each step's start to its end): summed, and
  // the most one step made.
  device::Counters step_device;
  int64_t max_step_launches = 0, max_step_synchronizations = 0, max_step_d2h_copies = 0;
};

// One epoch of a GcnTrainer (see the phases above). Made at the epoch's start (it resets the trainer's tally and
// marks the clocks and counters that the statistics are measured from); lives on Train's stack for one epoch.
class GcnEpoch {
 public:
  GcnEpoch(GcnTrainer& trainer, int epoch);

  // 1. Every step of the epoch, one `progress` unit each.
  void RunSteps(Progress& progress);
  // 2. The accuracies of the current weights when the epoch is evaluated (GcnTrainer::Evaluates). Collective.
  void Evaluate();
  // 3. The epoch's predicted seconds on --network (0 without). Collective with --network.
  double PredictSeconds();
  // 4. The epoch's statistics, reduced over ranks (sums, and maxima of the seconds). Collective.
  EpochStats Reduce(double predicted_seconds);

 private:
  // Where a step began: its clock and the communicator's recorded costs.
  struct StepMark {
    std::chrono::steady_clock::time_point t0;
    comm::CallCost cost0;
    double cpu0 = 0;  // ThreadCpuSeconds() of the thread that owns the communicator
    device::Counters device0;
  };
  void RunSerial(Progress& progress);
  void RunPipelined(Progress& progress);
  // Virtual ranks (GcnTrainer's virtual_parts): each step runs a sub-step per part this rank holds, as many as the
  // rank holding the most (empty ones after its own), and sums the gradients once.
  void RunVirtual(Progress& progress);
  // This rank's seeds of step s (a slice of the shuffled order; of its i-th part's with virtual ranks, empty past
  // its parts) and the union batch size over ranks (over parts).
  std::span<const int64_t> SeedsOf(int64_t s, size_t i = 0) const;
  int64_t UnionOf(int64_t s) const;
  StepMark MarkStep() const;
  // Records step s from `m` to now in the time model's StepTimes; `overlap_correction` is what the overlapped
  // pipeline changes in it (0: serial), `worker_cpu` the CPU seconds of the pipeline's compute thread in it (0:
  // serial). Nothing without --network.
  void EndStep(int64_t s, const StepMark& m, double overlap_correction, double worker_cpu);

  GcnTrainer& t_;
  EpochTally& tally_;
  const int epoch_;
  const int64_t first_;  // the first step to run (a resume inside this epoch; 0 otherwise)
  // Marks at the epoch's start.
  const std::chrono::steady_clock::time_point t0_;
  const std::clock_t cpu0_;
  const device::Counters device0_;
  const int64_t pinned0_;
  const uint64_t bytes0_;
  const comm::CallCost cost0_;
  // This rank's training nodes, shuffled by (seed, rank, epoch) when steps sample; with virtual ranks one order per
  // part it holds, each shuffled by (seed, part, epoch).
  std::vector<std::vector<int64_t>> orders_;
  double loss_sum_ = 0;       // this rank's summed loss of the steps (the device's added in Reduce)
  double train_seconds_ = 0;  // RunSteps's wall seconds
  // Evaluate's results: the splits' metrics, the rows it sent (on the wire and uncompressed) and its coding seconds.
  bool evaluated_ = false;
  ClassMetrics train_, val_, test_;
  StepCounters eval_counters_;
  uint64_t eval_b_ = 0, eval_raw_b_ = 0;
  double eval_seconds_ = 0;
  // Read when the evaluation ends (the epoch's work, before any call of the statistics): the process's CPU seconds
  // and the communicator's recorded costs of the epoch.
  double cpu_seconds_ = 0;
  comm::CallCost cost_;
};

}  // namespace tessel::train::gcn
