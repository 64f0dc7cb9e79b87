// Distributed SMO: LIBSVM's Solver (WSS 2nd order with TAU = 1e-12, shrinking with G_bar reconstruction, rho and
// objective) with the samples spread over ranks. Per iteration every rank runs the same control flow on global
// values: (1) the max violator i by one max-loc allreduce, (2) i's row broadcast by its owner, (3) the second-order
// partner j and gmax2 by one two-element max-loc allreduce, (4) j's row (and Q_ij) broadcast by its owner, then the
// pair update computed identically everywhere and each rank's gradient updated over its own active samples.
// Ties go to the larger global id, so without elimination the iterations are the one-process solver's exactly.
#include "train/svm/dist_solver.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <tuple>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/log.h"
#include "core/parallel.h"
#include "train/svm/batch_step.h"
#include "train/svm/elimination.h"
#include "train/svm/kernel_cache.h"
#include "train/svm/solver_common.h"

namespace tessel::train::svm {
namespace {

using batch::kFree;
using batch::kLower;
using batch::kUpper;

constexpr double kInf = std::numeric_limits<double>::infinity();

// What travels with a sample's row when its owner broadcasts it.
struct SampleHeader {
  double qd = 0;     // Q_ii
  double g = 0;      // gradient
  double alpha = 0;  // a (not y a)
  double q_ij = 0;   // with j's broadcast: the float Q_ij from the owner's cached row of i
  int64_t gid = -1;
  int32_t nnz = 0;
  int8_t y = 0;
  int8_t pad[3] = {0, 0, 0};
};

// A broadcast sample: its header and row (pointing into the receive buffer).
struct Sample {
  SampleHeader h;
  std::vector<std::byte> buffer;
  kernels::SvmKernelRows::ExternalRow Row() const {
    const auto n = static_cast<size_t>(h.nnz);
    const auto* idx = reinterpret_cast<const int32_t*>(buffer.data() + sizeof(SampleHeader));
    const auto* val = reinterpret_cast<const double*>(buffer.data() + sizeof(SampleHeader) + 4 * n + Pad(n));
    return {{idx, n}, {val, n}};
  }
  // Bytes between the indices and the 8-byte aligned values.
  static size_t Pad(size_t n) { return (8 - (4 * n) % 8) % 8; }
  static size_t Bytes(size_t n) { return sizeof(SampleHeader) + 4 * n + Pad(n) + 8 * n; }
};

void Check(const comm::Status& s) { s.ThrowIfError(); }

class DistSolver {
 public:
  DistSolver(comm::Communicator& comm, const DistBinaryProblem& p, const SolverOptions& options)
      : comm_(comm),
        kernel_(*p.kernel),
        owner_(p.owner),
        nnz_(p.nnz),
        big_l_(p.num_samples),
        n_(static_cast<int64_t>(p.rows.size())),
        cp_(p.Cp),
        cn_(p.Cn),
        eps_(options.eps),
        schedule_(options.shrinking, p.num_samples, options.eps),
        cache_(p.num_samples, options.cache_bytes),
        max_iter_(MaxIterations(options.max_iterations, p.num_samples)) {
    row_.assign(p.rows.begin(), p.rows.end());
    gid_.assign(p.gids.begin(), p.gids.end());
    y_.assign(p.y.begin(), p.y.end());
    pos_of_.assign(static_cast<size_t>(big_l_), -1);
    for (int64_t k = 0; k < n_; ++k) pos_of_[static_cast<size_t>(gid_[k])] = static_cast<int32_t>(k);
    qd_ = QDiagonal(kernel_, row_);
    alpha_.assign(n_, 0.0);
    status_.assign(n_, kLower);
    g_.assign(n_, -1.0);
    g_bar_.assign(n_, 0.0);
    active_ = n_;
    global_active_ = big_l_;
  }

  SolverResult Run(DistStats* stats);

