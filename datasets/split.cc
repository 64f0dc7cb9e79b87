// Random train/val/test splits: a Fisher-Yates shuffle of the candidate nodes with a seeded xoshiro stream,
// cut by largest-remainder sizes, each list sorted. Fraction parsing with from_chars (datasets/text_input.h).
#include "datasets/split.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <type_traits>
#include <variant>

#include <fmt/format.h>

#include "core/error.h"
#include "core/rng.h"
#include "datasets/text_input.h"

namespace tessel::datasets {
namespace {

constexpr uint64_t kSplitPurpose = 0x73706c6974ULL;  // "split": keeps this stream apart from other uses of a seed
constexpr const char* kExample = "give three fractions train,val,test that sum to 1, such as 0.6,0.2,0.2";

}  // namespace

SplitFractions ParseSplitFractions(std::string_view text) {
  std::array<double, 3> v{};
  size_t count = 0;
  std::string_view rest = text;
  while (true) {
    const size_t comma = rest.find(',');
    std::string_view token = rest.substr(0, comma);
    while (!token.empty() && IsSpace(token.front())) token.remove_prefix(1);
    while (!token.empty() && IsSpace(token.back())) token.remove_suffix(1);
    TESSEL_CHECK(count < 3, "split '{}' has more than three fractions; {}", text, kExample);
    double x = 0;
    TESSEL_CHECK(ParseDouble(token, &x) && std::isfinite(x), "split '{}': '{}' is not a number; {}", text, token,
                 kExample);
    TESSEL_CHECK(x >= 0, "split '{}': fraction {} is negative; {}", text, x, kExample);
    v[count++] = x;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  TESSEL_CHECK(count == 3, "split '{}' has {} fraction{}; {}", text, count, count == 1 ? "" : "s", kExample);
  const double sum = v[0] + v[1] + v[2];
  TESSEL_CHECK(std::abs(sum - 1.0) <= 1e-6, "split '{}' sums to {}, not 1; {}", text, sum, kExample);
  return {v[0], v[1], v[2]};
}

void SplitSizes(int64_t m, const SplitFractions& f, int64_t* train, int64_t* val, int64_t* test) {
  for (double x : {f.train, f.val, f.test}) {
    TESSEL_CHECK(std::isfinite(x) && x >= 0, "split fractions must be finite and >= 0, got {},{},{}", f.train, f.val,
                 f.test);
  }
  TESSEL_CHECK(m >= 0, "split of a negative node count {}", m);
  const std::array<double, 3> exact = {f.train * static_cast<double>(m), f.val * static_cast<double>(m),
                                       f.test * static_cast<double>(m)};
  std::array<int64_t, 3> size{};
  int64_t assigned = 0;
  for (size_t k = 0; k < 3; ++k) {
    size[k] = std::min<int64_t>(static_cast<int64_t>(std::floor(exact[k])), m - assigned);
    assigned += size[k];
  }
  // Hand the remaining nodes to the largest fractional parts (ties: train, then val, then test).
  std::array<size_t, 3> order = {0, 1, 2};
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return exact[a] - static_cast<double>(size[a]) > exact[b] - static_cast<double>(size[b]);
  });
  for (size_t i = 0; assigned < m; i = (i + 1) % 3) {
    if (exact[order[i]] > 0) {
      ++size[order[i]];
      ++assigned;
    } else if (exact[0] + exact[1] + exact[2] <= 0) {
      break;  // all fractions zero: nothing to hand out
    }
  }
  *train = size[0];
  *val = size[1];
  *test = size[2];
}

Split RandomSplit(int64_t num_nodes, std::span<const int32_t> labels, const SplitFractions& fractions, uint64_t seed) {
  TESSEL_CHECK(num_nodes >= 0, "random split: negative node count {}", num_nodes);
  TESSEL_CHECK(labels.empty() || static_cast<int64_t>(labels.size()) == num_nodes,
               "random split: {} labels for {} nodes", labels.size(), num_nodes);
  std::vector<int64_t> candidates;
  candidates.reserve(static_cast<size_t>(num_nodes));
  for (int64_t u = 0; u < num_nodes; ++u) {
    if (labels.empty() || labels[u] != kNoLabel) candidates.push_back(u);
  }
  Rng rng(StreamKey{.seed = seed, .purpose = kSplitPurpose});
  for (size_t i = candidates.size(); i > 1; --i) {
    const auto j = static_cast<size_t>(rng.UniformInt(i));
    std::swap(candidates[i - 1], candidates[j]);
  }
  int64_t n_train = 0;
  int64_t n_val = 0;
  int64_t n_test = 0;
  SplitSizes(static_cast<int64_t>(candidates.size()), fractions, &n_train, &n_val, &n_test);
  Split s;
  const auto begin = candidates.begin();
  s.train.assign(begin, begin + n_train);
  s.val.assign(begin + n_train, begin + n_train + n_val);
  s.test.assign(begin + n_train + n_val, begin + n_train + n_val + n_test);
  std::sort(s.train.begin(), s.train.end());
  std::sort(s.val.begin(), s.val.end());
  std::sort(s.test.begin(), s.test.end());
  return s;
}

void AssignRandomSplit(NodeDataset& data, const SplitFractions& fractions, uint64_t seed) {
  Split s = RandomSplit(data.num_nodes(), data.labels.Host(), fractions, seed);
  data.train = Buffer<int64_t>(std::move(s.train));
  data.val = Buffer<int64_t>(std::move(s.val));
  data.test = Buffer<int64_t>(std::move(s.test));
}

namespace {
// A Buffer over the memory of `b` (no copy), kept alive by `owner`.
template <typename T>
Buffer<T> Share(const Buffer<T>& b, const std::shared_ptr<const void>& owner) {
  const std::span<const T> host = b.Host();
  return Buffer<T>::Borrow(std::const_pointer_cast<void>(owner), const_cast<T*>(host.data()), host.size());
}
}  // namespace

std::shared_ptr<const NodeDataset> WithRandomSplit(const std::shared_ptr<const NodeDataset>& data,
                                                   const SplitFractions& fractions, uint64_t seed) {
  const NodeDataset& src = *data;
  const std::shared_ptr<const void> owner = data;
  auto out = std::make_shared<NodeDataset>();
  out->name = src.name;
  out->graph = std::visit(
      [&](const auto& g) -> AnyGraph {
        return std::decay_t<decltype(g)>(Share(g.indptr(), owner), Share(g.indices(), owner),
                                         Share(g.weights(), owner));
      },
      src.graph);
  out->features.num_rows = src.features.num_rows;
  out->features.dim = src.features.dim;
  out->features.sparse = src.features.sparse;
  out->features.dense = Share(src.features.dense, owner);
  out->features.indptr = Share(src.features.indptr, owner);
  out->features.indices = Share(src.features.indices, owner);
  out->features.values = Share(src.features.values, owner);
  out->labels = Share(src.labels, owner);
  out->num_classes = src.num_classes;
  out->fingerprint = src.fingerprint;  // graph, features and labels: unchanged
  AssignRandomSplit(*out, fractions, seed);
  return out;
}

}  // namespace tessel::datasets
