// SMO for the binary C-SVC dual (LIBSVM's Solver: WSS 2nd order of Fan, Chen, Lin 2005 with TAU = 1e-12,
// shrinking with G_bar reconstruction, rho and objective) with the scans and updates run over row blocks.
#include "svm/smo_solver.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <tuple>
#include <utility>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "core/parallel.h"
#include "core/spin_team.h"
#include "core/target_clones.h"
#include "svm/batch_step.h"
#include "svm/class_rows.h"
#include "svm/kernel_cache.h"
#include "svm/solver_common.h"
#include "svm/wss.h"

namespace tessel::svm {
namespace {

// g[q] += a (y_p y_q) K[uid[q]] for q in [b, e): the signed Q row of SVR_Q (QRowView::At), added without a buffer.
TESSEL_CLONE_AVX2 void AddScaledSignedRow(double* __restrict__ g, const float* __restrict__ k,
                                          const int32_t* __restrict__ uid, const int8_t* __restrict__ y, float yp,
                                          double a, int64_t b, int64_t e) {
  for (int64_t q = b; q < e; ++q) g[q] += a * ((yp * static_cast<float>(y[q])) * k[uid[q]]);
}

// The same where position q's data row is q - base (the regressions' positions before any swap: the a's over rows
// 0 .. l - 1, then the a*'s over the same rows): contiguous, no gather.
TESSEL_CLONE_AVX2 void AddScaledSignedRun(double* __restrict__ g, const float* __restrict__ k,
                                          const int8_t* __restrict__ y, float yp, double a, int64_t base, int64_t b,
                                          int64_t e) {
  for (int64_t q = b; q < e; ++q) g[q] += a * ((yp * static_cast<float>(y[q])) * k[q - base]);
}

// h[u] += c k[u] for u in [b, e): the regressions' G_bar update in distinct-row order (contiguous, no gather).
TESSEL_CLONE_AVX2 void AddScaledRow(double* __restrict__ h, const float* __restrict__ k, double c, int64_t b,
                                    int64_t e) {
  for (int64_t u = b; u < e; ++u) h[u] += c * k[u];
}

class Solver : public SolverCore {
 public:
  Solver(const BinaryProblem& problem, const SolverOptions& options)
      : SolverCore(problem.Cp, problem.Cn, options, static_cast<int64_t>(problem.rows.size())),
        kernel_(*problem.kernel),
        l_(static_cast<int64_t>(problem.rows.size())),
        cache_(l_, options.cache_bytes) {
    CheckBinaryLabels(problem, "SolveBinary");
    perm_.assign(problem.rows.begin(), problem.rows.end());
    sample_.resize(l_);
    for (int64_t s = 0; s < l_; ++s) sample_[s] = static_cast<int32_t>(s);
    s_.Start(problem.y, QDiagonal(kernel_, perm_), problem.p);
    nu_ = problem.nu;
    active_size_ = l_;
    class_rows_ = problem.class_rows;
    if (class_rows_ != nullptr) {
      in_class_.resize(l_);
      for (int64_t s = 0; s < l_; ++s) in_class_[s] = class_rows_->IndexInClass(perm_[s]);
      plus_ones_.assign(l_, 1);
      minus_ones_.assign(l_, -1);
    }
    // A row listed twice (the regressions' a and a*): kernel rows are cached per distinct row (LIBSVM's SVR_Q).
    std::vector<int32_t> uid_of(
        perm_.empty() ? 0 : static_cast<size_t>(*std::max_element(perm_.begin(), perm_.end())) + 1, -1);
    svr_.uid.resize(static_cast<size_t>(l_));
    for (int64_t s = 0; s < l_; ++s) {
      int32_t& u = uid_of[static_cast<size_t>(perm_[s])];
      if (u < 0) {
        u = static_cast<int32_t>(svr_.rows.size());
        svr_.rows.push_back(perm_[s]);
      }
      svr_.uid[s] = u;
    }
    if (static_cast<int64_t>(svr_.rows.size()) < l_ && class_rows_ == nullptr) {
      svr_.cache = std::make_unique<KernelCache>(static_cast<int64_t>(svr_.rows.size()), options.cache_bytes);
      svr_.h.assign(svr_.rows.size(), 0.0);
    } else {
      svr_.uid.clear();
      svr_.rows.clear();
    }
    evals_start_ = kernel_.evaluations();  // the starting gradient's rows count as the solve's
    if (!problem.alpha0.empty()) {
      s_.StartAlpha(problem.alpha0, cp_, cn_);
      InitialGradient();
    }
  }

