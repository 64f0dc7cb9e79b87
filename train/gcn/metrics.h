// Classification metrics for node prediction: accuracy, per-class precision/recall/F1 and macro-F1 over a
// list of nodes, from predicted and true class ids.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessel::train::gcn {

struct ClassMetrics {
  double accuracy = 0;
  double macro_f1 = 0;
  std::vector<double> f1;  // per class; 0 for a class never predicted nor present
  int64_t count = 0;       // nodes evaluated
  nlohmann::json ToJson() const;
};

// Metrics over `nodes`, comparing predicted[u] with labels[u] for classes in [0, num_classes).
ClassMetrics Evaluate(std::span<const int32_t> predicted, std::span<const int32_t> labels,
                      std::span<const int64_t> nodes, int32_t num_classes);

// The same metrics from a segment of kernels::ArgmaxConfusion's counts (3 num_classes + 1 values: true positives,
// false positives and false negatives per class, then the nodes not counted) over `count` nodes; throws when a node
// was not counted (a label outside [0, num_classes)), as Evaluate does. Equal to Evaluate's, bit for bit.
ClassMetrics MetricsFromConfusion(std::span<const int64_t> counts, int32_t num_classes, int64_t count,
                                  std::string_view split);

}  // namespace tessel::train::gcn
