// Steps 1-4 of distributed partitioning (partition/dist_partition_steps.h): this rank's block of rows, the symmetry
// check and ParMETIS's symmetric input, the assignment, and the new ids with the statistics.
#include <algorithm>
#include <iterator>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/log.h"
#include "core/memory_budget.h"
#include "core/rng.h"
#include "partition/dist_partition_steps.h"
#include "partition/sorted_index.h"

namespace tessel::partition::detail {
namespace {

// Row blocks: rank i reads rows [vtxdist[i], vtxdist[i+1]); cut where the cost indptr[u] + c * u (entries plus
// feature values, in units of an entry) crosses i / K of the total, every block at least one row.
std::vector<int64_t> BlockOffsets(std::span<const int64_t> indptr, int64_t n, int64_t row_cost, int k) {
  std::vector<int64_t> vtxdist(static_cast<size_t>(k) + 1, 0);
  const auto cost = [&](int64_t u) { return indptr[static_cast<size_t>(u)] + row_cost * u; };
  const long double total = static_cast<long double>(cost(n));
  for (int i = 1; i < k; ++i) {
    const auto target = static_cast<int64_t>(total * i / k);
    int64_t lo = 0;
    int64_t hi = n;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (cost(mid) < target) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    vtxdist[static_cast<size_t>(i)] = std::clamp<int64_t>(lo, vtxdist[static_cast<size_t>(i) - 1] + 1, n - (k - i));
  }
  vtxdist[static_cast<size_t>(k)] = n;
  return vtxdist;
}

template <typename IdT>
void ReadRows(const datasets::CsrGraph<IdT>& g, const std::string& where, Block* b) {
  auto indptr = g.indptr().Host();
  auto idx = g.indices().Host();
  const int64_t n = g.num_nodes();
  const auto entries = static_cast<int64_t>(idx.size());
  const int64_t first = indptr[static_cast<size_t>(b->lo)];
  b->ptr.resize(static_cast<size_t>(b->rows()) + 1);
  for (int64_t u = b->lo; u <= b->hi; ++u) {
    const int64_t p = indptr[static_cast<size_t>(u)];
    if (p < first || p > entries || (u > b->lo && p < indptr[static_cast<size_t>(u) - 1])) {
      throw Error::InFile(where, fmt::format("invalid dataset: adjacency offset {} ({}) is out of order or beyond the "
                                             "{} entries; re-run tessel convert",
                                             u, p, entries));
    }
    b->ptr[static_cast<size_t>(u - b->lo)] = p - first;
  }
  const int64_t count = b->ptr.back();
  b->cols.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < b->rows(); ++i) {
    for (int64_t e = b->ptr[static_cast<size_t>(i)]; e < b->ptr[static_cast<size_t>(i) + 1]; ++e) {
      const auto v = static_cast<int64_t>(idx[static_cast<size_t>(first + e)]);
      if (v < 0 || v >= n || (e > b->ptr[static_cast<size_t>(i)] && v <= b->cols[static_cast<size_t>(e) - 1])) {
        throw Error::InFile(where, fmt::format("invalid dataset: adjacency row {} has column {} out of range [0, {}) "
                                               "or out of ascending order; re-run tessel convert",
                                               b->lo + i, v, n));
      }
      b->cols[static_cast<size_t>(e)] = v;
    }
  }
  if (g.has_weights()) {
    auto w = g.weights().Host();
    b->weights.assign(w.begin() + first, w.begin() + first + count);
  }
  memory::ReleaseMappedPages(idx.data() + first, count * static_cast<int64_t>(sizeof(IdT)));
}

// The split lists are sorted node ids: this block's part of each is found by binary search.
void ReadSplits(const datasets::NodeDataset& data, const std::string& where, Block* b) {
  b->split.assign(static_cast<size_t>(b->rows()), 0);
  const std::pair<const Buffer<int64_t>*, uint8_t> lists[] = {
      {&data.train, kTrainBit}, {&data.val, kValBit}, {&data.test, kTestBit}};
  const char* names[] = {"train", "val", "test"};
  for (size_t s = 0; s < 3; ++s) {
    auto ids = lists[s].first->Host();
    auto it = std::lower_bound(ids.begin(), ids.end(), b->lo);
    for (int64_t prev = -1; it != ids.end() && *it < b->hi; ++it) {
      if (*it <= prev) {
        throw Error::InFile(where, fmt::format("invalid dataset: the {} split is not ascending without repeats at "
                                               "node {}; re-run tessel convert",
                                               names[s], *it));
      }
      prev = *it;
      uint8_t& f = b->split[static_cast<size_t>(*it - b->lo)];
      if (f != 0) {
        throw Error::InFile(where, fmt::format("invalid dataset: node {} is in more than one split; re-run tessel "
                                               "convert",
                                               *it));
      }
      f = lists[s].second;
    }
  }
}

void ReadLabels(const datasets::NodeDataset& data, const std::string& where, Block* b) {
  if (!data.has_labels()) return;
  auto labels = data.labels.Host();
  b->labels.assign(labels.begin() + b->lo, labels.begin() + b->hi);
  for (int64_t i = 0; i < b->rows(); ++i) {
    const int32_t y = b->labels[static_cast<size_t>(i)];
    if (y != datasets::kNoLabel && (y < 0 || y >= data.num_classes)) {
      throw Error::InFile(where, fmt::format("invalid dataset: node {} has label {} outside [0, {}); re-run tessel "
                                             "convert",
                                             b->lo + i, y, data.num_classes));
    }
  }
}

}  // namespace

