// The end of a distributed solve and the sample records the distributed solvers exchange (dist_common.h).
#include "svm/dist_common.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/parallel.h"

namespace tessel::svm::dist {

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
  TESSEL_CHECK(problem.p.size() == (problem.has_p ? n : 0), "distributed SVM: {} linear terms for {} samples",
               problem.p.size(), n);
  TESSEL_CHECK(problem.alpha0.size() == (problem.has_alpha0 ? n : 0),
               "distributed SVM: {} starting alphas for {} samples", problem.alpha0.size(), n);
  // Every sample is held by exactly one rank.
  int64_t held = static_cast<int64_t>(n);
  Check(comm.Allreduce(std::span<int64_t>(&held, 1), comm::ReduceOp::kSum, "svm-setup"));
  TESSEL_CHECK(held == problem.num_samples, "distributed SVM: the ranks hold {} samples, the problem has {}", held,
               problem.num_samples);
}

namespace {

// What the solve counted on this rank.
struct RunCounts {
  int64_t iterations = 0;
  bool hit_limit = false;
  int64_t local_evaluations = 0;
  int64_t min_local_active = 0;
  comm::ByteCounter bytes_before;  // the communicator's counters when the solve began
};

// Collective: LIBSVM's rho and objective summed over the ranks, every sample's y a in global-id order (big_l of
// them) on every rank, the tally's counters, and (when stats is not null) the costs over the ranks.
// `s` is this rank's samples at the end of a solve, in local order, position k holding global sample gid[k].
SolverResult Finish(comm::Communicator& comm, const FinalState& s, std::span<const int64_t> gid, int64_t big_l,
                    const SolverTally& tally, const RunCounts& counts, DistStats* stats) {
  const size_t n = gid.size();
  // rho and the objective from every rank's terms (LIBSVM's calculate_rho, or Solver_NU's per label, and
  // a^T (G + p) / 2).
  RhoAccumulator rho;
  NuRhoAccumulator nu_rho;
  // free count, free sum of y G, a^T (G + p), nSV, nBSV; Solver_NU: the free count and sum of G per label
  double sums[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t k = 0; k < n; ++k) {
    const double yg = s.y[k] * s.g[k];
    if (s.status[k] == batch::kFree) {
      sums[0] += 1;
      sums[1] += yg;
    }
    rho.Add(s.y[k], s.status[k], s.g[k]);
    if (s.nu) nu_rho.Add(s.y[k], s.status[k], s.g[k]);
    sums[2] += s.alpha[k] * (s.g[k] + (s.p.empty() ? -1.0 : s.p[k]));  // a^T (G + p), as FillSolution
    if (std::fabs(s.alpha[k]) > 0) {
      sums[3] += 1;
      if (std::fabs(s.alpha[k]) >= (s.y[k] > 0 ? s.cp : s.cn)) sums[4] += 1;
    }
  }
  NuRhoAccumulator::Side& pos = nu_rho.pos();
  NuRhoAccumulator::Side& neg = nu_rho.neg();
  sums[5] = static_cast<double>(pos.nr_free);
  sums[6] = pos.sum_free;
  sums[7] = static_cast<double>(neg.nr_free);
  sums[8] = neg.sum_free;
  Check(comm.Allreduce(std::span<double>(sums, 9), comm::ReduceOp::kSum, "svm-result"));
  // The maxima of -ub (= -(min of ub)) and of lb: C-SVC's, then Solver_NU's per label.
  double bounds[6] = {-rho.UpperBound(), rho.LowerBound(), -pos.ub, pos.lb, -neg.ub, neg.lb};
  Check(comm.Allreduce(std::span<double>(bounds, 6), comm::ReduceOp::kMax, "svm-result"));
  SolverResult r;
  if (s.nu) {
    pos = {static_cast<int64_t>(sums[5]), -bounds[2], bounds[3], sums[6]};
    neg = {static_cast<int64_t>(sums[7]), -bounds[4], bounds[5], sums[8]};
    r.rho = nu_rho.Rho();
    r.r = nu_rho.R();
  } else {
    r.rho = sums[0] > 0 ? sums[1] / sums[0] : (-bounds[0] + bounds[1]) / 2;
  }
  r.obj = sums[2] / 2;
  r.nr_sv = static_cast<int>(sums[3]);
  r.nr_bsv = static_cast<int>(sums[4]);

  // Every sample's y a, in global-id order, on every rank.
  std::vector<double> mine(2 * n);
  for (size_t k = 0; k < n; ++k) {
    mine[2 * k] = static_cast<double>(gid[k]);
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
  const comm::CallCost cost = after.TotalCost().Since(counts.bytes_before.TotalCost());
  double costs[4] = {cost.seconds, cost.latency, cost.volume, cost.modeled};
  int64_t evals_sum = evals;
  Check(comm.Allreduce(std::span<int64_t>(&evals_sum, 1), comm::ReduceOp::kSum, "svm-result"));
  Check(comm.Allreduce(std::span<int64_t>(counters, 6), comm::ReduceOp::kMax, "svm-result"));
  Check(comm.Allreduce(std::span<double>(costs, 4), comm::ReduceOp::kMax, "svm-result"));
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
    stats->max_cost = {costs[0], costs[1], costs[2], costs[3]};
  }
  return r;
}

}  // namespace

