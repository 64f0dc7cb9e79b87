// What GCN training reports: one epoch's statistics as every rank sees them (EpochStats, reduced over ranks), each
// rank's memory, and the run's result with its JSON (the CLI's --json and metrics file, Python's dict).
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/communicator.h"
#include "train/gcn/metrics.h"

namespace tessel::train::gcn {

// One epoch as every rank sees it: values are reduced over ranks (sums, or maxima for the seconds), so every rank
// holds the same numbers. One process is the one-rank case.
struct EpochStats {
  int epoch = 0;  // 1-based
  int64_t steps = 0;
  double loss = 0;  // mean loss over every rank's seeds
  // Whether the epoch ended with an evaluation (TrainConfig::eval_every); without one the accuracies are not
  // measured (JSON null) and eval_seconds and eval_bytes are 0.
  bool evaluated = true;
  double train_acc = 0;
  double val_acc = 0;
  // Seconds, the maximum over ranks (the slowest rank sets the pace).
  double train_seconds = 0;      // every step: sampling, fetching, forward, backward, allreduce, update
  double sample_seconds = 0;     // part of train_seconds spent sampling (with its exchanges)
  double fetch_seconds = 0;      // part of train_seconds spent gathering / fetching input rows
  double compute_seconds = 0;    // forward, loss, backward, Adam: the sum of the next three
  double forward_seconds = 0;    // forward pass and loss (sampled dense batches gather their input rows here, fused)
  double backward_seconds = 0;   // backward pass
  double optimizer_seconds = 0;  // Adam steps
  double allreduce_seconds = 0;  // gradient allreduce (0 on one rank: nothing to average)
  double eval_seconds = 0;       // full-neighbour inference for the accuracies
  double epoch_seconds = 0;      // train + eval
  double cpu_seconds = 0;        // process CPU time (all threads) of training and evaluation, summed over ranks
  double eta_seconds = 0;        // time left at this epoch's pace (0 after the last or an early stop)
  // Bytes sent during the epoch, summed over ranks (comm::ByteCounter by purpose); all 0 on one rank.
  uint64_t feature_bytes = 0;   // remote input features (purpose "features", ids included)
  uint64_t sample_bytes = 0;    // remote sampling requests and answers
  uint64_t gradient_bytes = 0;  // purpose "gradients"
  uint64_t eval_bytes = 0;      // the evaluation's exchanges (--eval full: halo rows of each layer)
  uint64_t total_bytes = 0;     // every purpose
  // What feature_bytes, gradient_bytes and eval_bytes would have been without --feature-compress / --grad-compress
  // (equal to them when off), and the seconds spent encoding and decoding, the evaluation's included (maximum over
  // ranks).
  uint64_t feature_raw_bytes = 0;
  uint64_t gradient_raw_bytes = 0;
  uint64_t eval_raw_bytes = 0;
  uint64_t sample_raw_bytes = 0;  // sample_bytes with 8-byte ids and 16-byte picks (the sampler's compact format off)
  double compress_seconds = 0;
  double decompress_seconds = 0;
  // Seconds inside communicator calls (waiting for peers included; maximum over ranks), and with --network the
  // epoch time predicted on that network: per rank, epoch_seconds - comm_seconds + the alpha-beta time of its calls
  // (maximum over ranks; 0 without --network). Overlapped steps count as the longer of their compute and their
  // communicating thread's predicted time (docs/comm.md, "Time model").
  double comm_seconds = 0;
  double predicted_epoch_seconds = 0;
  // Summed over ranks.
  int64_t seed_nodes = 0;          // training nodes visited
  int64_t sampled_edges = 0;       // neighbour picks of the sampled blocks (0 for full-graph steps)
  int64_t remote_input_nodes = 0;  // first-layer source nodes owned by another rank
  int64_t fetched_rows = 0;        // of those, rows received from their owners (not in the halo cache)
  double remote_share = 0;         // remote picks / all picks of the sampler
  // The device runtime's work (core/device.h Counters; 0 on the CPU): allocations asked for and those the caching
  // pool could not serve (cudaMalloc calls), host-to-device and device-to-host copies with their bytes, and
  // synchronisations. Per process, summed over ranks (an MPI rank is a process; ranks that are threads of one
  // process each count the whole process).
  int64_t device_allocations = 0;
  int64_t device_runtime_allocations = 0;
  int64_t h2d_copies = 0;
  uint64_t h2d_bytes = 0;
  int64_t d2h_copies = 0;
  uint64_t d2h_bytes = 0;
  int64_t device_synchronizations = 0;
  int64_t pinned_allocations = 0;  // page-locked host arrays allocated (core/pinned_memory.h; 0 in steady state)
  int64_t device_launches = 0;     // kernel launches (as a GPU makes them; counted on the simulated device too)
  // The training steps' share (each step from its start to its end, evaluation excluded): summed over the steps,
  // and the most one step made (the largest over ranks).
  int64_t step_launches = 0;
  int64_t step_synchronizations = 0;
  int64_t step_h2d_copies = 0;
  int64_t step_d2h_copies = 0;
  int64_t step_allocations = 0;
  int64_t max_step_launches = 0;
  int64_t max_step_synchronizations = 0;
  int64_t max_step_d2h_copies = 0;
  nlohmann::json ToJson() const;
};

// One rank's memory at the end of training (TrainResult::memory): what the process held and what its part is.
struct RankMemory {
  int64_t peak_rss_bytes = 0;       // getrusage ru_maxrss: the most resident at any time (mapped files included)
  int64_t rss_anon_bytes = 0;       // RssAnon (/proc/self/status) at the end of training; -1 when unknown
  int64_t peak_rss_anon_bytes = 0;  // the largest RssAnon seen after set-up and after each epoch; -1 when unknown
  int64_t part_bytes = 0;           // the bytes of the rank's part (the arrays of its part folder); 0 for one process
};

struct TrainResult {
  std::vector<EpochStats> epochs;  // this run's epochs (after a resume, only the new ones)
  // Per rank, in rank order (threads of one process each report the whole process). JSON "memory": the ranks and
  // the largest peak_rss_bytes / part_bytes.
  std::vector<RankMemory> memory;
  int best_epoch = 0;  // the evaluated epoch of the best validation accuracy (0: none evaluated in any run)
  bool stopped_early = false;
  ClassMetrics train, val, test;  // of the best-validation weights, over the global splits
  uint64_t setup_bytes = 0;       // summed over ranks: weight broadcast, degree and cache exchanges
  // The above plus the per-epoch means and medians, rates and totals over the epochs (every *_bytes and *_seconds).
  nlohmann::json ToJson() const;
};

// Every rank's RankMemory (peak RSS and RssAnon now, `peak_anon` the largest RssAnon seen before, `part_bytes`), in
// rank order. Collective (one allgather, purpose "stats").
std::vector<RankMemory> GatherMemory(comm::Communicator& comm, int64_t part_bytes, int64_t peak_anon);

}  // namespace tessel::train::gcn
