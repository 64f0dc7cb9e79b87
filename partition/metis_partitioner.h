// The METIS partitioner's entry point (internal to tessel_partition): the only code that sees metis.h lives in
// metis_partitioner.cc, so idx_t never leaks into a public header.
#pragma once

#include <vector>

#include "datasets/dataset.h"
#include "partition/partitioner.h"

namespace tessel::partition::detail {

// Multi-constraint METIS on the dataset's graph, symmetrised and without self-loops (METIS's requirement).
// `balance` is the resolved constraint list (non-empty, every total weight > 0); options are already validated.
Assignment MetisAssignment(const datasets::NodeDataset& data, const PartitionOptions& options,
                           const std::vector<Constraint>& balance);

// METIS on a small weighted graph given as CSR (symmetric, no self-loops; int64 ids, vertex and edge weights): the
// coarse graph of distributed partitioning (dist_coarsen.cc). Recursive bisection for k <= kRecursiveMaxParts
// (its per-level tolerance the log2 k-th root of `imbalance`), else k-way; run again with a tighter tolerance, up
// to three times, while the parts end above `imbalance`. Deterministic for a given seed.
std::vector<int32_t> MetisPartCsr(const std::vector<int64_t>& xadj, const std::vector<int64_t>& adjncy,
                                  const std::vector<int64_t>& adjwgt, const std::vector<int64_t>& vwgt, int32_t k,
                                  double imbalance, uint64_t seed);

}  // namespace tessel::partition::detail