 private:
  double C(int8_t y) const { return y > 0 ? cp_ : cn_; }
  // Sends sample gid's header and row from its owner to every rank; extra.q_ij rides along.
  Sample Broadcast(int64_t gid, double q_ij);
  // The cached Q row of a broadcast sample over this rank's first `len` positions.
  const float* GetQ(const Sample& s, int64_t len);
  Candidate LocalMaxViolator(int64_t begin, int64_t end) const;
  bool SelectWorkingSet(Sample* si, Sample* sj);
  void Step(const Sample& si, const Sample& sj);
  void UpdateGBar(const Sample& s, double c);
  void DoShrinking();
  void ReconstructGradient();
  void Swap(int64_t a, int64_t b);
  void Progress(int64_t iter, bool force);
  // Encodes a candidate's global id so that max-loc's smaller-index rule picks the larger id; -1 (none) last.
  int64_t TieIndex(int64_t gid) const { return gid < 0 ? big_l_ : big_l_ - 1 - gid; }
  int64_t GidOf(int64_t tie_index) const { return tie_index >= big_l_ ? -1 : big_l_ - 1 - tie_index; }

  comm::Communicator& comm_;
  kernels::SvmKernelRows& kernel_;
  std::span<const int32_t> owner_;
  std::span<const int32_t> nnz_;
  int64_t big_l_;
  int64_t n_;
  double cp_;
  double cn_;
  double eps_;
  EliminationSchedule schedule_;
  KernelCache cache_;  // rows keyed by global id, entries over this rank's positions
  int64_t max_iter_;

  // Per local position (reordered by elimination as in LIBSVM).
  std::vector<int32_t> row_;
  std::vector<int64_t> gid_;
  std::vector<int8_t> y_;
  std::vector<double> qd_;
  std::vector<double> alpha_;
  std::vector<int8_t> status_;
  std::vector<double> g_;
  std::vector<double> g_bar_;
  std::vector<int32_t> pos_of_;  // global id -> local position, -1 when another rank holds it
  int64_t active_ = 0;
  int64_t global_active_ = 0;
  bool unshrink_ = false;
  std::vector<std::pair<int32_t, int32_t>> pending_swaps_;
  std::vector<float> scratch_;

