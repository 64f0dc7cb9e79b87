// Distributed partitioning (partition/dist_partition.h). The steps on rank r of K, for P parts:
//  1. Blocks: rows [vtxdist[r], vtxdist[r+1]) of the dataset, cut so every rank gets about the same entries plus
//     feature values; each rank maps the arrays and touches only its rows (checked as it reads them).
//  2. Symmetry: hash sums of the entries (u, v) and of their reverses, summed over ranks, tell whether the graph is
//     symmetric without moving an entry; ParMETIS needs a symmetric input without self-loops, so only an asymmetric
//     graph sends every entry (u, v) to v's block as (v, u) and takes each row's union.
//  3. Assignment: ParMETIS_V3_PartKway on the blocks (one vertex weight), or the hash.
//  4. New ids: per-rank, per-part node counts (one allgather) give the node ranges and every row's new global id
//     (part k owns [offsets[k], offsets[k+1]), original order kept); one request/reply exchange gives each block
//     the new ids of its remote columns. Statistics are sums over ranks.
//  5. Move and build: rows (original and new ids of every column, weights, label, split) to the rank that writes
//     their part (part k: rank k mod K) in one all-to-all; each part's local CSR, halo (ascending original ids),
//     labels and splits are built and the received columns freed; then the features arrive in rounds of bounded
//     size, each source block's pages released once sent.
//  6. Write: each part validated and written by the serial path's writer into rank 0's temporary folder; rank 0
//     writes partitions.json and renames it.
#include "partition/dist_partition.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "core/build_config.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "core/memory_budget.h"
#include "core/output_guard.h"
#include "core/rng.h"
#include "datasets/native_format.h"

