// GCN checkpoints: a folder with checkpoint.json (format version, model and training configuration, epoch
// counters) and tensors.bin (parameters, Adam moments, best-so-far parameters), replaced atomically as a whole.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/matrix.h"

namespace tessel::train::gcn {

// 2: config.feature_scaling is always present (version 1 wrote it for standard scaling only); still reads 1.
// 3: where in an epoch the state was taken (epoch_steps_done of epoch_steps), how many ranks wrote it, and whether it
// is just-in-time state written when a rank failed (docs/reliability.md, "Ranks that leave"); still reads 1 and 2.
inline constexpr int kCheckpointVersion = 3;

struct TrainState {
  nlohmann::json config;  // ModelConfig and TrainConfig fields (see trainer.cc)
  int epochs_done = 0;
  int best_epoch = 0;  // 1-based epoch of the best validation accuracy, 0 = none yet
  double best_val_acc = -1.0;
  int epochs_since_best = 0;
  int64_t adam_steps = 0;
  // Mid-epoch state (version 3): the steps of epoch epochs_done + 1 whose update is in the weights, of the
  // epoch_steps that epoch has on `ranks` ranks (0 and 0: an epoch boundary; ranks 0: not recorded).
  int64_t epoch_steps_done = 0;
  int64_t epoch_steps = 0;
  int ranks = 0;
  bool just_in_time = false;  // written when a peer failed, not on the --checkpoint-every schedule
  std::vector<kernels::Matrix> params;
  std::vector<kernels::Matrix> moments;      // Adam m, v per parameter
  std::vector<kernels::Matrix> best_params;  // the weights evaluated at the end
};

// Writes `dir` atomically (a temporary folder renamed over the old one).
void SaveCheckpoint(const std::filesystem::path& dir, const TrainState& state);
// SaveCheckpoint under an exclusive lock on the folder's parent (flock), for the trainer's writers: the scheduled
// checkpoint of rank 0 and the just-in-time state that every surviving rank of a failed job may write at once. With
// `only_if_newer` it writes only when `state` holds more Adam steps than the checkpoint there (or there is none, or it
// cannot be read). Returns whether it wrote.
bool SaveCheckpointLocked(const std::filesystem::path& dir, const TrainState& state, bool only_if_newer);
// Reads `dir` and checks everything the checkpoint itself determines before anything trusts it: format and version,
// counters (read as 64-bit integers: 0 <= best_epoch <= epochs_done <= config.epochs, epochs_since_best =
// epochs_done - best_epoch, epochs_done <= adam_steps, best_val_acc -1 before the first evaluation and in [0, 1]
// after), tensor counts (two Adam moments per parameter, best parameters once evaluated) and shapes (moments and
// best parameters shaped as the parameters), every value finite, and the feature scaling the configuration needs.
// Throws naming the folder, the file and field or tensor, and the fix.
TrainState LoadCheckpoint(const std::filesystem::path& dir);

// One tensor a model expects: its parameter name and shape.
struct TensorShape {
  std::string name;
  int64_t rows = 0;
  int64_t cols = 0;
};
// Throws naming `dir`, the tensor and the fix unless `s` (from LoadCheckpoint) holds one parameter of each of these
// shapes, in order; LoadCheckpoint has already matched the moments and best parameters to the parameters.
void CheckCheckpointShapes(const std::filesystem::path& dir, const TrainState& s,
                           const std::vector<TensorShape>& model);

}  // namespace tessel::train::gcn
