// The end of a distributed C-SVC solve and the sample records the distributed solvers exchange (dist_common.h).
#include "train/svm/dist_common.h"

#include <cmath>

#include "core/error.h"

namespace tessel::train::svm::dist {

std::vector<Sample> UnpackSamples(std::span<const std::byte> all) {
  std::vector<Sample> out;
  for (size_t at = 0; at < all.size();) {
    Sample s;
    TESSEL_CHECK(at + sizeof s.h <= all.size(), "distributed SVM: a truncated sample record");
    std::memcpy(&s.h, all.data() + at, sizeof s.h);
    TESSEL_CHECK(s.h.nnz >= 0, "distributed SVM: a sample record with {} non-zeros", s.h.nnz);
    const size_t bytes = Sample::Bytes(static_cast<size_t>(s.h.nnz));
    TESSEL_CHECK(at + bytes <= all.size(), "distributed SVM: a truncated sample record");
    s.buffer.assign(all.begin() + static_cast<std::ptrdiff_t>(at),
                    all.begin() + static_cast<std::ptrdiff_t>(at + bytes));
    out.push_back(std::move(s));
    at += bytes;
  }
  return out;
}

void ValidateDistProblem(comm::Communicator& comm, const DistBinaryProblem& problem) {
  TESSEL_CHECK(problem.kernel != nullptr, "distributed SVM: no kernel");
  const auto n = problem.rows.size();
  TESSEL_CHECK(problem.gids.size() == n && problem.y.size() == n,
               "distributed SVM: {} rows, {} global ids and {} labels", n, problem.gids.size(), problem.y.size());
  TESSEL_CHECK(problem.num_samples > 0 && problem.num_samples < (int64_t{1} << 31),
               "distributed SVM: {} samples (need 1 to 2^31 - 1)", problem.num_samples);
  const auto big_l = static_cast<size_t>(problem.num_samples);
  TESSEL_CHECK(problem.owner.size() == big_l && problem.nnz.size() == big_l,
               "distributed SVM: owner and nnz tables of {} and {} entries for {} samples", problem.owner.size(),
               problem.nnz.size(), big_l);
  for (size_t k = 0; k < n; ++k) {
    const int64_t g = problem.gids[k];
    TESSEL_CHECK(g >= 0 && g < problem.num_samples && (k == 0 || g > problem.gids[k - 1]),
                 "distributed SVM: global ids must ascend within [0, {}) (id {} at {})", problem.num_samples, g, k);
    TESSEL_CHECK(problem.owner[static_cast<size_t>(g)] == comm.Rank(),
                 "distributed SVM: rank {} holds sample {} that the owner table gives to rank {}", comm.Rank(), g,
                 problem.owner[static_cast<size_t>(g)]);
    TESSEL_CHECK(problem.y[k] == 1 || problem.y[k] == -1, "distributed SVM: label {} of sample {}", problem.y[k], g);
  }
  // Every sample is held by exactly one rank.
  int64_t held = static_cast<int64_t>(n);
  Check(comm.Allreduce(std::span<int64_t>(&held, 1), comm::ReduceOp::kSum, "svm-setup"));
  TESSEL_CHECK(held == problem.num_samples, "distributed SVM: the ranks hold {} samples, the problem has {}", held,
               problem.num_samples);
}

SolverResult Finish(comm::Communicator& comm, const LocalState& s, int64_t big_l, const SolverTally& tally,
                    const RunCounts& counts, DistStats* stats) {
  const size_t n = s.gid.size();
  // rho and the objective from every rank's terms (LIBSVM's calculate_rho and a^T (G - e) / 2).
  RhoAccumulator rho;
  double sums[5] = {0, 0, 0, 0, 0};  // free count, free sum of y G, a^T (G - e), nSV, nBSV
  for (size_t k = 0; k < n; ++k) {
    const double yg = s.y[k] * s.g[k];
    if (s.status[k] == batch::kFree) {
      sums[0] += 1;
      sums[1] += yg;
    }
    rho.Add(s.y[k], s.status[k], s.g[k]);
    sums[2] += s.alpha[k] * (s.g[k] - 1.0);
    if (std::fabs(s.alpha[k]) > 0) {
      sums[3] += 1;
      if (std::fabs(s.alpha[k]) >= (s.y[k] > 0 ? s.cp : s.cn)) sums[4] += 1;
    }
  }
  Check(comm.Allreduce(std::span<double>(sums, 5), comm::ReduceOp::kSum, "svm-result"));
  double bounds[2] = {-rho.UpperBound(), rho.LowerBound()};  // max of -ub = -(min of ub)
  Check(comm.Allreduce(std::span<double>(bounds, 2), comm::ReduceOp::kMax, "svm-result"));
  SolverResult r;
  r.rho = sums[0] > 0 ? sums[1] / sums[0] : (-bounds[0] + bounds[1]) / 2;
  r.obj = sums[2] / 2;
  r.nr_sv = static_cast<int>(sums[3]);
  r.nr_bsv = static_cast<int>(sums[4]);

  // Every sample's y a, in global-id order, on every rank.
  std::vector<double> mine(2 * n);
  for (size_t k = 0; k < n; ++k) {
    mine[2 * k] = static_cast<double>(s.gid[k]);
    mine[2 * k + 1] = s.alpha[k] * s.y[k];
  }
  std::vector<double> all;
  std::vector<int64_t> sizes;
  Check(comm.AllgathervWithCounts<double>(mine, &all, &sizes, "svm-result"));
  TESSEL_CHECK(static_cast<int64_t>(all.size()) == 2 * big_l,
               "distributed SVM: the ranks hold {} samples in all, not {}", all.size() / 2, big_l);
  r.alpha.assign(static_cast<size_t>(big_l), 0.0);
  for (size_t t = 0; t < all.size(); t += 2) r.alpha[static_cast<size_t>(all[t])] = all[t + 1];

  const auto local = static_cast<int64_t>(n);
  const int64_t evals = counts.local_evaluations;
  int64_t counters[6] = {evals, -evals, local, -local, -counts.min_local_active, 0};
  const comm::ByteCounter& after = comm.Bytes();
  const auto sent = static_cast<int64_t>(after.Total() - counts.bytes_before.Total());
  const auto calls = static_cast<int64_t>(after.TotalCalls() - counts.bytes_before.TotalCalls());
  counters[5] = sent;
  double costs[3] = {after.TotalCost().seconds - counts.bytes_before.TotalCost().seconds,
                     after.TotalCost().latency - counts.bytes_before.TotalCost().latency,
                     after.TotalCost().volume - counts.bytes_before.TotalCost().volume};
  int64_t evals_sum = evals;
  Check(comm.Allreduce(std::span<int64_t>(&evals_sum, 1), comm::ReduceOp::kSum, "svm-result"));
  Check(comm.Allreduce(std::span<int64_t>(counters, 6), comm::ReduceOp::kMax, "svm-result"));
  Check(comm.Allreduce(std::span<double>(costs, 3), comm::ReduceOp::kMax, "svm-result"));
  tally.Fill(counts.iterations, evals_sum, counts.hit_limit, &r);
  if (stats != nullptr) {
    stats->max_kernel_evaluations = counters[0];
    stats->min_kernel_evaluations = -counters[1];
    stats->local_kernel_evaluations = evals;
    stats->max_local_samples = counters[2];
    stats->min_local_samples = -counters[3];
    stats->min_local_active = -counters[4];
    stats->max_bytes = counters[5];
    stats->collectives = calls;
    stats->max_comm_seconds = costs[0];
    stats->max_cost = {costs[0], costs[1], costs[2]};
  }
  return r;
}

}  // namespace tessel::train::svm::dist
