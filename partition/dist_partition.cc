// Distributed partitioning (partition/dist_partition.h). The steps on rank r of K, for P parts (each a function over
// one DistPartitionRun, partition/dist_partition_steps.h; this file runs them and holds step 0):
//  0. Open: the dataset mapped and the options checked alike on every rank; rank 0 makes the temporary output
//     folder, which every rank must see.
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
// Steps 1-4 are in dist_partition_steps.cc, 5 and 6 in dist_partition_move.cc.
#include "partition/dist_partition.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <string>
#include <variant>
#include <vector>

#include "core/build_config.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "core/memory_budget.h"
#include "core/output_guard.h"
#include "datasets/native_format.h"
#include "partition/dist_partition_steps.h"

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

namespace detail {

namespace fs = std::filesystem;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

int OwnerOf(const std::vector<int64_t>& vtxdist, int64_t v) {
  return static_cast<int>(std::upper_bound(vtxdist.begin(), vtxdist.end(), v) - vtxdist.begin()) - 1;
}

int32_t PartOfNew(const std::vector<int64_t>& offsets, int64_t g) {
  return static_cast<int32_t>(std::upper_bound(offsets.begin(), offsets.end(), g) - offsets.begin()) - 1;
}

void LogMemory(int rank, const char* step) {
  memory::ReturnFreeHeap();
  log::Debug("partition: rank {} after {}: RSS {} MiB (anonymous {} MiB), peak {} MiB", rank, step,
             memory::ResidentBytes() >> 20, memory::AnonResidentBytes() >> 20, memory::HighWaterResidentBytes() >> 20);
}

std::vector<int64_t> Starts(const std::vector<int64_t>& counts) {
  std::vector<int64_t> s(counts.size() + 1, 0);
  std::partial_sum(counts.begin(), counts.end(), s.begin() + 1);
  return s;
}

namespace {

std::string BroadcastString(comm::Communicator& comm, std::string s, int root) {
  std::vector<int64_t> size{static_cast<int64_t>(s.size())};
  comm.Broadcast<int64_t>(size, root, "setup").ThrowIfError();
  s.resize(static_cast<size_t>(size[0]));
  std::vector<char> bytes(s.begin(), s.end());
  comm.Broadcast<char>(bytes, root, "setup").ThrowIfError();
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace

// 0. The dataset (mapped, nothing read yet) and the options, checked alike on every rank.
void OpenDataset(DistPartitionRun& run) {
  comm::Communicator& comm = run.comm;
  const PartitionOptions& options = run.options;
  const std::string& where = run.where;
  datasets::NodeDataset& data = run.data;
  DistPartitionResult& result = run.result;
  comm::OnEveryRankOrFail(comm, [&] {
    TESSEL_CHECK(datasets::PeekKind(run.dataset) == datasets::DatasetKind::kNode,
                 "{}: is a sparse-row (SVM) dataset; tessel partition needs a graph dataset", where);
    data = datasets::LoadNodeDataset(run.dataset, {.verify_checksums = false, .validate = false});
    ValidateOptions(data, options);
    TESSEL_CHECK(options.method != Method::kRandom,
                 "--method random is one process only (a permutation of every node); under mpirun use --method "
                 "metis or hash");
    TESSEL_CHECK(options.method != Method::kFile,
                 "--method file is one process only (it reads every node's part); run tessel partition without "
                 "mpirun");
    TESSEL_CHECK(run.K <= data.num_nodes(), "{} ranks for {} nodes: run at most one rank per node", run.K,
                 data.num_nodes());
    if (options.method == Method::kMetis && run.P > 1 && options.dist_algorithm == DistAlgorithm::kParMetis) {
      TESSEL_CHECK(HaveParMetis(), "{}", kNoParMetis);
      TESSEL_CHECK(comm.Backend() == "mpi",
                   "--dist-partitioner parmetis over {} ranks needs MPI (ParMETIS); use --dist-partitioner coarsen "
                   "or --method hash",
                   comm.Backend());
    }
    if (options.method == Method::kMetis && run.P > 1) {
      TESSEL_CHECK(options.balance.size() <= 1,
                   "--balance {}: distributed partitioning balances one constraint (one vertex weight); pass one of "
                   "--balance nodes, edges or train",
                   BalanceString(options.balance));
    }
  });
  run.n = data.num_nodes();
  run.total_entries = datasets::NumEntries(data.graph);
  run.weighted = std::visit([](const auto& g) { return g.has_weights(); }, data.graph);
  if (options.method == Method::kMetis && run.P > 1) {
    result.balance = options.balance.empty() ? std::vector<Constraint>{Constraint::kNodes} : options.balance;
    result.algorithm = options.dist_algorithm == DistAlgorithm::kParMetis ? "parmetis-kway" : "lp-coarsen-metis";
  } else {
    result.balance = ResolveBalance(data, options);
    result.algorithm = run.P == 1 ? "single" : std::string(MethodName(options.method));
  }
}

// The output: rank 0 makes the temporary folder; every rank must see it (a shared file system).
void OpenOutput(DistPartitionRun& run) {
  comm::Communicator& comm = run.comm;
  const fs::path& dir = run.dir;
  comm::OnEveryRankOrFail(comm, [&] {
    if (run.me == 0) {
      const fs::path inputs[] = {run.dataset};
      CheckOutputPath(dir, OutputKind::kPartitionFolder, run.overwrite, "--output", inputs);
      run.out = std::make_unique<AtomicDirectory>(dir, run.overwrite);
      run.temp = run.out->path().string();
    }
  });
  run.temp = BroadcastString(comm, run.temp, 0);
  const std::string& temp = run.temp;
  comm::OnEveryRankOrFail(comm, [&] {
    std::error_code ec;
    TESSEL_CHECK(fs::is_directory(temp, ec),
                 "{}: rank 0's output folder {} is not visible here; --output must be on a file system every rank "
                 "sees",
                 dir.string(), temp);
  });
}

// The whole call's time, and this rank's peak memory (VmHWM was reset around ParMETIS, step 3).
void Finish(DistPartitionRun& run) {
  DistPartitionResult& result = run.result;
  result.timings.total = Seconds(run.start);
  const int64_t hwm = memory::HighWaterResidentBytes();
  if (run.assignment.partitioner_measured) {
    result.peak_rss_outside_partitioner_bytes = std::max(result.peak_rss_outside_partitioner_bytes, hwm);
    result.peak_rss_bytes = std::max(result.peak_rss_outside_partitioner_bytes,
                                     run.assignment.partitioner_rss_base + result.partitioner_rss_bytes);
  } else {
    result.peak_rss_bytes = hwm;
    if (run.options.method != Method::kMetis || run.P == 1) result.peak_rss_outside_partitioner_bytes = hwm;
  }
}

}  // namespace detail

// The steps in order (partition/dist_partition_steps.h says what each reads and writes). A step that can fail on one
// rank alone agrees on the failure inside (comm::OnEveryRankOrFail), so every rank leaves here with the same error.
DistPartitionResult DistPartitionToFolder(comm::Communicator& comm, const std::filesystem::path& dataset,
                                          const PartitionOptions& options, const std::filesystem::path& dir,
                                          bool overwrite) {
  detail::DistPartitionRun run(comm, dataset, options, dir, overwrite);
  detail::OpenDataset(run);    // 0. the dataset and options, checked alike on every rank
  detail::OpenOutput(run);     //    rank 0's temporary folder, seen by every rank
  detail::ReadBlock(run);      // 1. this rank's block of rows
  detail::CheckSymmetry(run);  // 2. symmetry, and ParMETIS's symmetric adjacency
  detail::Assign(run);         // 3. the part of every row
  detail::Relabel(run);        // 4. new ids, the columns' new ids, statistics
  detail::MoveRows(run);       // 5. rows and features to the ranks that write their parts; the parts built
  detail::WriteParts(run);     // 6. the parts checked and written; partitions.json; the folder renamed
  detail::Finish(run);         //    total time and peak memory
  return std::move(run.result);
}

}  // namespace tessel::partition