namespace tessel::partition {

bool HaveParMetis() { return TESSEL_HAVE_PARMETIS != 0; }

namespace {
constexpr const char* kNoParMetis =
    "this tessel was built without ParMETIS (PT-Scotch): install libptscotch-dev and libscotchparmetis-dev "
    "(tools/setup-deps.sh) and rebuild, or use --method hash";
}  // namespace

#if !TESSEL_HAVE_PARMETIS
namespace detail {
std::vector<int32_t> ParMetisKway(comm::Communicator&, const std::vector<int64_t>&, const std::vector<int64_t>&,
                                  const std::vector<int64_t>&, const std::vector<int64_t>&, int32_t, double, uint64_t) {
  throw Error(kNoParMetis);
}
}  // namespace detail
#endif

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using OrderedJson = nlohmann::ordered_json;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

constexpr uint8_t kTrainBit = 1;
constexpr uint8_t kValBit = 2;
constexpr uint8_t kTestBit = 4;
// Feature bytes one rank sends per round of the feature move (the rounds bound the move's transient memory).
constexpr int64_t kFeatureRoundBytes = int64_t{32} << 20;

int OwnerOf(const std::vector<int64_t>& vtxdist, int64_t v) {
  return static_cast<int>(std::upper_bound(vtxdist.begin(), vtxdist.end(), v) - vtxdist.begin()) - 1;
}

int32_t PartOfNew(const std::vector<int64_t>& offsets, int64_t g) {
  return static_cast<int32_t>(std::upper_bound(offsets.begin(), offsets.end(), g) - offsets.begin()) - 1;
}

// Gives the heap's free pages back to the system (glibc keeps freed chunks below its mmap threshold, up to 32 MiB
// each), so a step's freed buffers stop counting against the rank before the next step allocates, then logs.
void LogMemory(int rank, const char* step) {
  memory::ReturnFreeHeap();
  log::Debug("partition: rank {} after {}: RSS {} MiB (anonymous {} MiB), peak {} MiB", rank, step,
             memory::ResidentBytes() >> 20, memory::AnonResidentBytes() >> 20, memory::HighWaterResidentBytes() >> 20);
}

template <typename T>
std::vector<T> Exchange(comm::Communicator& comm, const std::vector<T>& send, const std::vector<int64_t>& counts,
                        std::vector<int64_t>* recv_counts, std::string_view purpose) {
  std::vector<T> recv;
  std::vector<int64_t> rc;
  comm.AlltoallvWithCounts<T>(send, counts, &recv, &rc, purpose).ThrowIfError();
  if (recv_counts != nullptr) *recv_counts = std::move(rc);
  return recv;
}

// Frees a vector's storage now (`v = {}` picks the initializer-list assignment, which keeps the capacity).
template <typename T>
void Free(std::vector<T>& v) {
  std::vector<T>().swap(v);
}

// Offsets of a bucketed send buffer from per-destination counts.
std::vector<int64_t> Starts(const std::vector<int64_t>& counts) {
  std::vector<int64_t> s(counts.size() + 1, 0);
  std::partial_sum(counts.begin(), counts.end(), s.begin() + 1);
  return s;
}

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

// One row as it travels to the rank that writes its part.
struct RowMeta {
  int64_t original = 0;
  int64_t new_id = 0;
  int64_t degree = 0;
  int64_t feature_nnz = 0;  // sparse features: the row's non-zeros
  int32_t label = datasets::kNoLabel;
  int32_t split = 0;
};
static_assert(sizeof(RowMeta) == 40);

struct Column {
  int64_t original = 0;
  int64_t new_id = 0;
};

// Rows of the parts this rank writes, as received (ascending original id: sources are ascending blocks, each sends
// its rows in order).
struct Received {
  std::vector<RowMeta> rows;
  std::vector<int64_t> row_start;  // into cols / weights
  std::vector<Column> cols;
  std::vector<float> weights;
};

LocalPart BuildPart(const Received& in, size_t first_row, size_t end_row, int32_t k, int32_t num_parts,
                    const std::vector<int64_t>& offsets, int64_t dataset_nodes, int32_t num_classes, bool has_labels,
                    bool weighted) {
  LocalPart out;
  out.part = k;
  out.num_parts = num_parts;
  out.global_offset = offsets[static_cast<size_t>(k)];
  out.num_owned = static_cast<int64_t>(end_row - first_row);
  out.dataset_nodes = dataset_nodes;
  out.num_classes = num_classes;
  const int64_t lo = offsets[static_cast<size_t>(k)];
  const int64_t hi = offsets[static_cast<size_t>(k) + 1];
  TESSEL_CHECK(out.num_owned == hi - lo, "distributed partition: part {} received {} rows for {} nodes", k,
               out.num_owned, hi - lo);
  std::vector<int64_t> owned(static_cast<size_t>(out.num_owned));
  std::vector<Column> halo;
  for (size_t r = first_row; r < end_row; ++r) {
    const RowMeta& m = in.rows[r];
    TESSEL_CHECK(m.new_id == lo + static_cast<int64_t>(r - first_row),
                 "distributed partition: part {} row {} arrived out of order", k, m.original);
    owned[r - first_row] = m.original;
    for (int64_t e = in.row_start[r]; e < in.row_start[r + 1]; ++e) {
      const Column& c = in.cols[static_cast<size_t>(e)];
      if (c.new_id < lo || c.new_id >= hi) halo.push_back(c);
    }
  }
  std::sort(halo.begin(), halo.end(), [](const Column& a, const Column& b) { return a.original < b.original; });
  halo.erase(
      std::unique(halo.begin(), halo.end(), [](const Column& a, const Column& b) { return a.original == b.original; }),
      halo.end());
  out.num_halo = static_cast<int64_t>(halo.size());
  TESSEL_CHECK(out.num_local() <= std::numeric_limits<int32_t>::max(),
               "part {} has {} owned + {} halo nodes, more than 32-bit local ids hold; use more parts", k,
               out.num_owned, out.num_halo);
  std::vector<int64_t> halo_ids(halo.size());
  std::vector<int32_t> halo_owner(halo.size());
  std::vector<int64_t> halo_remote(halo.size());
  for (size_t j = 0; j < halo.size(); ++j) {
    halo_ids[j] = halo[j].original;
    halo_owner[j] = PartOfNew(offsets, halo[j].new_id);
    halo_remote[j] = halo[j].new_id - offsets[static_cast<size_t>(halo_owner[j])];
  }
  const auto to_local = [&](const Column& c) {
    if (c.new_id >= lo && c.new_id < hi) return static_cast<int32_t>(c.new_id - lo);
    const auto it = std::lower_bound(halo_ids.begin(), halo_ids.end(), c.original);
    return static_cast<int32_t>(out.num_owned + (it - halo_ids.begin()));
  };
  const int64_t base = in.row_start[first_row];
  const int64_t entries = in.row_start[end_row] - base;
  std::vector<int64_t> lptr(static_cast<size_t>(out.num_local()) + 1, entries);
  std::vector<int32_t> lidx(static_cast<size_t>(entries));
  std::vector<float> lw(weighted ? lidx.size() : 0);
  std::vector<std::pair<int32_t, float>> row;
  for (size_t r = first_row; r < end_row; ++r) {
    const int64_t b = in.row_start[r] - base;
    const int64_t e_end = in.row_start[r + 1] - base;
    lptr[r - first_row] = b;
    if (!weighted) {
      for (int64_t e = b; e < e_end; ++e)
        lidx[static_cast<size_t>(e)] = to_local(in.cols[static_cast<size_t>(base + e)]);
      std::sort(lidx.begin() + b, lidx.begin() + e_end);
      continue;
    }
    row.clear();
    for (int64_t e = b; e < e_end; ++e) {
      row.emplace_back(to_local(in.cols[static_cast<size_t>(base + e)]), in.weights[static_cast<size_t>(base + e)]);
    }
    std::sort(row.begin(), row.end());
    for (size_t j = 0; j < row.size(); ++j) {
      lidx[static_cast<size_t>(b) + j] = row[j].first;
      lw[static_cast<size_t>(b) + j] = row[j].second;
    }
  }
  out.graph = datasets::CsrGraph32(Buffer<int64_t>(std::move(lptr)), Buffer<int32_t>(std::move(lidx)),
                                   Buffer<float>(std::move(lw)));
  out.owned_ids = Buffer<int64_t>(std::move(owned));
  out.halo_ids = Buffer<int64_t>(std::move(halo_ids));
  out.halo_owner = Buffer<int32_t>(std::move(halo_owner));
  out.halo_remote = Buffer<int64_t>(std::move(halo_remote));
  std::vector<int64_t> splits[3];
  std::vector<int32_t> labels;
  for (size_t r = first_row; r < end_row; ++r) {
    const RowMeta& m = in.rows[r];
    const auto local = static_cast<int64_t>(r - first_row);
    if (m.split & kTrainBit) splits[0].push_back(local);
    if (m.split & kValBit) splits[1].push_back(local);
    if (m.split & kTestBit) splits[2].push_back(local);
    labels.push_back(m.label);
  }
  if (has_labels) out.labels = Buffer<int32_t>(std::move(labels));
  out.train = Buffer<int64_t>(std::move(splits[0]));
  out.val = Buffer<int64_t>(std::move(splits[1]));
  out.test = Buffer<int64_t>(std::move(splits[2]));
  return out;
}

std::string BroadcastString(comm::Communicator& comm, std::string s, int root) {
  std::vector<int64_t> size{static_cast<int64_t>(s.size())};
  comm.Broadcast<int64_t>(size, root, "setup").ThrowIfError();
  s.resize(static_cast<size_t>(size[0]));
  std::vector<char> bytes(s.begin(), s.end());
  comm.Broadcast<char>(bytes, root, "setup").ThrowIfError();
  return std::string(bytes.begin(), bytes.end());
}

template <typename T>
void SumOverRanks(comm::Communicator& comm, std::vector<T>* v) {
  comm.Allreduce<T>(*v, comm::ReduceOp::kSum, "setup").ThrowIfError();
}

}  // namespace