  SolverResult Run();

  // RunSolverLoop's hooks (solver_common.h): one SMO step per Advance.
  bool Optimal() { return SelectWorkingSet(&i_, &j_); }
  void Shrink() { DoShrinking(); }
  bool AllActive() const { return active_size_ == l_; }
  void Unshrink() {
    ReconstructGradient();
    active_size_ = l_;
  }
  int64_t Advance(int64_t /*limit: at least 1*/) {
    if ((++steps_ & 1023) == 0) interrupt::Check("svm");
    Step(i_, j_);
    return 1;
  }
  void CheckPoint(int64_t done) { Progress(done, false); }

 private:
  const float* GetQ(int64_t pos, int64_t len);
  // pos's Q row over [0, len) as the scans read it: the regressions' data row's kernel row with the positions'
  // data rows (QRowView's uid), else GetQ's row. Valid until two more rows are fetched.
  QRowView RowOf(int64_t pos, int64_t len) {
    if (svr_.cache == nullptr) return GetQ(pos, len);
    return {KernelRowOf(svr_.uid[pos]), svr_.uid.data(), s_.y[pos]};
  }
  const float* KernelRowOf(int64_t u);
  // The regressions' G_bar by distinct row: h += c k (k a distinct row's kernel row).
  void AddToRowGBar(const float* k, double c);
  void SwapIndex(int64_t a, int64_t b);
  void ReconstructGradient();
  bool SelectWorkingSet(int64_t* out_i, int64_t* out_j);
  bool SelectWorkingSetNu(int64_t* out_i, int64_t* out_j);
  // G and G_bar of a starting alpha (LIBSVM's Solve: the Q rows of the samples above their lower bound).
  void InitialGradient();
  void InitialRowGradient();  // ... of the regressions (svr_.cache set)
  // LIBSVM's do_shrinking after its extremes: the unshrink test on `gap`, then the samples be_shrunk(k) picks leave.
  template <class BeShrunkAt>
  void EliminateWhere(double gap, BeShrunkAt be_shrunk);
  bool BeShrunk(int64_t k, double gmax1, double gmax2) const {
    return batch::BeShrunk(s_.y[k], s_.status[k], s_.g[k], gmax1, gmax2);
  }
  void DoShrinking();
  void Step(int64_t i, int64_t j);
  void UpdateGBar(int64_t pos, double c);
  void Progress(int64_t iter, bool force);

  kernels::SvmKernelRows& kernel_;
  int64_t l_;
  KernelCache cache_;