// 1. This rank's block.
void ReadBlock(DistPartitionRun& run) {
  const int me = run.me;
  const int64_t n = run.n;
  const datasets::NodeDataset& data = run.data;
  const datasets::Features& feat = run.feat();
  const std::string& where = run.where;
  Block& b = run.b;
  std::vector<int64_t>& vtxdist = run.vtxdist;
  DistPartitionResult& result = run.result;
  auto clock = Clock::now();
  comm::OnEveryRankOrFail(run.comm, [&] {
    std::visit(
        [&](const auto& g) {
          int64_t row_cost = 1;
          if (feat.dim > 0) {
            const int64_t values =
                feat.sparse ? feat.indptr.Host()[static_cast<size_t>(n)] / std::max<int64_t>(n, 1) : feat.dim;
            row_cost = 1 + values / 2;  // a feature value (4 bytes) against an entry as it travels (8 bytes)
          }
          vtxdist = BlockOffsets(g.indptr().Host(), n, row_cost, run.K);
          b.lo = vtxdist[static_cast<size_t>(me)];
          b.hi = vtxdist[static_cast<size_t>(me) + 1];
          ReadRows(g, where, &b);
        },
        data.graph);
    ReadSplits(data, where, &b);
    ReadLabels(data, where, &b);
  });
  const int64_t rows = b.rows();
  result.block_rows = rows;
  result.block_entries = static_cast<int64_t>(b.cols.size());
  result.timings.read = Seconds(clock);
  LogMemory(me, "read");
  log::Debug("partition: rank {} reads rows [{}, {}) ({} entries) of {} nodes", me, b.lo, b.hi, b.cols.size(), n);
}

