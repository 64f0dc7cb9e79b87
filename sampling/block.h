// Block: one sampled GNN layer (DGL's message-flow-graph block). Destination nodes are the first num_dst
// source nodes, so a layer can read its own previous representation; adj holds the aggregation weights.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/matrix.h"

namespace tessel::sampling {

struct Block {
  std::vector<int64_t> src_nodes;  // global ids; src_nodes[0 .. num_dst) are the destination nodes
  int64_t num_dst = 0;
  // [num_dst x src_nodes.size()] CSR over local source ids, with weights that make adj·H an unbiased
  // estimate of the full aggregation (Â·H for GCN, mean for SAGE) of the destination rows.
  kernels::SparseMatrix adj;
  // From the GPU sampler: src_nodes on the device (written there; a gather of the block's input rows reads it in
  // place). Empty from the CPU samplers.
  Buffer<int64_t> device_src;

  int64_t num_src() const { return static_cast<int64_t>(src_nodes.size()); }
  int64_t num_edges() const { return adj.nnz(); }
};

}  // namespace tessel::sampling
