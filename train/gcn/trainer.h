// GCN training, one process or K ranks (docs/gcn.md, docs/distributed.md): one config, one epoch loop, one stats
// type. Where the graph lives is a GraphSource: the whole graph in one process (full-batch or sampled mini-batch
// steps) or one part of a partition folder per rank (skewed sampling, batched remote feature fetches; Jiang &
// Rumi, "Communication-Efficient Sampling for Distributed Training of Graph Convolutional Networks", 2021).
// Adam, early stopping on validation accuracy (the best-validation weights are kept and evaluated), atomic
// checkpoints and exact resume: every random draw is keyed by (seed, rank, epoch, batch, purpose).
//
// The pieces: train_config.h (TrainConfig and its rules), graph_source.h (Batch, GraphSource, the gradient
// average), epoch.h (one epoch's phases: the steps and the pipeline, evaluation, the time model, the reduction),
// train_result.h (EpochStats, TrainResult and their JSON); this file holds the trainer: set-up, the step's parts
// and the loop over epochs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/communicator.h"
#include "comm/compress.h"
#include "comm/net_model.h"
#include "core/context.h"
#include "core/worker.h"
#include "datasets/dataset.h"
#include "partition/partition_build.h"
#include "train/gcn/epoch.h"
#include "train/gcn/graph_source.h"
#include "train/gcn/model.h"
#include "train/gcn/optimizer.h"
#include "train/gcn/train_common.h"
#include "train/gcn/train_config.h"
#include "train/gcn/train_result.h"

namespace tessel::train::gcn {

// The GCN trainer: one epoch loop for one process and for K ranks. Each step takes this rank's slice of the
// (shuffled) training nodes, asks the source for its batch, runs forward and backward, averages the gradients over
// ranks (b_r / B weights, the gradient of the union batch's mean loss; nothing to do on one rank) and applies the
// same Adam step everywhere. Evaluation is full-neighbour inference; early stopping keeps the best-validation
// weights; rank 0 writes atomic checkpoints; every random draw is keyed (seed, rank, epoch, batch, purpose), so a
// resumed run continues exactly. One process is the one-rank case (a local communicator).
class GcnTrainer {
 public:
  // One process over the whole dataset: checks it (features, labels, split, finite features), prepares the
  // adjacency and features; full-batch steps when batch_size is 0, sampled mini-batches otherwise.
  GcnTrainer(const datasets::NodeDataset& data, TrainConfig config, Context ctx);
  // Rank r of K on part r of a partition folder (part.part == comm.Rank(), part.num_parts == comm.Size()),
  // `offsets` the global node ranges (partitions.json "node_ranges"): skewed sampled steps, remote features
  // fetched in batched all-to-alls (DistFeatureStore), evaluation over the 1-hop halo (DistEvaluator); rank 0's
  // initial weights are broadcast. batch_size is seeds per rank and step (0 = all of the rank's seeds in one step)
  // and fanouts are required. Collective; `part` and `comm` must outlive the trainer.
  // With `virtual_parts` (fewer ranks than the folder's parts, each rank's run of parts merged into `part`: virtual
  // ranks, docs/distributed.md "Fewer ranks than parts"), every part is a virtual rank: a step runs one sub-step per
  // part a rank holds (as many on every rank; empty ones where a rank holds fewer), each with the batch, keys and
  // skew of the K-rank run's rank for that part, and one gradient sum; so the run follows the K-rank run's sample
  // path draw for draw, with its steps per epoch.
  GcnTrainer(const partition::LocalPart& part, std::vector<int64_t> offsets, comm::Communicator& comm,
             TrainConfig config, Context ctx, sampling::VirtualParts virtual_parts = {});
  ~GcnTrainer();
  GcnTrainer(const GcnTrainer&) = delete;
  GcnTrainer& operator=(const GcnTrainer&) = delete;

  // Collective. on_epoch runs on every rank with the same (reduced) statistics.
  TrainResult Train(const std::function<void(const EpochStats&)>& on_epoch = {});

  // One collective training step on this rank's seeds (ids of TrainNodes(); may be empty on a partitioned rank)
  // with union batch size `total_seeds`: batch, forward/backward, AverageGradients, and the Adam update when
  // `update`. Returns this rank's summed loss (mean loss x its seed count). Exposed for tests.
  double Step(std::span<const int64_t> seeds, int64_t total_seeds, int epoch, int64_t batch, bool update);
  // Whether Train overlaps the next batch's sampling and fetching (and, with --grad-staleness 1, the previous
  // step's gradient exchange) with the current step's compute: asked for (config.overlap), sampled steps, more than
  // one step per epoch, CPU, and more than one thread (--threads 1 keeps one thread per rank busy, so a rank never
  // competes with its own communication for a core) unless --grad-staleness 1 asks for the pipeline.
  bool Overlaps() const;
  // Whether epoch (1-based) ends with an evaluation: every config.eval_every-th epoch and the last (--eval-every).
  bool Evaluates(int epoch) const;

  // Predicted class of every owned node (full-neighbour inference, no dropout). Collective.
  std::vector<int32_t> PredictOwned();
  // Class probabilities [num_owned x num_classes] of the current weights (no dropout). Collective.
  Matrix PredictProbabilities();