  // Per solver position (LIBSVM's permuted order); perm_ maps a position to its dataset row. LIBSVM's p is -1.
  std::vector<int32_t> perm_;
  std::vector<int32_t> sample_;
  int64_t active_size_ = 0;
  bool nu_ = false;  // Solver_NU (BinaryProblem::nu)
  std::vector<std::pair<int32_t, int32_t>> pending_swaps_;
  std::vector<float> scratch_;  // kernel values of G_bar updates beyond the cached prefix, of GetQ's other class
  ClassRowCache* class_rows_ = nullptr;  // shared own-class rows, or null
  // With class_rows_: each position's index in its class's row (swapped with the positions); per label (0: y = +1,
  // 1: y = -1) its positions in increasing order with their dataset rows and indices (rebuilt after swaps); the
  // other class's constant signs for GetQ.
  std::vector<int32_t> in_class_;
  struct ClassLists {
    std::vector<int32_t> pos[2], rows[2], idx[2];
    bool dirty = true;
  } lists_;
  void RebuildClassLists();
  std::vector<int8_t> plus_ones_;
  std::vector<int8_t> minus_ones_;
  // Rows listed twice (the regressions, svr_.cache set): LIBSVM's SVR_Q.
  struct SvrRows {
    std::vector<int32_t> uid;            // per position: its distinct row (swapped with the positions)
    std::vector<int32_t> rows;           // the distinct rows (dataset rows)
    std::unique_ptr<KernelCache> cache;  // their full kernel rows K(row, rows), keyed by distinct row
    // G_bar by distinct row: G_bar[q] = y_q h[uid[q]] (the two positions of a row get the same terms, negated for
    // y_q = -1, and rounding commutes with negation: LIBSVM's G_bar bit for bit, at half the length and without
    // a gather). s_.g_bar is not used.
    std::vector<double> h;
  } svr_;

