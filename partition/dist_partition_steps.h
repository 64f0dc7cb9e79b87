// The steps of distributed partitioning (partition/dist_partition.h), private to partition/. DistPartitionToFolder
// (dist_partition.cc) makes one DistPartitionRun and runs the steps on it in order on every rank; each step is a
// function that reads what the steps before it left in the run and writes its own fields, so one step (the
// assignment, say) is replaced without reading the others. The error agreement stays inside the steps: wherever one
// rank can fail alone (a damaged row, a full disk), the step runs that work under comm::OnEveryRankOrFail, so every
// rank fails with the failing rank's message. Every step but 0 times itself (DistPartitionTimings) and logs its memory
// (LogMemory) at its end.
//
//  step (file)                            reads from the run                  writes to the run
//  0. OpenDataset (dist_partition.cc)     the inputs                          data, n, total_entries, weighted,
//                                                                             result.balance, result.algorithm
//     OpenOutput                          dataset, dir, overwrite             out (rank 0), temp
//  1. ReadBlock (dist_partition_steps.cc) data                                vtxdist, b, result.block_rows/entries
//  2. CheckSymmetry                       b, vtxdist                          symmetry (with metis: ParMETIS's
//                                                                             symmetric adjacency)
//  3. Assign                              b, vtxdist, symmetry,               assignment (this rank's rows' parts,
//                                         result.balance                      the partitioner's memory figures);
//                                                                             frees symmetry's adjacency
//  4. Relabel                             b, vtxdist, assignment.part,        ids, result.stats
//                                         symmetry.symmetric
//  5. MoveRows (dist_partition_move.cc)   b, assignment.part, ids             own (the parts this rank writes);
//                                                                             frees b, ids.col_new, ids.new_id,
//                                                                             assignment.part
//  6. WriteParts                          own, ids.offsets, out, temp,        result.parts_written, .stats (halos),
//                                         result.stats                        .description; commits the folder
//     Finish                              start, assignment's memory figures  timings.total, result's peak memory
//
// The assignment (step 3) is the one the next partitioner replaces: it must leave assignment.part (one part in
// [0, P) per row of the block, every rank calling it collectively) and may use the block, vtxdist and, when
// CheckSymmetry made it, the symmetric adjacency; it frees symmetry.adj_ptr and symmetry.adj.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "comm/communicator.h"
#include "core/error.h"
#include "core/file_io.h"
#include "datasets/dataset.h"
#include "partition/dist_partition.h"

namespace tessel::partition::detail {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since);

inline constexpr uint8_t kTrainBit = 1;
inline constexpr uint8_t kValBit = 2;
inline constexpr uint8_t kTestBit = 4;

// This rank's rows, columns as original ids, checked as they are read (the format's promises: offsets rising
// within the entry count, columns in range, rows ascending without repeats).
struct Block {
  int64_t lo = 0;
  int64_t hi = 0;
  std::vector<int64_t> ptr;  // rows + 1, from 0
  std::vector<int64_t> cols;
  std::vector<float> weights;   // empty when unweighted
  std::vector<int32_t> labels;  // empty when the dataset has none
  std::vector<uint8_t> split;   // kTrainBit | kValBit | kTestBit per row

  int64_t rows() const { return hi - lo; }
};

// What step 2 (CheckSymmetry) leaves: whether the graph is symmetric (1) or not (0), and ParMETIS's symmetric
// adjacency of the block (global ids, no self-loops), made only for the metis method.
struct Symmetry {
  int64_t symmetric = 1;
  std::vector<int64_t> adj_ptr;
  std::vector<int64_t> adj;
};

// What step 3 (Assign) leaves: the part of each of the block's rows, and the peak-memory bookkeeping around ParMETIS
// (Finish reads it).
struct RowParts {
  std::vector<int32_t> part;
  bool partitioner_measured = false;
  int64_t partitioner_rss_base = 0;
};

// What step 4 (Relabel) leaves: the node ranges of the parts (P + 1), each row's new global id, each block entry's
// column's new id.
struct NewIds {
  std::vector<int64_t> offsets;
  std::vector<int64_t> new_id;
  std::vector<int64_t> col_new;
};

// What step 5 (MoveRows) leaves: the parts this rank writes (part p: rank p mod K), where each one's rows start
// among the rows this rank received, their graphs, ids, labels and splits (built), and their features.
struct OwnParts {
  std::vector<int32_t> my_parts;
  std::vector<size_t> part_first;
  std::vector<LocalPart> built;
  std::vector<std::vector<int64_t>> part_feat_ptr;  // sparse features: each part's row offsets
  std::vector<datasets::Features> part_features;
};

// One distributed partitioning on this rank: the inputs, what each step leaves for the next, and the result.
struct DistPartitionRun {
  DistPartitionRun(comm::Communicator& c, const std::filesystem::path& dataset_path, const PartitionOptions& o,
                   const std::filesystem::path& output, bool replace)
      : comm(c), dataset(dataset_path), options(o), dir(output), overwrite(replace) {}

  // The inputs (every step reads them).
  Clock::time_point start = Clock::now();
  comm::Communicator& comm;
  const std::filesystem::path& dataset;
  const PartitionOptions& options;
  const std::filesystem::path& dir;
  bool overwrite = false;
  int K = comm.Size();  // ranks
  int me = comm.Rank();
  int32_t P = options.num_parts;
  std::string where = dataset.string();  // the dataset, as messages name it

  // 0. The dataset (mapped, nothing read until step 1) and the output folder (rank 0's, under a temporary name).
  datasets::NodeDataset data;
  int64_t n = 0;
  int64_t total_entries = 0;
  bool weighted = false;
  std::unique_ptr<AtomicDirectory> out;  // rank 0 only
  std::string temp;                      // the temporary folder, every rank
  const datasets::Features& feat() const { return data.features; }

