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

}  // namespace tessel::partition::detail
