// Distributed SMO: LIBSVM's Solver or Solver_NU (WSS 2nd order with TAU = 1e-12, shrinking with G_bar reconstruction,
// rho and objective) with the samples spread over ranks. Per iteration every rank runs the same control flow on global
// values: (1) the max violator i by one max-loc allreduce, (2) i's row broadcast by its owner, (3) the second-order
// partner j and gmax2 by one two-element max-loc allreduce, (4) j's row (and Q_ij) broadcast by its owner, then the
// pair update computed identically everywhere and each rank's gradient updated over its own active samples.
// Ties go to the larger global id, so without elimination the iterations are the one-process solver's exactly.
#include "svm/dist_solver.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <tuple>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/fault_inject.h"
#include "core/log.h"
#include "core/parallel.h"
#include "svm/batch_step.h"
#include "svm/dist_common.h"
#include "svm/elimination.h"
#include "svm/kernel_cache.h"
#include "svm/solver_common.h"
#include "svm/wss.h"

namespace tessel::svm {
namespace {

// Fused selection when all ranks' candidate records together stay within this many bytes: below about
// latency x bandwidth (5 us x 10 Gbit/s = 6 KB) an allgather costs one message latency, as a broadcast does.
constexpr int64_t kFuseBytes = 8192;

using dist::Check;
using dist::Sample;
using dist::SampleHeader;

class DistSolver : public dist::RankSamples {
 public:
  DistSolver(comm::Communicator& comm, const DistBinaryProblem& p, const SolverOptions& options)
      : RankSamples(comm, p, options),
        owner_(p.owner.begin(), p.owner.end()),
        nnz_(p.nnz),
        rebalance_(p.rebalance),
        network_(p.network) {
    const int32_t max_nnz = p.nnz.empty() ? 0 : *std::max_element(p.nnz.begin(), p.nnz.end());
    record_bytes_ = 16 + static_cast<int64_t>(Sample::Bytes(static_cast<size_t>(max_nnz)));
    // Solver_NU's selection takes two maximal violators and so always broadcasts (SelectWorkingSetNu).
    fused_ = !p.nu && (p.fuse > 0 || (p.fuse < 0 && comm.Size() > 1 && comm.Size() * record_bytes_ <= kFuseBytes));
  }

  SolverResult Run(DistStats* stats);

  // RunSolverLoop's hooks (solver_common.h): one SMO step per Advance, every collective inside the hooks, so
  // every rank takes the same branches.
  bool Optimal() { return SelectWorkingSet(&si_, &sj_); }
  void Shrink() { DoShrinking(); }
  bool AllActive() const { return global_active_ == big_l_; }
  void Unshrink() {
    ReconstructGradient();
    SetAllActive();
  }
  int64_t Advance(int64_t /*limit: at least 1*/) {
    Step(si_, sj_);
    if (network_ != nullptr) EndIteration();
    return 1;
  }
  void CheckPoint(int64_t done) {
    (void)fault::FaultPoint("epoch", comm_.Rank());  // a check point; TESSEL_FAULT tests (core/fault_inject.h)
    Progress(done, false);
  }

