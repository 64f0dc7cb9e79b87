// TrainSvmDistributed: the one-vs-one decomposition of svm_train.cc with each pair solved by SolveBinaryDistributed
// over this rank's block of rows.
#include "svm/dist_train.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <type_traits>

#include <fmt/format.h>

#include "core/checksum.h"
#include "core/error.h"
#include "core/log.h"
#include "core/parallel.h"
#include "svm/dist_checkpoint.h"
#include "svm/svm_train.h"

namespace tessel::svm {
namespace {

void Check(const comm::Status& s) { s.ThrowIfError(); }

// Every rank must see the same data: the ranks compare (rows, features, non-zeros, checksum) and all throw the
// same message when any differs.
void CheckSameData(comm::Communicator& comm, const datasets::SparseRowDataset& data) {
  const auto indptr = data.indptr.Host();
  const auto indices = data.indices.Host();
  const auto values = data.values.Host();
  const auto labels = data.labels.Host();
  const uint64_t parts[4] = {
      Checksum64(indptr.data(), indptr.size_bytes()), Checksum64(indices.data(), indices.size_bytes()),
      Checksum64(values.data(), values.size_bytes()), Checksum64(labels.data(), labels.size_bytes())};
  const uint64_t h = Checksum64(parts, sizeof(parts));
  const int64_t mine[4] = {data.num_rows, data.num_features, data.NonZeros(), static_cast<int64_t>(h >> 1)};
  const int p = comm.Size();
  std::vector<int64_t> all(static_cast<size_t>(4 * p));
  Check(comm.Allgather<int64_t>(mine, all, "svm-setup"));
  for (int r = 1; r < p; ++r) {
    const int64_t* a = all.data();
    const int64_t* b = all.data() + 4 * r;
    TESSEL_CHECK(a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3],
                 "{}: the ranks read different data: rank 0 sees {} rows, {} features, {} non-zeros (checksum {:x}) "
                 "but rank {} sees {} rows, {} features, {} non-zeros (checksum {:x}); every rank must read the same "
                 "file (copy it to each node, or put it on a shared file system)",
                 data.name.empty() ? "data" : data.name, a[0], a[1], a[2], a[3], r, b[0], b[1], b[2], b[3]);
  }
}

}  // namespace

std::vector<int64_t> BalancedRowBlocks(std::span<const int64_t> indptr, int parts) {
  TESSEL_CHECK(parts >= 1, "BalancedRowBlocks: {} parts", parts);
  const int64_t n = indptr.empty() ? 0 : static_cast<int64_t>(indptr.size()) - 1;
  const int64_t nnz = n > 0 ? indptr.back() - indptr.front() : 0;
  const double per_row = n > 0 ? std::max(1.0, static_cast<double>(nnz) / static_cast<double>(n)) : 1.0;
  const double total = static_cast<double>(nnz) + per_row * static_cast<double>(n);
  std::vector<int64_t> b(static_cast<size_t>(parts) + 1, n);
  b[0] = 0;
  int64_t r = 0;
  for (int k = 1; k < parts; ++k) {
    const double target = total * k / parts;
    // The row boundary whose weight before it is nearest the target.
    const auto before = [&](int64_t x) {
      return static_cast<double>(indptr[x] - indptr[0]) + per_row * static_cast<double>(x);
    };
    while (r < n && before(r) < target) ++r;
    if (r > 0 && target - before(r - 1) < before(r) - target) --r;
    b[static_cast<size_t>(k)] = std::max(r, b[static_cast<size_t>(k) - 1]);
  }
  return b;
}

