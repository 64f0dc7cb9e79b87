// Turning a NodeDataset into what the GCN trainer consumes: the normalised adjacency Â = D^-1/2 (A + I) D^-1/2
// (Kipf & Welling 2017) or the mean adjacency D^-1 A (GraphSAGE-mean), checked and scaled features (none, L1 rows
// or standardised columns), and the check that a dataset can train a node classifier (random splits:
// datasets/split.h).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/params.h"
#include "datasets/dataset.h"
#include "kernels/matrix.h"

namespace tessel::train::gcn {

// Â with one self-loop per node (existing self-loops are ignored); symmetric when the graph is.
kernels::SparseMatrix GcnNormalizedAdjacency(const datasets::AnyGraph& graph);
// Row i holds 1/deg(i) for each neighbour (self-loops ignored); rows of isolated nodes are empty.
kernels::SparseMatrix MeanAdjacency(const datasets::AnyGraph& graph);

// Features in kernel form: exactly one of dense / sparse is filled.
struct FeatureMatrix {
  bool is_sparse = false;
  kernels::Matrix dense;
  kernels::SparseMatrix sparse;
  int64_t rows() const { return is_sparse ? sparse.rows : dense.rows; }
  int64_t cols() const { return is_sparse ? sparse.cols : dense.cols; }
};
// How input features are scaled before training (`--normalize-features`). The default is kNone, as in PyG:
// L1 rows help the bag-of-words Planetoid features (Kipf & Welling's preprocessing) but cost 4-15 accuracy points
// on real-valued features (docs/gcn.md).
enum class FeatureNorm {
  kNone,      // the values as given
  kL1,        // each row divided by its sum of absolute values (all-zero rows stay zero)
  kStandard,  // each column: dense (x - mean) / std, sparse x / std (no centring: keeps the zeros); std over all rows
};
std::string_view FeatureNormName(FeatureNorm norm);   // "none", "l1", "standard" (the EnumNames list below)
FeatureNorm ParseFeatureNorm(std::string_view name);  // throws listing the choices

// What PrepareFeatures applies: the kind and, for kStandard, the per-column shift and divisor fitted on the data
// (saved in checkpoints so that prediction on other nodes scales as training did).
struct FeatureScaling {
  FeatureNorm norm = FeatureNorm::kNone;
  std::vector<double> mean;   // kStandard: subtracted (all zero for sparse features)
  std::vector<double> scale;  // kStandard: divisor, the population std; 1 for constant columns
  nlohmann::json ToJson() const;
  static FeatureScaling FromJson(const nlohmann::json& j);  // throws on a malformed object
};

// Sums `values` element-wise over every rank holding a share of the rows (identity for one process).
using SumAcrossRanks = std::function<void(std::span<double> values)>;

// Fits the scaling for `norm` on the rows of `features`; with `sum_across_ranks` the column moments cover the rows
// of every rank (two passes: the means, then the squared deviations, in float64). Every rank gets the same result.
FeatureScaling FitFeatureScaling(const datasets::Features& features, FeatureNorm norm,
                                 const SumAcrossRanks& sum_across_ranks = {});

// Copies the features, failing with the node and column of the first NaN or Inf, and applies `scaling`
// (kStandard needs one mean and scale per column).
FeatureMatrix PrepareFeatures(const datasets::Features& features, const FeatureScaling& scaling);

// Bytes of the features' arrays (dense values, or the CSR's three arrays).
int64_t FeatureBytes(const FeatureMatrix& f);
// Moves the features' arrays into mapped pinned host memory (Buffer::MappedCopyOf): the device reads them in place,
// so they never go up whole. Needs a device runtime.
void MapFeaturesToHost(FeatureMatrix* f);

// Throws with the fix when the dataset cannot train a node classifier: no features, no labels, no split
// (suggest --random-split), or a split list that names unlabelled nodes.
void CheckTrainable(const datasets::NodeDataset& data, const std::string& where);

}  // namespace tessel::train::gcn

namespace tessel {
// The one list of FeatureNorm's names: the CLI, the JSON and FeatureNormName read it (core/params.h).
TESSEL_ENUM_NAMES(train::gcn::FeatureNorm, {train::gcn::FeatureNorm::kNone, "none"},
                  {train::gcn::FeatureNorm::kL1, "l1"}, {train::gcn::FeatureNorm::kStandard, "standard"});
}  // namespace tessel
