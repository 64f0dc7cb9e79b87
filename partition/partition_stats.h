// Partition statistics: edge cut, per-part counts, imbalance per constraint and the halo replication factor,
// computed from an assignment (and the halo sizes the build finds); JSON form for partitions.json and --json.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/dataset.h"

namespace tessel::partition {

struct PartCounts {
  int64_t nodes = 0;  // owned nodes
  int64_t edges = 0;  // adjacency entries in the owned rows (the local CSR's entries)
  int64_t halo = 0;   // distinct remote endpoints of the owned rows
  int64_t train = 0;
  int64_t val = 0;
  int64_t test = 0;
};

struct PartitionStats {
  int32_t num_parts = 1;
  int64_t num_nodes = 0;
  int64_t num_entries = 0;  // adjacency entries of the whole graph
  bool symmetric = true;
  // Entries (u, v) with u != v whose ends are in different parts; each becomes a halo column of u's part.
  int64_t cut_entries = 0;
  // Undirected edges cut (cut_entries / 2) for a symmetric graph; directed edges cut otherwise.
  int64_t edge_cut = 0;
  double cut_fraction = 0;  // cut_entries / entries that are not self-loops
  // max over parts of the part's weight / (total weight / K), per constraint; 0 when the total is 0.
  double imbalance_nodes = 0;
  double imbalance_edges = 0;
  double imbalance_train = 0;
  int64_t total_halo = 0;         // sum of the halo sizes = remote node copies a full-graph step needs
  double halo_replication = 1.0;  // sum over parts of (owned + halo) / num_nodes
  std::vector<PartCounts> parts;
};

// True when (u, v) present implies (v, u) present, ignoring edge weights. O(entries): the transpose is built by
// one counting pass and compared with the graph (rows must be sorted and unique; otherwise falls back to
// CsrGraph::IsSymmetric, which also compares weights).
bool StructurallySymmetric(const datasets::CsrGraph32& graph);
bool StructurallySymmetric(const datasets::CsrGraph64& graph);

// Everything except the halo sizes, which SetHalo fills in (the partition build finds them). `symmetric`: 1 or 0
// when the caller already knows whether the graph is symmetric (Assignment::symmetric), -1 to check here.
PartitionStats ComputeStats(const datasets::NodeDataset& data, std::span<const int32_t> part, int32_t num_parts,
                            int symmetric = -1);
void SetHalo(PartitionStats* stats, std::span<const int64_t> halo_per_part);
// What follows from the per-part counts, cut_entries, num_entries and symmetric: edge_cut, cut_fraction (over the
// entries that are not self-loops, `self_loops` of them) and the three imbalances. ComputeStats ends with it; the
// distributed partition calls it on counts summed over ranks.
void FinishStats(PartitionStats* stats, int64_t self_loops);

// {"edge_cut", "cut_entries", "cut_fraction", "halo_replication", "total_halo", "imbalance": {...},
//  "parts": [{"nodes", "edges", "halo", "train", "val", "test"}, ...]}; imbalance lists "train" only when the
// dataset has a training split.
nlohmann::ordered_json StatsToJson(const PartitionStats& stats);

}  // namespace tessel::partition
