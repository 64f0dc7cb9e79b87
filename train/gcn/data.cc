// Adjacency normalisation, feature preparation and random splits for the GCN trainer (see data.h).
// Degrees exclude self-loops, so Â matches PyG's gcn_norm with add_remaining_self_loops on a loop-free graph.
#include "train/gcn/data.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <type_traits>
#include <utility>
#include <variant>

#include "core/error.h"
#include "core/memory_budget.h"
#include "core/parallel.h"

namespace tessel::train::gcn {
namespace {

template <typename IdT>
kernels::SparseMatrix Normalized(const datasets::CsrGraph<IdT>& g, bool gcn) {
  const int64_t n = g.num_nodes();
  TESSEL_CHECK(n <= INT32_MAX, "full-graph training needs fewer than 2^31 nodes, the graph has {}", n);
  const CsrView<IdT, float> a = g.View();
  std::vector<double> deg(static_cast<size_t>(n), 0.0);
  std::vector<int64_t> out_p(static_cast<size_t>(n + 1), 0);
  for (int64_t u = 0; u < n; ++u) {
    int64_t d = 0;
    for (IdT v : a.RowIndices(u)) d += v != u ? 1 : 0;
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
    for (const IdT id : a.RowIndices(u)) {
      const auto v = static_cast<int64_t>(id);
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

std::string_view FeatureNormName(FeatureNorm norm) { return EnumName(norm); }

FeatureNorm ParseFeatureNorm(std::string_view name) {
  for (const auto& [norm, norm_name] : EnumNames<FeatureNorm>::kNames) {
    if (name == norm_name) return norm;
  }
  throw Error(
      fmt::format("feature normalisation '{}' is unknown; choose none (the values as given), l1 (rows "
                  "divided by their L1 norm, the Planetoid preprocessing) or standard (columns to zero mean "
                  "and unit variance)",
                  name));
}

nlohmann::json FeatureScaling::ToJson() const {
  nlohmann::json j{{"norm", FeatureNormName(norm)}};
  if (norm == FeatureNorm::kStandard) {
    j["mean"] = mean;
    j["scale"] = scale;
  }
  return j;
}

FeatureScaling FeatureScaling::FromJson(const nlohmann::json& j) {
  FeatureScaling s;
  s.norm = ParseFeatureNorm(j.at("norm").get<std::string>());
  if (s.norm == FeatureNorm::kStandard) {
    s.mean = j.at("mean").get<std::vector<double>>();
    s.scale = j.at("scale").get<std::vector<double>>();
    TESSEL_CHECK(s.mean.size() == s.scale.size(), "feature scaling: {} means but {} scales", s.mean.size(),
                 s.scale.size());
    for (size_t c = 0; c < s.scale.size(); ++c) {
      TESSEL_CHECK(std::isfinite(s.mean[c]) && std::isfinite(s.scale[c]) && s.scale[c] > 0,
                   "feature scaling: column {} has mean {} and scale {} (need finite values, scale > 0)", c, s.mean[c],
                   s.scale[c]);
    }
  }
  return s;
}

FeatureScaling FitFeatureScaling(const datasets::Features& f, FeatureNorm norm,
                                 const SumAcrossRanks& sum_across_ranks) {
  FeatureScaling s;
  s.norm = norm;
  if (norm != FeatureNorm::kStandard) return s;
  // Five arrays of a double per column (sums, counts, deviations, then the mean and scale kept): a sparse dataset
  // may declare billions of columns, so the budget is asked before any of them is made.
  memory::CheckArray(f.dim + 1, 5 * static_cast<int64_t>(sizeof(double)),
                     fmt::format("--normalize-features standard's per-column statistics of {} feature columns", f.dim),
                     "--normalize-features none or l1 (no per-column arrays), or fewer feature columns");
  const auto d = static_cast<size_t>(f.dim);
  const auto reduce = [&](std::vector<double>* v) {
    if (sum_across_ranks) sum_across_ranks(std::span<double>(*v));
  };
  // Pass 1: row count and column sums (the count travels in the last slot).
  std::vector<double> acc(d + 1, 0.0);
  std::vector<double> nnz(d, 0.0);  // sparse: stored entries per column (the others are zeros)
  if (f.sparse) {
    auto p = f.indptr.Host();
    auto idx = f.indices.Host();
    auto val = f.values.Host();
    for (int64_t e = 0; e < (f.num_rows > 0 ? p[f.num_rows] : 0); ++e) {
      acc[static_cast<size_t>(idx[e])] += val[e];
      nnz[static_cast<size_t>(idx[e])] += 1;
    }
  } else {
    auto v = f.dense.Host();
    for (int64_t r = 0; r < f.num_rows; ++r) {
      const float* row = v.data() + r * f.dim;
      for (size_t c = 0; c < d; ++c) acc[c] += row[c];
    }
  }
  acc[d] = static_cast<double>(f.num_rows);
  reduce(&acc);
  const double rows = acc[d];
  s.mean.assign(d, 0.0);
  for (size_t c = 0; c < d; ++c) s.mean[c] = rows > 0 ? acc[c] / rows : 0.0;
  // Pass 2: squared deviations from the mean (sparse: the implicit zeros count as (0 - mean)^2 each).
  std::vector<double> dev(d, 0.0);
  if (f.sparse) {
    auto p = f.indptr.Host();
    auto idx = f.indices.Host();
    auto val = f.values.Host();
    for (int64_t e = 0; e < (f.num_rows > 0 ? p[f.num_rows] : 0); ++e) {
      const auto c = static_cast<size_t>(idx[e]);
      const double x = static_cast<double>(val[e]) - s.mean[c];
      dev[c] += x * x;
    }
    for (size_t c = 0; c < d; ++c) dev[c] += (static_cast<double>(f.num_rows) - nnz[c]) * s.mean[c] * s.mean[c];
  } else {
    auto v = f.dense.Host();
    for (int64_t r = 0; r < f.num_rows; ++r) {
      const float* row = v.data() + r * f.dim;
      for (size_t c = 0; c < d; ++c) {
        const double x = static_cast<double>(row[c]) - s.mean[c];
        dev[c] += x * x;
      }
    }
  }
  reduce(&dev);
  s.scale.assign(d, 1.0);
  for (size_t c = 0; c < d; ++c) {
    const double sd = rows > 0 ? std::sqrt(dev[c] / rows) : 0.0;
    // A column that is constant (up to float rounding) is left unscaled instead of blown up.
    if (sd > 1e-12 * std::max(1.0, std::abs(s.mean[c])) && std::isfinite(sd)) s.scale[c] = sd;
  }
  if (f.sparse) std::fill(s.mean.begin(), s.mean.end(), 0.0);
  return s;
}

FeatureMatrix PrepareFeatures(const datasets::Features& f, const FeatureScaling& scaling) {
  FeatureMatrix out;
  out.is_sparse = f.sparse;
  TESSEL_CHECK(f.dim <= INT32_MAX, "features: {} columns do not fit 32-bit column ids", f.dim);
  const bool l1 = scaling.norm == FeatureNorm::kL1;
  const bool standard = scaling.norm == FeatureNorm::kStandard;
  TESSEL_CHECK(!standard || (static_cast<int64_t>(scaling.mean.size()) == f.dim &&
                             static_cast<int64_t>(scaling.scale.size()) == f.dim),
               "features: standard scaling fitted on {} columns, the features have {} (a checkpoint of another "
               "dataset?)",
               scaling.scale.size(), f.dim);
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
      if (l1 && sum > 0) {
        for (int64_t e = p[r]; e < p[r + 1]; ++e) values[e] = static_cast<float>(values[e] / sum);
      } else if (standard) {
        for (int64_t e = p[r]; e < p[r + 1]; ++e) {
          values[e] = static_cast<float>(values[e] / scaling.scale[static_cast<size_t>(idx[e])]);
        }
      }
    }
    out.sparse =
        kernels::SparseMatrix{f.num_rows, f.dim, f.indptr.Clone(), f.indices.Clone(), Buffer<float>(std::move(values))};
  } else {
    TESSEL_CHECK(static_cast<int64_t>(f.dense.size()) == f.num_rows * f.dim, "features: {} values for {}x{}",
                 f.dense.size(), f.num_rows, f.dim);
    out.dense.rows = f.num_rows;
    out.dense.cols = f.dim;
    out.dense.data = Buffer<float>::CopyOf(f.dense.Host());  // large copies land on huge pages (core/buffer.h)
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
      if (l1 && sum > 0) {
        for (int64_t j = 0; j < d; ++j) row[j] = static_cast<float>(row[j] / sum);
      } else if (standard) {
        for (int64_t j = 0; j < d; ++j) {
          const auto c = static_cast<size_t>(j);
          row[j] = static_cast<float>((row[j] - scaling.mean[c]) / scaling.scale[c]);
        }
      }
    }
  }
  return out;
}

int64_t FeatureBytes(const FeatureMatrix& f) {
  if (!f.is_sparse) return static_cast<int64_t>(f.dense.data.bytes());
  return static_cast<int64_t>(f.sparse.indptr.bytes() + f.sparse.indices.bytes() + f.sparse.values.bytes());
}

void MapFeaturesToHost(FeatureMatrix* f) {
  const auto map = [](auto& buf) {
    using B = std::remove_reference_t<decltype(buf)>;
    if (!buf.Mapped()) buf = B::MappedCopyOf(std::span<const typename B::value_type>(buf.Host()));
  };
  if (!f->is_sparse) {
    map(f->dense.data);
    return;
  }
  map(f->sparse.indptr);
  map(f->sparse.indices);
  map(f->sparse.values);
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
  for (const auto& [list_name, list] : {std::pair{"train", &data.train}, {"val", &data.val}, {"test", &data.test}}) {
    for (int64_t u : list->Host()) {
      TESSEL_CHECK(u >= 0 && u < data.num_nodes(), "{}: {} split node {} outside [0, {})", where, list_name, u,
                   data.num_nodes());
      TESSEL_CHECK(labels[u] >= 0 && labels[u] < data.num_classes,
                   "{}: {} split node {} has label {} (not a class); every split node needs one: convert the dataset "
                   "again with a label for it, or with a split that leaves it out (tessel convert --split "
                   "0.6,0.2,0.2 --resplit splits the labelled nodes)",
                   where, list_name, u, labels[u]);
    }
  }
}

}  // namespace tessel::train::gcn
