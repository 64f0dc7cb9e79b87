// The distributed GCN trainer (DESIGN.md §4 "Distributed GCN", docs/distributed.md): rank r trains on part r of a
// partition folder with skewed remote sampling, batched feature fetches, weighted gradient allreduce and Adam.
//
// Each step every rank samples from its own training nodes (DistNeighborSampler: owners sample their nodes for the
// requesters, one exchange per layer, optionally skewed towards owned neighbours: Jiang & Rumi, "Communication-
// Efficient Sampling for Distributed Training of Graph Convolutional Networks", 2021), fetches the missing input
// features in one all-to-all (DistFeatureStore, halo cache), runs forward/backward on the sampled blocks, and sums
// gradients scaled by b_r / B (b_r its seeds, B the union), which is exactly the gradient of the mean loss over the
// union batch; every rank then applies the same Adam step. Evaluation never samples nor skews: layer-wise
// full-neighbour inference over the 1-hop halo (one HaloExchange per layer), counts summed over ranks.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/communicator.h"
#include "core/context.h"
#include "core/params.h"
#include "partition/partition_build.h"
#include "sampling/skewed_policy.h"
#include "train/gcn/metrics.h"
#include "train/gcn/model.h"
#include "train/gcn/optimizer.h"
#include "train/gcn/train_common.h"
#include "train/gcn/trainer.h"

namespace tessel::train::gcn {

struct DistTrainConfig {
  // Model, optimiser, epochs, patience, checkpoints as in the single-process trainer. batch_size is the number of
  // seed nodes per rank and step (0 = all of the rank's training nodes in one step); fanouts are required.
  TrainConfig train;
  sampling::SkewOptions skew;     // training only; evaluation never skews
  int64_t feature_cache = -1;     // halo feature rows cached per rank: -1 = the whole halo, 0 = none
  void Validate() const;          // throws with the flag name and the fix
  nlohmann::json ToJson() const;  // train's parameters, these, and "distributed": true

  // The --help section of the distributed options.
  static constexpr std::string_view kGroup = "Distributed (mpirun -np K, one rank per part; docs/distributed.md)";
  // The distributed parameters, declared once (core/params.h); TrainConfig::Params declares the rest.
  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(ParamInfo{"skew",
                "Skewed sampling: owned neighbours weigh s, remote ones 1 (s >= 1; 1 = uniform); unbiased",
                {},
                kGroup},
      c.skew.skew);
    v(ParamInfo{"skew_variance",
                "Choose s per node from a variance budget eps > 0 instead of --skew (second moment <= (1+eps)x); "
                "-1 = off",
                {},
                kGroup},
      c.skew.variance_budget);
    v(ParamInfo{"skew_max", "Largest s the variance budget may pick (>= 1)", {}, kGroup}, c.skew.max_skew);
    v(ParamInfo{"feature_cache",
                "Halo feature rows cached per rank: -1 = the whole halo, 0 = none, N = the first N",
                {},
                kGroup},
      c.feature_cache);
  }
};

// One epoch as every rank sees it (all values are already reduced over ranks, identical on every rank).
struct DistEpochStats {
  int epoch = 0;  // 1-based
  int64_t steps = 0;
  double loss = 0;  // mean loss over every rank's seeds
  double train_acc = 0;
  double val_acc = 0;
  // Seconds, the maximum over ranks (the slowest rank sets the pace).
  double sample_seconds = 0;     // DistNeighborSampler::Sample (includes its exchanges)
  double fetch_seconds = 0;      // DistFeatureStore::Fetch
  double compute_seconds = 0;    // forward, loss, backward, Adam
  double allreduce_seconds = 0;  // gradient allreduce
  double eval_seconds = 0;       // distributed full-neighbour inference
  double epoch_seconds = 0;
  // Bytes sent during the epoch, summed over ranks (comm::ByteCounter by purpose).
  uint64_t feature_bytes = 0;   // remote input features (purpose "features", ids included)
  uint64_t sample_bytes = 0;    // remote sampling requests and answers
  uint64_t gradient_bytes = 0;  // purpose "gradients"
  uint64_t eval_bytes = 0;      // halo exchanges of the evaluation
  uint64_t total_bytes = 0;     // every purpose
  // Summed over ranks.
  int64_t seed_nodes = 0;
  int64_t sampled_edges = 0;
  int64_t remote_input_nodes = 0;  // first-layer source nodes owned by another rank
  double remote_share = 0;         // remote picks / all picks of the sampler
  nlohmann::json ToJson() const;
};

struct DistTrainResult {
  std::vector<DistEpochStats> epochs;  // this run's epochs
  int best_epoch = 0;
  bool stopped_early = false;
  ClassMetrics train, val, test;  // of the best-validation weights, over the global splits
  uint64_t setup_bytes = 0;       // summed over ranks: weight broadcast, degree and cache exchanges
  nlohmann::json ToJson() const;  // includes totals over the epochs
};

// Scales each rank's gradients by local_count / total_count and sums them over ranks (purpose "gradients"), so
// every rank holds sum_r (b_r / B) g_r: the gradient of the mean loss over the union batch when g_r is the
// gradient of rank r's mean loss over its b_r seeds. A rank with local_count 0 contributes zeros. Collective.
void AverageGradients(comm::Communicator& comm, std::vector<Param>& params, int64_t local_count, int64_t total_count);

class DistGcnTrainer {
 public:
  // `part` is this rank's part (part.part == comm.Rank(), part.num_parts == comm.Size()), `offsets` the global
  // node ranges (partitions.json "node_ranges"). Collective: builds the sampler, the feature store (filling its
  // cache), the evaluation adjacency (one degree exchange), and broadcasts rank 0's initial weights.
  DistGcnTrainer(const partition::LocalPart& part, std::vector<int64_t> offsets, comm::Communicator& comm,
                 DistTrainConfig config, Context ctx);
  ~DistGcnTrainer();
  DistGcnTrainer(const DistGcnTrainer&) = delete;
  DistGcnTrainer& operator=(const DistGcnTrainer&) = delete;

  // Collective. on_epoch runs on every rank with the same (reduced) statistics.
  DistTrainResult Train(const std::function<void(const DistEpochStats&)>& on_epoch = {});

  // One collective training step on this rank's seeds (new global ids owned by this rank; may be empty) with
  // union batch size `total_seeds`: sample, fetch, forward/backward, AverageGradients, and the Adam update when
  // `update`. Returns this rank's summed loss (mean loss x its seed count). Exposed for tests.
  double Step(std::span<const int64_t> seeds, int64_t total_seeds, int epoch, int64_t batch, bool update);

  // Predicted class of every owned node (full-neighbour inference, no dropout). Collective.
  std::vector<int32_t> PredictOwned();

  GcnModel& model() { return model_; }
  const DistTrainConfig& config() const { return config_; }

 private:
  struct Impl;
  void SaveState(int epochs_done) const;

  const partition::LocalPart& part_;
  std::vector<int64_t> offsets_;
  comm::Communicator& comm_;
  DistTrainConfig config_;
  Context ctx_;
  GcnModel model_;
  Adam adam_;
  std::unique_ptr<Impl> impl_;
  BestWeights best_;
  int start_epoch_ = 0;
  uint64_t setup_bytes_ = 0;
};

}  // namespace tessel::train::gcn