namespace {

// Rows are unique, so the graph is symmetric exactly when the multiset of entries (u, v), u != v, equals that of
// (v, u): two independent 64-bit hash sums of each, summed over ranks, compare them without moving an entry (an
// asymmetric graph passes with probability about 2^-128). Returns 1 when symmetric, else 0.
int64_t SymmetricBySums(comm::Communicator& comm, const Block& b) {
  const int64_t rows = b.rows();
  std::vector<uint64_t> sums(4, 0);  // forward and backward, two hashes each
  for (int64_t i = 0; i < rows; ++i) {
    const auto u = static_cast<uint64_t>(b.lo + i);
    for (int64_t e = b.ptr[static_cast<size_t>(i)]; e < b.ptr[static_cast<size_t>(i) + 1]; ++e) {
      const auto v = static_cast<uint64_t>(b.cols[static_cast<size_t>(e)]);
      if (v == u) continue;
      sums[0] += Mix64(Mix64(u) ^ v);
      sums[1] += Mix64(Mix64(v) ^ u);
      sums[2] += Mix64(Mix64(u + 0x9e3779b97f4a7c15ULL) + v);
      sums[3] += Mix64(Mix64(v + 0x9e3779b97f4a7c15ULL) + u);
    }
  }
  comm.Allreduce<uint64_t>(sums, comm::ReduceOp::kSum, "setup").ThrowIfError();
  return sums[0] == sums[1] && sums[2] == sums[3] ? 1 : 0;
}

// A symmetric graph: ParMETIS's adjacency is the block's rows without self-loops.
void OwnAdjacency(DistPartitionRun& run) {
  const Block& b = run.b;
  const int64_t rows = b.rows();
  std::vector<int64_t>& adj_ptr = run.symmetry.adj_ptr;
  std::vector<int64_t>& adj = run.symmetry.adj;
  adj_ptr.assign(static_cast<size_t>(rows) + 1, 0);
  adj.reserve(b.cols.size());  // one allocation, not a doubling vector's copies and fresh pages
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t e = b.ptr[static_cast<size_t>(i)]; e < b.ptr[static_cast<size_t>(i) + 1]; ++e) {
      if (b.cols[static_cast<size_t>(e)] != b.lo + i) adj.push_back(b.cols[static_cast<size_t>(e)]);
    }
    adj_ptr[static_cast<size_t>(i) + 1] = static_cast<int64_t>(adj.size());
  }
}

// An asymmetric graph: every entry (u, v), u != v, travels to v's block as (v, u); each row's union with what it
// receives.
void UnionAdjacency(DistPartitionRun& run) {
  const Block& b = run.b;
  const int64_t rows = b.rows();
  const std::vector<int64_t>& vtxdist = run.vtxdist;
  std::vector<int64_t>& adj_ptr = run.symmetry.adj_ptr;
  std::vector<int64_t>& adj = run.symmetry.adj;
  std::vector<int64_t> counts(static_cast<size_t>(run.K), 0);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t e = b.ptr[static_cast<size_t>(i)]; e < b.ptr[static_cast<size_t>(i) + 1]; ++e) {
      const int64_t v = b.cols[static_cast<size_t>(e)];
      if (v != b.lo + i) counts[static_cast<size_t>(OwnerOf(vtxdist, v))] += 2;
    }
  }
  std::vector<int64_t> at = Starts(counts);
  std::vector<int64_t> send(static_cast<size_t>(at.back()));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t e = b.ptr[static_cast<size_t>(i)]; e < b.ptr[static_cast<size_t>(i) + 1]; ++e) {
      const int64_t v = b.cols[static_cast<size_t>(e)];
      if (v == b.lo + i) continue;
      int64_t& k = at[static_cast<size_t>(OwnerOf(vtxdist, v))];
      send[static_cast<size_t>(k)] = v;
      send[static_cast<size_t>(k) + 1] = b.lo + i;
      k += 2;
    }
  }
  std::vector<int64_t> recv = Exchange(run.comm, send, counts, nullptr, "partition");
  Free(send);
  std::vector<int64_t> rev_ptr(static_cast<size_t>(rows) + 1, 0);
  for (size_t j = 0; j < recv.size(); j += 2) ++rev_ptr[static_cast<size_t>(recv[j] - b.lo) + 1];
  std::partial_sum(rev_ptr.begin(), rev_ptr.end(), rev_ptr.begin());
  std::vector<int64_t> rev(recv.size() / 2);
  std::vector<int64_t> fill(rev_ptr.begin(), rev_ptr.end() - 1);
  for (size_t j = 0; j < recv.size(); j += 2) {
    rev[static_cast<size_t>(fill[static_cast<size_t>(recv[j] - b.lo)]++)] = recv[j + 1];
  }
  Free(recv);
  adj_ptr.assign(static_cast<size_t>(rows) + 1, 0);
  std::vector<int64_t> own;
  for (int64_t i = 0; i < rows; ++i) {
    const auto r0 = rev.begin() + rev_ptr[static_cast<size_t>(i)];
    const auto r1 = rev.begin() + rev_ptr[static_cast<size_t>(i) + 1];
    std::sort(r0, r1);
    own.clear();
    for (int64_t e = b.ptr[static_cast<size_t>(i)]; e < b.ptr[static_cast<size_t>(i) + 1]; ++e) {
      if (b.cols[static_cast<size_t>(e)] != b.lo + i) own.push_back(b.cols[static_cast<size_t>(e)]);
    }
    std::set_union(own.begin(), own.end(), r0, r1, std::back_inserter(adj));
    adj_ptr[static_cast<size_t>(i) + 1] = static_cast<int64_t>(adj.size());
  }
}

}  // namespace