  Candidate next_i_{-kInf, -1};  // this rank's max violator (global id in index), from the last gradient update
  bool next_i_valid_ = false;
  int64_t min_local_active_ = 0;
  uint64_t bytes_start_ = 0;
  SolverTally tally_;
};

Sample DistSolver::Broadcast(int64_t gid, double q_ij) {
  Sample s;
  const auto n = static_cast<size_t>(nnz_[static_cast<size_t>(gid)]);
  s.buffer.assign(Sample::Bytes(n), std::byte{0});
  const int root = owner_[static_cast<size_t>(gid)];
  if (root == comm_.Rank()) {
    const int32_t k = pos_of_[static_cast<size_t>(gid)];
    TESSEL_CHECK(k >= 0, "distributed SVM: rank {} owns sample {} but does not hold it", root, gid);
    const auto idx = kernel_.rows().RowIndices(row_[k]);
    const auto val = kernel_.rows().RowValues(row_[k]);
    TESSEL_CHECK(idx.size() == n, "distributed SVM: sample {} has {} non-zeros here but {} in the shared table", gid,
                 idx.size(), n);
    SampleHeader h;
    h.qd = qd_[k];
    h.g = g_[k];
    h.alpha = alpha_[k];
    h.q_ij = q_ij;
    h.gid = gid;
    h.nnz = static_cast<int32_t>(n);
    h.y = y_[k];
    std::memcpy(s.buffer.data(), &h, sizeof h);
    std::memcpy(s.buffer.data() + sizeof h, idx.data(), 4 * n);
    std::memcpy(s.buffer.data() + sizeof h + 4 * n + Sample::Pad(n), val.data(), 8 * n);
  }
  Check(comm_.BroadcastRaw(s.buffer.data(), static_cast<int64_t>(s.buffer.size()), root, "svm-rows"));
  std::memcpy(&s.h, s.buffer.data(), sizeof s.h);
  TESSEL_CHECK(s.h.gid == gid && s.h.nnz == static_cast<int32_t>(n),
               "distributed SVM: the broadcast of sample {} carried sample {}", gid, s.h.gid);
  return s;
}

const float* DistSolver::GetQ(const Sample& s, int64_t len) {
  if (len <= 0) return nullptr;  // nothing active here (the cache never holds empty rows)
  auto [data, start] = cache_.Get(s.h.gid, len);
  if (start < len) {
    const auto n = static_cast<size_t>(len - start);
    kernel_.QRowOf(s.Row(), s.h.y, std::span<const int32_t>(row_).subspan(static_cast<size_t>(start), n),
                   std::span<const int8_t>(y_).subspan(static_cast<size_t>(start), n), {data + start, n});
  }
  return data;
}

Candidate DistSolver::LocalMaxViolator(int64_t begin, int64_t end) const {
  Candidate c{-kInf, -1};
  for (int64_t t = begin; t < end; ++t) {
    if (!batch::InUp(y_[t], status_[t])) continue;
    const double v = y_[t] == 1 ? -g_[t] : g_[t];  // -y G
    if (v > c.value || (v == c.value && gid_[t] > c.index)) c = {v, gid_[t]};
  }
  return c;
}

// Returns true when the active set is optimal within eps.
bool DistSolver::SelectWorkingSet(Sample* si, Sample* sj) {
  const auto fold_max = [](const Candidate& r, const Candidate& p) {
    return p.value > r.value || (p.value == r.value && p.index > r.index) ? p : r;
  };
  const Candidate mine = next_i_valid_ ? next_i_
                                       : BlockReduce<Candidate>(
                                             active_, Candidate{-kInf, -1},
                                             [&](int64_t b, int64_t e) { return LocalMaxViolator(b, e); }, fold_max);
  next_i_valid_ = false;
  comm::ValueIndex<double> first{mine.value, TieIndex(mine.index)};
  Check(comm_.AllreduceMaxLoc(&first, "svm-select"));
  const double gmax = first.value;
  const int64_t gid_i = GidOf(first.index);

  const float* q_i = nullptr;
  double qd_i = 0;
  double yi2 = 0;
  if (gid_i >= 0) {
    *si = Broadcast(gid_i, 0);
    q_i = GetQ(*si, active_);
    qd_i = si->h.qd;
    yi2 = 2.0 * si->h.y;
  }

  struct Second {
    Candidate best;  // smallest gain, ties to the larger global id
    double gmax2;
  };
  const Second second = BlockReduce<Second>(
      active_, Second{{kInf, -1}, -kInf},
      [&](int64_t b, int64_t e) {
        Second s{{kInf, -1}, -kInf};
        for (int64_t j = b; j < e; ++j) {
          if (!batch::InLow(y_[j], status_[j])) continue;
          double grad_diff;
          double quad_coef;
          if (y_[j] == 1) {
            grad_diff = gmax + g_[j];
            if (g_[j] >= s.gmax2) s.gmax2 = g_[j];
            if (grad_diff <= 0) continue;
            quad_coef = qd_i + qd_[j] - yi2 * q_i[j];
          } else {
            grad_diff = gmax - g_[j];
            if (-g_[j] >= s.gmax2) s.gmax2 = -g_[j];
            if (grad_diff <= 0) continue;
            quad_coef = qd_i + qd_[j] + yi2 * q_i[j];
          }
          const double obj_diff = batch::SecondOrderGain(grad_diff, quad_coef);
          if (obj_diff < s.best.value || (obj_diff == s.best.value && gid_[j] > s.best.index))
            s.best = {obj_diff, gid_[j]};
        }
        return s;
      },
      [](const Second& r, const Second& p) {
        Second out = r;
        if (p.best.index >= 0 &&
            (p.best.value < r.best.value || (p.best.value == r.best.value && p.best.index > r.best.index)))
          out.best = p.best;
        out.gmax2 = std::max(r.gmax2, p.gmax2);
        return out;
      });
  // One allreduce for both: the partner as max-loc of the negated gain, and gmax2 as a plain maximum.
  comm::ValueIndex<double> pair[2] = {
      {second.best.index >= 0 ? -second.best.value : -kInf, TieIndex(second.best.index)}, {second.gmax2, 0}};
  Check(comm_.Allreduce(std::span<comm::ValueIndex<double>>(pair, 2), comm::ReduceOp::kMaxLoc, "svm-select"));
  const int64_t gid_j = GidOf(pair[0].index);
  tally_.last_gap = gmax + pair[1].value;
  if (tally_.last_gap < eps_ || gid_j < 0) return true;
  // The owner of j sends the float Q_ij of its cached row of i with j's row.
  const int32_t kj = pos_of_[static_cast<size_t>(gid_j)];
  *sj = Broadcast(gid_j, kj >= 0 ? static_cast<double>(q_i[kj]) : 0.0);
  return false;
}

// One SMO step on (i, j), computed identically on every rank; each rank updates its own samples.
void DistSolver::Step(const Sample& si, const Sample& sj) {
  const float* q_i = GetQ(si, active_);
  const float* q_j = GetQ(sj, active_);
  const double c_i = C(si.h.y);
  const double c_j = C(sj.h.y);
  double alpha_i = si.h.alpha;
  double alpha_j = sj.h.alpha;
  batch::UpdatePair(si.h.y, sj.h.y, si.h.qd, sj.h.qd, static_cast<float>(sj.h.q_ij), si.h.g, sj.h.g, c_i, c_j, &alpha_i,
                    &alpha_j);
  const double d_i = alpha_i - si.h.alpha;
  const double d_j = alpha_j - sj.h.alpha;
  const bool ui = batch::StatusOf(si.h.alpha, c_i) == kUpper;
  const bool uj = batch::StatusOf(sj.h.alpha, c_j) == kUpper;
  for (const auto& [gid, a, c] : {std::tuple{si.h.gid, alpha_i, c_i}, std::tuple{sj.h.gid, alpha_j, c_j}}) {
    const int32_t k = pos_of_[static_cast<size_t>(gid)];
    if (k < 0) continue;
    alpha_[k] = a;
    status_[k] = batch::StatusOf(a, c);
  }

  const auto fold_max = [](const Candidate& r, const Candidate& p) {
    return p.value > r.value || (p.value == r.value && p.index > r.index) ? p : r;
  };
  next_i_ = BlockReduce<Candidate>(
      active_, Candidate{-kInf, -1},
      [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) g_[k] += q_i[k] * d_i + q_j[k] * d_j;
        return LocalMaxViolator(b, e);
      },
      fold_max);
  next_i_valid_ = true;

