// Turning a NodeDataset into what the GCN trainer consumes: the normalised adjacency Â = D^-1/2 (A + I) D^-1/2
// (Kipf & Welling 2017) or the mean adjacency D^-1 A (GraphSAGE-mean), checked and row-normalised features,
// and the check that a dataset can train a node classifier (random splits: datasets/split.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
// Copies the features, failing with the node and column of the first NaN or Inf; with row_normalize, each
// row is divided by its sum of absolute values (Kipf & Welling's preprocessing; all-zero rows stay zero).
FeatureMatrix PrepareFeatures(const datasets::Features& features, bool row_normalize);

// Throws with the fix when the dataset cannot train a node classifier: no features, no labels, no split
// (suggest --random-split), or a split list that names unlabelled nodes.
void CheckTrainable(const datasets::NodeDataset& data, const std::string& where);

}  // namespace tessel::train::gcn