 private:
  // Writes local position k's header (with q_ij) and row in Sample layout at dst.
  void Pack(int32_t k, double q_ij, std::byte* dst) const;
  // Sends sample gid's header and row from its owner to every rank; q_ij rides along.
  Sample Broadcast(int64_t gid, double q_ij);
  // The fused selection: one allgather of every rank's candidate (value, extra, and the sample itself, gid -1 for
  // none); returns the best value (largest, or smallest when minimising; ties to the larger id) with its sample and
  // the largest extra.
  struct Pick {
    double value = 0;
    double extra = 0;
    Sample s;
  };
  Pick Exchange(double value, double extra, int64_t gid, double q_ij, bool minimise);
  bool SelectWorkingSet(Sample* si, Sample* sj);
  // Solver_NU::select_working_set over the ranks: the two labels' maximal violators by one two-element max-loc
  // allreduce and their owners' broadcasts, then the partner with gmaxp2 and gmaxn2 by one three-element allreduce
  // and the partner's broadcast (with Q_ij from its owner's row of i: the violator of the partner's label).
  bool SelectWorkingSetNu(Sample* si, Sample* sj);
  void Step(const Sample& si, const Sample& sj);
  void DoShrinking();
  // At a check point, with every rank's active count: when the largest exceeds rebalance_ times the mean, the
  // ranks above their share send their last active samples (state and row) to the ranks below it (collective).
  void MaybeRebalance(std::span<const int64_t> counts);
  // This rank's samples become `keep` positions of the current arrays followed, at `at`, by the received ones;
  // with received samples the kernel is rebuilt over the rows now held.
  void Regroup(std::span<const int32_t> keep, int64_t at, std::span<const Sample> received,
               std::span<const double> received_g_bar);
  void Progress(int64_t iter, bool force);
  // The time model (DistStats::predicted_seconds): closes the iteration that began at mark_, and every kFlush
  // iterations (the same on every rank) adds the per-iteration maxima over ranks to predicted_ (collective).
  void EndIteration();
  void FlushIterations();
  // Encodes a candidate's global id so that max-loc's smaller-index rule picks the larger id; -1 (none) last.
  int64_t TieIndex(int64_t gid) const { return gid < 0 ? big_l_ : big_l_ - 1 - gid; }
  int64_t GidOf(int64_t tie_index) const { return tie_index >= big_l_ ? -1 : big_l_ - 1 - tie_index; }
  // A scan's candidate (a local position) with its sample's global id, which the ranks compare (ties to the larger).
  Candidate AsGlobal(Candidate c) const { return {c.value, c.index >= 0 ? gid_[c.index] : -1}; }

  std::vector<int32_t> owner_;  // per global sample: its rank (changed by rebalancing)
  std::span<const int32_t> nnz_;
  double rebalance_;
  // After receiving samples: the rows this rank holds, and the kernel over them.
  dist::RowBlock own_rows_;
  std::unique_ptr<kernels::SvmKernelRows> own_kernel_;
  int64_t rebalances_ = 0;
  int64_t moved_samples_ = 0;

  bool fused_ = false;        // selection by Exchange (one allgather) instead of max-loc + broadcast
  int64_t record_bytes_ = 0;  // Exchange's record: 16 bytes of values and the largest sample
  std::vector<std::byte> exchange_;
  std::vector<float> zeros_;  // the Q row of no sample (SelectWorkingSet without a max violator)
  Sample si_;                 // the working pair of the last selection
  Sample sj_;
  Candidate next_i_{-kInf, -1};  // this rank's max violator (global id in index), from the last gradient update
  bool next_i_valid_ = false;
  uint64_t bytes_start_ = 0;

