// `tessel predict gcn`: class predictions from a GCN checkpoint for the nodes asked for (a split, all nodes, or a
// file of node ids), written as "node class [probabilities...]" lines; the accuracy when the nodes are labelled.
// Every option declared once here.
#pragma once

#include <string>

#include "app/given.h"
#include "app/run_options.h"
#include "datasets/dataset.h"
#include "kernels/matrix.h"

namespace tessel::app {

struct PredictGcnOptions {
  std::string dataset;
  std::string checkpoint;
  std::string nodes = "test";
  std::string output;
  bool force = false;
  bool probabilities = false;
  ThreadOptions threads;
  DeviceOptions device{.has_math = true};
  bool json = false;
  Given given;

  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    using F = ParamInfo::Front;
    v(ParamInfo{.name = "dataset",
                .help = "Native dataset folder or node-table prefix (same features as training)",
                .front = F::kCli,
                .required = true},
      c.dataset);
    v(ParamInfo{.name = "checkpoint",
                .help = "Checkpoint folder written by `tessel train gcn --checkpoint`",
                .required = true},
      c.checkpoint);
    v(
        ParamInfo{
            .name = "nodes", .help = "train, val, test, all, or a file with one node id per line", .front = F::kCli},
        c.nodes);
    v(ParamInfo{.name = "output", .help = "Output file (\"node<TAB>class\" lines); default stdout", .front = F::kCli},
      c.output);
    v(ParamInfo{.name = "force",
                .help = "Replace an existing --output file (a regular file only; never a folder, a device or an "
                        "input of the run)",
                .front = F::kCli},
      c.force);
    v(ParamInfo{.name = "probabilities", .help = "Append the class probabilities to each line", .front = F::kCli},
      c.probabilities);
    ThreadOptions::Params(c.threads, v);
    DeviceOptions::Params(c.device, v);
    v(
        ParamInfo{
            .name = "json", .help = "Print a JSON summary (nodes, accuracy) after the predictions", .front = F::kCli},
        c.json);
  }
};

// Every node's class probabilities [nodes x classes] from the checkpoint's best-validation weights.
kernels::Matrix PredictGcnProbabilities(const PredictGcnOptions& options, const datasets::NodeDataset& data);

// Predicts the --nodes and writes --output; returns what the command prints (the predictions when there is no
// --output, then the --json summary).
std::string PredictGcn(const PredictGcnOptions& options);

}  // namespace tessel::app
