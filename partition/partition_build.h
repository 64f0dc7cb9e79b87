// Partition build: from an assignment (node -> part) to per-part data: owned nodes relabelled to a contiguous
// range, the local CSR over owned + 1-hop halo nodes, halo owners, id maps, and the owned features/labels/splits.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/buffer.h"
#include "datasets/dataset.h"

namespace tessel::partition {

// The global relabelling: part k owns the new global ids [offsets[k], offsets[k+1]); within a part, owned
// nodes keep the order of their original ids (DistDGL's contiguous node ranges).
struct PartitionPlan {
  int32_t num_parts = 1;
  std::vector<int32_t> part;     // original id -> part
  std::vector<int64_t> local;    // original id -> local id in its part (= new global id - offsets[part])
  std::vector<int64_t> members;  // new global id -> original id (owned nodes of part 0, then of part 1, ...)
  std::vector<int64_t> offsets;  // num_parts + 1

  int64_t num_owned(int32_t k) const { return offsets[k + 1] - offsets[k]; }
};

// Throws unless every entry is in [0, num_parts).
PartitionPlan MakePlan(std::vector<int32_t> assignment, int32_t num_parts);

// One part as one rank sees it. Local ids: [0, num_owned) are the owned nodes (ascending original id),
// [num_owned, num_owned + num_halo) the halo nodes (ascending original id). `graph` is square over the local
// ids: rows [0, num_owned) are the owned nodes' rows of the original graph (every entry, self-loops included,
// weights kept) with columns as local ids, each row sorted; the halo rows are empty. Local ids are 32-bit.
struct LocalPart {
  int32_t part = 0;
  int32_t num_parts = 1;
  int64_t global_offset = 0;  // new global id of local node 0
  int64_t num_owned = 0;
  int64_t num_halo = 0;
  int64_t dataset_nodes = 0;  // nodes of the whole dataset

  datasets::CsrGraph32 graph;   // num_local rows (halo rows empty), columns in [0, num_local)
  Buffer<int64_t> owned_ids;    // local id -> original id, ascending
  Buffer<int64_t> halo_ids;     // halo j (local id num_owned + j) -> original id, ascending
  Buffer<int32_t> halo_owner;   // part that owns halo j (never this part)
  Buffer<int64_t> halo_remote;  // local id of halo j inside its owner part

  datasets::Features features;  // owned rows only (empty when the dataset has none)
  Buffer<int32_t> labels;       // num_owned entries, or empty
  int32_t num_classes = 0;
  Buffer<int64_t> train;  // local ids of owned nodes in each split, ascending
  Buffer<int64_t> val;
  Buffer<int64_t> test;

  int64_t num_local() const { return num_owned + num_halo; }
  // Local id -> original dataset id (owned or halo).
  int64_t ToOriginal(int64_t local) const;
  // Original id -> local id; -1 when the node is neither owned nor in the halo. O(log n).
  int64_t ToLocal(int64_t original) const;
  // Throws unless the arrays agree with each other (sizes, ranges, sortedness, halo owners != part, ...).
  void Validate() const;
};

// Builds parts one at a time (each part's work is parallel inside); keeps a scratch map of the dataset's size.
// Not thread-safe: build each part once, in sequence; after Build throws, discard the builder.
class PartBuilder {
 public:
  PartBuilder(const datasets::NodeDataset& data, const PartitionPlan& plan);
  LocalPart Build(int32_t part);

 private:
  const datasets::NodeDataset& data_;
  const PartitionPlan& plan_;
  std::vector<int32_t> halo_slot_;  // original id -> index in the current part's halo list (valid for halo only)
  std::vector<std::vector<int64_t>> splits_[3];  // train/val/test local ids per part (moved out by Build)
  std::vector<uint8_t> built_;                   // parts already built
};

}  // namespace tessel::partition