namespace {

// A problem solved by all ranks together: BinaryProblem's fields over the whole data (PairTask's for a pair).
struct SharedProblem {
  std::span<const int32_t> rows;
  std::span<const int8_t> y;
  double Cp = 1;
  double Cn = 1;
  std::span<const double> p;
  std::span<const double> alpha0;
  bool nu = false;
  kernels::SvmKernelParams kernel;
  SolverOptions options;
  AlphaMirror* mirror = nullptr;  // DistBinaryProblem::mirror
};

// fn(field) for each scalar field of a pair's SolverResult, in the order ShareResults sends them (as doubles).
template <class Result, class Fn>
void ForEachResultField(Result&& r, Fn&& fn) {
  ForEachResultStat(r, [&fn](const char* /*name*/, auto& field) { fn(field); });
  fn(r.hit_iteration_limit);
  fn(r.r);
}

// Each pair's result on every rank: the owner of a pair sends its alpha and counters in one allgatherv.
std::vector<SolverResult> ShareResults(comm::Communicator& comm, std::span<const PairTask> tasks,
                                       std::span<const int> owner, std::span<const size_t> mine,
                                       std::vector<SolverResult> solved) {
  std::vector<double> out;
  for (size_t m = 0; m < mine.size(); ++m) {
    const SolverResult& r = solved[m];
    out.push_back(static_cast<double>(mine[m]));
    ForEachResultField(r, [&](const auto& field) { out.push_back(static_cast<double>(field)); });
    out.insert(out.end(), r.alpha.begin(), r.alpha.end());
  }
  std::vector<double> all;
  std::vector<int64_t> counts;
  Check(comm.AllgathervWithCounts<double>(out, &all, &counts, "svm-result"));
  std::vector<SolverResult> results(tasks.size());
  size_t head = 1;  // the pair's number, then the fields
  ForEachResultField(SolverResult{}, [&](const auto&) { ++head; });
  for (size_t at = 0; at < all.size();) {
    TESSEL_CHECK(at + head <= all.size(), "distributed SVM: a truncated pair result");
    const auto t = static_cast<size_t>(all[at]);
    TESSEL_CHECK(t < tasks.size(), "distributed SVM: a result for pair {} of {}", t, tasks.size());
    const double* h = all.data() + at;
    SolverResult& r = results[t];
    size_t k = 1;
    ForEachResultField(r, [&](auto& field) { field = static_cast<std::remove_reference_t<decltype(field)>>(h[k++]); });
    const size_t n = tasks[t].sub.size();
    TESSEL_CHECK(at + head + n <= all.size(), "distributed SVM: a truncated pair result");
    r.alpha.assign(all.begin() + static_cast<std::ptrdiff_t>(at + head),
                   all.begin() + static_cast<std::ptrdiff_t>(at + head + n));
    at += head + n;
  }
  for (size_t t = 0; t < tasks.size(); ++t)
    TESSEL_CHECK(results[t].alpha.size() == tasks[t].sub.size(), "distributed SVM: rank {} sent no result for pair {}",
                 owner[t], t);
  return results;
}

}  // namespace

FitRunner RankFitRunner(comm::Communicator& comm) {
  FitRunner f;
  f.run = [&comm](int64_t count, const FitRunner::Task& task) {
    const int k = comm.Size();
    std::vector<int64_t> mine;
    for (int64_t t = comm.Rank(); t < count; t += k) mine.push_back(t);
    std::vector<std::vector<double>> solved(mine.size());
    // Any failure here must reach the other ranks before they wait in the exchange.
    comm::OnEveryRankOrFail(comm, [&] {
      parallel_for<int64_t>(0, static_cast<int64_t>(mine.size()), 1,
                            [&](int64_t m) { solved[static_cast<size_t>(m)] = task(mine[static_cast<size_t>(m)]); });
    });
    std::vector<double> out;  // per task: its index, its length, its values
    for (size_t m = 0; m < mine.size(); ++m) {
      out.push_back(static_cast<double>(mine[m]));
      out.push_back(static_cast<double>(solved[m].size()));
      out.insert(out.end(), solved[m].begin(), solved[m].end());
    }
    std::vector<double> all;
    std::vector<int64_t> sizes;
    Check(comm.AllgathervWithCounts<double>(out, &all, &sizes, "svm-fits"));
    std::vector<std::vector<double>> results(static_cast<size_t>(count));
    std::vector<char> seen(static_cast<size_t>(count), 0);
    for (size_t at = 0; at < all.size();) {
      TESSEL_CHECK(at + 2 <= all.size(), "distributed SVM: a truncated fit result");
      const auto t = static_cast<int64_t>(all[at]);
      const auto n = static_cast<size_t>(all[at + 1]);
      TESSEL_CHECK(t >= 0 && t < count && seen[static_cast<size_t>(t)] == 0 && at + 2 + n <= all.size(),
                   "distributed SVM: a malformed fit result (task {} of {})", t, count);
      seen[static_cast<size_t>(t)] = 1;
      results[static_cast<size_t>(t)].assign(all.begin() + static_cast<std::ptrdiff_t>(at + 2),
                                             all.begin() + static_cast<std::ptrdiff_t>(at + 2 + n));
      at += 2 + n;
    }
    for (int64_t t = 0; t < count; ++t)
      TESSEL_CHECK(seen[static_cast<size_t>(t)] != 0, "distributed SVM: rank {} sent no result for fit {}", t % k, t);
    return results;
  };
  return f;
}