  if (!schedule_.eliminates()) return;
  if (ui != (batch::StatusOf(alpha_i, c_i) == kUpper)) UpdateGBar(si, ui ? -c_i : c_i);
  if (uj != (batch::StatusOf(alpha_j, c_j) == kUpper)) UpdateGBar(sj, uj ? -c_j : c_j);
}

// G_bar += c Q_s over all local positions: the cached prefix as it is, the rest computed into scratch.
void DistSolver::UpdateGBar(const Sample& s, double c) {
  ++tally_.bound_changes;
  const auto [cached, cached_len] = cache_.Peek(s.h.gid);
  const int64_t have = std::min(cached_len, n_);
  const int64_t rest = n_ - have;
  if (rest > 0) {
    scratch_.resize(static_cast<size_t>(rest));
    const auto n = static_cast<size_t>(rest);
    kernel_.QRowOf(s.Row(), s.h.y, std::span<const int32_t>(row_).subspan(static_cast<size_t>(have), n),
                   std::span<const int8_t>(y_).subspan(static_cast<size_t>(have), n), scratch_);
  }
  const float* head = cached;
  const float* tail = scratch_.data();
  parallel_for_chunks<int64_t>(0, n_, kScanGrain, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < std::min(e, have); ++k) g_bar_[k] += c * head[k];
    for (int64_t k = std::max(b, have); k < e; ++k) g_bar_[k] += c * tail[k - have];
  });
}

void DistSolver::Swap(int64_t a, int64_t b) {
  if (a == b) return;
  std::swap(row_[a], row_[b]);
  std::swap(gid_[a], gid_[b]);
  std::swap(y_[a], y_[b]);
  std::swap(qd_[a], qd_[b]);
  std::swap(alpha_[a], alpha_[b]);
  std::swap(status_[a], status_[b]);
  std::swap(g_[a], g_[b]);
  std::swap(g_bar_[a], g_bar_[b]);
  pos_of_[static_cast<size_t>(gid_[a])] = static_cast<int32_t>(a);
  pos_of_[static_cast<size_t>(gid_[b])] = static_cast<int32_t>(b);
  pending_swaps_.emplace_back(static_cast<int32_t>(a), static_cast<int32_t>(b));
}