  GcnModel& model() { return model_; }
  const TrainConfig& config() const { return config_; }
  // Where this run resumed (--resume; a fresh start otherwise).
  const ResumePoint& resumed() const { return resumed_; }

 private:
  friend class GcnEpoch;  // the epoch's phases (epoch.h) run the step parts below and add to tally_
  struct Setup;
  explicit GcnTrainer(Setup setup);
  // The end of an epoch: the best weights and early stopping (every rank holds the same validation accuracy, so
  // every rank decides alike), the time left, on_epoch, the checkpoint when due. Returns whether training stops.
  bool EndEpoch(EpochStats& st, double* time_sum, const std::function<void(const EpochStats&)>& on_epoch);
  void SaveState(int epochs_done) const;
  // The just-in-time state (peer-failure hook, core/peer_failure.h): the weights, Adam and best weights of the last
  // completed step, with where it lies in the epoch in progress, written by every surviving rank
  // (SaveCheckpointLocked keeps the newest).
  void SaveJustInTime() const;
  // The three parts of a step: the batch (sampling and fetching: collective), forward/backward on it (local; may
  // run on a second thread), and the gradient average and update (collective). Each adds to tally_. `key_part`
  // (virtual ranks: the part of a sub-step) replaces this rank in the draws' keys; -1 keeps it, and only then does
  // Prepare count the step for TESSEL_FAULT (a virtual step counts once, in GcnEpoch::RunVirtual).
  void Prepare(std::span<const int64_t> seeds, int epoch, int64_t batch, Batch* b, int key_part = -1);
  double Compute(const Batch& b, int64_t seed_count, int epoch, int64_t batch, int key_part = -1);
  void Finish(int64_t seed_count, int64_t total_seeds, int epoch, int64_t batch, bool update);
  // A virtual step's end: `sum` (this rank's parts' gradients, each scaled by its seeds over the step's, summed)
  // summed over ranks, unpacked and applied.
  void FinishSum(std::vector<float>& sum, int epoch, int64_t batch);
  // The gradient sum over ranks of step `batch` (SumGradients: plain or compressed), timed into tally_.
  void SumTimed(std::vector<float>& buf, int epoch, int64_t batch);
  // The context whose rank keys the draws: this rank's, or the part `key_part` (>= 0) of a virtual step.
  Context KeyContext(int key_part) const;
  // Virtual ranks: this rank's parts' training nodes (part_train_) and every part's count (train_counts_). Collective.
  void CountPartTrainNodes();
  // Adam's step on the parameters' gradients, timed into tally_.
  void Update();
  nlohmann::json ConfigJson() const;

  std::unique_ptr<comm::Communicator> own_comm_;  // the local communicator of a one-process run
  comm::Communicator& comm_;
  Context ctx_;
  TrainConfig config_;
  std::unique_ptr<GraphSource> source_;
  GcnModel model_;
  std::unique_ptr<comm::CompressedAllreduce> grad_compress_;  // null: plain float32 gradient allreduce
  std::optional<comm::NetworkModel> network_;                 // --network
  Adam adam_;
  BestWeights best_;
  Batch batches_[2];  // the current step's and, when overlapping, the next step's (batches point into themselves)
  std::unique_ptr<BackgroundWorker> worker_;  // runs Compute while this thread prepares the next batch (overlap)
  EpochTally tally_;                          // this rank's figures of the epoch in progress (epoch.h)
  Matrix grad_logits_;                        // the loss gradient of a step (reused: same shape every full batch)
  // On a device: this epoch's sum of the steps' weighted losses, kept there (tally_.device_loss_steps counts them).
  Buffer<double> device_loss_;
  double cores_ = 1;  // the cores this rank can count on (ThreadLimit::CoresPerRank over the communicator's machine)
  std::vector<int64_t> train_counts_;  // training nodes per rank (per part with virtual ranks)
  sampling::VirtualParts virtual_;     // virtual ranks: where the folder's parts lie (inactive: one part per rank)
  std::vector<std::vector<int64_t>> part_train_;  // virtual ranks: the training nodes of each part this rank holds
  int64_t steps_ = 0;                             // steps per epoch (max over ranks)
  int start_epoch_ = 0;
  ResumePoint resumed_;
  int64_t first_step_ = 0;  // the first step of epoch start_epoch_ + 1 (a mid-epoch resume)
  // The epoch in progress, for the just-in-time state: the epochs ended, the epoch's first step and Adam's steps when
  // it began.
  int epochs_ended_ = 0;
  int64_t epoch_first_ = 0;
  int64_t epoch_adam0_ = 0;
  uint64_t setup_bytes_ = 0;
  int64_t peak_anon_ = -1;  // the largest RssAnon seen after set-up and after each epoch (RankMemory)
};

// Class probabilities [num_nodes x num_classes] for `data` (features and graph only; labels and split are not
// needed) from a checkpoint's best-validation weights. Throws when the feature width or the class count differ
// from the checkpoint's. *config (optional) receives the checkpoint's training configuration.
Matrix PredictFromCheckpoint(const Context& ctx, const datasets::NodeDataset& data, const std::filesystem::path& dir,
                             TrainConfig* config = nullptr);

}  // namespace tessel::train::gcn
