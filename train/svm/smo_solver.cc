// SMO for the binary C-SVC dual (LIBSVM's Solver: WSS 2nd order of Fan, Chen, Lin 2005 with TAU = 1e-12,
// shrinking with G_bar reconstruction, rho and objective) with the scans and updates run over row blocks.
#include "train/svm/smo_solver.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "core/parallel.h"
#include "train/svm/batch_step.h"
#include "train/svm/kernel_cache.h"
#include "train/svm/solver_common.h"

namespace tessel::train::svm {
namespace {

using batch::kFree;
using batch::kLower;
using batch::kUpper;

constexpr double kInf = std::numeric_limits<double>::infinity();
class Solver {
 public:
  Solver(const BinaryProblem& problem, const SolverOptions& options)
      : kernel_(*problem.kernel),
        l_(static_cast<int64_t>(problem.rows.size())),
        cp_(problem.Cp),
        cn_(problem.Cn),
        eps_(options.eps),
        schedule_(options.shrinking, l_, options.eps),
        cache_(l_, options.cache_bytes),
        max_iter_(MaxIterations(options.max_iterations, l_)) {
    CheckBinaryLabels(problem, "SolveBinary");
    perm_.assign(problem.rows.begin(), problem.rows.end());
    y_.assign(problem.y.begin(), problem.y.end());
    sample_.resize(l_);
    for (int64_t s = 0; s < l_; ++s) sample_[s] = static_cast<int32_t>(s);
    qd_ = QDiagonal(kernel_, perm_);
    alpha_.assign(l_, 0.0);
    status_.assign(l_, kLower);
    g_.assign(l_, -1.0);
    g_bar_.assign(l_, 0.0);
    active_size_ = l_;
  }

  SolverResult Run();

 private:
  double C(int64_t k) const { return y_[k] > 0 ? cp_ : cn_; }
  const float* GetQ(int64_t pos, int64_t len);
  void SwapIndex(int64_t a, int64_t b);
  void ReconstructGradient();
  Candidate MaxViolator(int64_t begin, int64_t end) const;
  bool SelectWorkingSet(int64_t* out_i, int64_t* out_j);
  bool BeShrunk(int64_t k, double gmax1, double gmax2) const {
    return batch::BeShrunk(y_[k], status_[k], g_[k], gmax1, gmax2);
  }
  void DoShrinking();
  void Step(int64_t i, int64_t j);
  void UpdateGBar(int64_t pos, double c);
  void Progress(int64_t iter, bool force);

  kernels::SvmKernelRows& kernel_;
  int64_t l_;
  double cp_;
  double cn_;
  double eps_;
  EliminationSchedule schedule_;
  KernelCache cache_;
  int64_t max_iter_;

  // Per solver position (LIBSVM's permuted order); perm_ maps a position to its dataset row. LIBSVM's p is -1.
  std::vector<int32_t> perm_;
  std::vector<int32_t> sample_;
  std::vector<int8_t> y_;
  std::vector<double> qd_;
  std::vector<double> alpha_;
  std::vector<int8_t> status_;
  std::vector<double> g_;
  std::vector<double> g_bar_;
  int64_t active_size_ = 0;
  bool unshrink_ = false;
  std::vector<std::pair<int32_t, int32_t>> pending_swaps_;
  std::vector<float> scratch_;  // kernel values of G_bar updates beyond the cached prefix

