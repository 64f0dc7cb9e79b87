// The coarsening route's parts shared by its two files, private to partition/: dist_coarsen.cc (the clustering, the
// cluster graph and METIS on rank 0) and dist_refine.cc (the label-propagation refinement).
#pragma once

#include <cstdint>
#include <vector>

#include "comm/communicator.h"
#include "core/error.h"
#include "partition/dist_partition_steps.h"

namespace tessel::partition::detail {

inline size_t Z(int64_t i) { return static_cast<size_t>(i); }

// The block's remote neighbours, sorted and unique, and each adjacency entry's slot: >= 0 the index among them,
// < 0 the local row ~slot.
std::vector<int64_t> Ghosts(const DistPartitionRun& run, std::vector<int32_t>* slot);

// The refinement (dist_refine.cc): rounds of label propagation on run.assignment.part, keeping the best balanced
// parts a round reached; returns the rounds run.
int Refine(DistPartitionRun& run, const std::vector<int64_t>& vwgt, const std::vector<int64_t>& ghosts,
           const std::vector<int32_t>& slot);

}  // namespace tessel::partition::detail