  int64_t evals_start_ = 0;  // kernel_.evaluations() before the first Q row
  int64_t i_ = -1;           // the working set Optimal() selected
  int64_t j_ = -1;
  int64_t steps_ = 0;
  Candidate next_i_{-kInf, -1};  // the max violator found while updating the gradient
  NuFirsts next_nu_;             // ... or, with nu_, Solver_NU's two
  bool next_i_valid_ = false;
};

// The kernel row K(svr_.rows[u], svr_.rows) of distinct row u, from the row cache or computed into it.
const float* Solver::KernelRowOf(int64_t u) {
  const auto n = static_cast<int64_t>(svr_.rows.size());
  auto [data, start] = svr_.cache->Get(u, n);
  if (start < n) {
    const auto m = static_cast<size_t>(n - start);
    kernel_.QRow(svr_.rows[static_cast<size_t>(u)], 1,
                 std::span<const int32_t>(svr_.rows).subspan(static_cast<size_t>(start), m), {}, {data + start, m});
  }
  return data;
}

const float* Solver::GetQ(int64_t pos, int64_t len) {
  auto [data, start] = cache_.Get(pos, len);
  if (start < len) {
    const auto n = static_cast<size_t>(len - start);
    const float* own = class_rows_ != nullptr ? class_rows_->OwnClassRow(perm_[pos], kernel_) : nullptr;
    if (own == nullptr) {
      kernel_.QRow(perm_[pos], s_.y[pos], std::span<const int32_t>(perm_).subspan(static_cast<size_t>(start), n),
                   std::span<const int8_t>(s_.y).subspan(static_cast<size_t>(start), n), {data + start, n});
    } else {
      // The positions of pos's class read the shared row (Q = K there); the other class's are computed. Each label's
      // positions, rows and indices in their class come in lists (ClassLists), so no pass sorts the labels per row.
      if (lists_.dirty) RebuildClassLists();
      const int8_t yp = s_.y[pos];
      const int mine = yp > 0 ? 0 : 1;
      const int64_t first = start;  // a structured binding: not captured by a lambda before Clang 16
      const auto range = [&](int label) {
        const std::vector<int32_t>& at = lists_.pos[label];
        return std::pair{std::lower_bound(at.begin(), at.end(), first) - at.begin(),
                         std::lower_bound(at.begin(), at.end(), len) - at.begin()};
      };
      const auto [sb, se] = range(mine);
      const int32_t* same_pos = lists_.pos[mine].data();
      const int32_t* same_idx = lists_.idx[mine].data();
      for (auto k = sb; k < se; ++k) data[same_pos[k]] = own[same_idx[k]];
      const auto [ob, oe] = range(1 - mine);
      if (oe > ob) {
        const auto m = static_cast<size_t>(oe - ob);
        scratch_.resize(m);
        kernel_.QRow(perm_[pos], yp,
                     std::span<const int32_t>(lists_.rows[1 - mine]).subspan(static_cast<size_t>(ob), m),
                     std::span<const int8_t>(yp > 0 ? minus_ones_ : plus_ones_).first(m), scratch_);
        const int32_t* other_pos = lists_.pos[1 - mine].data() + ob;
        for (size_t k = 0; k < m; ++k) data[other_pos[k]] = scratch_[k];
      }
    }
  }
  return data;
}

void Solver::RebuildClassLists() {
  for (int label = 0; label < 2; ++label) {
    lists_.pos[label].clear();
    lists_.rows[label].clear();
    lists_.idx[label].clear();
  }
  for (int64_t q = 0; q < l_; ++q) {
    const int label = s_.y[q] > 0 ? 0 : 1;
    lists_.pos[label].push_back(static_cast<int32_t>(q));
    lists_.rows[label].push_back(perm_[q]);
    lists_.idx[label].push_back(in_class_[q]);
  }
  lists_.dirty = false;
}

void Solver::SwapIndex(int64_t a, int64_t b) {
  if (a == b) return;
  lists_.dirty = true;
  std::swap(perm_[a], perm_[b]);
  std::swap(sample_[a], sample_[b]);
  if (!svr_.uid.empty()) std::swap(svr_.uid[a], svr_.uid[b]);
  s_.Swap(a, b);
  if (!in_class_.empty()) std::swap(in_class_[a], in_class_[b]);
  pending_swaps_.emplace_back(static_cast<int32_t>(a), static_cast<int32_t>(b));
  next_i_valid_ = false;
}

// Rebuilds G for the eliminated positions from G_bar (the bound part) plus the free support vectors.
// Both of LIBSVM's loop orders add the free terms to each G[j] in increasing position order.
void Solver::ReconstructGradient() {
  next_i_valid_ = false;
  if (active_size_ == l_) return;
  ++tally_.reconstructions;
  if (svr_.cache != nullptr) {
    for (int64_t j = active_size_; j < l_; ++j) s_.g[j] = s_.y[j] * svr_.h[svr_.uid[j]] + s_.p[j];
  } else {
    for (int64_t j = active_size_; j < l_; ++j) s_.g[j] = s_.g_bar[j] + s_.p[j];
  }
  int64_t nr_free = 0;
  for (int64_t j = 0; j < active_size_; ++j) nr_free += s_.status[j] == kFree;
  const int64_t active = active_size_;
  const int8_t* y = s_.y.data();
  if (nr_free * l_ > 2 * active * (l_ - active)) {
    for (int64_t i = active; i < l_; ++i) {
      const QRowView q_i = RowOf(i, active);
      double g = s_.g[i];
      for (int64_t j = 0; j < active; ++j)
        if (s_.status[j] == kFree) g += s_.alpha[j] * q_i.At(y, j);
      s_.g[i] = g;
    }
  } else {
    for (int64_t i = 0; i < active; ++i) {
      if (s_.status[i] != kFree) continue;
      const QRowView q_i = RowOf(i, l_);
      const double alpha_i = s_.alpha[i];
      parallel_for<int64_t>(active, l_, kScanGrain, [&](int64_t j) { s_.g[j] += alpha_i * q_i.At(y, j); });
    }
  }
}

// Returns true when the active set is optimal within eps (LIBSVM's select_working_set returning 1).
bool Solver::SelectWorkingSet(int64_t* out_i, int64_t* out_j) {
  if (nu_) return SelectWorkingSetNu(out_i, out_j);
  const int64_t active = active_size_;
  const Candidate first = next_i_valid_ ? next_i_ : MaxViolatorOver(active, s_);
  next_i_valid_ = false;
  const double gmax = first.value;
  const int64_t i = first.index;
  if (i < 0) {  // I_up is empty: gmax = -inf, so the gap is -inf whatever gmax2 is, and no pair violates
    tally_.last_gap = -kInf;
    return true;
  }
  const SecondChoice second = SecondOrderOver(active, s_, RowOf(i, active), gmax, s_.qd[i], 2.0 * s_.y[i]);
  tally_.last_gap = gmax + second.gmax2;
  if (tally_.last_gap < eps_ || second.best.index == -1) return true;
  *out_i = i;
  *out_j = second.best.index;
  return false;
}

// Solver_NU::select_working_set: i is the max violator among the y = +1 samples (ip) or the y = -1 ones (in),
// whichever j's label picks; j the second-order partner with the same label as i.
bool Solver::SelectWorkingSetNu(int64_t* out_i, int64_t* out_j) {
  const int64_t active = active_size_;
  const NuFirsts first = next_i_valid_ ? next_nu_ : NuMaxViolatorsOver(active, s_);
  next_i_valid_ = false;
  const int64_t ip = first.p.index;
  const int64_t in = first.n.index;
  const QRowView q_ip = ip >= 0 ? RowOf(ip, active) : QRowView();
  const QRowView q_in = in >= 0 ? RowOf(in, active) : QRowView();  // the caches keep the two latest rows
  const NuSecondChoice second =
      NuSecondOrderOver(active, s_, first, q_ip, ip >= 0 ? s_.qd[ip] : 0.0, q_in, in >= 0 ? s_.qd[in] : 0.0);
  const int64_t gmin_idx = second.best.index;
  tally_.last_gap = std::max(first.p.value + second.gmaxp2, first.n.value + second.gmaxn2);
  if (tally_.last_gap < eps_ || gmin_idx == -1) return true;
  *out_i = s_.y[gmin_idx] == 1 ? ip : in;
  *out_j = gmin_idx;
  return false;
}

void Solver::AddToRowGBar(const float* k, double c) {
  double* h = svr_.h.data();
  parallel_for_chunks<int64_t>(0, static_cast<int64_t>(svr_.h.size()), kScanGrain,
                               [&](int64_t b, int64_t e) { AddScaledRow(h, k, c, b, e); });
}

// The regressions' G and G_bar of a starting alpha (nu-SVR's: half the variables at C): the kernel rows of up to
// 16 variables at a time, all still cached after the last (KernelCache::RowsThatFit), added block by block of
// positions in variable order, so every G[q] and h[u] gets LIBSVM's terms in LIBSVM's order, with one pass over G
// per batch instead of per variable.
void Solver::InitialRowGradient() {
  double* g = s_.g.data();
  double* h = svr_.h.data();
  // Before any swap, position q is over data row q mod n: the kernel rows are read contiguously.
  const auto n = static_cast<int64_t>(svr_.rows.size());
  bool twins = l_ == 2 * n;
  for (int64_t q = 0; twins && q < l_; ++q) twins = svr_.uid[q] == (q < n ? q : q - n);
  struct Term {
    const float* k;  // the variable's data row's kernel row
    float y;
    double alpha;
    double c;  // c_i y_i for G_bar, 0 below C
  };
  std::vector<Term> terms;
  const auto flush = [&] {
    constexpr int64_t kStrip = 1024;  // positions of G kept in L1 while the batch's rows are added
    parallel_for_chunks<int64_t>(0, l_, kScanGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo; b < hi; b += kStrip) {
        const int64_t e = std::min(hi, b + kStrip);
        for (const Term& t : terms) {  // c_i y_i y_j K = y_j (c_i y_i K): sign changes, exact
          if (!twins) {
            AddScaledSignedRow(g, t.k, svr_.uid.data(), s_.y.data(), t.y, t.alpha, b, e);
            continue;
          }
          AddScaledSignedRun(g, t.k, s_.y.data(), t.y, t.alpha, 0, b, std::min(e, n));
          AddScaledSignedRun(g, t.k, s_.y.data(), t.y, t.alpha, n, std::max(b, n), e);
        }
      }
    });
    parallel_for_chunks<int64_t>(0, n, kScanGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo; b < hi; b += kStrip) {
        const int64_t e = std::min(hi, b + kStrip);
        for (const Term& t : terms)
          if (t.c != 0) AddScaledRow(h, t.k, t.c, b, e);
      }
    });
    terms.clear();
  };
  const int64_t batch = std::min<int64_t>(svr_.cache->RowsThatFit(n), 16);
  for (int64_t i = 0; i < l_; ++i) {
    if (s_.status[i] == kLower) continue;
    const double c = s_.status[i] == kUpper ? C(i) * s_.y[i] : 0.0;
    terms.push_back({KernelRowOf(svr_.uid[i]), static_cast<float>(s_.y[i]), s_.alpha[i], c});
    if (static_cast<int64_t>(terms.size()) == batch) flush();
  }
  flush();
}