// 2. Symmetry, and ParMETIS's symmetric adjacency. Only an asymmetric graph partitioned by ParMETIS needs the
//    reverse entries, for the union.
void CheckSymmetry(DistPartitionRun& run) {
  auto clock = Clock::now();
  run.symmetry.symmetric = SymmetricBySums(run.comm, run.b);
  const bool need_adj = run.options.method == Method::kMetis && run.P > 1;
  if (need_adj && run.symmetry.symmetric == 1) {
    OwnAdjacency(run);
  } else if (need_adj) {
    UnionAdjacency(run);
  }
  run.result.timings.symmetry = Seconds(clock);
  LogMemory(run.me, "symmetry");
}

namespace {

// The balanced constraint's weight of each of the block's rows (ParMETIS's and the coarsening's vertex weights).
std::vector<int64_t> BlockWeights(const DistPartitionRun& run) {
  const Block& b = run.b;
  std::vector<int64_t> vwgt(static_cast<size_t>(b.rows()), 1);
  const Constraint c = run.result.balance.front();
  for (size_t i = 0; i < vwgt.size(); ++i) {
    if (c == Constraint::kEdges) vwgt[i] = b.ptr[i + 1] - b.ptr[i];
    if (c == Constraint::kTrain) vwgt[i] = (b.split[i] & kTrainBit) ? 1 : 0;
  }
  return vwgt;
}

// Runs the partitioner (ParMETIS, or the coarsening route) over the blocks and measures its memory (VmHWM reset
// around the call).
void PartitionerAssign(DistPartitionRun& run) {
  comm::Communicator& comm = run.comm;
  const PartitionOptions& options = run.options;
  DistPartitionResult& result = run.result;
  const std::vector<int64_t> vwgt = BlockWeights(run);
  const bool parmetis = options.dist_algorithm == DistAlgorithm::kParMetis;
  log::Info("partition: {} over {} ranks into {} parts, balancing {}",
            parmetis ? "ParMETIS_V3_PartKway (PT-Scotch)" : "label-propagation coarsening, METIS, refinement", run.K,
            run.P, ConstraintName(result.balance.front()));
  const auto pm = Clock::now();
  const int64_t peak_before = memory::HighWaterResidentBytes();
  const int64_t rss_before = memory::ResidentBytes();
  const bool reset = memory::ResetPeakResident();
  if (parmetis) {
    comm::OnEveryRankOrFail(comm, [&] {
      run.assignment.part = ParMetisKway(comm, run.vtxdist, run.symmetry.adj_ptr, run.symmetry.adj, vwgt, run.P,
                                         options.imbalance, options.seed);
    });
  } else {
    CoarsenAssign(run, vwgt);
  }
  result.timings.parmetis = Seconds(pm);
  // The partitioner frees its working memory on return; give the heap's free pages back to the system so the steps
  // that follow are measured (and run) without it.
  memory::ReturnFreeHeap();
  if (reset && rss_before > 0 && peak_before >= 0) {
    result.partitioner_rss_bytes = std::max<int64_t>(memory::HighWaterResidentBytes() - rss_before, 0);
    result.peak_rss_outside_partitioner_bytes = peak_before;
    run.assignment.partitioner_rss_base = rss_before;
    run.assignment.partitioner_measured = memory::ResetPeakResident();
  }
}

}  // namespace

