// The single-process GCN trainer: full-batch (batch_size 0) or sampled mini-batch training with Adam, early
// stopping on validation accuracy (the best-validation weights are kept and evaluated), per-epoch statistics,
// atomic checkpoints every few epochs and exact resume: every random draw is keyed by (seed, epoch, batch).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/context.h"
#include "core/params.h"
#include "datasets/dataset.h"
#include "train/gcn/data.h"
#include "train/gcn/metrics.h"
#include "train/gcn/model.h"
#include "train/gcn/optimizer.h"
#include "train/gcn/train_common.h"

namespace tessel::train::gcn {

struct TrainConfig {
  ModelConfig model;  // in_dim and num_classes are taken from the dataset
  AdamConfig adam;
  bool decay_all_layers = false;  // false: weight decay on the first layer only (Kipf & Welling)
  int epochs = 200;
  int64_t batch_size = 0;    // seed nodes per mini-batch; 0 = full graph
  std::vector<int> fanouts;  // one per layer (input layer first) when batch_size > 0; -1 = all neighbours
  bool replace = false;      // sample neighbours with replacement
  int patience = 0;          // stop after this many epochs without a better validation accuracy; 0 = never
  FeatureNorm normalize_features = FeatureNorm::kNone;  // input scaling (data.h); l1 = Kipf & Welling preprocessing
  std::filesystem::path checkpoint_dir;                 // empty = no checkpoints
  int checkpoint_every = 10;                            // epochs between checkpoints (the last epoch is always saved)
  bool resume = false;                                  // continue from checkpoint_dir when it holds a checkpoint
  void Validate() const;
  nlohmann::json ToJson() const;                         // every parameter below under its name
  static TrainConfig FromJson(const nlohmann::json& j);  // absent keys keep the defaults

  // The training parameters, declared once (core/params.h): `tessel train gcn` options, the config echo in results
  // and checkpoints. The checkpoint and resume settings are run control, not part of the echo.
  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(ParamInfo{"model", "Layer type: gcn (Kipf & Welling) or sage (GraphSAGE-mean)"}, c.model.kind);
    v(ParamInfo{"layers", "Number of graph convolution layers (>= 1)"}, c.model.layers);
    v(ParamInfo{"hidden", "Hidden units per layer (>= 1)"}, c.model.hidden);
    v(ParamInfo{"epochs", "Training epochs (>= 1)"}, c.epochs);
    v(ParamInfo{"lr", "Adam learning rate (> 0)"}, c.adam.lr);
    v(ParamInfo{"dropout", "Dropout probability before each layer, in [0, 1)"}, c.model.dropout);
    v(ParamInfo{"weight_decay", "L2 weight decay (>= 0), first layer unless --decay-all"}, c.adam.weight_decay);
    v(ParamInfo{"decay_all_layers", "Apply weight decay to every layer, not only the first", "--decay-all"},
      c.decay_all_layers);
    v(ParamInfo{"batch_size", "Seed nodes per mini-batch; 0 = full graph"}, c.batch_size);
    v(ParamInfo{"fanouts",
                "Neighbours sampled per layer, input layer first, one per layer (-1 = all); with "
                "--batch-size or --partitions"},
      c.fanouts);
    v(ParamInfo{"replace", "Sample neighbours with replacement"}, c.replace);
    v(ParamInfo{"patience", "Stop after N epochs without better validation accuracy; 0 = off"}, c.patience);
    v(ParamInfo{"normalize_features",
                "Input feature scaling: none, l1 (rows to unit L1 norm: the Planetoid/Kipf & Welling "
                "preprocessing) or standard (columns to zero mean, unit variance)"},
      c.normalize_features);
    // From the dataset, recorded in checkpoints.
    v(ParamInfo{"in_dim", "Input feature width", {}, {}, false}, c.model.in_dim);
    v(ParamInfo{"num_classes", "Output classes", {}, {}, false}, c.model.num_classes);
    v(ParamInfo{"bias", "Bias terms in every layer", {}, {}, false}, c.model.bias);
  }
};

struct EpochStats {
  int epoch = 0;  // 1-based
  double loss = 0;
  double train_acc = 0;
  double val_acc = 0;
  double train_seconds = 0;   // forward, backward, update (and sampling)
  double eval_seconds = 0;    // full-graph inference for the accuracies
  double sample_seconds = 0;  // part of train_seconds spent sampling
  double cpu_seconds = 0;     // process CPU time (all threads) of training and evaluation
  int64_t seed_nodes = 0;     // training nodes visited
  int64_t sampled_edges = 0;  // block entries built (mini-batch)
  double eta_seconds = 0;
  nlohmann::json ToJson() const;
};

struct TrainResult {
  std::vector<EpochStats> epochs;  // this run's epochs (after a resume, only the new ones)
  int best_epoch = 0;
  bool stopped_early = false;
  ClassMetrics train, val, test;  // of the best-validation weights
  nlohmann::json ToJson() const;
};

class GcnTrainer {
 public:
  // Checks the dataset (features, labels, split, finite features) and prepares adjacency and features.
  GcnTrainer(const datasets::NodeDataset& data, TrainConfig config, Context ctx);
  ~GcnTrainer();

  TrainResult Train(const std::function<void(const EpochStats&)>& on_epoch = {});

  // Class probabilities [num_nodes x num_classes] of the current weights (full-graph inference, no dropout).
  Matrix PredictProbabilities();
  GcnModel& model() { return model_; }
  const TrainConfig& config() const { return config_; }

 private:
  double TrainFullBatch(int epoch, EpochStats* stats);
  double TrainMiniBatch(int epoch, EpochStats* stats);
  void SaveState(int epochs_done) const;

  const datasets::NodeDataset& data_;
  TrainConfig config_;
  Context ctx_;
  FeatureScaling scaling_;
  FeatureMatrix features_;
  SparseMatrix adj_;
  SparseMatrix adj_t_;  // empty when adj_ is symmetric
  std::vector<LayerGraph> full_graphs_;
  GcnModel model_;
  Adam adam_;
  std::vector<int32_t> labels_;
  BestWeights best_;
  int start_epoch_ = 0;
  struct SamplerHolder;
  std::unique_ptr<SamplerHolder> sampler_;
};

// Class probabilities [num_nodes x num_classes] for `data` (features and graph only; labels and split are not
// needed) from a checkpoint's best-validation weights. Throws when the feature width or the class count differ
// from the checkpoint's. *config (optional) receives the checkpoint's training configuration.
Matrix PredictFromCheckpoint(const Context& ctx, const datasets::NodeDataset& data, const std::filesystem::path& dir,
                             TrainConfig* config = nullptr);

}  // namespace tessel::train::gcn
