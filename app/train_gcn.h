// `tessel train gcn` and `tessel.train_gcn`: GCN / GraphSAGE training in one process (a dataset, full-batch or
// sampled mini-batches) or on a partition folder under mpirun (one rank per part), both through the one GcnTrainer.
// Every option is declared once here (TrainGcnOptions::Params, with the training parameters of TrainConfig and
// DistOptions); the CLI binds them as flags, Python as keywords.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "app/given.h"
#include "app/run_options.h"
#include "datasets/dataset.h"
#include "kernels/matrix.h"
#include "train/gcn/trainer.h"

namespace tessel::app {

struct TrainGcnOptions {
  std::string dataset;
  train::gcn::TrainConfig config = train::gcn::TrainConfig::UserDefaults();
  uint64_t seed = 0;
  ThreadOptions threads;
  DeviceOptions device{.has_math = true};
  std::string checkpoint;
  int checkpoint_every = 10;
  bool resume = false;
  std::string metrics;
  bool force = false;
  std::string random_split;
  bool json = false;
  std::string partitions;
  bool virtual_ranks = true;
  TimeoutOption timeout{.group = train::gcn::DistOptions::kGroup};
  Given given;  // which of these the caller gave

  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(ParamInfo{"dataset",
                "Native dataset folder, or a node-table prefix (tests/data/cora/cora); with --partitions: checked to "
                "be the partitioned dataset"}
          .Cli(),
      c.dataset);
    train::gcn::TrainConfig::Params(c.config, v);
    v(ParamInfo{"seed", "Seed of every random stream (init, dropout, sampling, shuffling, split)"}, c.seed);
    ThreadOptions::Params(c.threads, v);
    DeviceOptions::Params(c.device, v);
    v(ParamInfo{"checkpoint", "Checkpoint folder, replaced atomically"}, c.checkpoint);
    v(ParamInfo{"checkpoint_every", "Epochs between checkpoints (>= 1)"}.Range(1), c.checkpoint_every);
    v(ParamInfo{"resume", "Continue from the checkpoint in --checkpoint when there is one"}, c.resume);
    v(ParamInfo{"metrics", "Write one JSON line per epoch and a final line to FILE.jsonl"}.Cli(), c.metrics);
    v(ParamInfo{"force",
                "Replace an existing --metrics file, or a --checkpoint folder that holds a tessel checkpoint (never "
                "another folder or file, a device, or an input of the run)"},
      c.force);
    v(ParamInfo{"random_split",
                "Replace the split by a seeded random one over labelled nodes, TRAIN,VAL,TEST (e.g. 0.6,0.2,0.2)"},
      c.random_split);
    v(ParamInfo{"json", "Print the final result as one JSON object"}.Cli(), c.json);
    v(ParamInfo{"partitions", "Partition folder from `tessel partition`: train on it with one rank per part"}
          .Group(train::gcn::DistOptions::kGroup)
          .Cli(),
      c.partitions);
    v(ParamInfo{"virtual_ranks",
                "On by default: on fewer ranks than --partitions has parts (a resume on the ranks left), each part is "
                "a virtual rank: a step samples, computes and weighs every part a rank holds as the run with one rank "
                "per part does, so the run follows that run's sample path draw for draw (its steps per epoch; "
                "--grad-staleness 1 then exchanges synchronously); --no-virtual-ranks trains each rank's parts as one "
                "merged part",
                "--virtual-ranks,!--no-virtual-ranks"}
          .Group(train::gcn::DistOptions::kGroup)
          .Cli(),
      c.virtual_ranks);
    TimeoutOption::Params(c.timeout, v);
    train::gcn::DistOptions::Params(c.config.dist, v);
  }
};

// What a run returns: the result (test/val/train metrics, timings, the configuration; rank 0's), the line the CLI
// prints, and with `probabilities` asked for, the class probabilities of the best-validation weights.
struct TrainGcnOutcome {
  bool lead = true;  // false on ranks other than 0 (they print and write nothing)
  nlohmann::json result;
  std::string line;
  kernels::Matrix probabilities;
};

struct TrainGcnHooks {
  std::function<void(const train::gcn::EpochStats&)> on_epoch;  // after each epoch (Python's callback)
  std::shared_ptr<const datasets::NodeDataset> data;            // train on this instead of opening --dataset
  bool probabilities = false;
  bool history = false;  // the result carries every epoch's statistics ("history")
};

// Checks every option before any data is read or MPI starts, then trains (one process, or this rank of an mpirun
// job when --partitions is given), logs a line per epoch, writes --metrics.
TrainGcnOutcome TrainGcn(const TrainGcnOptions& options, const TrainGcnHooks& hooks = {});

}  // namespace tessel::app