  Candidate next_i_{-kInf, -1};  // the max violator found while updating the gradient
  bool next_i_valid_ = false;
  SolverTally tally_;
};

const float* Solver::GetQ(int64_t pos, int64_t len) {
  auto [data, start] = cache_.Get(pos, len);
  if (start < len) {
    const auto n = static_cast<size_t>(len - start);
    kernel_.QRow(perm_[pos], y_[pos], std::span<const int32_t>(perm_).subspan(static_cast<size_t>(start), n),
                 std::span<const int8_t>(y_).subspan(static_cast<size_t>(start), n), {data + start, n});
  }
  return data;
}

void Solver::SwapIndex(int64_t a, int64_t b) {
  if (a == b) return;
  std::swap(perm_[a], perm_[b]);
  std::swap(sample_[a], sample_[b]);
  std::swap(y_[a], y_[b]);
  std::swap(qd_[a], qd_[b]);
  std::swap(alpha_[a], alpha_[b]);
  std::swap(status_[a], status_[b]);
  std::swap(g_[a], g_[b]);
  std::swap(g_bar_[a], g_bar_[b]);
  pending_swaps_.emplace_back(static_cast<int32_t>(a), static_cast<int32_t>(b));
  next_i_valid_ = false;
}

// Rebuilds G for the eliminated positions from G_bar (the bound part) plus the free support vectors.
// Both of LIBSVM's loop orders add the free terms to each G[j] in increasing position order.
void Solver::ReconstructGradient() {
  next_i_valid_ = false;
  if (active_size_ == l_) return;
  ++tally_.reconstructions;
  for (int64_t j = active_size_; j < l_; ++j) g_[j] = g_bar_[j] - 1.0;
  int64_t nr_free = 0;
  for (int64_t j = 0; j < active_size_; ++j) nr_free += status_[j] == kFree;
  const int64_t active = active_size_;
  if (nr_free * l_ > 2 * active * (l_ - active)) {
    for (int64_t i = active; i < l_; ++i) {
      const float* q_i = GetQ(i, active);
      double g = g_[i];
      for (int64_t j = 0; j < active; ++j)
        if (status_[j] == kFree) g += alpha_[j] * q_i[j];
      g_[i] = g;
    }
  } else {
    for (int64_t i = 0; i < active; ++i) {
      if (status_[i] != kFree) continue;
      const float* q_i = GetQ(i, l_);
      const double alpha_i = alpha_[i];
      parallel_for<int64_t>(active, l_, kScanGrain, [&](int64_t j) { g_[j] += alpha_i * q_i[j]; });
    }
  }
}

Candidate Solver::MaxViolator(int64_t begin, int64_t end) const {
  Candidate c{-kInf, -1};
  for (int64_t t = begin; t < end; ++t) {
    if (!batch::InUp(y_[t], status_[t])) continue;
    const double v = y_[t] == 1 ? -g_[t] : g_[t];  // -y G
    if (v >= c.value) c = {v, t};
  }
  return c;
}

// Returns true when the active set is optimal within eps (LIBSVM's select_working_set returning 1).
bool Solver::SelectWorkingSet(int64_t* out_i, int64_t* out_j) {
  const int64_t active = active_size_;
  const auto fold_max = [](const Candidate& r, const Candidate& p) {
    return p.index >= 0 && p.value >= r.value ? p : r;
  };
  const Candidate first = next_i_valid_ ? next_i_
                                        : BlockReduce<Candidate>(
                                              active, Candidate{-kInf, -1},
                                              [&](int64_t b, int64_t e) { return MaxViolator(b, e); }, fold_max);
  next_i_valid_ = false;
  const double gmax = first.value;
  const int64_t i = first.index;
  const float* q_i = i >= 0 ? GetQ(i, active) : nullptr;
  const double qd_i = i >= 0 ? qd_[i] : 0.0;
  const double yi2 = i >= 0 ? 2.0 * y_[i] : 0.0;

  struct Second {
    Candidate best;
    double gmax2;
  };
  const Second second = BlockReduce<Second>(
      active, Second{{kInf, -1}, -kInf},
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
          if (obj_diff <= s.best.value) s.best = {obj_diff, j};
        }
        return s;
      },
      [](const Second& r, const Second& p) {
        Second out = r;
        if (p.best.index >= 0 && p.best.value <= r.best.value) out.best = p.best;
        out.gmax2 = std::max(r.gmax2, p.gmax2);
        return out;
      });
  tally_.last_gap = gmax + second.gmax2;
  if (tally_.last_gap < eps_ || second.best.index == -1) return true;
  *out_i = i;
  *out_j = second.best.index;
  return false;
}

void Solver::DoShrinking() {
  ++tally_.shrink_checks;
  ViolationExtremes ext;
  for (int64_t k = 0; k < active_size_; ++k) ext.Add(y_[k], status_[k], g_[k]);
  const double gmax1 = ext.gmax1;
  const double gmax2 = ext.gmax2;
  if (schedule_.Unshrink(unshrink_, gmax1 + gmax2)) {
    unshrink_ = true;
    ReconstructGradient();
    active_size_ = l_;
  }
  for (int64_t k = 0; k < active_size_; ++k) {
    if (!BeShrunk(k, gmax1, gmax2)) continue;
    --active_size_;
    while (active_size_ > k) {
      if (!BeShrunk(active_size_, gmax1, gmax2)) {
        SwapIndex(k, active_size_);
        break;
      }
      --active_size_;
    }
  }
  cache_.ApplySwaps(pending_swaps_);
  pending_swaps_.clear();
  next_i_valid_ = false;
  tally_.min_active = std::min(tally_.min_active, active_size_);
}

