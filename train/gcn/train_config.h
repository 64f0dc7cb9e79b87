// The configuration of GCN training and its rules (docs/gcn.md, docs/distributed.md): TrainConfig, one process or K
// ranks, with the distributed options (DistOptions) as their own declared group; Validate holds every rule between
// options, ToJson/FromJson the echo that results and checkpoints carry. The options are declared once (core/params.h):
// the CLI, Python and docs/cli.md read the same declarations.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/compress.h"
#include "comm/net_model.h"
#include "core/params.h"
#include "sampling/skewed_policy.h"
#include "train/gcn/data.h"
#include "train/gcn/model.h"
#include "train/gcn/optimizer.h"

namespace tessel::train::gcn {

// Where a --device cuda run in one process keeps its input features (`--features-on`).
enum class FeaturePlacement {
  kAuto,    // the device, except a sampled run's features that take more than half the device's free memory: kHost
  kDevice,  // resident on the device
  kHost,    // mapped pinned host memory that the device's gathers read in place (zero-copy; sampled runs only)
};

// How a partitioned run evaluates after each epoch (`--eval`).
enum class EvalMode {
  kSampled,  // the val and test nodes (and a train subset; the whole train split at the end) on sampled blocks
  kFull,     // layer-wise full-neighbour inference of every owned node over the 1-hop halo (exact)
};

// The parameters of partitioned (distributed) training only.
struct DistOptions {
  // --feature-cache's default: size the cache by --feature-cache-budget.
  static constexpr int64_t kCacheFromBudget = -2;

  sampling::SkewOptions skew;                // training only; evaluation never skews
  int64_t feature_cache = kCacheFromBudget;  // halo rows cached per rank: -1 = the whole halo, 0 = none, N rows
  int64_t feature_cache_budget_mib = -1;     // with feature_cache -2: MiB per rank; -1 = the machine's share
  EvalMode eval = EvalMode::kFull;           // per-epoch and final evaluation
  std::vector<int> eval_fanouts;             // sampled evaluation's fanouts; empty = 4x the training ones
  comm::CompressOption grad_compress;        // the gradient allreduce's codec, or auto
  comm::CompressOption feature_compress;     // the remote feature rows' codec, or auto
  comm::NetworkOption network;               // the link to predict epoch times on (none by default)
  // 0: synchronous gradient exchange. 1: pipelined (width two): the allreduce of step s runs while step s + 1
  // computes, and the update after step s + 1 applies step s's averaged gradient (one step stale).
  int grad_staleness = 0;

  // The --help section of the distributed options.
  static constexpr std::string_view kGroup = "Distributed (mpirun -np K, one rank per part; docs/distributed.md)";
  // Declared once (core/params.h): `tessel train gcn` options and the config echo of partitioned runs.
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
                "Halo feature rows cached per rank: -2 = as many as --feature-cache-budget allows, -1 = the whole "
                "halo, 0 = none, N = the N with the most owned neighbours (wins over the budget)",
                {},
                kGroup},
      c.feature_cache);
    v(ParamInfo{"feature_cache_budget",
                "Memory per rank for cached halo feature rows, in MiB (with --feature-cache -2); -1 = a quarter of "
                "the node's available memory over the ranks on this host (the whole halo whenever it fits), 0 = no "
                "cache",
                {},
                kGroup},
      c.feature_cache_budget_mib);
    v(ParamInfo{"eval",
                "Evaluation after each epoch: full (exact full-neighbour inference of every owned node) or sampled "
                "(the val and test nodes and a train subset of the val's size on uniformly sampled blocks with "
                "--eval-fanouts, never skewed, so unbiased; the whole train split at the end)",
                {},
                kGroup},
      c.eval);
    v(ParamInfo{"eval_fanouts",
                "Fanouts of --eval sampled, input layer first (-1 = all); leave it out for 4x the training fanouts",
                {},
                kGroup},
      c.eval_fanouts);
    v(ParamInfo{"grad_compress",
                "Gradient allreduce compression: none, fp16, bf16, int8[:BLOCK], qsgd[:LEVELS], topk[:RATIO], "
                "randk[:RATIO], cltk[:RATIO], powersgd[:RANK], or auto (with --network: the fastest of none, fp16, "
                "int8 and topk:0.02 by the time model and their measured cost; docs/compression.md)",
                {},
                kGroup},
      c.grad_compress);
    v(ParamInfo{"feature_compress",
                "Remote feature row compression: none, fp16, bf16, int8 (a scale per row), qsgd[:LEVELS], or auto "
                "(with --network: the fastest of none, fp16 and int8)",
                {},
                kGroup},
      c.feature_compress);
    v(
        ParamInfo{
            "grad_staleness",
            "Gradient exchange: 0 = synchronous; 1 = pipelined, the allreduce of step s overlapping the compute "
            "of step s + 1, whose update applies step s's gradient (one step stale, from the second epoch on; "
            "every gradient is applied by the end of each epoch). 1 runs the two-thread pipeline also with --threads 1",
            {},
            kGroup},
        c.grad_staleness);
    v(ParamInfo{"network",
                "Predict each epoch's time on this network from the measured compute and the bytes and messages of "
                "every exchange: BANDWIDTH,LATENCY[,shared][,burst=SIZE], e.g. 10Gbit,5us; shared = one link all "
                "ranks take turns on, burst = a token bucket of SIZE bytes (a traffic shaper) (docs/comm.md, time "
                "model); leave it out for none",
                {},
                kGroup},
      c.network);
  }
};