// 3. Assignment: every row of the block in part 0 (one part), by the hash, or by the partitioner (ParMETIS or the
// coarsening route, dist_coarsen.cc).
void Assign(DistPartitionRun& run) {
  const Block& b = run.b;
  const int64_t rows = b.rows();
  auto clock = Clock::now();
  run.assignment.part.assign(static_cast<size_t>(rows), 0);
  if (run.P > 1 && run.options.method == Method::kHash) {
    for (int64_t i = 0; i < rows; ++i) {
      run.assignment.part[static_cast<size_t>(i)] = HashPart(b.lo + i, run.P);
    }
  } else if (run.P > 1) {
    PartitionerAssign(run);
  }
  Free(run.symmetry.adj);
  Free(run.symmetry.adj_ptr);
  run.result.timings.assign = Seconds(clock);
  LogMemory(run.me, "assign");
}

namespace {

// Per-rank, per-part node counts (one allgather) give the node ranges (`offsets`) and each row's new global id: part
// p owns [offsets[p], offsets[p+1]), its rows in original order, rank by rank.
void NumberRows(DistPartitionRun& run) {
  const int me = run.me;
  const int64_t rows = run.b.rows();
  const std::vector<int32_t>& part = run.assignment.part;
  std::vector<int64_t>& offsets = run.ids.offsets;
  std::vector<int64_t>& new_id = run.ids.new_id;
  std::vector<int64_t> mine(static_cast<size_t>(run.P), 0);
  for (int32_t p : part) ++mine[static_cast<size_t>(p)];
  std::vector<int64_t> all(static_cast<size_t>(run.P) * static_cast<size_t>(run.K));
  run.comm.Allgather<int64_t>(mine, all, "setup").ThrowIfError();
  offsets.assign(static_cast<size_t>(run.P) + 1, 0);
  std::vector<int64_t> next(static_cast<size_t>(run.P), 0);
  for (int32_t p = 0; p < run.P; ++p) {
    int64_t before_me = 0;
    int64_t total = 0;
    for (int r = 0; r < run.K; ++r) {
      const int64_t c = all[static_cast<size_t>(r) * static_cast<size_t>(run.P) + static_cast<size_t>(p)];
      if (r < me) before_me += c;
      total += c;
    }
    offsets[static_cast<size_t>(p) + 1] = offsets[static_cast<size_t>(p)] + total;
    next[static_cast<size_t>(p)] = before_me;
  }
  {  // every rank holds the same totals, so every rank throws alike
    std::vector<int64_t> nodes_per_part(static_cast<size_t>(run.P));
    for (size_t p = 0; p < nodes_per_part.size(); ++p) nodes_per_part[p] = offsets[p + 1] - offsets[p];
    CheckNoEmptyPart(nodes_per_part, run.options.method);
  }
  new_id.resize(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) {
    const auto p = static_cast<size_t>(part[static_cast<size_t>(i)]);
    new_id[static_cast<size_t>(i)] = offsets[p] + next[p]++;
  }
}

// The block's remote columns (`ghosts`: sorted and unique, so grouped by owner block already; `slot`: each entry's
// index among them, or ~row for a local column) and their new ids (`ghost_new`), asked of their owners in one
// request/reply exchange.
void GhostNewIds(DistPartitionRun& run, std::vector<int64_t>* ghosts, std::vector<int32_t>* slot,
                 std::vector<int64_t>* ghost_new) {
  const std::vector<int64_t>& new_id = run.ids.new_id;
  *ghosts = GhostsOf(run.b.cols, run.b.lo, run.b.hi, slot);
  *ghost_new = AskOwners<1>(run, run.vtxdist, *ghosts,
                            [&](int64_t row, int64_t* out) { *out = new_id[static_cast<size_t>(row)]; });
}

// Every entry's column's new id (`col_new`), and this block's share of the statistics as ComputeStats makes them:
// per part edges, train, val and test, then the cut entries and the self-loops.
std::vector<int64_t> RelabelColumnsAndCount(DistPartitionRun& run, const std::vector<int32_t>& slot,
                                            const std::vector<int64_t>& ghost_new) {
  const Block& b = run.b;
  const int64_t rows = b.rows();
  const std::vector<int32_t>& part = run.assignment.part;
  const std::vector<int64_t>& offsets = run.ids.offsets;
  const std::vector<int64_t>& new_id = run.ids.new_id;
  std::vector<int64_t>& col_new = run.ids.col_new;
  const auto new_of = [&](size_t e) {
    const int32_t s = slot[e];
    return s >= 0 ? ghost_new[static_cast<size_t>(s)] : new_id[static_cast<size_t>(~s)];
  };
  PartitionStats& stats = run.result.stats;
  stats.num_parts = run.P;
  stats.num_nodes = run.n;
  stats.num_entries = run.total_entries;
  stats.symmetric = run.symmetry.symmetric == 1;
  stats.parts.assign(static_cast<size_t>(run.P), PartCounts{});
  std::vector<int64_t> sums(static_cast<size_t>(run.P) * 4 + 2, 0);  // edges, train, val, test per part; cut; loops
  constexpr size_t kAhead = 32;                                      // entries
  col_new.resize(b.cols.size());
  for (int64_t i = 0; i < rows; ++i) {
    const auto p = static_cast<size_t>(part[static_cast<size_t>(i)]);
    sums[p * 4] += b.ptr[static_cast<size_t>(i) + 1] - b.ptr[static_cast<size_t>(i)];
    const uint8_t s = b.split[static_cast<size_t>(i)];
    sums[p * 4 + 1] += (s & kTrainBit) ? 1 : 0;
    sums[p * 4 + 2] += (s & kValBit) ? 1 : 0;
    sums[p * 4 + 3] += (s & kTestBit) ? 1 : 0;
    for (int64_t e = b.ptr[static_cast<size_t>(i)]; e < b.ptr[static_cast<size_t>(i) + 1]; ++e) {
      if (static_cast<size_t>(e) + kAhead < slot.size()) {  // the new id an entry further on reads, in no order
        const int32_t at = slot[static_cast<size_t>(e) + kAhead];
        __builtin_prefetch(at >= 0 ? &ghost_new[static_cast<size_t>(at)] : &new_id[static_cast<size_t>(~at)]);
      }
      const int64_t v = b.cols[static_cast<size_t>(e)];
      col_new[static_cast<size_t>(e)] = new_of(static_cast<size_t>(e));
      if (v == b.lo + i) {
        ++sums[static_cast<size_t>(run.P) * 4 + 1];
      } else if (PartOfNew(offsets, col_new[static_cast<size_t>(e)]) != static_cast<int32_t>(p)) {
        ++sums[static_cast<size_t>(run.P) * 4];
      }
    }
  }
  return sums;
}

}  // namespace