// One SMO step on the pair (i, j): the analytic two-variable update clipped to the box (LIBSVM's order of
// operations), then G over the active set (fused with the next max-violator scan) and G_bar.
void Solver::Step(int64_t i, int64_t j) {
  const int64_t active = active_size_;
  const float* q_i = GetQ(i, active);
  const float* q_j = GetQ(j, active);
  const double c_i = C(i);
  const double c_j = C(j);
  const double old_alpha_i = alpha_[i];
  const double old_alpha_j = alpha_[j];
  batch::UpdatePair(y_[i], y_[j], qd_[i], qd_[j], q_i[j], g_[i], g_[j], c_i, c_j, &alpha_[i], &alpha_[j]);
  const double d_i = alpha_[i] - old_alpha_i;
  const double d_j = alpha_[j] - old_alpha_j;
  const bool ui = status_[i] == kUpper;
  const bool uj = status_[j] == kUpper;
  status_[i] = batch::StatusOf(alpha_[i], c_i);
  status_[j] = batch::StatusOf(alpha_[j], c_j);

  const auto fold_max = [](const Candidate& r, const Candidate& p) {
    return p.index >= 0 && p.value >= r.value ? p : r;
  };
  next_i_ = BlockReduce<Candidate>(
      active, Candidate{-kInf, -1},
      [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) g_[k] += q_i[k] * d_i + q_j[k] * d_j;
        return MaxViolator(b, e);
      },
      fold_max);
  next_i_valid_ = true;

  // G_bar only serves reconstruction, which never happens when nothing is eliminated.
  if (!schedule_.eliminates()) return;
  if (ui != (status_[i] == kUpper)) UpdateGBar(i, ui ? -c_i : c_i);
  if (uj != (status_[j] == kUpper)) UpdateGBar(j, uj ? -c_j : c_j);
}

// G_bar += c Q_pos over all positions. The cached prefix of the row is used as it is; the rest is computed into
// a scratch row and not cached: a variable that just reached or left C is rarely selected again soon, and a
// full row would evict many active-length rows. The values are the same either way.
void Solver::UpdateGBar(int64_t pos, double c) {
  ++tally_.bound_changes;
  const auto [cached, cached_len] = cache_.Peek(pos);
  const int64_t have = cached_len;  // a plain variable: Clang 14 cannot capture a structured binding in a lambda
  const int64_t rest = l_ - have;
  if (rest > 0) {
    scratch_.resize(static_cast<size_t>(rest));
    const auto n = static_cast<size_t>(rest);
    kernel_.QRow(perm_[pos], y_[pos], std::span<const int32_t>(perm_).subspan(static_cast<size_t>(have), n),
                 std::span<const int8_t>(y_).subspan(static_cast<size_t>(have), n), scratch_);
  }
  AddScaledSplitRow(g_bar_.data(), l_, c, cached, have, scratch_.data());
}

void Solver::Progress(int64_t iter, bool force) {
  if (!tally_.LogDue(force)) return;
  log::Info("svm: iter {}, gap {:.6g} (tolerance {:g}), active {}/{}, kernel evaluations {}", iter, tally_.last_gap,
            eps_, active_size_, l_, kernel_.evaluations());
}

SolverResult Solver::Run() {
  const int64_t evals_before = kernel_.evaluations();
  tally_.min_active = l_;
  int64_t iter = 0;
  int64_t since = 0;  // iterations since the last check point of the elimination schedule
  bool hit_limit = false;
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
    int64_t i = -1;
    int64_t j = -1;
    if (SelectWorkingSet(&i, &j)) {
      ReconstructGradient();
      active_size_ = l_;
      if (SelectWorkingSet(&i, &j)) break;
      since = schedule_.period();  // eliminate again at the next iteration
    }
    ++iter;
    ++since;
    if ((iter & 1023) == 0) interrupt::Check("svm");
    Step(i, j);
  }
  if (hit_limit) {
    if (active_size_ < l_) {
      ReconstructGradient();
      active_size_ = l_;
    }
    log::Warn("svm: reached the iteration limit ({}) before the gap fell under eps; the model may be inaccurate",
              max_iter_);
  }
  Progress(iter, true);

  SolverResult r;
  FillSolution({y_, status_, alpha_, g_, sample_, cp_, cn_}, &r);
  tally_.Fill(iter, kernel_.evaluations() - evals_before, hit_limit, &r);
  r.cache_hits = cache_.hits();
  r.cache_misses = cache_.misses();
  return r;
}

}  // namespace

SolverResult SolveBinary(const BinaryProblem& problem, const SolverOptions& options) {
  TESSEL_CHECK(problem.kernel != nullptr, "SolveBinary: no kernel");
  TESSEL_CHECK(!problem.rows.empty(), "SolveBinary: no samples");
  Solver solver(problem, options);
  return solver.Run();
}

}  // namespace tessel::train::svm