// The one configuration of GCN training, one process or K ranks.
struct TrainConfig {
  ModelConfig model;  // in_dim and num_classes are taken from the dataset
  AdamConfig adam;
  bool decay_all_layers = false;  // false: weight decay on the first layer only (Kipf & Welling)
  int epochs = 200;
  int64_t batch_size = 0;    // seed nodes per mini-batch (per rank when partitioned); 0 = full graph (all seeds)
  std::vector<int> fanouts;  // one per layer (input layer first) when batch_size > 0; -1 = all neighbours
  bool replace = false;      // sample neighbours with replacement
  int patience = 0;          // stop after this many epochs without a better validation accuracy; 0 = never
  // Evaluate (validation accuracy, best weights, early stopping) after every eval_every-th epoch and always after the
  // last; 0 = after the last epoch only. The best weights are the best of the evaluated epochs.
  int eval_every = 1;
  FeatureNorm normalize_features = FeatureNorm::kNone;  // input scaling (data.h); l1 = Kipf & Welling preprocessing
  std::filesystem::path checkpoint_dir;                 // empty = no checkpoints
  int checkpoint_every = 10;                            // epochs between checkpoints (the last epoch is always saved)
  bool resume = false;                                  // continue from checkpoint_dir when it holds a checkpoint
  bool overlap = true;          // sample and fetch the next mini-batch while the current one computes (same results)
  bool device_sampling = true;  // --device cuda, one process: sample on the GPU (the same blocks as on the CPU)
  FeaturePlacement features_on = FeaturePlacement::kAuto;  // --device cuda, one process: where the features live
  DistOptions dist;                                        // partitioned training only (defaults otherwise)
  // Throws with the flag name and the fix. Partitioned training always samples (fanouts required; batch_size 0 =
  // all of a rank's seeds per step); one process rejects non-default distributed options.
  void Validate(bool partitioned = false) const;
  // Every parameter of Params under its name; partitioned: also dist's and "distributed": true.
  nlohmann::json ToJson(bool partitioned = false) const;
  static TrainConfig FromJson(const nlohmann::json& j);  // absent keys keep the defaults
  // The defaults users see (`tessel train gcn --help`, tessel.train_gcn): the members' defaults with fanouts 10,10,
  // the sampled runs' default, dropped for full-batch runs (batch_size 0 without partitions).
  static TrainConfig UserDefaults() {
    TrainConfig c;
    c.fanouts = {10, 10};
    return c;
  }

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
    v(ParamInfo{"patience",
                "Stop after N epochs without better validation accuracy (checked when an epoch is evaluated); 0 = "
                "off"},
      c.patience);
    v(ParamInfo{"eval_every",
                "Evaluate (validation accuracy, best weights, --patience) after every N-th epoch and always after the "
                "last; 0 = after the last epoch only. The best weights are the best of the evaluated epochs"},
      c.eval_every);
    v(ParamInfo{"overlap",
                "On by default: sample and fetch the next mini-batch while the current one computes (a second "
                "thread; the same results as --no-overlap for a given seed; CPU, --threads other than 1)",
                "--overlap,!--no-overlap"},
      c.overlap);
    v(ParamInfo{"device_sampling",
                "On by default: with --device cuda (one process), sample mini-batches on the GPU, where the blocks "
                "stay (the same blocks as the CPU sampler's, so the same results); --no-device-sampling samples on "
                "the CPU and uploads every block",
                "--device-sampling,!--no-device-sampling"},
      c.device_sampling);
    v(ParamInfo{"features_on",
                "With --device cuda (one process; ignored on the CPU): where the input features live: device, host "
                "(mapped pinned memory the GPU gathers each step's rows from, for features larger than the GPU; "
                "sampled runs) or auto (host for a sampled run whose features take more than half the GPU's free "
                "memory, else device)"},
      c.features_on);
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

// The flags ("--skew, --network") of the distributed options (DistOptions::Params) that `pick(ParamInfo)` selects.
template <typename Pick>
std::string DistFlags(const DistOptions& d, Pick pick) {
  std::string flags;
  DistOptions::Params(d, [&](const ParamInfo& p, const auto&) {
    if (pick(p)) flags += (flags.empty() ? "" : ", ") + p.Flag();
  });
  return flags;
}
// Throws naming `flags` unless it is empty: options of distributed training given to one-process training, which
// refuses them rather than ignoring them.
void RefuseDistributedOptions(std::string_view flags);

// The output guard of c.checkpoint_dir (core/output_guard.h): throws when it is, contains or lies inside one of
// `inputs` (--dataset, --partitions) or `other_outputs` (--metrics), is a device, or exists and is neither a tessel
// checkpoint nor an empty folder (even with --resume or --force: it is never deleted); and when it already holds a
// checkpoint and neither c.resume nor `force` says what to do with it. `flag` names the option in messages
// ("checkpoint" from Python).
void CheckCheckpointTarget(const TrainConfig& c, bool force, std::span<const std::filesystem::path> inputs = {},
                           std::span<const std::filesystem::path> other_outputs = {},
                           std::string_view flag = "--checkpoint");

}  // namespace tessel::train::gcn

namespace tessel {
// The one list of EvalMode's names (core/params.h).
TESSEL_ENUM_NAMES(train::gcn::EvalMode, {train::gcn::EvalMode::kSampled, "sampled"},
                  {train::gcn::EvalMode::kFull, "full"});
// The one list of FeaturePlacement's names (core/params.h).
TESSEL_ENUM_NAMES(train::gcn::FeaturePlacement, {train::gcn::FeaturePlacement::kAuto, "auto"},
                  {train::gcn::FeaturePlacement::kDevice, "device"}, {train::gcn::FeaturePlacement::kHost, "host"});
}  // namespace tessel