// 4. New ids, the columns' new ids, statistics (sums over ranks).
void Relabel(DistPartitionRun& run) {
  const std::vector<int64_t>& offsets = run.ids.offsets;
  PartitionStats& stats = run.result.stats;
  auto clock = Clock::now();
  NumberRows(run);
  std::vector<int64_t> ghosts;
  std::vector<int32_t> slot;
  std::vector<int64_t> ghost_new;
  GhostNewIds(run, &ghosts, &slot, &ghost_new);
  Free(ghosts);
  std::vector<int64_t> sums = RelabelColumnsAndCount(run, slot, ghost_new);
  Free(slot);
  Free(ghost_new);
  SumOverRanks(run.comm, &sums);
  for (int32_t p = 0; p < run.P; ++p) {
    PartCounts& c = stats.parts[static_cast<size_t>(p)];
    c.nodes = offsets[static_cast<size_t>(p) + 1] - offsets[static_cast<size_t>(p)];
    c.edges = sums[static_cast<size_t>(p) * 4];
    c.train = sums[static_cast<size_t>(p) * 4 + 1];
    c.val = sums[static_cast<size_t>(p) * 4 + 2];
    c.test = sums[static_cast<size_t>(p) * 4 + 3];
  }
  stats.cut_entries = sums[static_cast<size_t>(run.P) * 4];
  const int64_t loops = sums[static_cast<size_t>(run.P) * 4 + 1];
  FinishStats(&stats, loops);
  run.result.timings.relabel = Seconds(clock);
  LogMemory(run.me, "relabel");
}

}  // namespace tessel::partition::detail