void DistSolver::DoShrinking() {
  ++tally_.shrink_checks;
  ViolationExtremes ext;
  for (int64_t k = 0; k < active_; ++k) ext.Add(y_[k], status_[k], g_[k]);
  double extremes[2] = {ext.gmax1, ext.gmax2};
  Check(comm_.Allreduce(std::span<double>(extremes, 2), comm::ReduceOp::kMax, "svm-shrink"));
  const double gmax1 = extremes[0];
  const double gmax2 = extremes[1];
  if (schedule_.Unshrink(unshrink_, gmax1 + gmax2)) {
    unshrink_ = true;
    ReconstructGradient();
    active_ = n_;
  }
  for (int64_t k = 0; k < active_; ++k) {
    if (!batch::BeShrunk(y_[k], status_[k], g_[k], gmax1, gmax2)) continue;
    --active_;
    while (active_ > k) {
      if (!batch::BeShrunk(y_[active_], status_[active_], g_[active_], gmax1, gmax2)) {
        Swap(k, active_);
        break;
      }
      --active_;
    }
  }
  cache_.ApplyColumnSwaps(pending_swaps_);
  pending_swaps_.clear();
  next_i_valid_ = false;
  int64_t active = active_;
  Check(comm_.Allreduce(std::span<int64_t>(&active, 1), comm::ReduceOp::kSum, "svm-shrink"));
  global_active_ = active;
  tally_.min_active = std::min(tally_.min_active, global_active_);
  min_local_active_ = std::min(min_local_active_, active_);
}

// Rebuilds G of the eliminated samples: G_bar - 1 plus the terms of every free support vector. The free vectors'
// rows are gathered from all ranks (collective) and each rank adds their terms to its own eliminated samples, in
// global-id order of the free vectors.
void DistSolver::ReconstructGradient() {
  next_i_valid_ = false;
  if (global_active_ == big_l_) return;
  ++tally_.reconstructions;
  for (int64_t j = active_; j < n_; ++j) g_[j] = g_bar_[j] - 1.0;
  std::vector<std::byte> mine;
  for (int64_t k = 0; k < active_; ++k) {
    if (status_[k] != kFree) continue;
    const auto idx = kernel_.rows().RowIndices(row_[k]);
    const auto val = kernel_.rows().RowValues(row_[k]);
    const size_t n = idx.size();
    SampleHeader h;
    h.alpha = alpha_[k];
    h.gid = gid_[k];
    h.nnz = static_cast<int32_t>(n);
    h.y = y_[k];
    const size_t at = mine.size();
    mine.resize(at + Sample::Bytes(n), std::byte{0});
    std::memcpy(mine.data() + at, &h, sizeof h);
    std::memcpy(mine.data() + at + sizeof h, idx.data(), 4 * n);
    std::memcpy(mine.data() + at + sizeof h + 4 * n + Sample::Pad(n), val.data(), 8 * n);
  }
  std::vector<std::byte> all;
  std::vector<int64_t> counts;
  Check(comm_.AllgathervWithCounts<std::byte>(mine, &all, &counts, "svm-reconstruct"));
  std::vector<Sample> free_svs;
  for (size_t at = 0; at < all.size();) {
    Sample s;
    std::memcpy(&s.h, all.data() + at, sizeof s.h);
    const size_t bytes = Sample::Bytes(static_cast<size_t>(s.h.nnz));
    TESSEL_CHECK(s.h.nnz >= 0 && at + bytes <= all.size(), "distributed SVM: a malformed free-vector message");
    s.buffer.assign(all.begin() + static_cast<std::ptrdiff_t>(at),
                    all.begin() + static_cast<std::ptrdiff_t>(at + bytes));
    free_svs.push_back(std::move(s));
    at += bytes;
  }
  std::sort(free_svs.begin(), free_svs.end(), [](const Sample& a, const Sample& b) { return a.h.gid < b.h.gid; });
  const int64_t inactive = n_ - active_;
  if (inactive == 0) return;
  scratch_.resize(static_cast<size_t>(inactive));
  const auto cols = std::span<const int32_t>(row_).subspan(static_cast<size_t>(active_));
  const auto signs = std::span<const int8_t>(y_).subspan(static_cast<size_t>(active_));
  for (const Sample& s : free_svs) {
    kernel_.QRowOf(s.Row(), s.h.y, cols, signs, scratch_);
    const double a = s.h.alpha;
    const float* q = scratch_.data();
    parallel_for<int64_t>(0, inactive, kScanGrain, [&](int64_t t) { g_[active_ + t] += a * q[t]; });
  }
}

