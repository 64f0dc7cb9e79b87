// The in-memory datasets: NodeDataset (graph + node features, labels, splits) for GCN, and SparseRowDataset
// (CSR rows + labels, LIBSVM's data model) for SVM. Both are what readers produce and the native format stores.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/buffer.h"
#include "core/csr_view.h"
#include "datasets/csr_graph.h"

namespace tessel::datasets {

// Node features: dense row-major [num_rows x dim] or sparse CSR rows; float32 either way.
struct Features {
  int64_t num_rows = 0;
  int64_t dim = 0;
  bool sparse = false;
  Buffer<float> dense;      // num_rows * dim values when !sparse
  Buffer<int64_t> indptr;   // num_rows + 1 offsets when sparse
  Buffer<int32_t> indices;  // column ids when sparse, sorted within a row
  Buffer<float> values;     // one per index when sparse

  bool empty() const { return num_rows == 0 || dim == 0; }
  // The sparse rows as the one CSR view (core/csr_view.h); empty spans for dense features.
  CsrView<int32_t, float> SparseRows() const { return {indptr.Host(), indices.Host(), values.Host(), dim}; }
  int64_t NonZeros() const;  // stored entries (sparse) or non-zero values (dense)
  // Throws unless the arrays agree with the shape, columns are in [0, dim) and values are finite.
  void Validate(std::string_view what = "features") const;
};

// Labels are int32 class ids in [0, num_classes) or -1 for "no label".
inline constexpr int32_t kNoLabel = -1;
// Class ids are dense (0, 1, ...), so a dataset of n nodes has at most max(n, kMaxClassesAlways) classes; a larger
// num_classes (or label) is damage, refused on reading because per-class tables are sized by it.
inline constexpr int64_t kMaxClassesAlways = 65536;
// Node feature columns: column ids are int32 (sparse features, the kernels' SparseMatrix), so a dimension is at most
// 2^31 - 1 (docs/formats.md, "Limits").
inline constexpr int64_t kMaxFeatureDim = 2147483647;
// LIBSVM rows: 0-based int32 feature ids in [0, num_features), so num_features is at most 2^31 (LIBSVM's 1-based
// indices up to 2^31); the SVM model file allows the same (svm/svm_model.h, kMaxModelFeatures).
inline constexpr int64_t kMaxSparseRowFeatures = int64_t{1} << 31;

struct NodeDataset {
  std::string name;
  AnyGraph graph;
  Features features;       // empty when the dataset has none
  Buffer<int32_t> labels;  // num_nodes entries, or empty
  int32_t num_classes = 0;
  Buffer<int64_t> train;  // node ids, sorted ascending
  Buffer<int64_t> val;
  Buffer<int64_t> test;
  // The fingerprint of graph, features and labels (partition::DatasetFingerprint) when the loader knows it without
  // reading the arrays (LoadNodeDataset makes it from the manifest's checksums); empty otherwise.
  std::string fingerprint;

  int64_t num_nodes() const { return NumNodes(graph); }
  bool has_labels() const { return !labels.empty(); }
  bool has_split() const { return !train.empty() || !val.empty() || !test.empty(); }
  // Throws unless the graph is valid and features, labels and split lists agree with it: lengths, label
  // range, split ids in range, sorted and unique, and the three lists disjoint.
  void Validate() const;
};

// LIBSVM's data model: sparse rows with real labels (class ids for classification, targets for regression).
// Values are float64, as in LIBSVM, so kernels and objectives can match it exactly.
struct SparseRowDataset {
  std::string name;
  int64_t num_rows = 0;
  int64_t num_features = 0;  // one more than the largest 0-based feature index (or as declared)
  Buffer<int64_t> indptr;    // num_rows + 1
  Buffer<int32_t> indices;   // 0-based feature ids, strictly ascending within a row
  Buffer<double> values;
  Buffer<double> labels;  // num_rows

  int64_t NonZeros() const { return static_cast<int64_t>(indices.size()); }
  // The rows as the one CSR view (core/csr_view.h), num_cols = num_features.
  CsrView<int32_t, double> Rows() const { return {indptr.Host(), indices.Host(), values.Host(), num_features}; }
  void Validate() const;
};

// The rows `rows` of `data` (in that order, repeats allowed) with `labels` as a dataset of their own: LIBSVM's
// subproblems of cross-validation and of -b 1's fits, and a binary task's rows (MakeBinaryTask). Row ids are
// int32_t or int64_t.
template <typename Row>
SparseRowDataset SelectRows(const SparseRowDataset& data, std::span<const Row> rows, std::span<const double> labels);

}  // namespace tessel::datasets