namespace {

// This rank's block of the rows (BalancedRowBlocks over the ranks) as its kernel reads them.
struct RankRows {
  std::vector<int64_t> blocks;  // rank r holds rows [blocks[r], blocks[r + 1])
  int64_t lo = 0;               // this rank's rows [lo, hi)
  int64_t hi = 0;
  std::span<const int64_t> indptr;  // the whole data's
  kernels::SparseRowsView block;    // this rank's rows; the offsets keep pointing into the whole arrays
  // Bit rows (every value 1) only when the whole data is binary: a row sent by another rank must be computable by
  // this rank's kernel with the same arithmetic (SvmKernelRows::QRowOf).
  bool binary = false;
};

RankRows MakeRankRows(const comm::Communicator& comm, const datasets::SparseRowDataset& data) {
  RankRows out;
  out.indptr = data.indptr.Host();
  const auto indices = data.indices.Host();
  out.blocks = BalancedRowBlocks(out.indptr, comm.Size());
  out.lo = out.blocks[static_cast<size_t>(comm.Rank())];
  out.hi = out.blocks[static_cast<size_t>(comm.Rank()) + 1];
  int64_t max_index = 0;  // LIBSVM's max_index, as TrainOneVsOne resolves it
  for (const int32_t f : indices) max_index = std::max<int64_t>(max_index, int64_t{f} + 1);
  const auto values = data.values.Host();
  out.binary = std::all_of(values.begin(), values.end(), [](double v) { return v == 1.0; });
  out.block = {out.indptr.subspan(static_cast<size_t>(out.lo), static_cast<size_t>(out.hi - out.lo + 1)), indices,
               data.values.Host(), std::max(data.num_features, max_index)};
  return out;
}

// One problem with all ranks: its samples (data rows, repeats allowed: the regressions' 2l variables), labels,
// linear term and start, split by the row blocks; sample g is global id g. *kernel (kShared's, over this rank's
// block) is built at the first problem, when gamma is resolved.
SolverResult SolveShared(comm::Communicator& comm, const RankRows& rank_rows, const SharedProblem& t,
                         const DistTrainOptions& options, std::unique_ptr<kernels::SvmKernelRows>* kernel,
                         DistStats* stats) {
  if (!options.shared_refusal.empty()) throw Error(options.shared_refusal);
  if (*kernel == nullptr)
    *kernel = std::make_unique<kernels::SvmKernelRows>(rank_rows.block, t.kernel, rank_rows.binary);
  const auto& blocks = rank_rows.blocks;
  const size_t l = t.rows.size();
  std::vector<int32_t> owner(l);
  std::vector<int32_t> nnz(l);
  std::vector<int32_t> rows;
  std::vector<int64_t> gids;
  std::vector<int8_t> y;
  std::vector<double> lin;
  std::vector<double> start;
  for (size_t g = 0; g < l; ++g) {
    const int32_t r = t.rows[g];
    owner[g] = static_cast<int32_t>(std::upper_bound(blocks.begin(), blocks.end(), r) - blocks.begin()) - 1;
    nnz[g] = static_cast<int32_t>(rank_rows.indptr[r + 1] - rank_rows.indptr[r]);
    if (r >= rank_rows.lo && r < rank_rows.hi) {
      rows.push_back(static_cast<int32_t>(r - rank_rows.lo));
      gids.push_back(static_cast<int64_t>(g));
      y.push_back(t.y[g]);
      if (!t.p.empty()) lin.push_back(t.p[g]);
      if (!t.alpha0.empty()) start.push_back(t.alpha0[g]);
    }
  }
  DistBinaryProblem problem{kernel->get(), rows, gids, y, static_cast<int64_t>(l), owner, nnz, t.Cp, t.Cn};
  problem.rebalance = options.rebalance;
  problem.network = options.network ? &*options.network : nullptr;
  problem.p = lin;
  problem.alpha0 = start;
  problem.has_p = !t.p.empty();
  problem.has_alpha0 = !t.alpha0.empty();
  problem.nu = t.nu;
  problem.mirror = t.mirror;
  return options.batched ? SolveBinaryDistributedBatched(comm, problem, t.options, options.batch, stats)
                         : SolveBinaryDistributed(comm, problem, t.options, stats);
}

// kSpread: each pair to one rank (largest first, each to the least loaded rank; cost ~ samples^2; the same on every
// rank), which solves it alone; then every rank gets every result. Adds this rank's kernel evaluations to
// *local_evaluations.
std::vector<SolverResult> SolveSpread(comm::Communicator& comm, std::span<const PairTask> tasks,
                                      const DistTrainOptions& options, int64_t* local_evaluations) {
  std::vector<size_t> order(tasks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  const auto cost = [&](size_t t) {
    const auto n = static_cast<double>(tasks[t].sub.size());
    return n * n;
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return cost(a) > cost(b); });
  std::vector<double> load(static_cast<size_t>(comm.Size()), 0.0);
  std::vector<int> owner(tasks.size(), 0);
  for (const size_t t : order) {
    const auto r = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    owner[t] = static_cast<int>(r);
    load[r] += cost(t);
  }
  std::vector<size_t> mine;
  std::vector<PairTask> my_tasks;
  for (size_t t = 0; t < tasks.size(); ++t) {
    if (owner[t] != comm.Rank()) continue;
    mine.push_back(t);
    my_tasks.push_back(tasks[t]);
  }
  // Any failure here must reach the other ranks before they wait in the exchange.
  std::vector<SolverResult> solved;
  comm::OnEveryRankOrFail(comm, [&] {
    solved = SolvePairsConcurrently(my_tasks, [&](const PairTask& t) {
      kernels::SvmKernelRows k(*t.rows, t.kernel);
      const BinaryProblem problem = t.Problem(&k);
      return options.spread_solver ? options.spread_solver(problem, t.options) : SolveBinary(problem, t.options);
    });
  });
  for (const SolverResult& r : solved) *local_evaluations += r.kernel_evaluations;
  return ShareResults(comm, tasks, owner, mine, std::move(solved));
}

// The run's totals (kernel evaluations, bytes, collectives, communication costs) reduced over the ranks into *st.
void ReduceRunStats(comm::Communicator& comm, const comm::ByteCounter& before, int64_t local_evaluations,
                    DistTrainStats* st) {
  const comm::ByteCounter& after = comm.Bytes();
  int64_t counters[4] = {local_evaluations, -local_evaluations, static_cast<int64_t>(after.Total() - before.Total()),
                         static_cast<int64_t>(after.TotalCalls() - before.TotalCalls())};
  const comm::CallCost cost = after.TotalCost().Since(before.TotalCost());
  double costs[4] = {cost.seconds, cost.latency, cost.volume, cost.modeled};
  Check(comm.Allreduce(std::span<int64_t>(counters, 4), comm::ReduceOp::kMax, "svm-result"));
  Check(comm.Allreduce(std::span<double>(costs, 4), comm::ReduceOp::kMax, "svm-result"));
  st->max_kernel_evaluations = counters[0];
  st->min_kernel_evaluations = -counters[1];
  st->max_bytes = counters[2];
  st->collectives = counters[3];
  st->max_comm_seconds = costs[0];
  st->max_cost = {costs[0], costs[1], costs[2], costs[3]};
}

}  // namespace

