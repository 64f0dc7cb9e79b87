// Pieces shared by the synthetic generators: Walker/Vose alias tables, seeded shuffles, split checks,
// Gaussian node features drawn per node chunk, and the edge-homophily measure.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <tbb/parallel_reduce.h>

#include "core/error.h"
#include "core/memory_budget.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "datasets/generators.h"

namespace tessel::datasets::internal {

void BuildAliasTable(std::span<const double> weights, std::span<const int64_t> items, std::span<AliasSlot> slots) {
  const auto k = static_cast<int64_t>(weights.size());
  TESSEL_CHECK(items.empty() || items.size() == weights.size(), "alias table: {} items for {} weights", items.size(),
               weights.size());
  TESSEL_CHECK(slots.size() == weights.size(), "alias table: {} slots for {} weights", slots.size(), weights.size());
  if (k == 0) return;
  double sum = 0;
  for (double w : weights) {
    TESSEL_CHECK(w >= 0, "alias table: negative weight {}", w);
    sum += w;
  }
  TESSEL_CHECK(sum > 0 && std::isfinite(sum), "alias table: weights must be finite with a positive sum (got {})", sum);
  auto item = [&](int64_t i) { return items.empty() ? i : items[i]; };
  // Vose's method: scaled weights below 1 ("small") are topped up by one weight above 1 ("large").
  std::vector<double> scaled(static_cast<size_t>(k));
  std::vector<int64_t> small;
  std::vector<int64_t> large;
  for (int64_t i = 0; i < k; ++i) {
    scaled[i] = weights[i] * static_cast<double>(k) / sum;
    (scaled[i] < 1.0 ? small : large).push_back(i);
  }
  while (!small.empty() && !large.empty()) {
    const int64_t s = small.back();
    small.pop_back();
    const int64_t l = large.back();
    slots[s] = AliasSlot{scaled[s], item(s), item(l)};
    scaled[l] = (scaled[l] + scaled[s]) - 1.0;
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // What is left has scaled weight 1 up to rounding.
  for (int64_t i : large) slots[i] = AliasSlot{1.0, item(i), item(i)};
  for (int64_t i : small) slots[i] = AliasSlot{1.0, item(i), item(i)};
}

void Shuffle(std::span<int64_t> values, Rng& rng) {
  for (size_t i = values.size(); i > 1; --i) {
    const auto j = static_cast<size_t>(rng.UniformInt(i));
    std::swap(values[i - 1], values[j]);
  }
}

void CheckGeneratorMemory(std::string_view generator, int64_t nodes, double edges, int64_t feature_dim,
                          std::string_view sizes) {
  // Each drawn edge is kept as a pair of 8-byte ids and then as two adjacency entries (an id and its place in the
  // sort): 32 bytes an edge; 16 bytes a node (its id and its row offset); 4 bytes a feature value.
  const double bytes = 32.0 * std::max(edges, 0.0) + 16.0 * static_cast<double>(nodes) +
                       4.0 * static_cast<double>(nodes) * static_cast<double>(std::max<int64_t>(feature_dim, 0));
  const std::string what = fmt::format("generating {} ({})", generator, sizes);
  const std::string fix = "lower these options";
  if (!(bytes < 9e18)) {
    throw Error(fmt::format("{} needs more than {}, more than any machine has; {}", what,
                            memory::FormatBytes(std::numeric_limits<int64_t>::max()), fix));
  }
  memory::Check(static_cast<int64_t>(bytes), what, fix);
}

void ValidateSplitFractions(const SplitFractions& split) {
  const double sum = split.train + split.val + split.test;
  TESSEL_CHECK(std::isfinite(sum) && split.train >= 0 && split.val >= 0 && split.test >= 0 && std::abs(sum - 1) <= 1e-6,
               "--split {},{},{}: give three fractions train,val,test that are >= 0 and sum to 1, such as "
               "0.6,0.2,0.2",
               split.train, split.val, split.test);
}

Features GaussianFeatures(std::span<const int32_t> labels, int64_t num_nodes, int64_t dim,
                          std::span<const float> class_means, double noise, uint64_t seed) {
  Features f;
  f.num_rows = num_nodes;
  f.dim = dim;
  f.dense = Buffer<float>(static_cast<size_t>(num_nodes * dim));
  auto out = f.dense.MutableHost();
  const int64_t chunks = (num_nodes + kNodeChunk - 1) / kNodeChunk;
  parallel_for<int64_t>(0, chunks, 1, [&](int64_t chunk) {
    Rng rng(StreamKey{.seed = seed, .batch = static_cast<uint64_t>(chunk), .purpose = kPurposeFeatures});
    const int64_t end = std::min(num_nodes, (chunk + 1) * kNodeChunk);
    for (int64_t u = chunk * kNodeChunk; u < end; ++u) {
      float* row = out.data() + u * dim;
      const float* mean = class_means.empty() ? nullptr : class_means.data() + int64_t{labels[u]} * dim;
      for (int64_t j = 0; j < dim; ++j) {
        const double x = noise * rng.Normal() + (mean == nullptr ? 0.0 : mean[j]);
        row[j] = static_cast<float>(x);
      }
    }
  });
  return f;
}

}  // namespace tessel::datasets::internal

namespace tessel::datasets {

double EdgeHomophily(const NodeDataset& data) {
  TESSEL_CHECK(data.has_labels(), "edge homophily needs labels");
  auto labels = data.labels.Host();
  return std::visit(
      [&](const auto& g) {
        using Pair = std::pair<int64_t, int64_t>;  // (same-class entries, labelled entries)
        const Pair counts = tbb::parallel_reduce(
            tbb::blocked_range<int64_t>(0, g.num_nodes(), 4096), Pair{0, 0},
            [&](const tbb::blocked_range<int64_t>& r, Pair acc) {
              for (int64_t u = r.begin(); u < r.end(); ++u) {
                if (labels[u] == kNoLabel) continue;
                for (auto v : g.Neighbors(u)) {
                  if (labels[v] == kNoLabel) continue;
                  acc.first += labels[v] == labels[u];
                  ++acc.second;
                }
              }
              return acc;
            },
            [](Pair x, Pair y) {
              return Pair{x.first + y.first, x.second + y.second};
            });
        return counts.second == 0 ? 0.0 : static_cast<double>(counts.first) / static_cast<double>(counts.second);
      },
      data.graph);
}

}  // namespace tessel::datasets