  static constexpr size_t kFlush = 4096;
  const comm::NetworkModel* network_ = nullptr;
  std::chrono::steady_clock::time_point mark_;  // where the current iteration began
  comm::CallCost mark_cost_;
  std::vector<double> iteration_seconds_;  // this rank's predicted iterations since the last flush
  double predicted_ = 0;                   // the flushed iterations' sum of maxima
  double iterations_wall_ = 0, iterations_calls_ = 0, iterations_modeled_ = 0;  // this rank's, all iterations
};

void DistSolver::Pack(int32_t k, double q_ij, std::byte* dst) const {
  const int32_t n = nnz_[static_cast<size_t>(gid_[k])];
  TESSEL_CHECK(static_cast<int64_t>(kernel_->rows().RowIndices(row_[k]).size()) == n,
               "distributed SVM: sample {} has {} non-zeros here but {} in the shared table", gid_[k],
               kernel_->rows().RowIndices(row_[k]).size(), n);
  SampleHeader h = HeaderOf(k);
  h.q_ij = q_ij;
  dist::PackSample(kernel_->rows(), row_[k], h, dst);
}

Sample DistSolver::Broadcast(int64_t gid, double q_ij) {
  Sample s;
  const auto n = static_cast<size_t>(nnz_[static_cast<size_t>(gid)]);
  s.buffer.assign(Sample::Bytes(n), std::byte{0});
  const int root = owner_[static_cast<size_t>(gid)];
  if (root == comm_.Rank()) {
    const int32_t k = pos_of_[static_cast<size_t>(gid)];
    TESSEL_CHECK(k >= 0, "distributed SVM: rank {} owns sample {} but does not hold it", root, gid);
    Pack(k, q_ij, s.buffer.data());
  }
  Check(comm_.BroadcastRaw(s.buffer.data(), static_cast<int64_t>(s.buffer.size()), root, "svm-rows"));
  std::memcpy(&s.h, s.buffer.data(), sizeof s.h);
  TESSEL_CHECK(s.h.gid == gid && s.h.nnz == static_cast<int32_t>(n),
               "distributed SVM: the broadcast of sample {} carried sample {}", gid, s.h.gid);
  return s;
}

DistSolver::Pick DistSolver::Exchange(double value, double extra, int64_t gid, double q_ij, bool minimise) {
  const auto rec = static_cast<size_t>(record_bytes_);
  std::vector<std::byte> mine(rec, std::byte{0});
  const double prefix[2] = {value, extra};
  std::memcpy(mine.data(), prefix, sizeof prefix);
  if (gid >= 0) {
    Pack(pos_of_[static_cast<size_t>(gid)], q_ij, mine.data() + sizeof prefix);
  } else {
    SampleHeader none;  // gid -1: no candidate on this rank
    std::memcpy(mine.data() + sizeof prefix, &none, sizeof none);
  }
  exchange_.resize(rec * static_cast<size_t>(comm_.Size()));
  Check(comm_.Allgather<std::byte>(mine, exchange_, "svm-select"));
  Pick best;
  best.value = minimise ? kInf : -kInf;
  best.extra = -kInf;
  const std::byte* winner = nullptr;
  for (int r = 0; r < comm_.Size(); ++r) {
    const std::byte* at = exchange_.data() + rec * static_cast<size_t>(r);
    double p[2];
    std::memcpy(p, at, sizeof p);
    SampleHeader h;
    std::memcpy(&h, at + sizeof p, sizeof h);
    best.extra = std::max(best.extra, p[1]);
    if (h.gid < 0) continue;
    const bool better = minimise ? p[0] < best.value : p[0] > best.value;
    if (winner == nullptr || better || (p[0] == best.value && h.gid > best.s.h.gid)) {
      winner = at;
      best.value = p[0];
      best.s.h = h;
    }
  }
  if (winner != nullptr) {
    const size_t n = Sample::Bytes(static_cast<size_t>(best.s.h.nnz));
    TESSEL_CHECK(best.s.h.nnz >= 0 && 16 + n <= rec, "distributed SVM: a malformed candidate record");
    best.s.buffer.assign(winner + 16, winner + 16 + n);
  } else {
    best.s.h.gid = -1;
  }
  return best;
}

// Returns true when the active set is optimal within eps.
bool DistSolver::SelectWorkingSet(Sample* si, Sample* sj) {
  if (nu_) return SelectWorkingSetNu(si, sj);
  const Candidate mine = next_i_valid_ ? next_i_ : AsGlobal(MaxViolatorOver(active_, s_, gid_.data()));
  next_i_valid_ = false;
  double gmax = 0;
  int64_t gid_i = -1;
  if (fused_) {
    Pick pick = Exchange(mine.value, 0, mine.index, 0, false);
    gmax = pick.value;
    gid_i = pick.s.h.gid;
    *si = std::move(pick.s);
  } else {
    comm::ValueIndex<double> first{mine.value, TieIndex(mine.index)};
    Check(comm_.AllreduceMaxLoc(&first, "svm-select"));
    gmax = first.value;
    gid_i = GidOf(first.index);
    if (gid_i >= 0) *si = Broadcast(gid_i, 0);
  }

  // Without a max violator on any rank (gmax = -inf) no b_ij is positive, so no Q entry is read: a row of zeros.
  const float* q_i = nullptr;
  if (gid_i >= 0) {
    q_i = GetQ(*si, active_);
  } else {
    zeros_.assign(static_cast<size_t>(active_), 0.0f);
    q_i = zeros_.data();
  }
  const SecondChoice local = SecondOrderOver(active_, s_, q_i, gmax, gid_i >= 0 ? si->h.qd : 0.0,
                                             gid_i >= 0 ? 2.0 * si->h.y : 0.0, gid_.data());
  const Candidate best = AsGlobal(local.best);  // this rank's partner (global id), ties to the larger
  const double gmax2 = local.gmax2;
  if (fused_) {
    const int32_t kj = best.index >= 0 ? pos_of_[static_cast<size_t>(best.index)] : -1;
    Pick pick = Exchange(best.index >= 0 ? best.value : kInf, gmax2, best.index,
                         kj >= 0 ? static_cast<double>(q_i[kj]) : 0.0, true);
    tally_.last_gap = gmax + pick.extra;
    if (tally_.last_gap < eps_ || pick.s.h.gid < 0) return true;
    *sj = std::move(pick.s);
    return false;
  }
  // One allreduce for both: the partner as max-loc of the negated gain, and gmax2 as a plain maximum.
  comm::ValueIndex<double> pair[2] = {{best.index >= 0 ? -best.value : -kInf, TieIndex(best.index)}, {gmax2, 0}};
  Check(comm_.Allreduce(std::span<comm::ValueIndex<double>>(pair, 2), comm::ReduceOp::kMaxLoc, "svm-select"));
  const int64_t gid_j = GidOf(pair[0].index);
  tally_.last_gap = gmax + pair[1].value;
  if (tally_.last_gap < eps_ || gid_j < 0) return true;
  // The owner of j sends the float Q_ij of its cached row of i with j's row.
  const int32_t kj = pos_of_[static_cast<size_t>(gid_j)];
  *sj = Broadcast(gid_j, kj >= 0 ? static_cast<double>(q_i[kj]) : 0.0);
  return false;
}

bool DistSolver::SelectWorkingSetNu(Sample* si, Sample* sj) {
  next_i_valid_ = false;
  const NuFirsts mine = NuMaxViolatorsOver(active_, s_, gid_.data());
  const Candidate ip = AsGlobal(mine.p);
  const Candidate in = AsGlobal(mine.n);
  comm::ValueIndex<double> firsts[2] = {{ip.value, TieIndex(ip.index)}, {in.value, TieIndex(in.index)}};
  Check(comm_.Allreduce(std::span<comm::ValueIndex<double>>(firsts, 2), comm::ReduceOp::kMaxLoc, "svm-select"));
  NuFirsts global;  // values over all ranks (the indices are not local positions: unused by the second scan)
  global.p.value = firsts[0].value;
  global.n.value = firsts[1].value;
  const int64_t gid_p = GidOf(firsts[0].index);
  const int64_t gid_n = GidOf(firsts[1].index);
  Sample sp;
  Sample sn;
  if (gid_p >= 0) sp = Broadcast(gid_p, 0);
  if (gid_n >= 0) sn = Broadcast(gid_n, 0);
  const float* q_ip = gid_p >= 0 ? GetQ(sp, active_) : nullptr;
  const float* q_in = gid_n >= 0 ? GetQ(sn, active_) : nullptr;  // the cache keeps the two latest rows
  const NuSecondChoice local = NuSecondOrderOver(active_, s_, global, q_ip, sp.h.qd, q_in, sn.h.qd, gid_.data());
  const Candidate best = AsGlobal(local.best);  // the smallest gain, ties to the larger global id
  comm::ValueIndex<double> seconds[3] = {
      {best.index >= 0 ? -best.value : -kInf, TieIndex(best.index)}, {local.gmaxp2, 0}, {local.gmaxn2, 0}};
  Check(comm_.Allreduce(std::span<comm::ValueIndex<double>>(seconds, 3), comm::ReduceOp::kMaxLoc, "svm-select"));
  const int64_t gid_j = GidOf(seconds[0].index);
  tally_.last_gap = std::max(global.p.value + seconds[1].value, global.n.value + seconds[2].value);
  if (tally_.last_gap < eps_ || gid_j < 0) return true;
  // j's owner knows j's label, and so i (the violator of that label), and sends Q_ij from its row of i.
  const int32_t kj = pos_of_[static_cast<size_t>(gid_j)];
  const double q_ij = kj < 0 ? 0.0 : static_cast<double>(s_.y[kj] == 1 ? q_ip[kj] : q_in[kj]);
  *sj = Broadcast(gid_j, q_ij);
  *si = sj->h.y == 1 ? std::move(sp) : std::move(sn);
  TESSEL_CHECK(si->h.gid >= 0, "distributed SVM: partner {} has no violator of its label", gid_j);
  return false;
}

// One SMO step on (i, j), computed identically on every rank; each rank updates its own samples.
void DistSolver::Step(const Sample& si, const Sample& sj) {
  const float* q_i = GetQ(si, active_);
  const float* q_j = GetQ(sj, active_);
  const double c_i = UpperBound(si.h.y);
  const double c_j = UpperBound(sj.h.y);
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
    s_.alpha[k] = a;
    s_.status[k] = batch::StatusOf(a, c);
  }
  if (mirror_ != nullptr) {
    mirror_->alpha[static_cast<size_t>(si.h.gid)] = alpha_i;
    mirror_->alpha[static_cast<size_t>(sj.h.gid)] = alpha_j;
    ++mirror_->steps;
  }