void DistSolver::Progress(int64_t iter, bool force) {
  if (!tally_.LogDue(force)) return;
  const auto sent = static_cast<double>(comm_.Bytes().Total() - bytes_start_);
  log::Info("svm: iter {}, gap {:.6g} (tolerance {:g}), active {}/{} over {} ranks, {:.0f} bytes sent per iteration",
            iter, tally_.last_gap, eps_, global_active_, big_l_, comm_.Size(),
            iter > 0 ? sent / static_cast<double>(iter) : 0.0);
}

SolverResult DistSolver::Run(DistStats* stats) {
  const int64_t evals_before = kernel_.evaluations();
  const comm::ByteCounter bytes_before = comm_.Bytes();
  bytes_start_ = bytes_before.Total();
  tally_.min_active = big_l_;
  min_local_active_ = n_;
  int64_t iter = 0;
  int64_t since = 0;
  bool hit_limit = false;
  Sample si;
  Sample sj;
  while (true) {
    if (iter >= max_iter_) {
      hit_limit = true;
      break;
    }
    if (schedule_.Due(since)) {
      since = 0;
      if (schedule_.CheckNow(tally_.last_gap)) DoShrinking();
      Progress(iter, false);
    }
    if (SelectWorkingSet(&si, &sj)) {
      ReconstructGradient();
      active_ = n_;
      global_active_ = big_l_;
      if (SelectWorkingSet(&si, &sj)) break;
      since = schedule_.period();
    }
    ++iter;
    ++since;
    Step(si, sj);
  }
  if (hit_limit) {
    if (global_active_ < big_l_) {
      ReconstructGradient();
      active_ = n_;
      global_active_ = big_l_;
    }
    log::Warn("svm: reached the iteration limit ({}) before the gap fell under eps; the model may be inaccurate",
              max_iter_);
  }
  Progress(iter, true);

  // rho and the objective from every rank's terms (LIBSVM's calculate_rho and a^T (G - e) / 2).
  RhoAccumulator rho;
  double sums[5] = {0, 0, 0, 0, 0};  // free count, free sum of y G, a^T (G - e), nSV, nBSV
  for (int64_t k = 0; k < n_; ++k) {
    const double yg = y_[k] * g_[k];
    if (status_[k] == kFree) {
      sums[0] += 1;
      sums[1] += yg;
    }
    rho.Add(y_[k], status_[k], g_[k]);
    sums[2] += alpha_[k] * (g_[k] - 1.0);
    if (std::fabs(alpha_[k]) > 0) {
      sums[3] += 1;
      if (std::fabs(alpha_[k]) >= C(y_[k])) sums[4] += 1;
    }
  }
  Check(comm_.Allreduce(std::span<double>(sums, 5), comm::ReduceOp::kSum, "svm-result"));
  double bounds[2] = {-rho.UpperBound(), rho.LowerBound()};  // max of -ub = -(min of ub)
  Check(comm_.Allreduce(std::span<double>(bounds, 2), comm::ReduceOp::kMax, "svm-result"));
  SolverResult r;
  r.rho = sums[0] > 0 ? sums[1] / sums[0] : (-bounds[0] + bounds[1]) / 2;
  r.obj = sums[2] / 2;
  r.nr_sv = static_cast<int>(sums[3]);
  r.nr_bsv = static_cast<int>(sums[4]);

  // Every sample's y a, in global-id order, on every rank.
  std::vector<double> mine(static_cast<size_t>(2 * n_));
  for (int64_t k = 0; k < n_; ++k) {
    mine[static_cast<size_t>(2 * k)] = static_cast<double>(gid_[k]);
    mine[static_cast<size_t>(2 * k + 1)] = alpha_[k] * y_[k];
  }
  std::vector<double> all;
  std::vector<int64_t> counts;
  Check(comm_.AllgathervWithCounts<double>(mine, &all, &counts, "svm-result"));
  TESSEL_CHECK(static_cast<int64_t>(all.size()) == 2 * big_l_,
               "distributed SVM: the ranks hold {} samples in all, not {}", all.size() / 2, big_l_);
  r.alpha.assign(static_cast<size_t>(big_l_), 0.0);
  for (size_t t = 0; t < all.size(); t += 2) r.alpha[static_cast<size_t>(all[t])] = all[t + 1];

  const int64_t local_evals = kernel_.evaluations() - evals_before;
  int64_t counters[6] = {local_evals, -local_evals, n_, -n_, -min_local_active_, 0};
  const comm::ByteCounter& after = comm_.Bytes();
  const auto sent = static_cast<int64_t>(after.Total() - bytes_before.Total());
  const auto calls = static_cast<int64_t>(after.TotalCalls() - bytes_before.TotalCalls());
  counters[5] = sent;
  double costs[3] = {after.TotalCost().seconds - bytes_before.TotalCost().seconds,
                     after.TotalCost().latency - bytes_before.TotalCost().latency,
                     after.TotalCost().volume - bytes_before.TotalCost().volume};
  int64_t evals_sum = local_evals;
  Check(comm_.Allreduce(std::span<int64_t>(&evals_sum, 1), comm::ReduceOp::kSum, "svm-result"));
  Check(comm_.Allreduce(std::span<int64_t>(counters, 6), comm::ReduceOp::kMax, "svm-result"));
  Check(comm_.Allreduce(std::span<double>(costs, 3), comm::ReduceOp::kMax, "svm-result"));
  tally_.Fill(iter, evals_sum, hit_limit, &r);
  r.cache_hits = cache_.hits();
  r.cache_misses = cache_.misses();
  if (stats != nullptr) {
    stats->max_kernel_evaluations = counters[0];
    stats->min_kernel_evaluations = -counters[1];
    stats->local_kernel_evaluations = local_evals;
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

}  // namespace

SolverResult SolveBinaryDistributed(comm::Communicator& comm, const DistBinaryProblem& problem,
                                    const SolverOptions& options, DistStats* stats) {
  TESSEL_CHECK(problem.kernel != nullptr, "SolveBinaryDistributed: no kernel");
  const auto n = problem.rows.size();
  TESSEL_CHECK(problem.gids.size() == n && problem.y.size() == n,
               "SolveBinaryDistributed: {} rows, {} global ids and {} labels", n, problem.gids.size(),
               problem.y.size());
  TESSEL_CHECK(problem.num_samples > 0 && problem.num_samples < (int64_t{1} << 31),
               "SolveBinaryDistributed: {} samples (need 1 to 2^31 - 1)", problem.num_samples);
  const auto big_l = static_cast<size_t>(problem.num_samples);
  TESSEL_CHECK(problem.owner.size() == big_l && problem.nnz.size() == big_l,
               "SolveBinaryDistributed: owner and nnz tables of {} and {} entries for {} samples", problem.owner.size(),
               problem.nnz.size(), big_l);
  for (size_t k = 0; k < n; ++k) {
    const int64_t g = problem.gids[k];
    TESSEL_CHECK(g >= 0 && g < problem.num_samples && (k == 0 || g > problem.gids[k - 1]),
                 "SolveBinaryDistributed: global ids must ascend within [0, {}) (id {} at {})", problem.num_samples, g,
                 k);
    TESSEL_CHECK(problem.owner[static_cast<size_t>(g)] == comm.Rank(),
                 "SolveBinaryDistributed: rank {} holds sample {} that the owner table gives to rank {}", comm.Rank(),
                 g, problem.owner[static_cast<size_t>(g)]);
    TESSEL_CHECK(problem.y[k] == 1 || problem.y[k] == -1, "SolveBinaryDistributed: label {} of sample {}", problem.y[k],
                 g);
  }
  // Every sample is held by exactly one rank.
  int64_t held = static_cast<int64_t>(n);
  Check(comm.Allreduce(std::span<int64_t>(&held, 1), comm::ReduceOp::kSum, "svm-setup"));
  TESSEL_CHECK(held == problem.num_samples, "SolveBinaryDistributed: the ranks hold {} samples, the problem has {}",
               held, problem.num_samples);
  DistSolver solver(comm, problem, options);
  return solver.Run(stats);
}

}  // namespace tessel::train::svm
