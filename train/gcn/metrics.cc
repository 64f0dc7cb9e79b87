// Accuracy and F1 from a confusion count per class (true positives, false positives, false negatives).
// F1 = 2·TP / (2·TP + FP + FN); macro-F1 averages it over every class.
#include "train/gcn/metrics.h"

#include "core/error.h"

namespace tessel::train::gcn {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ClassMetrics, accuracy, macro_f1, f1, count)

nlohmann::json ClassMetrics::ToJson() const { return *this; }

namespace {

// Accuracy and F1 of `count` nodes from their confusion counts per class.
ClassMetrics FromCounts(std::span<const int64_t> tp, std::span<const int64_t> fp, std::span<const int64_t> fn,
                        int64_t count) {
  ClassMetrics m;
  m.count = count;
  int64_t correct = 0;
  for (const int64_t t : tp) correct += t;
  m.accuracy = m.count > 0 ? static_cast<double>(correct) / static_cast<double>(m.count) : 0.0;
  m.f1.resize(tp.size());
  double sum = 0;
  for (size_t c = 0; c < tp.size(); ++c) {
    const int64_t denom = 2 * tp[c] + fp[c] + fn[c];
    m.f1[c] = denom > 0 ? 2.0 * static_cast<double>(tp[c]) / static_cast<double>(denom) : 0.0;
    sum += m.f1[c];
  }
  m.macro_f1 = sum / static_cast<double>(tp.size());
  return m;
}

}  // namespace

ClassMetrics Evaluate(std::span<const int32_t> predicted, std::span<const int32_t> labels,
                      std::span<const int64_t> nodes, int32_t num_classes) {
  TESSEL_CHECK(num_classes > 0, "Evaluate: num_classes must be > 0");
  std::vector<int64_t> tp(static_cast<size_t>(num_classes), 0);
  std::vector<int64_t> fp(tp.size(), 0);
  std::vector<int64_t> fn(tp.size(), 0);
  for (int64_t u : nodes) {
    const int32_t y = labels[u];
    const int32_t p = predicted[u];
    TESSEL_CHECK(y >= 0 && y < num_classes, "Evaluate: node {} has label {} outside [0, {})", u, y, num_classes);
    if (p == y) {
      ++tp[y];
    } else {
      ++fn[y];
      if (p >= 0 && p < num_classes) ++fp[p];
    }
  }
  return FromCounts(tp, fp, fn, static_cast<int64_t>(nodes.size()));
}

ClassMetrics MetricsFromConfusion(std::span<const int64_t> counts, int32_t num_classes, int64_t count,
                                  std::string_view split) {
  TESSEL_CHECK(num_classes > 0, "Evaluate: num_classes must be > 0");
  const auto c = static_cast<size_t>(num_classes);
  TESSEL_CHECK(counts.size() == 3 * c + 1, "MetricsFromConfusion: {} counts for {} classes", counts.size(), c);
  TESSEL_CHECK(counts[3 * c] == 0, "Evaluate: {} nodes of the {} split have a label outside [0, {})", counts[3 * c],
               split, num_classes);
  return FromCounts(counts.first(c), counts.subspan(c, c), counts.subspan(2 * c, c), count);
}

}  // namespace tessel::train::gcn