SvmModel TrainSvmDistributed(comm::Communicator& comm, const datasets::SparseRowDataset& data, const SvmParams& params,
                             TrainReport* report, DistTrainStats* stats, const DistTrainOptions& options) {
  const PairSchedule schedule = options.schedule;
  // With --network every call is timed on it as it happens (CallCost::modeled; a token bucket keeps state).
  if (options.network) options.network->Attach(comm.Bytes(), comm.Size());
  CheckSameData(comm, data);
  const int parts = comm.Size();
  TESSEL_CHECK(data.num_rows >= parts,
               "{}: {} ranks for {} rows; run at most {} ranks (mpirun -np {}), since each rank must hold samples",
               data.name.empty() ? "data" : data.name, parts, data.num_rows, data.num_rows, data.num_rows);
  const RankRows rank_rows = MakeRankRows(comm, data);

  const comm::ByteCounter before = comm.Bytes();
  std::unique_ptr<kernels::SvmKernelRows> kernel;  // kShared's
  int64_t local_evaluations = 0;
  DistTrainStats st;
  const auto solve_shared = [&](SharedProblem t) {
    std::vector<double> start;  // a resumed problem's saved alpha
    if (options.elastic != nullptr) {
      t.mirror = options.elastic->Begin(static_cast<int64_t>(t.rows.size()), t.alpha0, &start);
      if (!start.empty()) t.alpha0 = start;
    }
    DistStats s;
    SolverResult r = SolveShared(comm, rank_rows, t, options, &kernel, &s);
    local_evaluations += s.local_kernel_evaluations;
    st.pairs.push_back(s);
    if (options.elastic != nullptr) options.elastic->End(r.iterations, !r.hit_iteration_limit);
    return r;
  };
  const auto solve_pairs = [&](std::span<const PairTask> tasks) {
    st.schedule = schedule != PairSchedule::kAuto                        ? schedule
                  : static_cast<int64_t>(tasks.size()) >= int64_t{parts} ? PairSchedule::kSpread
                                                                         : PairSchedule::kShared;
    TESSEL_CHECK(options.elastic == nullptr || schedule != PairSchedule::kSpread,
                 "--pairs spread cannot be resumed (a pair solved by one rank alone is lost with it): with "
                 "--checkpoint, give --pairs shared or auto");
    if (options.elastic != nullptr) st.schedule = PairSchedule::kShared;
    if (st.schedule == PairSchedule::kShared) {
      std::vector<SolverResult> results;
      for (const PairTask& t : tasks)
        results.push_back(solve_shared({t.sub, t.y, t.Cp, t.Cn, t.p, t.alpha0, t.nu, t.kernel, t.options}));
      return results;
    }
    return SolveSpread(comm, tasks, options, &local_evaluations);
  };
  const FitRunner fits = RankFitRunner(comm);
  SvmModel model;
  if (IsClassification(params.type)) {
    model = TrainOneVsOne(data, params, report, solve_pairs, nullptr, &fits);
  } else {  // one-class and the regressions: their one problem with all ranks
    st.schedule = PairSchedule::kShared;
    model = TrainSvm(
        data, params, report,
        [&](const BinaryProblem& bp, const SolverOptions& o) {
          return solve_shared({bp.rows, bp.y, bp.Cp, bp.Cn, bp.p, bp.alpha0, bp.nu, bp.kernel->params(), o});
        },
        nullptr, &fits);
  }
  ReduceRunStats(comm, before, local_evaluations, &st);
  if (stats != nullptr) *stats = std::move(st);
  return model;
}

}  // namespace tessel::svm