RankSamples::RankSamples(comm::Communicator& comm, const DistBinaryProblem& p, const SolverOptions& options)
    : SolverCore(p.Cp, p.Cn, options, p.num_samples),
      comm_(comm),
      kernel_(p.kernel),
      big_l_(p.num_samples),
      n_(static_cast<int64_t>(p.rows.size())),
      cache_(p.num_samples, options.cache_bytes),
      cache_bytes_(options.cache_bytes) {
  row_.assign(p.rows.begin(), p.rows.end());
  gid_.assign(p.gids.begin(), p.gids.end());
  pos_of_.assign(static_cast<size_t>(big_l_), -1);
  for (int64_t k = 0; k < n_; ++k) pos_of_[static_cast<size_t>(gid_[k])] = static_cast<int32_t>(k);
  s_.Start(p.y, QDiagonal(*kernel_, row_), p.p);
  nu_ = p.nu;
  mirror_ = p.mirror;
  TESSEL_CHECK(mirror_ == nullptr || static_cast<int64_t>(mirror_->alpha.size()) == big_l_,
               "distributed SVM: an alpha mirror of {} values for {} samples",
               mirror_ == nullptr ? 0 : mirror_->alpha.size(), big_l_);
  SetAllActive();
  min_local_active_ = n_;
  tally_.min_active = big_l_;
  evaluations_base_ = kernel_->evaluations();
  if (p.has_alpha0) {  // collective: every rank, also one without samples
    s_.StartAlpha(p.alpha0, cp_, cn_);
    InitialGradient();
  }
}

template <class Keep>
std::vector<Sample> RankSamples::GatherSamples(int64_t end, Keep keep, std::string_view purpose) {
  std::vector<std::byte> mine;
  for (int64_t k = 0; k < end; ++k) {
    if (!keep(k)) continue;
    SampleHeader h;
    h.alpha = s_.alpha[k];
    h.gid = gid_[k];
    h.y = s_.y[k];
    AppendSample(kernel_->rows(), row_[k], h, &mine);
  }
  std::vector<std::byte> all;
  std::vector<int64_t> counts;
  Check(comm_.AllgathervWithCounts<std::byte>(mine, &all, &counts, purpose));
  std::vector<Sample> samples = UnpackSamples(all);
  std::sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) { return a.h.gid < b.h.gid; });
  return samples;
}

void RankSamples::InitialGradient() {
  const std::vector<Sample> started = GatherSamples(
      n_, [&](int64_t k) { return s_.status[k] != batch::kLower; }, "svm-start");
  if (n_ == 0) return;
  scratch_.resize(static_cast<size_t>(n_));
  for (const Sample& s : started) {
    kernel_->QRowOf(s.Row(), s.h.y, row_, s_.y, scratch_);
    const double a = s.h.alpha;
    const double c = UpperBound(s.h.y);
    const bool at_c = batch::StatusOf(a, c) == batch::kUpper;
    const float* q = scratch_.data();
    parallel_for<int64_t>(0, n_, kScanGrain, [&](int64_t t) {
      s_.g[t] += a * q[t];
      if (at_c) s_.g_bar[t] += c * q[t];
    });
  }
}

const float* RankSamples::GetQ(const Sample& s, int64_t len) {
  if (len <= 0) return nullptr;  // nothing active here (the cache never holds empty rows)
  auto [data, start] = cache_.Get(s.h.gid, len);
  if (start < len) {
    const auto n = static_cast<size_t>(len - start);
    kernel_->QRowOf(s.Row(), s.h.y, std::span<const int32_t>(row_).subspan(static_cast<size_t>(start), n),
                    std::span<const int8_t>(s_.y).subspan(static_cast<size_t>(start), n), {data + start, n});
  }
  return data;
}

void RankSamples::UpdateGBar(const Sample& s, double c) {
  ++tally_.bound_changes;
  const auto [cached, cached_len] = cache_.Peek(s.h.gid);
  const int64_t have = std::min(cached_len, n_);
  const int64_t rest = n_ - have;
  if (rest > 0) {
    scratch_.resize(static_cast<size_t>(rest));
    const auto n = static_cast<size_t>(rest);
    kernel_->QRowOf(s.Row(), s.h.y, std::span<const int32_t>(row_).subspan(static_cast<size_t>(have), n),
                    std::span<const int8_t>(s_.y).subspan(static_cast<size_t>(have), n), scratch_);
  }
  AddScaledSplitRow(s_.g_bar.data(), n_, c, cached, have, scratch_.data());
}

