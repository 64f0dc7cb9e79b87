// Adjacency normalisation, feature preparation and random splits for the GCN trainer (see data.h).
// Degrees exclude self-loops, so Â matches PyG's gcn_norm with add_remaining_self_loops on a loop-free graph.
#include "train/gcn/data.h"

#include <algorithm>
#include <cmath>
#include <variant>

#include "core/parallel.h"

namespace tessel::train::gcn {
namespace {

template <typename IdT>
kernels::SparseMatrix Normalized(const datasets::CsrGraph<IdT>& g, bool gcn) {
  const int64_t n = g.num_nodes();
  TESSEL_CHECK(n <= INT32_MAX, "full-graph training needs fewer than 2^31 nodes, the graph has {}", n);
  auto p = g.indptr().Host();
  auto idx = g.indices().Host();
  std::vector<double> deg(static_cast<size_t>(n), 0.0);
  std::vector<int64_t> out_p(static_cast<size_t>(n + 1), 0);
  for (int64_t u = 0; u < n; ++u) {
    int64_t d = 0;
    for (int64_t e = p[u]; e < p[u + 1]; ++e) d += idx[e] != u ? 1 : 0;
    deg[u] = static_cast<double>(d) + (gcn ? 1.0 : 0.0);
    out_p[u + 1] = out_p[u] + d + (gcn ? 1 : 0);
  }
  std::vector<int32_t> out_i(static_cast<size_t>(out_p.back()));
  std::vector<float> out_v(out_i.size());
  parallel_for<int64_t>(0, n, 1024, [&](int64_t u) {
    int64_t k = out_p[u];
    if (gcn) {
      out_i[k] = static_cast<int32_t>(u);
      out_v[k++] = static_cast<float>(1.0 / deg[u]);
    }
    for (int64_t e = p[u]; e < p[u + 1]; ++e) {
      const int64_t v = idx[e];
      if (v == u) continue;
      out_i[k] = static_cast<int32_t>(v);
      out_v[k++] = static_cast<float>(gcn ? 1.0 / std::sqrt(deg[u] * deg[v]) : 1.0 / deg[u]);
    }
  });
  return kernels::SparseMatrix{n, n, Buffer<int64_t>(std::move(out_p)), Buffer<int32_t>(std::move(out_i)),
                               Buffer<float>(std::move(out_v))};
}

}  // namespace

kernels::SparseMatrix GcnNormalizedAdjacency(const datasets::AnyGraph& graph) {
  return std::visit([](const auto& g) { return Normalized(g, true); }, graph);
}

kernels::SparseMatrix MeanAdjacency(const datasets::AnyGraph& graph) {
  return std::visit([](const auto& g) { return Normalized(g, false); }, graph);
}

FeatureMatrix PrepareFeatures(const datasets::Features& f, bool row_normalize) {
  FeatureMatrix out;
  out.is_sparse = f.sparse;
  TESSEL_CHECK(f.dim <= INT32_MAX, "features: {} columns do not fit 32-bit column ids", f.dim);
  if (f.sparse) {
    auto p = f.indptr.Host();
    auto idx = f.indices.Host();
    auto val = f.values.Host();
    TESSEL_CHECK(static_cast<int64_t>(p.size()) == f.num_rows + 1 && val.size() == idx.size(),
                 "features: sparse arrays disagree with {} rows", f.num_rows);
    std::vector<float> values(val.begin(), val.end());
    for (int64_t r = 0; r < f.num_rows; ++r) {
      double sum = 0;
      for (int64_t e = p[r]; e < p[r + 1]; ++e) {
        TESSEL_CHECK(std::isfinite(values[e]),
                     "features: node {} column {} is {} (features must be finite; clean "
                     "or impute the input)",
                     r, idx[e], values[e]);
        sum += std::abs(static_cast<double>(values[e]));
      }
      if (row_normalize && sum > 0) {
        for (int64_t e = p[r]; e < p[r + 1]; ++e) values[e] = static_cast<float>(values[e] / sum);
      }
    }
    out.sparse =
        kernels::SparseMatrix{f.num_rows, f.dim, f.indptr.Clone(), f.indices.Clone(), Buffer<float>(std::move(values))};
  } else {
    TESSEL_CHECK(static_cast<int64_t>(f.dense.size()) == f.num_rows * f.dim, "features: {} values for {}x{}",
                 f.dense.size(), f.num_rows, f.dim);
    out.dense = kernels::Matrix(f.num_rows, f.dim, f.dense.ToVector());
    auto v = out.dense.Mut();
    const int64_t d = f.dim;
    for (int64_t r = 0; r < f.num_rows; ++r) {
      float* row = v.data() + r * d;
      double sum = 0;
      for (int64_t j = 0; j < d; ++j) {
        TESSEL_CHECK(std::isfinite(row[j]),
                     "features: node {} column {} is {} (features must be finite; clean or "
                     "impute the input)",
                     r, j, row[j]);
        sum += std::abs(static_cast<double>(row[j]));
      }
      if (row_normalize && sum > 0) {
        for (int64_t j = 0; j < d; ++j) row[j] = static_cast<float>(row[j] / sum);
      }
    }
  }
  return out;
}

void CheckTrainable(const datasets::NodeDataset& data, const std::string& where) {
  TESSEL_CHECK(!data.features.empty(), "{}: the dataset has no node features; GCN training needs them", where);
  TESSEL_CHECK(data.has_labels(), "{}: the dataset has no labels; GCN training needs a class per node", where);
  TESSEL_CHECK(data.num_classes > 1, "{}: the dataset has {} classes; need at least 2", where, data.num_classes);
  TESSEL_CHECK(!data.train.empty() && !data.val.empty() && !data.test.empty(),
               "{}: the dataset has no train/val/test split (train {}, val {}, test {} nodes); pass --random-split "
               "0.6,0.2,0.2 for a seeded random split",
               where, data.train.size(), data.val.size(), data.test.size());
  TESSEL_CHECK(data.features.num_rows == data.num_nodes(), "{}: {} feature rows for {} nodes", where,
               data.features.num_rows, data.num_nodes());
  auto labels = data.labels.Host();
  for (const Buffer<int64_t>* list : {&data.train, &data.val, &data.test}) {
    for (int64_t u : list->Host()) {
      TESSEL_CHECK(u >= 0 && u < data.num_nodes(), "{}: split node {} outside [0, {})", where, u, data.num_nodes());
      TESSEL_CHECK(labels[u] >= 0 && labels[u] < data.num_classes, "{}: split node {} has label {} (not a class)",
                   where, u, labels[u]);
    }
  }
}

}  // namespace tessel::train::gcn