  // 1. The row blocks of all ranks (K + 1 offsets) and this rank's.
  std::vector<int64_t> vtxdist;
  Block b;

  Symmetry symmetry;    // 2.
  RowParts assignment;  // 3.
  // The rank that writes the part of the block's row i (part p: rank p mod K).
  size_t DestOf(int64_t i) const { return static_cast<size_t>(assignment.part[static_cast<size_t>(i)] % K); }
  NewIds ids;    // 4.
  OwnParts own;  // 5.

  DistPartitionResult result;  // timings, statistics, memory figures, partitions.json
};

// The steps, in order (the table above).
void OpenDataset(DistPartitionRun& run);
void OpenOutput(DistPartitionRun& run);
void ReadBlock(DistPartitionRun& run);
void CheckSymmetry(DistPartitionRun& run);
void Assign(DistPartitionRun& run);
void Relabel(DistPartitionRun& run);
void MoveRows(DistPartitionRun& run);
void WriteParts(DistPartitionRun& run);
void Finish(DistPartitionRun& run);

// Step 3's coarsening route (dist_coarsen.cc, DistAlgorithm::kCoarsen): leaves run.assignment.part from the block,
// vtxdist and the symmetric adjacency, `vwgt` the balanced constraint's weight of each row.
void CoarsenAssign(DistPartitionRun& run, const std::vector<int64_t>& vwgt);

// Helpers the steps share.

// The rank whose block holds node v.
int OwnerOf(const std::vector<int64_t>& vtxdist, int64_t v);
// The part that owns new id g.
int32_t PartOfNew(const std::vector<int64_t>& offsets, int64_t g);

// Gives the heap's free pages back to the system (glibc keeps freed chunks below its mmap threshold, up to 32 MiB
// each), so a step's freed buffers stop counting against the rank before the next step allocates, then logs.
void LogMemory(int rank, const char* step);

// Offsets of a bucketed send buffer from per-destination counts.
std::vector<int64_t> Starts(const std::vector<int64_t>& counts);

template <typename T>
std::vector<T> Exchange(comm::Communicator& comm, const std::vector<T>& send, const std::vector<int64_t>& counts,
                        std::vector<int64_t>* recv_counts, std::string_view purpose) {
  std::vector<T> recv;
  std::vector<int64_t> rc;
  comm.AlltoallvWithCounts<T>(send, counts, &recv, &rc, purpose).ThrowIfError();
  if (recv_counts != nullptr) *recv_counts = std::move(rc);
  return recv;
}

// Values of the sorted, unique `keys` asked of their owners (`dist`: K + 1 key offsets by rank), for the same keys
// again and again (the ghosts' labels every clustering round, their parts every refinement round): the keys go to
// their owners once, here, and each Ask sends only the answers back.
class OwnerQuery {
 public:
  OwnerQuery(DistPartitionRun& run, const std::vector<int64_t>& dist, const std::vector<int64_t>& keys)
      : run_(run), keys_(keys.size()) {
    std::vector<int64_t> counts(static_cast<size_t>(run.K), 0);
    for (const int64_t v : keys) ++counts[static_cast<size_t>(OwnerOf(dist, v))];
    asked_ = Exchange(run.comm, keys, counts, &asked_counts_, "partition");
    const int64_t lo = dist[static_cast<size_t>(run.me)];
    const int64_t hi = dist[static_cast<size_t>(run.me) + 1];
    comm::OnEveryRankOrFail(run.comm, [&] {
      for (int64_t& v : asked_) {
        TESSEL_CHECK(v >= lo && v < hi, "distributed partition: rank {} was asked for {} outside [{}, {})", run.me, v,
                     lo, hi);
        v -= lo;
      }
    });
  }
  // W values of each key (in the keys' order), `of(k - dist[me], out)` answering on the key's owner.
  template <int W, typename F>
  std::vector<int64_t> Ask(F of) {
    std::vector<int64_t> answers(asked_.size() * W);
    for (size_t i = 0; i < asked_.size(); ++i) of(asked_[i], &answers[i * W]);
    std::vector<int64_t> counts = asked_counts_;
    for (int64_t& c : counts) c *= W;
    std::vector<int64_t> got = Exchange(run_.comm, answers, counts, nullptr, "partition");
    TESSEL_CHECK(got.size() == keys_ * W, "distributed partition: {} answers for {} keys", got.size(), keys_);
    return got;
  }

 private:
  DistPartitionRun& run_;
  size_t keys_;
  std::vector<int64_t> asked_;  // the keys others asked this rank for, as offsets from dist[me]
  std::vector<int64_t> asked_counts_;
};

// W values of each of the sorted, unique `keys`, asked of their owners once (the key k's owner answers
// `of(k - dist[owner], out)`, writing W values to out): one request/reply exchange; W values per key, in the keys'
// order.
template <int W, typename F>
std::vector<int64_t> AskOwners(DistPartitionRun& run, const std::vector<int64_t>& dist,
                               const std::vector<int64_t>& keys, F of) {
  return OwnerQuery(run, dist, keys).Ask<W>(of);
}

// Frees a vector's storage now (`v = {}` picks the initializer-list assignment, which keeps the capacity).
template <typename T>
void Free(std::vector<T>& v) {
  std::vector<T>().swap(v);
}

template <typename T>
void SumOverRanks(comm::Communicator& comm, std::vector<T>* v) {
  comm.Allreduce<T>(*v, comm::ReduceOp::kSum, "setup").ThrowIfError();
}

}  // namespace tessel::partition::detail