void RankSamples::Swap(int64_t a, int64_t b) {
  if (a == b) return;
  std::swap(row_[a], row_[b]);
  std::swap(gid_[a], gid_[b]);
  s_.Swap(a, b);
  pos_of_[static_cast<size_t>(gid_[a])] = static_cast<int32_t>(a);
  pos_of_[static_cast<size_t>(gid_[b])] = static_cast<int32_t>(b);
  pending_swaps_.emplace_back(static_cast<int32_t>(a), static_cast<int32_t>(b));
}

void RankSamples::ReconstructGradient() {
  if (global_active_ == big_l_) return;
  ++tally_.reconstructions;
  for (int64_t k = active_; k < n_; ++k) s_.g[k] = s_.g_bar[k] + s_.p[k];
  const std::vector<Sample> free_svs = GatherSamples(
      active_, [&](int64_t k) { return s_.status[k] == batch::kFree; }, "svm-reconstruct");
  const int64_t inactive = n_ - active_;
  if (inactive == 0) return;
  scratch_.resize(static_cast<size_t>(inactive));
  const auto cols = std::span<const int32_t>(row_).subspan(static_cast<size_t>(active_));
  const auto signs = std::span<const int8_t>(s_.y).subspan(static_cast<size_t>(active_));
  for (const Sample& s : free_svs) {
    kernel_->QRowOf(s.Row(), s.h.y, cols, signs, scratch_);
    const double a = s.h.alpha;
    const float* q = scratch_.data();
    parallel_for<int64_t>(0, inactive, kScanGrain, [&](int64_t t) { s_.g[active_ + t] += a * q[t]; });
  }
}

std::vector<int64_t> RankSamples::ShrinkRanks() {
  ++tally_.shrink_checks;
  // LIBSVM's extremes over every rank's active samples: Solver's two, or Solver_NU's four.
  ViolationExtremes ext;
  NuViolationExtremes nu_ext;
  for (int64_t k = 0; k < active_; ++k) {
    if (nu_) {
      nu_ext.Add(s_.y[k], s_.status[k], s_.g[k]);
    } else {
      ext.Add(s_.y[k], s_.status[k], s_.g[k]);
    }
  }
  double extremes[4] = {ext.gmax1, ext.gmax2, -kInf, -kInf};
  if (nu_) {
    extremes[0] = nu_ext.gmax1;
    extremes[1] = nu_ext.gmax2;
    extremes[2] = nu_ext.gmax3;
    extremes[3] = nu_ext.gmax4;
  }
  Check(comm_.Allreduce(std::span<double>(extremes, nu_ ? 4 : 2), comm::ReduceOp::kMax, "svm-shrink"));
  ext = {extremes[0], extremes[1]};
  nu_ext = {extremes[0], extremes[1], extremes[2], extremes[3]};
  const auto be_shrunk = [&](int64_t k) {
    return nu_ ? nu_ext.BeShrunk(s_.y[k], s_.status[k], s_.g[k])
               : batch::BeShrunk(s_.y[k], s_.status[k], s_.g[k], ext.gmax1, ext.gmax2);
  };
  if (schedule_.Unshrink(unshrink_, nu_ ? nu_ext.Gap() : ext.gmax1 + ext.gmax2)) {
    unshrink_ = true;
    ReconstructGradient();
    SetAllActive();
  }
  EliminateMarked(&active_, be_shrunk, [&](int64_t a, int64_t b) { Swap(a, b); });
  cache_.ApplyColumnSwaps(pending_swaps_);
  pending_swaps_.clear();
  min_local_active_ = std::min(min_local_active_, active_);
  std::vector<int64_t> counts(static_cast<size_t>(comm_.Size()));
  Check(comm_.Allgather<int64_t>(std::span<const int64_t>(&active_, 1), counts, "svm-shrink"));
  global_active_ = 0;
  for (const int64_t c : counts) global_active_ += c;
  tally_.min_active = std::min(tally_.min_active, global_active_);
  return counts;
}

SolverResult RankSamples::FinishSolve(int64_t iterations, bool hit_limit, int64_t extra_evaluations,
                                      const comm::ByteCounter& bytes_before, DistStats* stats) {
  RunCounts counts;
  counts.iterations = iterations;
  counts.hit_limit = hit_limit;
  counts.local_evaluations = LocalEvaluations() + extra_evaluations;
  counts.min_local_active = min_local_active_;
  counts.bytes_before = bytes_before;
  SolverResult r =
      Finish(comm_, {s_.y, s_.status, s_.alpha, s_.g, {}, cp_, cn_, s_.p, nu_}, gid_, big_l_, tally_, counts, stats);
  r.cache_hits = retired_hits_ + cache_.hits();
  r.cache_misses = retired_misses_ + cache_.misses();
  return r;
}

}  // namespace tessel::svm::dist