  next_i_ = AsGlobal(UpdateGradientOver(active_, &s_, q_i, q_j, d_i, d_j, gid_.data()));
  next_i_valid_ = true;

  if (!schedule_.eliminates()) return;
  if (ui != (batch::StatusOf(alpha_i, c_i) == kUpper)) UpdateGBar(si, ui ? -c_i : c_i);
  if (uj != (batch::StatusOf(alpha_j, c_j) == kUpper)) UpdateGBar(sj, uj ? -c_j : c_j);
}

void DistSolver::DoShrinking() {
  const std::vector<int64_t> counts = ShrinkRanks();
  next_i_valid_ = false;
  MaybeRebalance(counts);
}

void DistSolver::MaybeRebalance(std::span<const int64_t> counts) {
  const int k = comm_.Size();
  if (k == 1 || rebalance_ <= 0 || global_active_ < k) return;
  const int64_t most = *std::max_element(counts.begin(), counts.end());
  if (static_cast<double>(most) <= rebalance_ * static_cast<double>(global_active_) / k) return;
  // Shares as even as possible; the ranks above theirs give to the ranks below, both in rank order (the same plan
  // on every rank).
  std::vector<int64_t> surplus(static_cast<size_t>(k));
  for (int r = 0; r < k; ++r)
    surplus[static_cast<size_t>(r)] = counts[static_cast<size_t>(r)] - (global_active_ / k + (r < global_active_ % k));
  struct Move {
    int from;
    int to;
    int64_t count;
  };
  std::vector<Move> moves;
  for (int from = 0, to = 0;;) {
    while (from < k && surplus[static_cast<size_t>(from)] <= 0) ++from;
    while (to < k && surplus[static_cast<size_t>(to)] >= 0) ++to;
    if (from == k || to == k) break;
    const int64_t c = std::min(surplus[static_cast<size_t>(from)], -surplus[static_cast<size_t>(to)]);
    moves.push_back({from, to, c});
    surplus[static_cast<size_t>(from)] -= c;
    surplus[static_cast<size_t>(to)] += c;
  }
  if (moves.empty()) return;
  ++rebalances_;
  // A donor sends its last active positions, each record its G_bar then the sample.
  const int me = comm_.Rank();
  int64_t give = 0;
  for (const Move& m : moves)
    if (m.from == me) give += m.count;
  std::vector<std::byte> mine;
  for (int64_t p = active_ - give; p < active_; ++p) {
    const size_t at = mine.size();
    mine.resize(at + sizeof(double));
    std::memcpy(mine.data() + at, &s_.g_bar[p], sizeof(double));
    dist::AppendSample(kernel_->rows(), row_[p], HeaderOf(p), &mine);
  }
  std::vector<std::byte> all;
  std::vector<int64_t> sizes;
  Check(comm_.AllgathervWithCounts<std::byte>(mine, &all, &sizes, "svm-rebalance"));
  // Walk the records in rank order; rank r's go to its moves in order.
  std::vector<Sample> received;
  std::vector<double> received_g_bar;
  size_t at = 0;
  for (int r = 0; r < k; ++r) {
    const size_t end = at + static_cast<size_t>(sizes[static_cast<size_t>(r)]);
    for (const Move& m : moves) {
      if (m.from != r) continue;
      for (int64_t t = 0; t < m.count; ++t) {
        TESSEL_CHECK(at + sizeof(double) <= end, "distributed SVM: rank {} sent too few samples to rebalance", r);
        double g_bar = 0;
        std::memcpy(&g_bar, all.data() + at, sizeof g_bar);
        at += sizeof g_bar;
        TESSEL_CHECK(at + sizeof(SampleHeader) <= end, "distributed SVM: a truncated sample record from rank {}", r);
        SampleHeader h;
        std::memcpy(&h, all.data() + at, sizeof h);
        TESSEL_CHECK(h.gid >= 0 && h.gid < big_l_ && h.nnz == nnz_[static_cast<size_t>(h.gid)],
                     "distributed SVM: a malformed sample record from rank {}", r);
        const size_t bytes = Sample::Bytes(static_cast<size_t>(h.nnz));
        TESSEL_CHECK(at + bytes <= end, "distributed SVM: a truncated sample record from rank {}", r);
        owner_[static_cast<size_t>(h.gid)] = m.to;
        if (m.to == me) {
          Sample s;
          s.h = h;
          s.buffer.assign(all.begin() + static_cast<std::ptrdiff_t>(at),
                          all.begin() + static_cast<std::ptrdiff_t>(at + bytes));
          received.push_back(std::move(s));
          received_g_bar.push_back(g_bar);
        }
        at += bytes;
        moved_samples_ += 1;
      }
    }
    TESSEL_CHECK(at == end, "distributed SVM: rank {} sent {} bytes to rebalance, not what the plan needs", r,
                 sizes[static_cast<size_t>(r)]);
  }
  if (give == 0 && received.empty()) return;
  // Donors drop their last `give` active positions; receivers put the new samples after their active ones.
  std::vector<int32_t> keep;
  keep.reserve(static_cast<size_t>(n_ - give));
  for (int64_t p = 0; p < n_; ++p)
    if (p < active_ - give || p >= active_) keep.push_back(static_cast<int32_t>(p));
  Regroup(keep, active_ - give, received, received_g_bar);
}

void DistSolver::Regroup(std::span<const int32_t> keep, int64_t at, std::span<const Sample> received,
                         std::span<const double> received_g_bar) {
  const auto n = static_cast<int64_t>(keep.size() + received.size());
  std::vector<int32_t> row(static_cast<size_t>(n));
  std::vector<int64_t> gid(static_cast<size_t>(n));
  std::vector<int8_t> y(static_cast<size_t>(n));
  std::vector<double> qd(static_cast<size_t>(n));
  std::vector<double> lin(static_cast<size_t>(n));
  std::vector<double> alpha(static_cast<size_t>(n));
  std::vector<int8_t> status(static_cast<size_t>(n));
  std::vector<double> g(static_cast<size_t>(n));
  std::vector<double> g_bar(static_cast<size_t>(n));
  // New position q: kept positions before `at`, then the received samples, then the other kept positions.
  std::vector<int64_t> source(static_cast<size_t>(n));  // >= 0: old position; < 0: received sample -1 - index
  {
    size_t q = 0;
    size_t kk = 0;
    for (; kk < keep.size() && keep[kk] < at; ++kk) source[q++] = keep[kk];
    for (size_t t = 0; t < received.size(); ++t) source[q++] = -1 - static_cast<int64_t>(t);
    for (; kk < keep.size(); ++kk) source[q++] = keep[kk];
  }
  for (int64_t q = 0; q < n; ++q) {
    const int64_t src = source[static_cast<size_t>(q)];
    if (src >= 0) {
      row[q] = row_[src];
      gid[q] = gid_[src];
      y[q] = s_.y[src];
      qd[q] = s_.qd[src];
      lin[q] = s_.p[src];
      alpha[q] = s_.alpha[src];
      status[q] = s_.status[src];
      g[q] = s_.g[src];
      g_bar[q] = s_.g_bar[src];
    } else {
      const auto t = static_cast<size_t>(-1 - src);
      const SampleHeader& h = received[t].h;
      gid[q] = h.gid;
      y[q] = h.y;
      qd[q] = h.qd;
      lin[q] = h.p;
      alpha[q] = h.alpha;
      status[q] = batch::StatusOf(h.alpha, UpperBound(h.y));
      g[q] = h.g;
      g_bar[q] = received_g_bar[t];
    }
  }
  if (!received.empty()) {
    // The rows now held, in position order, and a kernel over them (same parameters and bit-row choice).
    dist::RowBlock held;
    for (int64_t q = 0; q < n; ++q) {
      const int64_t src = source[static_cast<size_t>(q)];
      std::span<const int32_t> idx;
      std::span<const double> val;
      if (src >= 0) {
        idx = kernel_->rows().RowIndices(row_[src]);
        val = kernel_->rows().RowValues(row_[src]);
      } else {
        const auto ext = received[static_cast<size_t>(-1 - src)].Row();
        idx = ext.indices;
        val = ext.values;
      }
      held.Append(idx, val);
      row[q] = static_cast<int32_t>(q);
    }
    auto fresh = std::make_unique<kernels::SvmKernelRows>(held.View(kernel_->rows().num_cols), kernel_->params(),
                                                          kernel_->binary());
    retired_evaluations_ += kernel_->evaluations() - evaluations_base_;
    own_rows_ = std::move(held);  // moving keeps the buffers the new kernel views
    own_kernel_ = std::move(fresh);
    kernel_ = own_kernel_.get();
    evaluations_base_ = 0;
  }
  for (int64_t p = 0; p < n_; ++p) pos_of_[static_cast<size_t>(gid_[p])] = -1;
  row_ = std::move(row);
  gid_ = std::move(gid);
  s_.y = std::move(y);
  s_.qd = std::move(qd);
  s_.NoteDiagonal();
  s_.p = std::move(lin);
  s_.alpha = std::move(alpha);
  s_.status = std::move(status);
  s_.g = std::move(g);
  s_.g_bar = std::move(g_bar);
  active_ = at + static_cast<int64_t>(received.size());
  n_ = n;
  for (int64_t p = 0; p < n_; ++p) pos_of_[static_cast<size_t>(gid_[p])] = static_cast<int32_t>(p);
  // Positions moved: the cached rows no longer match them.
  retired_hits_ += cache_.hits();
  retired_misses_ += cache_.misses();
  cache_ = KernelCache(big_l_, cache_bytes_);
  next_i_valid_ = false;
}

void DistSolver::EndIteration() {
  const auto now = std::chrono::steady_clock::now();
  const comm::CallCost calls = comm_.Bytes().TotalCost().Since(mark_cost_);
  const double wall = std::chrono::duration<double>(now - mark_).count();
  const double modeled = calls.modeled;  // the network attached to the counter (TrainSvmDistributed)
  iteration_seconds_.push_back(wall - calls.seconds + modeled);
  iterations_wall_ += wall;
  iterations_calls_ += calls.seconds;
  iterations_modeled_ += modeled;
  if (iteration_seconds_.size() == kFlush) FlushIterations();
  mark_ = std::chrono::steady_clock::now();
  mark_cost_ = comm_.Bytes().TotalCost();
}

void DistSolver::FlushIterations() {
  Check(comm_.Allreduce(std::span<double>(iteration_seconds_), comm::ReduceOp::kMax, "svm-result"));
  for (const double v : iteration_seconds_) predicted_ += v;
  iteration_seconds_.clear();
}

void DistSolver::Progress(int64_t iter, bool force) {
  if (!tally_.LogDue(force)) return;
  const auto sent = static_cast<double>(comm_.Bytes().Total() - bytes_start_);
  log::Info("svm: iter {}, gap {:.6g} (tolerance {:g}), active {}/{} over {} ranks, {:.0f} bytes sent per iteration",
            iter, tally_.last_gap, eps_, global_active_, big_l_, comm_.Size(),
            iter > 0 ? sent / static_cast<double>(iter) : 0.0);
}

SolverResult DistSolver::Run(DistStats* stats) {
  const comm::ByteCounter bytes_before = comm_.Bytes();
  bytes_start_ = bytes_before.Total();
  const auto t0 = std::chrono::steady_clock::now();
  mark_ = t0;
  mark_cost_ = bytes_before.TotalCost();
  const LoopEnd end = RunSolverLoop(*this, schedule_, max_iter_, "svm");
  Progress(end.iterations, true);

  SolverResult r = FinishSolve(end.iterations, end.hit_limit, 0, bytes_before, stats);
  if (network_ != nullptr) {
    // What lies outside the iterations (set-up, the last selection, the end of the solve) with its calls re-timed,
    // the slowest rank's; and the measured solve, the slowest rank's.
    FlushIterations();
    const comm::CallCost all = comm_.Bytes().TotalCost().Since(bytes_before.TotalCost());
    const double solve = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double rest[2] = {
        (solve - iterations_wall_) - (all.seconds - iterations_calls_) + (all.modeled - iterations_modeled_), solve};
    Check(comm_.Allreduce(std::span<double>(rest, 2), comm::ReduceOp::kMax, "svm-result"));
    if (stats != nullptr) {
      stats->predicted_seconds = predicted_ + rest[0];
      stats->solve_seconds = rest[1];
    }
  }
  if (stats != nullptr) {
    stats->rebalances = rebalances_;
    stats->moved_samples = moved_samples_;
  }
  return r;
}

}  // namespace

SolverResult SolveBinaryDistributed(comm::Communicator& comm, const DistBinaryProblem& problem,
                                    const SolverOptions& options, DistStats* stats) {
  dist::ValidateDistProblem(comm, problem);
  DistSolver solver(comm, problem, options);
  return solver.Run(stats);
}

}  // namespace tessel::svm
