// Distributed partitioning (`mpirun -np K tessel partition DATASET --parts P --output DIR`, docs/partition.md):
// every rank reads one block of the dataset's rows (never the whole graph or feature matrix), the ranks assign nodes
// to parts together (label-propagation coarsening and METIS on rank 0, ParMETIS's k-way API of PT-Scotch, or the
// hash), rows move to the rank that writes
// their part in all-to-alls, and each part is written in the partition folder format (partition_format.h), so a
// folder made this way is read exactly as a serial one. With the hash method the folder is byte-identical to the
// serial one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/communicator.h"
#include "partition/partition_format.h"
#include "partition/partitioner.h"

namespace tessel::partition {

// Wall-clock seconds of each step on this rank (the CLI reports rank 0's and the maximum over ranks).
struct DistPartitionTimings {
  double read = 0;      // this rank's block of rows: indptr, columns, checks
  double symmetry = 0;  // the reverse-entry exchange: symmetry check and ParMETIS's symmetric input
  double assign = 0;    // the assignment (ParMETIS or hash), weights included
  double parmetis = 0;  // inside the partitioner only (the coarsening route or ParMETIS_V3_PartKway)
  double relabel = 0;   // part counts, new ids, the neighbours' new ids (one exchange), statistics
  double move = 0;      // rows, features, labels and splits to the ranks that write their parts
  double build = 0;     // local CSR, halo, owned data of the parts this rank writes
  double write = 0;     // the parts' files, partitions.json, rename
  double total = 0;
};

struct DistPartitionResult {
  PartitionStats stats;
  std::string algorithm;  // "lp-coarsen-metis", "parmetis-kway", "hash" or "single"
  std::vector<Constraint> balance;
  DistPartitionTimings timings;
  int64_t block_rows = 0;     // rows this rank read
  int64_t block_entries = 0;  // adjacency entries this rank read
  int64_t parts_written = 0;  // parts this rank wrote (part k is written by rank k mod K)
  // This rank's resident memory (Linux VmHWM, reset around the ParMETIS call through /proc/self/clear_refs): the
  // growth inside ParMETIS (the partitioner's share) and the peak of every other step; -1 where not measurable.
  int64_t partitioner_rss_bytes = -1;
  int64_t peak_rss_outside_partitioner_bytes = -1;
  // This rank's peak resident memory over the whole call (getrusage's figure no longer holds it once VmHWM was reset).
  int64_t peak_rss_bytes = -1;
  // The coarsening route's cluster graph (vertices, adjacency entries; what rank 0 partitions) and its refinement
  // rounds; -1 on the other routes.
  int64_t coarse_vertices = -1;
  int64_t coarse_entries = -1;
  int64_t refinement_rounds = -1;
  nlohmann::ordered_json description;  // the content of partitions.json (every rank)
};

// Whether this build can run the distributed METIS path (ParMETIS's API from PT-Scotch, 64-bit, under MPI).
bool HaveParMetis();

// Partitions the native node dataset at `dataset` over the ranks of `comm` and writes the folder `dir`. Collective:
// every rank calls it with the same arguments. `dir` must be on a file system every rank sees (rank 0 creates it
// under a temporary name, every rank writes its parts there, rank 0 renames it into place); an existing `dir` is
// replaced only with `overwrite`, and only when it is a partition folder or empty.
//
// Methods: metis and hash (any communicator); random is one-process only (a seeded permutation of all nodes). metis
// runs options.dist_algorithm: coarsen (the default: distributed multilevel label-propagation coarsening over every
// edge, serial METIS on rank 0 over the small cluster graph, label-propagation refinement; dist_coarsen.cc; any
// communicator) or parmetis (ParMETIS_V3_PartKway of
// PT-Scotch; MPI communicators only). Balance: one vertex weight, so one constraint is kept: nodes by default, or
// the one --balance names (nodes, edges or train); the statistics report the imbalance of all three. A failure on
// any rank fails every rank with the same message.
DistPartitionResult DistPartitionToFolder(comm::Communicator& comm, const std::filesystem::path& dataset,
                                          const PartitionOptions& options, const std::filesystem::path& dir,
                                          bool overwrite);

namespace detail {
// The ParMETIS call (parmetis_assign.cc, built with PT-Scotch): the distributed CSR of this rank's rows (`vtxdist`
// K + 1 row offsets over ranks, `xadj`, `adjncy` in global ids, symmetric, no self-loops), one vertex weight per
// row; returns the part of each row. Collective over the MPI communicator behind `comm`.
std::vector<int32_t> ParMetisKway(comm::Communicator& comm, const std::vector<int64_t>& vtxdist,
                                  const std::vector<int64_t>& xadj, const std::vector<int64_t>& adjncy,
                                  const std::vector<int64_t>& vwgt, int32_t parts, double imbalance, uint64_t seed);
}  // namespace detail

}  // namespace tessel::partition