void Solver::InitialGradient() {
  if (svr_.cache != nullptr) {
    InitialRowGradient();
    return;
  }
  double* g = s_.g.data();
  for (int64_t i = 0; i < l_; ++i) {
    if (s_.status[i] == kLower) continue;
    const double alpha_i = s_.alpha[i];
    const double c_i = C(i);
    const bool upper = s_.status[i] == kUpper;
    const float* q_i = GetQ(i, l_);
    double* g_bar = s_.g_bar.data();
    parallel_for_chunks<int64_t>(0, l_, kScanGrain, [&](int64_t b, int64_t e) {
      for (int64_t j = b; j < e; ++j) g[j] += alpha_i * q_i[j];
      if (upper)
        for (int64_t j = b; j < e; ++j) g_bar[j] += c_i * q_i[j];
    });
  }
}

void Solver::DoShrinking() {
  ++tally_.shrink_checks;
  if (nu_) {
    NuViolationExtremes ext;
    for (int64_t k = 0; k < active_size_; ++k) ext.Add(s_.y[k], s_.status[k], s_.g[k]);
    EliminateWhere(ext.Gap(), [&](int64_t k) { return ext.BeShrunk(s_.y[k], s_.status[k], s_.g[k]); });
    return;
  }
  ViolationExtremes ext;
  for (int64_t k = 0; k < active_size_; ++k) ext.Add(s_.y[k], s_.status[k], s_.g[k]);
  EliminateWhere(ext.gmax1 + ext.gmax2, [&](int64_t k) { return BeShrunk(k, ext.gmax1, ext.gmax2); });
}