DistPartitionResult DistPartitionToFolder(comm::Communicator& comm, const fs::path& dataset,
                                          const PartitionOptions& options, const fs::path& dir, bool overwrite) {
  const auto start = Clock::now();
  const int K = comm.Size();
  const int me = comm.Rank();
  const int32_t P = options.num_parts;
  DistPartitionResult result;
  DistPartitionTimings& t = result.timings;
  const std::string where = dataset.string();

  // 0. The dataset (mapped, nothing read yet) and the options, checked alike on every rank.
  datasets::NodeDataset data;
  comm::OnEveryRankOrFail(comm, [&] {
    TESSEL_CHECK(datasets::PeekKind(dataset) == datasets::DatasetKind::kNode,
                 "{}: is a sparse-row (SVM) dataset; tessel partition needs a graph dataset", where);
    data = datasets::LoadNodeDataset(dataset, {.verify_checksums = false, .validate = false});
    ValidateOptions(data, options);
    TESSEL_CHECK(options.method != Method::kRandom,
                 "--method random is one process only (a permutation of every node); under mpirun use --method "
                 "metis or hash");
    TESSEL_CHECK(K <= data.num_nodes(), "{} ranks for {} nodes: run at most one rank per node", K, data.num_nodes());
    if (options.method == Method::kMetis && P > 1) {
      TESSEL_CHECK(HaveParMetis(), "{}", kNoParMetis);
      TESSEL_CHECK(comm.Backend() == "mpi", "--method metis over {} ranks needs MPI (ParMETIS); use --method hash",
                   comm.Backend());
      TESSEL_CHECK(options.balance.size() <= 1,
                   "--balance {}: distributed partitioning balances one constraint (PT-Scotch's ParMETIS interface "
                   "takes one vertex weight); pass one of --balance nodes, edges or train",
                   BalanceString(options.balance));
    }
  });
  const int64_t n = data.num_nodes();
  const int64_t total_entries = datasets::NumEntries(data.graph);
  const bool weighted = std::visit([](const auto& g) { return g.has_weights(); }, data.graph);
  const datasets::Features& feat = data.features;
  if (options.method == Method::kMetis && P > 1) {
    result.balance = options.balance.empty() ? std::vector<Constraint>{Constraint::kNodes} : options.balance;
    result.algorithm = "parmetis-kway";
  } else {
    result.balance = ResolveBalance(data, options);
    result.algorithm = P == 1 ? "single" : std::string(MethodName(options.method));
  }

  // The output: rank 0 makes the temporary folder; every rank must see it (a shared file system).
  std::unique_ptr<AtomicDirectory> out;
  std::string temp;
  comm::OnEveryRankOrFail(comm, [&] {
    if (me == 0) {
      const fs::path inputs[] = {dataset};
      CheckOutputPath(dir, OutputKind::kPartitionFolder, overwrite, "--output", inputs);
      out = std::make_unique<AtomicDirectory>(dir, overwrite);
      temp = out->path().string();
    }
  });
  temp = BroadcastString(comm, temp, 0);
  comm::OnEveryRankOrFail(comm, [&] {
    std::error_code ec;
    TESSEL_CHECK(fs::is_directory(temp, ec),
                 "{}: rank 0's output folder {} is not visible here; --output must be on a file system every rank "
                 "sees",
                 dir.string(), temp);
  });

  // 1. This rank's block.
  auto clock = Clock::now();
  Block b;
  std::vector<int64_t> vtxdist;
  comm::OnEveryRankOrFail(comm, [&] {
    std::visit(
        [&](const auto& g) {
          int64_t row_cost = 1;
          if (feat.dim > 0) {
            const int64_t values =
                feat.sparse ? feat.indptr.Host()[static_cast<size_t>(n)] / std::max<int64_t>(n, 1) : feat.dim;
            row_cost = 1 + values / 2;  // a feature value (4 bytes) against an entry as it travels (8 bytes)
          }
          vtxdist = BlockOffsets(g.indptr().Host(), n, row_cost, K);
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
  t.read = Seconds(clock);
  LogMemory(me, "read");
  log::Debug("partition: rank {} reads rows [{}, {}) ({} entries) of {} nodes", me, b.lo, b.hi, b.cols.size(), n);

  // 2. Symmetry, and ParMETIS's symmetric adjacency. Rows are unique, so the graph is symmetric exactly when the
  //    multiset of entries (u, v), u != v, equals that of (v, u): two independent 64-bit hash sums of each, summed over
  //    ranks, compare them without moving an entry (an asymmetric graph passes with probability about 2^-128). Only
  //    an asymmetric graph partitioned by ParMETIS needs the reverse entries, for the union.
  clock = Clock::now();
  std::vector<int64_t> adj_ptr;
  std::vector<int64_t> adj;
  int64_t symmetric = 1;
  {
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
    symmetric = sums[0] == sums[1] && sums[2] == sums[3] ? 1 : 0;
  }
  const bool need_adj = options.method == Method::kMetis && P > 1;
  if (need_adj && symmetric == 1) {
    adj_ptr.assign(static_cast<size_t>(rows) + 1, 0);
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t e = b.ptr[static_cast<size_t>(i)]; e < b.ptr[static_cast<size_t>(i) + 1]; ++e) {
        if (b.cols[static_cast<size_t>(e)] != b.lo + i) adj.push_back(b.cols[static_cast<size_t>(e)]);
      }
      adj_ptr[static_cast<size_t>(i) + 1] = static_cast<int64_t>(adj.size());
    }
  } else if (need_adj) {
    // Every entry (u, v), u != v, travels to v's block as (v, u); each row's union with what it receives.
    std::vector<int64_t> counts(static_cast<size_t>(K), 0);
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
    std::vector<int64_t> recv = Exchange(comm, send, counts, nullptr, "partition");
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
  t.symmetry = Seconds(clock);
  LogMemory(me, "symmetry");

  // 3. Assignment.
  clock = Clock::now();
  bool partitioner_measured = false;
  int64_t partitioner_rss_base = 0;
  std::vector<int32_t> part(static_cast<size_t>(rows), 0);
  if (P > 1 && options.method == Method::kHash) {
    for (int64_t i = 0; i < rows; ++i) {
      part[static_cast<size_t>(i)] = HashPart(b.lo + i, P);
    }
  } else if (P > 1) {
    std::vector<int64_t> vwgt(static_cast<size_t>(rows), 1);
    const Constraint c = result.balance.front();
    for (int64_t i = 0; i < rows; ++i) {
      if (c == Constraint::kEdges)
        vwgt[static_cast<size_t>(i)] = b.ptr[static_cast<size_t>(i) + 1] - b.ptr[static_cast<size_t>(i)];
      if (c == Constraint::kTrain) vwgt[static_cast<size_t>(i)] = (b.split[static_cast<size_t>(i)] & kTrainBit) ? 1 : 0;
    }
    log::Info("partition: ParMETIS_V3_PartKway (PT-Scotch) over {} ranks into {} parts, balancing {}", K, P,
              ConstraintName(c));
    const auto pm = Clock::now();
    const int64_t peak_before = memory::HighWaterResidentBytes();
    const int64_t rss_before = memory::ResidentBytes();
    const bool reset = memory::ResetPeakResident();
    comm::OnEveryRankOrFail(comm, [&] {
      part = detail::ParMetisKway(comm, vtxdist, adj_ptr, adj, vwgt, P, options.imbalance, options.seed);
    });
    t.parmetis = Seconds(pm);
    // PT-Scotch frees its working memory on return; give the heap's free pages back to the system so the steps that
    // follow are measured (and run) without it.
    memory::ReturnFreeHeap();
    if (reset && rss_before > 0 && peak_before >= 0) {
      result.partitioner_rss_bytes = std::max<int64_t>(memory::HighWaterResidentBytes() - rss_before, 0);
      result.peak_rss_outside_partitioner_bytes = peak_before;
      partitioner_rss_base = rss_before;
      partitioner_measured = memory::ResetPeakResident();
    }
  }
  Free(adj);
  Free(adj_ptr);
  t.assign = Seconds(clock);
  LogMemory(me, "assign");

  // 4. New ids, the columns' new ids, statistics.
  clock = Clock::now();
  std::vector<int64_t> mine(static_cast<size_t>(P), 0);
  for (int32_t p : part) ++mine[static_cast<size_t>(p)];
  std::vector<int64_t> all(static_cast<size_t>(P) * static_cast<size_t>(K));
  comm.Allgather<int64_t>(mine, all, "setup").ThrowIfError();
  std::vector<int64_t> offsets(static_cast<size_t>(P) + 1, 0);
  std::vector<int64_t> next(static_cast<size_t>(P), 0);
  for (int32_t p = 0; p < P; ++p) {
    int64_t before_me = 0;
    int64_t total = 0;
    for (int r = 0; r < K; ++r) {
      const int64_t c = all[static_cast<size_t>(r) * static_cast<size_t>(P) + static_cast<size_t>(p)];
      if (r < me) before_me += c;
      total += c;
    }
    offsets[static_cast<size_t>(p) + 1] = offsets[static_cast<size_t>(p)] + total;
    next[static_cast<size_t>(p)] = before_me;
  }
  std::vector<int64_t> new_id(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) {
    const auto p = static_cast<size_t>(part[static_cast<size_t>(i)]);
    new_id[static_cast<size_t>(i)] = offsets[p] + next[p]++;
  }
  // Remote columns: sorted and unique, they come grouped by owner block already.
  std::vector<int64_t> ghosts;
  for (int64_t v : b.cols) {
    if (v < b.lo || v >= b.hi) ghosts.push_back(v);
  }
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  std::vector<int64_t> ghost_new;
  {
    std::vector<int64_t> counts(static_cast<size_t>(K), 0);
    for (int64_t v : ghosts) ++counts[static_cast<size_t>(OwnerOf(vtxdist, v))];
    std::vector<int64_t> asked_counts;
    std::vector<int64_t> asked = Exchange(comm, ghosts, counts, &asked_counts, "partition");
    comm::OnEveryRankOrFail(comm, [&] {
      for (int64_t& v : asked) {
        TESSEL_CHECK(v >= b.lo && v < b.hi, "distributed partition: rank {} was asked for node {} outside its rows", me,
                     v);
        v = new_id[static_cast<size_t>(v - b.lo)];
      }
    });
    ghost_new = Exchange(comm, asked, asked_counts, nullptr, "partition");
    TESSEL_CHECK(ghost_new.size() == ghosts.size(), "distributed partition: {} new ids for {} remote columns",
                 ghost_new.size(), ghosts.size());
  }
  const auto new_of = [&](int64_t v) {
    if (v >= b.lo && v < b.hi) return new_id[static_cast<size_t>(v - b.lo)];
    return ghost_new[static_cast<size_t>(std::lower_bound(ghosts.begin(), ghosts.end(), v) - ghosts.begin())];
  };
  // Statistics as ComputeStats makes them, summed over ranks.
  PartitionStats& stats = result.stats;
  stats.num_parts = P;
  stats.num_nodes = n;
  stats.num_entries = total_entries;
  stats.symmetric = symmetric == 1;
  stats.parts.assign(static_cast<size_t>(P), PartCounts{});
  std::vector<int64_t> sums(static_cast<size_t>(P) * 4 + 2, 0);  // edges, train, val, test per part; cut; loops
  std::vector<int64_t> col_new(b.cols.size());
  for (int64_t i = 0; i < rows; ++i) {
    const auto p = static_cast<size_t>(part[static_cast<size_t>(i)]);
    sums[p * 4] += b.ptr[static_cast<size_t>(i) + 1] - b.ptr[static_cast<size_t>(i)];
    const uint8_t s = b.split[static_cast<size_t>(i)];
    sums[p * 4 + 1] += (s & kTrainBit) ? 1 : 0;
    sums[p * 4 + 2] += (s & kValBit) ? 1 : 0;
    sums[p * 4 + 3] += (s & kTestBit) ? 1 : 0;
    for (int64_t e = b.ptr[static_cast<size_t>(i)]; e < b.ptr[static_cast<size_t>(i) + 1]; ++e) {
      const int64_t v = b.cols[static_cast<size_t>(e)];
      col_new[static_cast<size_t>(e)] = new_of(v);
      if (v == b.lo + i) {
        ++sums[static_cast<size_t>(P) * 4 + 1];
      } else if (PartOfNew(offsets, col_new[static_cast<size_t>(e)]) != static_cast<int32_t>(p)) {
        ++sums[static_cast<size_t>(P) * 4];
      }
    }
  }
  Free(ghosts);
  Free(ghost_new);
  SumOverRanks(comm, &sums);
  for (int32_t p = 0; p < P; ++p) {
    PartCounts& c = stats.parts[static_cast<size_t>(p)];
    c.nodes = offsets[static_cast<size_t>(p) + 1] - offsets[static_cast<size_t>(p)];
    c.edges = sums[static_cast<size_t>(p) * 4];
    c.train = sums[static_cast<size_t>(p) * 4 + 1];
    c.val = sums[static_cast<size_t>(p) * 4 + 2];
    c.test = sums[static_cast<size_t>(p) * 4 + 3];
  }
  stats.cut_entries = sums[static_cast<size_t>(P) * 4];
  const int64_t loops = sums[static_cast<size_t>(P) * 4 + 1];
  FinishStats(&stats, loops);
  t.relabel = Seconds(clock);
  LogMemory(me, "relabel");

  // 5. Move rows to the ranks that write their parts (part p: rank p mod K).
  clock = Clock::now();
  const auto dest_of = [&](int64_t i) { return static_cast<size_t>(part[static_cast<size_t>(i)] % K); };
  const bool sparse_features = feat.dim > 0 && feat.sparse;
  auto feat_ptr = sparse_features ? feat.indptr.Host() : std::span<const int64_t>();
  Received in;
  std::vector<int64_t> row_counts(static_cast<size_t>(K), 0);
  std::vector<int64_t> col_counts(static_cast<size_t>(K), 0);
  for (int64_t i = 0; i < rows; ++i) {
    ++row_counts[dest_of(i)];
    col_counts[dest_of(i)] += b.ptr[static_cast<size_t>(i) + 1] - b.ptr[static_cast<size_t>(i)];
  }
  {
    std::vector<int64_t> at = Starts(row_counts);
    std::vector<RowMeta> meta(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) {
      RowMeta& m = meta[static_cast<size_t>(at[dest_of(i)]++)];
      m.original = b.lo + i;
      m.new_id = new_id[static_cast<size_t>(i)];
      m.degree = b.ptr[static_cast<size_t>(i) + 1] - b.ptr[static_cast<size_t>(i)];
      m.feature_nnz =
          sparse_features ? feat_ptr[static_cast<size_t>(b.lo + i) + 1] - feat_ptr[static_cast<size_t>(b.lo + i)] : 0;
      m.label = b.labels.empty() ? datasets::kNoLabel : b.labels[static_cast<size_t>(i)];
      m.split = b.split[static_cast<size_t>(i)];
    }
    in.rows = Exchange(comm, meta, row_counts, nullptr, "partition");
  }
  {
    std::vector<int64_t> at = Starts(col_counts);
    std::vector<Column> cols(b.cols.size());
    std::vector<float> w(weighted ? b.cols.size() : 0);
    for (int64_t i = 0; i < rows; ++i) {
      int64_t& k = at[dest_of(i)];
      for (int64_t e = b.ptr[static_cast<size_t>(i)]; e < b.ptr[static_cast<size_t>(i) + 1]; ++e, ++k) {
        cols[static_cast<size_t>(k)] = {b.cols[static_cast<size_t>(e)], col_new[static_cast<size_t>(e)]};
        if (weighted) w[static_cast<size_t>(k)] = b.weights[static_cast<size_t>(e)];
      }
    }
    Free(b.cols);
    Free(b.weights);
    Free(col_new);
    in.cols = Exchange(comm, cols, col_counts, nullptr, "partition");
    Free(cols);
    if (weighted) in.weights = Exchange(comm, w, col_counts, nullptr, "partition");
  }
  LogMemory(me, "rows moved");
  in.row_start.assign(in.rows.size() + 1, 0);
  for (size_t r = 0; r < in.rows.size(); ++r) in.row_start[r + 1] = in.row_start[r] + in.rows[r].degree;
  TESSEL_CHECK(static_cast<size_t>(in.row_start.back()) == in.cols.size(),
               "distributed partition: {} columns received for rows of {} entries", in.cols.size(),
               in.row_start.back());

  // The parts this rank writes, and where each one's rows start in `in` (rows arrive ordered by original id, so
  // grouping them by part keeps each part's order).
  std::vector<int32_t> my_parts;
  for (int32_t p = me; p < P; p += K) my_parts.push_back(p);
  {
    std::vector<size_t> order(in.rows.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t c) {
      return PartOfNew(offsets, in.rows[a].new_id) < PartOfNew(offsets, in.rows[c].new_id);
    });
    if (!std::is_sorted(order.begin(), order.end())) {
      Received sorted;
      sorted.rows.reserve(in.rows.size());
      sorted.row_start.assign(in.rows.size() + 1, 0);
      sorted.cols.reserve(in.cols.size());
      if (weighted) sorted.weights.reserve(in.weights.size());
      for (size_t r : order) {
        sorted.rows.push_back(in.rows[r]);
        sorted.cols.insert(sorted.cols.end(), in.cols.begin() + in.row_start[r], in.cols.begin() + in.row_start[r + 1]);
        if (weighted) {
          sorted.weights.insert(sorted.weights.end(), in.weights.begin() + in.row_start[r],
                                in.weights.begin() + in.row_start[r + 1]);
        }
        sorted.row_start[sorted.rows.size()] = static_cast<int64_t>(sorted.cols.size());
      }
      in = std::move(sorted);
    }
  }
  std::vector<size_t> part_first(my_parts.size() + 1, 0);
  for (size_t j = 0; j < my_parts.size(); ++j) {
    part_first[j + 1] = part_first[j] + static_cast<size_t>(offsets[static_cast<size_t>(my_parts[j]) + 1] -
                                                            offsets[static_cast<size_t>(my_parts[j])]);
  }
  TESSEL_CHECK(part_first.back() == in.rows.size(), "distributed partition: rank {} received {} rows for {} nodes", me,
               in.rows.size(), part_first.back());

  // The parts' graphs, ids, labels and splits, built now so the received columns are freed before the features
  // arrive (the features are the largest part of a part).
  std::vector<LocalPart> built(my_parts.size());
  std::vector<std::vector<int64_t>> part_feat_ptr(my_parts.size());
  comm::OnEveryRankOrFail(comm, [&] {
    for (size_t j = 0; j < my_parts.size(); ++j) {
      const auto c = Clock::now();
      built[j] = BuildPart(in, part_first[j], part_first[j + 1], my_parts[j], P, offsets, n, data.num_classes,
                           data.has_labels(), weighted);
      if (feat.dim > 0 && feat.sparse) {  // the sparse feature rows' offsets, from the rows' non-zero counts
        const auto owned = static_cast<int64_t>(part_first[j + 1] - part_first[j]);
        std::vector<int64_t>& ptr = part_feat_ptr[j];
        ptr.assign(static_cast<size_t>(owned) + 1, 0);
        for (int64_t i = 0; i < owned; ++i) {
          ptr[static_cast<size_t>(i) + 1] =
              ptr[static_cast<size_t>(i)] + in.rows[part_first[j] + static_cast<size_t>(i)].feature_nnz;
        }
      }
      t.build += Seconds(c);
    }
  });
  in = Received{};
  LogMemory(me, "parts built");

  // Features in rounds of at most kFeatureRoundBytes sent per rank; each received row lands at its place in its
  // part's feature arrays (dense: row-major; sparse: CSR whose offsets come from the rows' non-zero counts).
  std::vector<datasets::Features> part_features(my_parts.size());
  if (feat.dim > 0) {
    for (size_t j = 0; j < my_parts.size(); ++j) {
      datasets::Features& f = part_features[j];
      const auto owned = static_cast<int64_t>(part_first[j + 1] - part_first[j]);
      f.num_rows = owned;
      f.dim = feat.dim;
      f.sparse = feat.sparse;
      if (!feat.sparse) {
        f.dense = Buffer<float>(std::vector<float>(static_cast<size_t>(owned * feat.dim)));
      } else {
        const std::vector<int64_t>& ptr = part_feat_ptr[j];
        f.indices = Buffer<int32_t>(std::vector<int32_t>(static_cast<size_t>(ptr.back())));
        f.values = Buffer<float>(std::vector<float>(static_cast<size_t>(ptr.back())));
      }
    }
    auto dense = feat.sparse ? std::span<const float>() : feat.dense.Host();
    auto sidx = feat.sparse ? feat.indices.Host() : std::span<const int32_t>();
    auto sval = feat.sparse ? feat.values.Host() : std::span<const float>();
    const auto row_bytes = [&](int64_t i) {
      // 8 bytes of new id, then 4 per dense value or 8 per sparse (index, value) pair.
      if (!feat.sparse) return feat.dim * 4 + 8;
      return (feat_ptr[static_cast<size_t>(b.lo + i) + 1] - feat_ptr[static_cast<size_t>(b.lo + i)]) * 8 + 8;
    };
    // Round boundaries over this rank's rows; every rank runs the same number of rounds.
    // Rounds of at most an eighth of this block's feature bytes (at least 1 MiB, at most kFeatureRoundBytes), so the
    // send and receive buffers of a round stay small beside the part's own features.
    int64_t block_bytes = 0;
    for (int64_t i = 0; i < rows; ++i) block_bytes += row_bytes(i);
    const int64_t round_bytes = std::clamp<int64_t>(block_bytes / 8, int64_t{1} << 20, kFeatureRoundBytes);
    std::vector<int64_t> cuts{0};
    for (int64_t i = 0, bytes = 0; i < rows; ++i) {
      bytes += row_bytes(i);
      if (bytes >= round_bytes) {
        cuts.push_back(i + 1);
        bytes = 0;
      }
    }
    if (cuts.back() != rows) cuts.push_back(rows);
    std::vector<int64_t> rounds{static_cast<int64_t>(cuts.size()) - 1};
    comm.Allreduce<int64_t>(rounds, comm::ReduceOp::kMax, "setup").ThrowIfError();
    for (int64_t round = 0; round < rounds[0]; ++round) {
      const int64_t a = round + 1 < static_cast<int64_t>(cuts.size()) ? cuts[static_cast<size_t>(round)] : rows;
      const int64_t z = round + 1 < static_cast<int64_t>(cuts.size()) ? cuts[static_cast<size_t>(round) + 1] : rows;
      // Per row: new id, then (dense) dim floats or (sparse) nnz (index, value) pairs, as 32-bit words.
      std::vector<int64_t> counts(static_cast<size_t>(K), 0);
      for (int64_t i = a; i < z; ++i) counts[dest_of(i)] += row_bytes(i) / 4;
      std::vector<int64_t> at = Starts(counts);
      std::vector<uint32_t> send(static_cast<size_t>(at.back()));
      for (int64_t i = a; i < z; ++i) {
        int64_t& k = at[dest_of(i)];
        const int64_t g = new_id[static_cast<size_t>(i)];
        std::memcpy(&send[static_cast<size_t>(k)], &g, 8);
        k += 2;
        const int64_t u = b.lo + i;
        if (!feat.sparse) {
          std::memcpy(&send[static_cast<size_t>(k)], dense.data() + u * feat.dim, static_cast<size_t>(feat.dim) * 4);
          k += feat.dim;
        } else {
          for (int64_t e = feat_ptr[static_cast<size_t>(u)]; e < feat_ptr[static_cast<size_t>(u) + 1]; ++e) {
            std::memcpy(&send[static_cast<size_t>(k)], &sidx[static_cast<size_t>(e)], 4);
            std::memcpy(&send[static_cast<size_t>(k) + 1], &sval[static_cast<size_t>(e)], 4);
            k += 2;
          }
        }
      }
      if (!feat.sparse && z > a) {
        memory::ReleaseMappedPages(dense.data() + (b.lo + a) * feat.dim, (z - a) * feat.dim * 4);
      }
      std::vector<uint32_t> recv = Exchange(comm, send, counts, nullptr, "partition");
      Free(send);
      for (size_t k = 0; k < recv.size();) {
        int64_t g = 0;
        std::memcpy(&g, &recv[k], 8);
        k += 2;
        const int32_t p = PartOfNew(offsets, g);
        const auto j = static_cast<size_t>(std::find(my_parts.begin(), my_parts.end(), p) - my_parts.begin());
        TESSEL_CHECK(j < my_parts.size(), "distributed partition: rank {} received features of part {}", me, p);
        const int64_t local = g - offsets[static_cast<size_t>(p)];
        datasets::Features& f = part_features[j];
        if (!feat.sparse) {
          std::memcpy(f.dense.MutableHost().data() + local * feat.dim, &recv[k], static_cast<size_t>(feat.dim) * 4);
          k += static_cast<size_t>(feat.dim);
        } else {
          const std::vector<int64_t>& ptr = part_feat_ptr[j];
          auto idx = f.indices.MutableHost();
          auto val = f.values.MutableHost();
          for (int64_t e = ptr[static_cast<size_t>(local)]; e < ptr[static_cast<size_t>(local) + 1]; ++e) {
            std::memcpy(idx.data() + e, &recv[k], 4);
            std::memcpy(val.data() + e, &recv[k + 1], 4);
            k += 2;
          }
        }
      }
    }
    for (size_t j = 0; j < my_parts.size(); ++j) {
      if (feat.sparse) part_features[j].indptr = Buffer<int64_t>(std::move(part_feat_ptr[j]));
    }
  }
  LogMemory(me, "features moved");
  b = Block{};
  Free(new_id);
  Free(part);
  t.move = Seconds(clock);

  // 6. Build, check and write this rank's parts; rank 0 writes partitions.json and renames the folder.
  std::vector<int64_t> halos(static_cast<size_t>(P), 0);
  std::vector<char> sums_hex(static_cast<size_t>(P) * 16, 0);
  comm::OnEveryRankOrFail(comm, [&] {
    for (size_t j = 0; j < my_parts.size(); ++j) {
      const int32_t p = my_parts[j];
      auto c = Clock::now();
      LocalPart& lp = built[j];
      lp.features = std::move(part_features[j]);
      lp.Validate();
      t.build += Seconds(c);
      c = Clock::now();
      const std::string sum = folder::WritePart(lp, fs::path(temp) / folder::PartDirName(p));
      TESSEL_CHECK(sum.size() == 16, "partition: manifest checksum '{}' is not 16 hex digits", sum);
      std::memcpy(&sums_hex[static_cast<size_t>(p) * 16], sum.data(), 16);
      halos[static_cast<size_t>(p)] = lp.num_halo;
      t.write += Seconds(c);
      if (total_entries >= 1000000) {
        log::Info("partition: part {}/{} written by rank {} ({} owned, {} halo, {} entries)", p + 1, P, me,
                  lp.num_owned, lp.num_halo, lp.graph.num_entries());
      }
      lp = LocalPart{};
    }
  });
  result.parts_written = static_cast<int64_t>(my_parts.size());
  LogMemory(me, "parts written");
  SumOverRanks(comm, &halos);
  {
    std::vector<uint8_t> bytes(sums_hex.begin(), sums_hex.end());
    comm.Allreduce<uint8_t>(bytes, comm::ReduceOp::kMax, "setup").ThrowIfError();
    sums_hex.assign(bytes.begin(), bytes.end());
  }
  SetHalo(&stats, halos);
  std::vector<std::string> manifest_sums(static_cast<size_t>(P));
  for (int32_t p = 0; p < P; ++p)
    manifest_sums[static_cast<size_t>(p)] = std::string(&sums_hex[static_cast<size_t>(p) * 16], 16);

  result.description = folder::Describe(SummarizeDataset(data, stats.symmetric), options, result.algorithm, -1,
                                        result.balance, offsets, stats, manifest_sums);
  const auto c = Clock::now();
  comm::OnEveryRankOrFail(comm, [&] {
    if (me != 0) return;
    WriteFileAtomic(out->path() / "partitions.json", result.description.dump(2) + "\n");
    out->Commit();
  });
  t.write += Seconds(c);
  t.total = Seconds(start);
  const int64_t hwm = memory::HighWaterResidentBytes();
  if (partitioner_measured) {
    result.peak_rss_outside_partitioner_bytes = std::max(result.peak_rss_outside_partitioner_bytes, hwm);
    result.peak_rss_bytes =
        std::max(result.peak_rss_outside_partitioner_bytes, partitioner_rss_base + result.partitioner_rss_bytes);
  } else {
    result.peak_rss_bytes = hwm;
    if (result.algorithm != "parmetis-kway") result.peak_rss_outside_partitioner_bytes = hwm;
  }
  return result;
}

}  // namespace tessel::partition
