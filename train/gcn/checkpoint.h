// GCN checkpoints: a folder with checkpoint.json (format version, model and training configuration, epoch
// counters) and tensors.bin (parameters, Adam moments, best-so-far parameters), replaced atomically as a whole.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/matrix.h"

namespace tessel::train::gcn {

inline constexpr int kCheckpointVersion = 1;

struct TrainState {
  nlohmann::json config;  // ModelConfig and TrainConfig fields (see trainer.cc)
  int epochs_done = 0;
  int best_epoch = 0;  // 1-based epoch of the best validation accuracy, 0 = none yet
  double best_val_acc = -1.0;
  int epochs_since_best = 0;
  int64_t adam_steps = 0;
  std::vector<kernels::Matrix> params;
  std::vector<kernels::Matrix> moments;      // Adam m, v per parameter
  std::vector<kernels::Matrix> best_params;  // the weights evaluated at the end
};

// Writes `dir` atomically (a temporary folder renamed over the old one).
void SaveCheckpoint(const std::filesystem::path& dir, const TrainState& state);
// Throws naming the folder and what is wrong (missing file, version, truncated tensors).
TrainState LoadCheckpoint(const std::filesystem::path& dir);

}  // namespace tessel::train::gcn
