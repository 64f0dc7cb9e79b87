// Validation of NodeDataset, Features and SparseRowDataset: the checks every reader and loader relies on.
// Each failure says which array and which entry is wrong.
#include "datasets/dataset.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/parallel.h"

namespace tessel::datasets {
namespace {

void ValidateSplit(std::string_view name, std::span<const int64_t> ids, int64_t n) {
  for (size_t i = 0; i < ids.size(); ++i) {
    TESSEL_CHECK(ids[i] >= 0 && ids[i] < n, "{} split: node id {} is outside [0, {})", name, ids[i], n);
    TESSEL_CHECK(i == 0 || ids[i - 1] < ids[i], "{} split: ids must be sorted and unique (entry {} is {} after {})",
                 name, i, ids[i], ids[i - 1]);
  }
}

template <typename Idx, typename Val>
void ValidateCsrRows(std::string_view what, int64_t rows, int64_t cols, std::span<const int64_t> ptr,
                     std::span<const Idx> idx, std::span<const Val> val) {
  TESSEL_CHECK(static_cast<int64_t>(ptr.size()) == rows + 1, "{}: {} offsets for {} rows", what, ptr.size(), rows);
  TESSEL_CHECK(ptr[0] == 0 && ptr[rows] == static_cast<int64_t>(idx.size()),
               "{}: offsets must run from 0 to {} (the entry count)", what, idx.size());
  TESSEL_CHECK(idx.size() == val.size(), "{}: {} column ids but {} values", what, idx.size(), val.size());
  std::atomic<int64_t> bad{-1};
  parallel_for<int64_t>(0, rows, 1024, [&](int64_t r) {
    // Monotone and within the entries, before any entry of the row is read (a forged offset in the middle of
    // indptr must not send the scan past the end of the arrays).
    if (ptr[r + 1] < ptr[r] || ptr[r] < 0 || ptr[r + 1] > static_cast<int64_t>(idx.size())) {
      bad.store(r);
      return;
    }
    for (int64_t k = ptr[r]; k < ptr[r + 1]; ++k) {
      if (idx[k] < 0 || idx[k] >= cols || (k > ptr[r] && idx[k - 1] >= idx[k]) || !std::isfinite(val[k])) {
        bad.store(r);
        return;
      }
    }
  });
  TESSEL_CHECK(bad.load() < 0,
               "{}: row {} is malformed (offsets decrease, a column is outside [0, {}), columns are not strictly "
               "ascending, or a value is not finite)",
               what, bad.load(), cols);
}

}  // namespace

int64_t Features::NonZeros() const {
  if (sparse) return static_cast<int64_t>(indices.size());
  auto d = dense.Host();
  return std::count_if(d.begin(), d.end(), [](float x) { return x != 0.0F; });
}

void Features::Validate(std::string_view what) const {
  TESSEL_CHECK(num_rows >= 0 && dim >= 0, "{}: negative shape {} x {}", what, num_rows, dim);
  if (sparse) {
    ValidateCsrRows<int32_t, float>(what, num_rows, dim, indptr.Host(), indices.Host(), values.Host());
    return;
  }
  TESSEL_CHECK(static_cast<int64_t>(dense.size()) == num_rows * dim, "{}: {} values for a {} x {} matrix", what,
               dense.size(), num_rows, dim);
  auto d = dense.Host();
  std::atomic<int64_t> bad{-1};
  parallel_for<int64_t>(0, static_cast<int64_t>(d.size()), 1 << 16, [&](int64_t i) {
    if (!std::isfinite(d[i])) bad.store(i);
  });
  TESSEL_CHECK(bad.load() < 0, "{}: value at row {} column {} is not finite", what,
               bad.load() / std::max<int64_t>(dim, 1), bad.load() % std::max<int64_t>(dim, 1));
}

void NodeDataset::Validate() const {
  std::visit([](const auto& g) { g.Validate("graph"); }, graph);
  const int64_t n = num_nodes();
  if (!features.empty() || features.num_rows != 0) {
    TESSEL_CHECK(features.num_rows == n, "features: {} rows for {} nodes", features.num_rows, n);
    features.Validate();
  }
  if (has_labels()) {
    TESSEL_CHECK(static_cast<int64_t>(labels.size()) == n, "labels: {} entries for {} nodes", labels.size(), n);
    TESSEL_CHECK(num_classes > 0, "labels present but num_classes is {}", num_classes);
    TESSEL_CHECK(num_classes <= std::max<int64_t>(n, kMaxClassesAlways),
                 "num_classes is {} but {} nodes can have at most {} classes (class ids must be 0, 1, ...)",
                 num_classes, n, std::max<int64_t>(n, kMaxClassesAlways));
    auto l = labels.Host();
    for (size_t i = 0; i < l.size(); ++i) {
      TESSEL_CHECK(l[i] == kNoLabel || (l[i] >= 0 && l[i] < num_classes),
                   "labels: node {} has label {}, outside [0, {}) and not -1 (unlabelled)", i, l[i], num_classes);
    }
  }
  ValidateSplit("train", train.Host(), n);
  ValidateSplit("val", val.Host(), n);
  ValidateSplit("test", test.Host(), n);
  // Disjointness: mark each node with the first list that holds it.
  if (has_split()) {
    std::vector<uint8_t> seen(static_cast<size_t>(n), 0);
    const std::pair<std::string_view, const Buffer<int64_t>*> lists[] = {
        {"train", &train}, {"val", &val}, {"test", &test}};
    for (uint8_t k = 0; k < 3; ++k) {
      for (int64_t id : lists[k].second->Host()) {
        TESSEL_CHECK(seen[id] == 0, "split lists overlap: node {} is in both {} and {}", id, lists[seen[id] - 1].first,
                     lists[k].first);
        seen[id] = static_cast<uint8_t>(k + 1);
      }
    }
  }
}

void SparseRowDataset::Validate() const {
  TESSEL_CHECK(static_cast<int64_t>(labels.size()) == num_rows, "labels: {} entries for {} rows", labels.size(),
               num_rows);
  ValidateCsrRows<int32_t, double>("rows", num_rows, num_features, indptr.Host(), indices.Host(), values.Host());
  for (double y : labels.Host()) TESSEL_CHECK(std::isfinite(y), "labels: a label is not finite");
}

template <typename Row>
SparseRowDataset SelectRows(const SparseRowDataset& data, std::span<const Row> rows, std::span<const double> labels) {
  TESSEL_CHECK(rows.size() == labels.size(), "SelectRows: {} rows, {} labels", rows.size(), labels.size());
  const auto indptr = data.indptr.Host();
  const auto indices = data.indices.Host();
  const auto values = data.values.Host();
  std::vector<int64_t> ptr{0};
  std::vector<int32_t> idx;
  std::vector<double> val;
  for (const Row r : rows) {
    TESSEL_CHECK(r >= 0 && r < data.num_rows, "SelectRows: row {} of {}", r, data.num_rows);
    idx.insert(idx.end(), indices.begin() + indptr[r], indices.begin() + indptr[r + 1]);
    val.insert(val.end(), values.begin() + indptr[r], values.begin() + indptr[r + 1]);
    ptr.push_back(static_cast<int64_t>(idx.size()));
  }
  SparseRowDataset sub;
  sub.name = data.name;
  sub.num_rows = static_cast<int64_t>(rows.size());
  sub.num_features = data.num_features;
  sub.indptr = Buffer<int64_t>(std::move(ptr));
  sub.indices = Buffer<int32_t>(std::move(idx));
  sub.values = Buffer<double>(std::move(val));
  sub.labels = Buffer<double>(std::vector<double>(labels.begin(), labels.end()));
  return sub;
}

template SparseRowDataset SelectRows<int32_t>(const SparseRowDataset&, std::span<const int32_t>,
                                              std::span<const double>);
template SparseRowDataset SelectRows<int64_t>(const SparseRowDataset&, std::span<const int64_t>,
                                              std::span<const double>);

}  // namespace tessel::datasets