template <class BeShrunkAt>
void Solver::EliminateWhere(double gap, BeShrunkAt be_shrunk) {
  if (schedule_.Unshrink(unshrink_, gap)) {
    unshrink_ = true;
    ReconstructGradient();
    active_size_ = l_;
  }
  EliminateMarked(&active_size_, be_shrunk, [&](int64_t a, int64_t b) { SwapIndex(a, b); });
  cache_.ApplySwaps(pending_swaps_);
  pending_swaps_.clear();
  next_i_valid_ = false;
  tally_.min_active = std::min(tally_.min_active, active_size_);
}

// One SMO step on the pair (i, j): the analytic two-variable update clipped to the box (LIBSVM's order of
// operations), then G over the active set (fused with the next max-violator scan) and G_bar.
void Solver::Step(int64_t i, int64_t j) {
  const int64_t active = active_size_;
  const QRowView q_i = RowOf(i, active);
  const QRowView q_j = RowOf(j, active);
  const double c_i = C(i);
  const double c_j = C(j);
  const double old_alpha_i = s_.alpha[i];
  const double old_alpha_j = s_.alpha[j];
  batch::UpdatePair(s_.y[i], s_.y[j], s_.qd[i], s_.qd[j], q_i.At(s_.y.data(), j), s_.g[i], s_.g[j], c_i, c_j,
                    &s_.alpha[i], &s_.alpha[j]);
  const double d_i = s_.alpha[i] - old_alpha_i;
  const double d_j = s_.alpha[j] - old_alpha_j;
  const bool ui = s_.status[i] == kUpper;
  const bool uj = s_.status[j] == kUpper;
  s_.status[i] = batch::StatusOf(s_.alpha[i], c_i);
  s_.status[j] = batch::StatusOf(s_.alpha[j], c_j);

  if (nu_) {  // Solver_NU's first scan of the new G in the same pass
    next_nu_ = UpdateGradientNuOver(active, &s_, q_i, q_j, d_i, d_j);
  } else {
    next_i_ = UpdateGradientOver(active, &s_, q_i, q_j, d_i, d_j);
  }
  next_i_valid_ = true;

  // G_bar only serves reconstruction, which never happens when nothing is eliminated.
  if (!schedule_.eliminates()) return;
  if (ui != (s_.status[i] == kUpper)) UpdateGBar(i, ui ? -c_i : c_i);
  if (uj != (s_.status[j] == kUpper)) UpdateGBar(j, uj ? -c_j : c_j);
}

