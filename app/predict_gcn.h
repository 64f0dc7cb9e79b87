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
    v(ParamInfo{"dataset", "Native dataset folder or node-table prefix (same features as training)"}.Cli().Required(),
      c.dataset);
    v(ParamInfo{"checkpoint", "Checkpoint folder written by `tessel train gcn --checkpoint`"}.Required(), c.checkpoint);
    v(ParamInfo{"nodes", "train, val, test, all, or a file with one node id per line"}.Cli(), c.nodes);
    v(ParamInfo{"output", "Output file (\"node<TAB>class\" lines); default stdout"}.Cli(), c.output);
    v(
        ParamInfo{
            "force",
            "Replace an existing --output file (a regular file only; never a folder, a device or an input of the run)"}
            .Cli(),
        c.force);
    v(ParamInfo{"probabilities", "Append the class probabilities to each line"}.Cli(), c.probabilities);
    ThreadOptions::Params(c.threads, v);
    DeviceOptions::Params(c.device, v);
    v(ParamInfo{"json", "Print a JSON summary (nodes, accuracy) after the predictions"}.Cli(), c.json);
  }
};

// Every node's class probabilities [nodes x classes] from the checkpoint's best-validation weights.
kernels::Matrix PredictGcnProbabilities(const PredictGcnOptions& options, const datasets::NodeDataset& data);

// Predicts the --nodes and writes --output; returns what the command prints (the predictions when there is no
// --output, then the --json summary).
std::string PredictGcn(const PredictGcnOptions& options);

}  // namespace tessel::app
