// Dataset statistics: degree distribution (min/max/mean/median/isolated), self-loops, symmetry, feature
// density, class balance and split sizes for node datasets; shape, density and label counts for sparse rows.
#include "datasets/stats.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <variant>

#include "core/parallel.h"
#include "datasets/array_store.h"

namespace tessel::datasets {
namespace {

double Ratio(int64_t num, double den) { return den > 0 ? static_cast<double>(num) / den : 0.0; }

std::vector<int64_t> RowLengths(std::span<const int64_t> indptr) {
  const int64_t n = indptr.empty() ? 0 : static_cast<int64_t>(indptr.size()) - 1;
  std::vector<int64_t> len(static_cast<size_t>(n));
  parallel_for<int64_t>(0, n, 1 << 14, [&](int64_t u) { len[u] = indptr[u + 1] - indptr[u]; });
  return len;
}

}  // namespace

DegreeStats ComputeDegreeStats(std::span<const int64_t> indptr) {
  std::vector<int64_t> deg = RowLengths(indptr);
  DegreeStats s;
  if (deg.empty()) return s;
  const auto [lo, hi] = std::minmax_element(deg.begin(), deg.end());
  s.min = *lo;
  s.max = *hi;
  s.mean = Ratio(indptr.back() - indptr.front(), static_cast<double>(deg.size()));
  s.isolated = std::count(deg.begin(), deg.end(), int64_t{0});
  const size_t mid = deg.size() / 2;
  std::nth_element(deg.begin(), deg.begin() + static_cast<std::ptrdiff_t>(mid), deg.end());
  const auto upper = static_cast<double>(deg[mid]);
  if (deg.size() % 2 == 1) {
    s.median = upper;
  } else {
    const auto lower =
        static_cast<double>(*std::max_element(deg.begin(), deg.begin() + static_cast<std::ptrdiff_t>(mid)));
    s.median = (lower + upper) / 2;
  }
  return s;
}

NodeDatasetStats ComputeStats(const NodeDataset& data) {
  NodeDatasetStats s;
  s.num_nodes = data.num_nodes();
  s.num_entries = NumEntries(data.graph);
  std::visit(
      [&](const auto& g) {
        using Id = typename std::decay_t<decltype(g)>::Id;
        s.id_dtype = std::string(DTypeName(DTypeOf<Id>()));
        s.weighted = g.has_weights();
        s.degree = ComputeDegreeStats(g.indptr().Host());
        s.self_loops = g.CountSelfLoops();
        s.symmetric = g.IsSymmetric();
      },
      data.graph);
  s.num_edges = s.symmetric ? (s.num_entries - s.self_loops) / 2 + s.self_loops : s.num_entries;
  const Features& f = data.features;
  if (!f.empty()) {
    s.feature_dim = f.dim;
    s.features_sparse = f.sparse;
    s.feature_nnz = f.NonZeros();
    s.feature_density = Ratio(s.feature_nnz, static_cast<double>(f.num_rows) * static_cast<double>(f.dim));
  }
  s.unlabelled = s.num_nodes;
  if (data.has_labels()) {
    s.num_classes = data.num_classes;
    s.class_counts.assign(static_cast<size_t>(std::max(data.num_classes, 0)), 0);
    s.unlabelled = 0;
    for (int32_t l : data.labels.Host()) {
      if (l == kNoLabel) {
        ++s.unlabelled;
      } else if (l >= 0 && l < data.num_classes) {
        ++s.class_counts[static_cast<size_t>(l)];
      }
    }
  }
  s.train = static_cast<int64_t>(data.train.size());
  s.val = static_cast<int64_t>(data.val.size());
  s.test = static_cast<int64_t>(data.test.size());
  return s;
}

SparseRowStats ComputeStats(const SparseRowDataset& data) {
  SparseRowStats s;
  s.num_rows = data.num_rows;
  s.num_features = data.num_features;
  s.nnz = data.NonZeros();
  s.density = Ratio(s.nnz, static_cast<double>(s.num_rows) * static_cast<double>(s.num_features));
  const std::vector<int64_t> len = RowLengths(data.indptr.Host());
  if (!len.empty()) {
    const auto [lo, hi] = std::minmax_element(len.begin(), len.end());
    s.min_row_nnz = *lo;
    s.max_row_nnz = *hi;
  }
  std::map<double, int64_t> counts;
  for (double y : data.labels.Host()) ++counts[y];
  s.label_counts.assign(counts.begin(), counts.end());
  return s;
}

nlohmann::ordered_json ToJson(const NodeDatasetStats& s) {
  using J = nlohmann::ordered_json;
  const auto& d = s.degree;
  return J{
      {"num_nodes", s.num_nodes},
      {"num_entries", s.num_entries},
      {"num_edges", s.num_edges},
      {"id_dtype", s.id_dtype},
      {"weighted", s.weighted},
      {"symmetric", s.symmetric},
      {"self_loops", s.self_loops},
      {"degree", J{{"min", d.min}, {"max", d.max}, {"mean", d.mean}, {"median", d.median}, {"isolated", d.isolated}}},
      {"features", J{{"dim", s.feature_dim},
                     {"sparse", s.features_sparse},
                     {"nnz", s.feature_nnz},
                     {"density", s.feature_density}}},
      {"num_classes", s.num_classes},
      {"class_counts", s.class_counts},
      {"unlabelled", s.unlabelled},
      {"split", J{{"train", s.train}, {"val", s.val}, {"test", s.test}}}};
}

nlohmann::ordered_json ToJson(const SparseRowStats& s) {
  using J = nlohmann::ordered_json;
  J labels = J::array();
  for (const auto& [value, count] : s.label_counts) labels.push_back({{"label", value}, {"count", count}});
  return J{{"num_rows", s.num_rows},
           {"num_features", s.num_features},
           {"nnz", s.nnz},
           {"density", s.density},
           {"row_nnz", J{{"min", s.min_row_nnz}, {"max", s.max_row_nnz}}},
           {"labels", labels},
           {"num_classes", s.label_counts.size()}};
}

}  // namespace tessel::datasets