// G_bar += c Q_pos over all positions. The cached prefix of the row is used as it is; the rest is computed into
// a scratch row and not cached: a variable that just reached or left C is rarely selected again soon, and a
// full row would evict many active-length rows. The values are the same either way.
void Solver::UpdateGBar(int64_t pos, double c) {
  ++tally_.bound_changes;
  if (svr_.cache != nullptr) {  // SVR_Q: the distinct row's cached kernel row (LIBSVM's get_Q(i, l)), read directly
    const float* k = KernelRowOf(svr_.uid[pos]);
    AddToRowGBar(k, c * s_.y[pos]);  // c y_p y_q K = y_q ((c y_p) K): sign changes, exact
    return;
  }
  const auto [cached, cached_len] = cache_.Peek(pos);
  const int64_t have = cached_len;  // a plain variable: Clang 14 cannot capture a structured binding in a lambda
  const int64_t rest = l_ - have;
  if (rest > 0) {
    scratch_.resize(static_cast<size_t>(rest));
    const auto n = static_cast<size_t>(rest);
    kernel_.QRow(perm_[pos], s_.y[pos], std::span<const int32_t>(perm_).subspan(static_cast<size_t>(have), n),
                 std::span<const int8_t>(s_.y).subspan(static_cast<size_t>(have), n), scratch_);
  }
  AddScaledSplitRow(s_.g_bar.data(), l_, c, cached, have, scratch_.data());
}

void Solver::Progress(int64_t iter, bool force) {
  if (!tally_.LogDue(force)) return;
  log::Info("svm: iter {}, gap {:.6g} (tolerance {:g}), active {}/{}, kernel evaluations {}", iter, tally_.last_gap,
            eps_, active_size_, l_, kernel_.evaluations());
}

SolverResult Solver::Run() {
  const int64_t evals_before = evals_start_;
  tally_.min_active = l_;
  const LoopEnd end = RunSolverLoop(*this, schedule_, max_iter_, "svm");
  Progress(end.iterations, true);

  SolverResult r;
  FillSolution({s_.y, s_.status, s_.alpha, s_.g, sample_, cp_, cn_, s_.p, nu_}, &r);
  tally_.Fill(end.iterations, kernel_.evaluations() - evals_before, end.hit_limit, &r);
  r.cache_hits = svr_.cache != nullptr ? svr_.cache->hits() : cache_.hits();
  r.cache_misses = svr_.cache != nullptr ? svr_.cache->misses() : cache_.misses();
  return r;
}

}  // namespace

void CheckSolverTakes(const SolverTakes& takes, bool formulation) {
  TESSEL_CHECK(!formulation || takes.formulations,
               "{} trains C-SVC only (-s 0: no linear term, starting alpha or nu selection); the other formulations "
               "(-s 1 to 4) run on the CPU with --solver smo or batch, on one process or under mpirun",
               takes.name);
}

SolverResult SolveBinary(const BinaryProblem& problem, const SolverOptions& options) {
  TESSEL_CHECK(problem.kernel != nullptr, "SolveBinary: no kernel");
  TESSEL_CHECK(!problem.rows.empty(), "SolveBinary: no samples");
  const SpinTeamScope team;  // where the process owns its cores (`train svm` in one process): core/spin_team.h
  Solver solver(problem, options);
  return solver.Run();
}

}  // namespace tessel::svm
