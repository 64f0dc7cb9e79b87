// Pieces of the GCN trainer (trainer.h) that its sources and tests also use: the random stream purposes and keys,
// the seed shuffle, best-validation weights with early stopping, and checkpoint capture and resume.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/clock.h"  // SecondsSince, for every trainer
#include "core/context.h"
#include "core/rng.h"
#include "train/gcn/checkpoint.h"
#include "train/gcn/data.h"
#include "train/gcn/model.h"
#include "train/gcn/optimizer.h"

namespace tessel::train::gcn {

struct TrainConfig;

// Stream purposes of the training draws, keyed (seed, rank, epoch, batch, purpose). Every source uses the same
// ones, so one part with full fanouts draws what the whole graph in one process draws.
inline constexpr uint64_t kPurposeDropout = 0x100;  // + layer
inline constexpr uint64_t kPurposeShuffle = 0x200;
inline constexpr uint64_t kPurposeSample = 0x300;      // + layer
inline constexpr uint64_t kPurposeEvalSample = 0x400;  // + layer: sampled evaluation (partitioned runs)

// The stream key of one training draw of this rank.
StreamKey TrainKey(const Context& ctx, int epoch, int64_t batch, uint64_t purpose);

// Shuffles `order` in place (Fisher-Yates) with the (seed, rank, epoch, 0, kPurposeShuffle) stream.
void ShuffleSeeds(const Context& ctx, int epoch, std::vector<int64_t>& order);

// Throws when an epoch's loss is not finite.
void CheckLoss(int epoch, double loss);

// Best-validation weights and early stopping.
struct BestWeights {
  std::vector<Matrix> params;  // copies of the best weights (empty until the first epoch)
  int epoch = 0;               // 1-based epoch of the best validation accuracy, 0 = none yet
  double val_acc = -1.0;
  int epochs_since = 0;  // epochs done since `epoch` (all of them before the first evaluation)
  // Records an evaluated epoch: keeps a copy of `current` when val_acc is the best so far. Returns true when training
  // should stop (patience > 0 epochs, evaluated or not, since the best validation accuracy).
  bool Update(int epoch_done, double epoch_val_acc, const std::vector<Param>& current, int patience);
  // Records an epoch that was not evaluated (--eval-every): the best stays, one more epoch since it.
  void Age(int epoch_done) { epochs_since = epoch_done - epoch; }
  // Sets `current` to the best weights (unchanged when there are none).
  void Restore(std::vector<Param>& current) const;
};

// Whether epoch ends with a checkpoint (every checkpoint_every epochs, the last one, and an early stop).
bool CheckpointDue(const TrainConfig& c, int epoch, bool stop);

// The configuration JSON a checkpoint stores: `config` plus, for standard scaling, the fitted column statistics
// (key "feature_scaling"), so that prediction scales new nodes as training did and a resume checks them.
nlohmann::json CheckpointConfig(nlohmann::json config, const FeatureScaling& scaling);

// The checkpoint of the current training state; `config` is the trainer's configuration JSON.
TrainState CaptureState(nlohmann::json config, int epochs_done, const BestWeights& best, const GcnModel& model,
                        const Adam& adam);

// Where a run resumed (ResumeIfAsked): nothing (a fresh start), an epoch boundary, or inside an epoch (just-in-time
// state written when a rank failed); `ranks` is the rank count that wrote the checkpoint (0: not recorded).
struct ResumePoint {
  bool resumed = false;
  int epochs_done = 0;
  int64_t epoch_steps_done = 0;  // steps of epoch epochs_done + 1 in the weights
  int64_t epoch_steps = 0;       // that epoch's steps on the writing ranks
  int64_t adam_steps = 0;
  int ranks = 0;
  bool just_in_time = false;
};

// When c.resume and c.checkpoint_dir holds a checkpoint: checks that it was trained with `config` (all but epochs
// and patience), restores weights, Adam and `best`, and returns where it was taken; otherwise a fresh start.
ResumePoint ResumeIfAsked(const TrainConfig& c, const nlohmann::json& config, BestWeights* best, GcnModel* model,
                          Adam* adam);

// The first step to run of epoch r.epochs_done + 1 on a run with `steps` steps per epoch: the steps already in the
// weights, scaled by steps / r.epoch_steps when the rank count (and so the epoch's steps) changed, rounded down (the
// seeds of at most one step are visited twice, none skipped). 0 at an epoch boundary.
int64_t FirstStep(const ResumePoint& r, int64_t steps);

// The training configuration of a checkpoint `s` read from `dir` (LoadCheckpoint), checked as a training run checks
// its options, and its parameters checked to be those of that configuration's model, in order and shape. Throws
// naming checkpoint.json's field or the tensor, and the fix. For prediction and `tessel info`.
TrainConfig CheckedCheckpointConfig(const std::filesystem::path& dir, const TrainState& s);

}  // namespace tessel::train::gcn
