// Summary statistics of datasets for `tessel info` and the reports of other commands: degrees, self-loops,
// symmetry, feature density, class balance and split sizes; rows, nnz and label counts for sparse rows.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/dataset.h"

namespace tessel::datasets {

struct DegreeStats {
  int64_t min = 0;
  int64_t max = 0;
  double mean = 0;
  double median = 0;     // mean of the two middle values for an even node count
  int64_t isolated = 0;  // nodes with no stored entries
};
DegreeStats ComputeDegreeStats(std::span<const int64_t> indptr);

struct NodeDatasetStats {
  int64_t num_nodes = 0;
  int64_t num_entries = 0;  // stored (directed) adjacency entries
  int64_t num_edges = 0;    // undirected edges (self-loops once) when symmetric, else num_entries
  std::string id_dtype;
  bool weighted = false;
  DegreeStats degree;
  int64_t self_loops = 0;
  bool symmetric = false;
  int64_t feature_dim = 0;
  bool features_sparse = false;
  int64_t feature_nnz = 0;
  double feature_density = 0;  // nnz / (rows * dim)
  int32_t num_classes = 0;
  std::vector<int64_t> class_counts;  // num_classes entries
  int64_t unlabelled = 0;             // nodes with kNoLabel (all nodes when there are no labels)
  int64_t train = 0;
  int64_t val = 0;
  int64_t test = 0;
};
NodeDatasetStats ComputeStats(const NodeDataset& data);

struct SparseRowStats {
  int64_t num_rows = 0;
  int64_t num_features = 0;
  int64_t nnz = 0;
  double density = 0;  // nnz / (rows * features)
  int64_t min_row_nnz = 0;
  int64_t max_row_nnz = 0;
  std::vector<std::pair<double, int64_t>> label_counts;  // (label value, rows), ascending by value
};
SparseRowStats ComputeStats(const SparseRowDataset& data);

nlohmann::ordered_json ToJson(const NodeDatasetStats& s);
nlohmann::ordered_json ToJson(const SparseRowStats& s);

}  // namespace tessel::datasets
