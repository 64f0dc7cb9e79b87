// Host-side pieces shared by the C-SVC dual solvers (smo_solver.cc, batch_solver.cc): setup checks, LIBSVM's
// violation extremes for elimination, rho and objective (Chang, Lin, "LIBSVM", TIST 2011), and result filling.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/log.h"
#include "core/parallel.h"
#include "core/spin_team.h"
#include "kernels/svm_kernel.h"
#include "svm/batch_step.h"
#include "svm/elimination.h"
#include "svm/smo_solver.h"

namespace tessel::svm {

// The solvers' vocabulary: a sample's bound status and the index sets of LIBSVM's selection (batch_step.h).
using batch::InLow;
using batch::InUp;
using batch::kFree;
using batch::kLower;
using batch::kUpper;
inline constexpr double kInf = std::numeric_limits<double>::infinity();

inline constexpr int64_t kScanGrain = 4096;  // positions per block in the parallel scans
inline constexpr int64_t kMaxScanBlocks = 64;
// Shorter scans (an SMO step's, over an active set of a few thousand) still split into up to kSmallScanBlocks blocks
// of at least kMinScanBlock positions: run serially they were half of an iteration that the second core could share.
inline constexpr int64_t kMinScanBlock = 1024;
inline constexpr int64_t kSmallScanBlocks = 4;

// The per-sample state every solver keeps (SMO, batched, the ranks' distributed solvers), indexed by the solver's
// position (LIBSVM's permuted order): the label, Q's diagonal, the linear term p, alpha, the bound status, G and
// G_bar. LIBSVM's dual is min_a 0.5 a^T Q a + p^T a subject to y^T a = const and 0 <= a_i <= C_i; C-SVC has
// p = -1 and alpha 0 at the start, the other formulations their own p and starting alpha (svm_train.cc,
// svm_train_one.cc).
struct SampleState {
  std::vector<int8_t> y;
  std::vector<double> qd;
  std::vector<double> p;
  std::vector<double> alpha;
  std::vector<int8_t> status;
  std::vector<double> g;
  std::vector<double> g_bar;
  // Q_ii of every sample when they are all equal (an RBF kernel's 1), else NaN: the second-order scan then reads no
  // qd. Set by Start, and by NoteDiagonal after qd is assigned directly.
  double qd_uniform = std::numeric_limits<double>::quiet_NaN();

  void NoteDiagonal() {
    const bool same = !qd.empty() && std::all_of(qd.begin(), qd.end(), [&](double v) { return v == qd[0]; });
    qd_uniform = same ? qd[0] : std::numeric_limits<double>::quiet_NaN();
  }

  // LIBSVM's start with alpha 0: every sample at its lower bound, G = p, G_bar 0. `linear` empty: p = -1 (C-SVC).
  void Start(std::span<const int8_t> labels, std::vector<double> diagonal, std::span<const double> linear = {}) {
    const size_t n = labels.size();
    TESSEL_CHECK(diagonal.size() == n, "SampleState: {} diagonal entries for {} samples", diagonal.size(), n);
    TESSEL_CHECK(linear.empty() || linear.size() == n, "SampleState: {} linear terms for {} samples", linear.size(), n);
    y.assign(labels.begin(), labels.end());
    qd = std::move(diagonal);
    NoteDiagonal();
    if (linear.empty()) {
      p.assign(n, -1.0);
    } else {
      p.assign(linear.begin(), linear.end());
    }
    alpha.assign(n, 0.0);
    status.assign(n, batch::kLower);
    g = p;
    g_bar.assign(n, 0.0);
  }
  // Sets the starting alpha (a, not y a) and each sample's bound status; G and G_bar then need the Q rows of the
  // samples above their lower bound (the solver's InitialGradient).
  void StartAlpha(std::span<const double> a, double cp, double cn) {
    TESSEL_CHECK(a.size() == alpha.size(), "SampleState: {} starting alphas for {} samples", a.size(), alpha.size());
    for (size_t k = 0; k < a.size(); ++k) {
      const double c = y[k] > 0 ? cp : cn;
      TESSEL_CHECK(a[k] >= 0 && a[k] <= c, "SampleState: starting alpha {} of sample {} is outside [0, {}]", a[k], k,
                   c);
      alpha[k] = a[k];
      status[k] = batch::StatusOf(a[k], c);
    }
  }
  // Positions a and b exchange their samples' state.
  void Swap(int64_t a, int64_t b) {
    std::swap(y[a], y[b]);
    std::swap(qd[a], qd[b]);
    std::swap(p[a], p[b]);
    std::swap(alpha[a], alpha[b]);
    std::swap(status[a], status[b]);
    std::swap(g[a], g[b]);
    std::swap(g_bar[a], g_bar[b]);
  }
};

// How LIBSVM's outer loop ended (RunSolverLoop): the iterations done, and whether the limit stopped it.
struct LoopEnd {
  int64_t iterations = 0;
  bool hit_limit = false;
};

// LIBSVM's outer loop (Solver::Solve), written once for the one-process solvers (SMO, batched, the device loop):
// the elimination schedule's check points, a selection, on optimality with samples eliminated one unshrink and a
// second selection, and the iteration limit (after which every sample is active again). `s` provides
//   bool Optimal();                  selects a working set; true when the active set is optimal within eps
//   double Gap() const;              the last selection's gap (what the schedule's check points read)
//   void Shrink();                   eliminates, at a check point the schedule takes (LIBSVM's do_shrinking)
//   bool AllActive() const;
//   void Unshrink();                 G reconstructed, every sample active again
//   int64_t Advance(int64_t limit);  one SMO step or one batched round of at most `limit` iterations: those taken
//   void CheckPoint(int64_t done);   after each check point (progress lines)
// The distributed solvers run every collective inside the hooks, so every rank takes the same branches. Hitting
// the limit is logged as a warning, `who` naming the solver.
template <class S>
LoopEnd RunSolverLoop(S& s, const EliminationSchedule& schedule, int64_t max_iterations, const char* who) {
  LoopEnd end;
  int64_t since = 0;  // iterations since the last check point of the schedule
  while (true) {
    if (end.iterations >= max_iterations) {
      end.hit_limit = true;
      break;
    }
    if (schedule.Due(since)) {
      since = 0;
      if (schedule.CheckNow(s.Gap())) s.Shrink();
      s.CheckPoint(end.iterations);
    }
    if (s.Optimal()) {
      if (s.AllActive()) break;
      s.Unshrink();
      if (s.Optimal()) break;
      since = schedule.period();  // eliminate again at the next iteration
    }
    const int64_t taken = s.Advance(max_iterations - end.iterations);
    end.iterations += taken;
    since += taken;
  }
  if (end.hit_limit) {
    if (!s.AllActive()) s.Unshrink();
    log::Warn("{}: reached the iteration limit ({}) before the gap fell under eps; the model may be inaccurate", who,
              max_iterations);
  }
  return end;
}

// A (value, position) candidate of a working-set scan.
struct Candidate {
  double value;
  int64_t index;
};

// Runs fn(begin, end) -> R over contiguous blocks of [0, n) in parallel and folds the results in block order (so a
// fold that prefers the later operand on ties picks the larger position, as LIBSVM's serial ">=" / "<=" scans do).
template <typename R, typename Fn, typename Fold>
R BlockReduce(int64_t n, R init, Fn fn, Fold fold) {
  const int64_t least = std::clamp<int64_t>(n / kMinScanBlock, 1, kSmallScanBlocks);
  int64_t blocks = std::clamp<int64_t>(n / kScanGrain, least, kMaxScanBlocks);
  if (blocks == 1) return fn(int64_t{0}, n);
  if (const SpinTeam* team = SpinTeam::Current()) {  // as many blocks to each member
    blocks = (blocks + team->size() - 1) / team->size() * team->size();
  }
  std::vector<R> parts(static_cast<size_t>(blocks), init);
  parallel_for<int64_t>(0, blocks, 1, [&](int64_t b) { parts[b] = fn(n * b / blocks, n * (b + 1) / blocks); });
  R r = init;
  for (const R& p : parts) r = fold(r, p);
  return r;
}

// Throws unless there is one label per sample and every label is +1 or -1; `who` names the solver.
inline void CheckBinaryLabels(const BinaryProblem& problem, const char* who) {
  TESSEL_CHECK(problem.y.size() == problem.rows.size(), "{}: {} labels for {} samples", who, problem.y.size(),
               problem.rows.size());
  for (size_t s = 0; s < problem.y.size(); ++s)
    TESSEL_CHECK(problem.y[s] == 1 || problem.y[s] == -1, "{}: label {} of sample {} is not +1 or -1", who,
                 problem.y[s], s);
}

// Throws unless the solver `takes` the problem: a kernel, and the formulation (CheckSolverTakes).
inline void CheckBatchedProblem(const BinaryProblem& problem, const SolverTakes& takes) {
  TESSEL_CHECK(problem.kernel != nullptr, "{}: no kernel", takes.name);
  CheckSolverTakes(takes, !problem.IsCsvc());
}

// Q_ii = K(x_i, x_i) of every sample, in float64.
inline std::vector<double> QDiagonal(kernels::SvmKernelRows& kernel, std::span<const int32_t> rows) {
  std::vector<double> qd(rows.size());
  parallel_for<int64_t>(0, static_cast<int64_t>(rows.size()), 1024,
                        [&](int64_t s) { qd[static_cast<size_t>(s)] = kernel.Diagonal(rows[static_cast<size_t>(s)]); });
  return qd;
}

// SolverOptions::max_iterations with -1 resolved to LIBSVM's max(10^7, 100 l).
inline int64_t MaxIterations(int64_t requested, int64_t l) {
  return requested < 0 ? std::max<int64_t>(10000000, 100 * l) : requested;
}

// LIBSVM's gmax1 = max_{I_up} -y G and gmax2 = max_{I_low} y G (do_shrinking), with its ">=" updates.
struct ViolationExtremes {
  double gmax1 = -std::numeric_limits<double>::infinity();
  double gmax2 = -std::numeric_limits<double>::infinity();

  void Add(int8_t y, int8_t status, double g) {
    const double v = y > 0 ? -g : g;  // -y G
    if (batch::InUp(y, status) && v >= gmax1) gmax1 = v;
    if (batch::InLow(y, status) && -v >= gmax2) gmax2 = -v;
  }
};

// Solver_NU's do_shrinking extremes, per label: over y = +1, gmax1 = max -G over I_up and gmax2 = max G over
// I_low; over y = -1, gmax3 = max G over I_low and gmax4 = max -G over I_up (LIBSVM's names). BeShrunk is its
// be_shrunk, Gap the largest of the two labels' gaps.
struct NuViolationExtremes {
  double gmax1 = -std::numeric_limits<double>::infinity();
  double gmax2 = -std::numeric_limits<double>::infinity();
  double gmax3 = -std::numeric_limits<double>::infinity();
  double gmax4 = -std::numeric_limits<double>::infinity();

  void Add(int8_t y, int8_t status, double g) {
    if (status != batch::kUpper) {
      if (y > 0) {
        if (-g > gmax1) gmax1 = -g;
      } else if (-g > gmax4) {
        gmax4 = -g;
      }
    }
    if (status != batch::kLower) {
      if (y > 0) {
        if (g > gmax2) gmax2 = g;
      } else if (g > gmax3) {
        gmax3 = g;
      }
    }
  }
  double Gap() const { return std::max(gmax1 + gmax2, gmax3 + gmax4); }
  bool BeShrunk(int8_t y, int8_t status, double g) const {
    if (status == batch::kUpper) return y > 0 ? -g > gmax1 : -g > gmax4;
    if (status == batch::kLower) return y > 0 ? g > gmax2 : g > gmax3;
    return false;
  }
};

// LIBSVM's calculate_rho: the mean of y G over the free variables, else the middle of the interval that the
// bound variables leave for rho. Variables are added in the caller's order (the free sum depends on it).
class RhoAccumulator {
 public:
  void Add(int8_t y, int8_t status, double g) {
    const double yg = y * g;
    if (status == batch::kFree) {
      ++nr_free_;
      sum_free_ += yg;
    } else if (status == batch::kUpper ? y == -1 : y == 1) {  // y a at its lower end: rho <= y G
      ub_ = std::min(ub_, yg);
    } else {
      lb_ = std::max(lb_, yg);
    }
  }
  double Rho() const { return nr_free_ > 0 ? sum_free_ / static_cast<double>(nr_free_) : (ub_ + lb_) / 2; }
  // The interval the bound variables leave for rho (the distributed solver reduces it over ranks).
  double UpperBound() const { return ub_; }
  double LowerBound() const { return lb_; }

 private:
  int64_t nr_free_ = 0;
  double ub_ = std::numeric_limits<double>::infinity();
  double lb_ = -std::numeric_limits<double>::infinity();
  double sum_free_ = 0;
};

// LIBSVM's Solver_NU::calculate_rho: r1 and r2 from the y = +1 and the y = -1 samples (each the mean of G over
// its free variables, else the middle of the interval its bound variables leave); r = (r1 + r2) / 2 and
// rho = (r1 - r2) / 2. Variables are added in the caller's order.
class NuRhoAccumulator {
 public:
  void Add(int8_t y, int8_t status, double g) {
    Side& s = y > 0 ? pos_ : neg_;
    if (status == batch::kUpper) {
      s.lb = std::max(s.lb, g);
    } else if (status == batch::kLower) {
      s.ub = std::min(s.ub, g);
    } else {
      ++s.nr_free;
      s.sum_free += g;
    }
  }
  double R() const { return (pos_.Value() + neg_.Value()) / 2; }
  double Rho() const { return (pos_.Value() - neg_.Value()) / 2; }

  // One label's terms (the distributed solver sums nr_free and sum_free and takes ub's minimum and lb's maximum
  // over the ranks, then sets them back).
  struct Side {
    int64_t nr_free = 0;
    double ub = std::numeric_limits<double>::infinity();
    double lb = -std::numeric_limits<double>::infinity();
    double sum_free = 0;
    double Value() const { return nr_free > 0 ? sum_free / static_cast<double>(nr_free) : (ub + lb) / 2; }
  };
  Side& pos() { return pos_; }
  Side& neg() { return neg_; }

 private:
  Side pos_;
  Side neg_;
};

// What a solver state holds at the end, in the solver's own order: position k is sample sample[k] (the
// identity when `sample` is empty). Fills alpha (y a per sample), obj = a^T (G + p) / 2 and rho (both summed in
// position order, as LIBSVM; `nu`: Solver_NU's rho and r), nr_sv and nr_bsv. `p` empty: the C-SVC's -1.
struct FinalState {
  std::span<const int8_t> y;
  std::span<const int8_t> status;
  std::span<const double> alpha;
  std::span<const double> g;
  std::span<const int32_t> sample;
  double cp = 1;
  double cn = 1;
  std::span<const double> p = {};
  bool nu = false;
};

inline void FillSolution(const FinalState& st, SolverResult* r) {
  const size_t l = st.y.size();
  if (st.nu) {
    NuRhoAccumulator rho;
    for (size_t k = 0; k < l; ++k) rho.Add(st.y[k], st.status[k], st.g[k]);
    r->rho = rho.Rho();
    r->r = rho.R();
  } else {
    RhoAccumulator rho;
    for (size_t k = 0; k < l; ++k) rho.Add(st.y[k], st.status[k], st.g[k]);
    r->rho = rho.Rho();
  }
  double v = 0;
  for (size_t k = 0; k < l; ++k) v += st.alpha[k] * (st.g[k] + (st.p.empty() ? -1.0 : st.p[k]));
  r->obj = v / 2;
  r->alpha.assign(l, 0.0);
  for (size_t k = 0; k < l; ++k)
    r->alpha[st.sample.empty() ? k : static_cast<size_t>(st.sample[k])] = st.alpha[k] * st.y[k];
  for (size_t k = 0; k < l; ++k) {
    if (std::fabs(st.alpha[k]) > 0) {
      ++r->nr_sv;
      if (std::fabs(st.alpha[k]) >= (st.y[k] > 0 ? st.cp : st.cn)) ++r->nr_bsv;
    }
  }
}

// The counters and clocks both solvers keep, and the SolverResult fields they fill.
struct SolverTally {
  double last_gap = std::numeric_limits<double>::infinity();
  int64_t shrink_checks = 0;
  int64_t reconstructions = 0;
  int64_t bound_changes = 0;
  int64_t min_active = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_log = start;

  // True when a progress line is due (forced, or 2 s since the last one); restarts the 2 s.
  bool LogDue(bool force) {
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - last_log < std::chrono::seconds(2)) return false;
    last_log = now;
    return true;
  }

  void Fill(int64_t iterations, int64_t kernel_evaluations, bool hit_limit, SolverResult* r) const {
    r->gap = last_gap;
    r->iterations = iterations;
    r->kernel_evaluations = kernel_evaluations;
    r->shrink_checks = shrink_checks;
    r->reconstructions = reconstructions;
    r->bound_changes = bound_changes;
    r->min_active = min_active;
    r->hit_iteration_limit = hit_limit;
    r->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
};

// What every host C-SVC solver holds besides its rows, kernel and cache (SMO, batched, each rank's share of the
// distributed ones): the weighted C of each class, eps, the elimination schedule and LIBSVM's unshrink flag, the
// iteration limit, the per-sample state (SampleState) and the counters. `l` is the whole problem's size (over all
// ranks for a distributed solver), which the schedule's period and the iteration limit depend on.
class SolverCore {
 public:
  double Gap() const { return tally_.last_gap; }  // RunSolverLoop's hook

 protected:
  SolverCore(double cp, double cn, const SolverOptions& options, int64_t l)
      : cp_(cp),
        cn_(cn),
        eps_(options.eps),
        schedule_(options.shrinking, l, options.eps),
        max_iter_(MaxIterations(options.max_iterations, l)) {}

  double UpperBound(int8_t y) const { return y > 0 ? cp_ : cn_; }  // C of a sample with label y
  double C(int64_t pos) const { return UpperBound(s_.y[pos]); }    // ... of the sample at position pos

  double cp_;
  double cn_;
  double eps_;
  EliminationSchedule schedule_;
  bool unshrink_ = false;  // LIBSVM's unshrink: every sample restored once, when the gap first nears eps
  int64_t max_iter_;
  SampleState s_;  // y, qd, alpha, status, G, G_bar per position
  SolverTally tally_;
};

// dst[k] += c * row[k] for k in [0, n), the float row given as a cached prefix head[0, have) and the rest in
// tail[0, n - have) (the G_bar update of a variable that reached or left C).
inline void AddScaledSplitRow(double* dst, int64_t n, double c, const float* head, int64_t have, const float* tail) {
  parallel_for_chunks<int64_t>(0, n, kScanGrain, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < std::min(e, have); ++k) dst[k] += c * head[k];
    for (int64_t k = std::max(b, have); k < e; ++k) dst[k] += c * tail[k - have];
  });
}

// Keeps the q best candidates (-y G, id) of one side of a batched round, best first: I_up by descending value,
// I_low by ascending value, ties to the smaller id.
template <typename Id>
void KeepBestCandidates(std::vector<std::pair<double, Id>>* side, size_t q, bool up) {
  const size_t take = std::min(side->size(), q);
  const auto end = side->begin() + static_cast<std::ptrdiff_t>(take);
  if (up) {
    std::partial_sort(side->begin(), end, side->end(), [](const auto& a, const auto& b) {
      return a.first > b.first || (a.first == b.first && a.second < b.second);
    });
  } else {
    std::partial_sort(side->begin(), end, side->end(), [](const auto& a, const auto& b) {
      return a.first < b.first || (a.first == b.first && a.second < b.second);
    });
  }
  side->resize(take);
}

// A batched round's working set (ThunderSVM) from each side's candidates (-y G, id), best first: up to q/2 from
// I_up, then I_low until there are q, then I_up again; each id once.
template <typename Id>
void OrderWorkingSet(std::span<const std::pair<double, Id>> up, std::span<const std::pair<double, Id>> low, size_t q,
                     std::vector<Id>* ws) {
  ws->clear();
  std::unordered_set<Id> chosen;
  chosen.reserve(2 * q);
  size_t u = 0;
  for (; u < up.size() && ws->size() < q / 2; ++u) {
    ws->push_back(up[u].second);
    chosen.insert(up[u].second);
  }
  for (size_t w = 0; w < low.size() && ws->size() < q; ++w)
    if (chosen.insert(low[w].second).second) ws->push_back(low[w].second);
  for (; u < up.size() && ws->size() < q; ++u)
    if (chosen.insert(up[u].second).second) ws->push_back(up[u].second);
}

// A batched round's subproblem variables in working-set order: a SampleState of the working set (label, Q_ii, alpha,
// G and the bound status, from alpha and C; p and G_bar unused) with each variable's upper bound C. What
// SolveBatchSubproblem reads and updates.
struct BatchVars : SampleState {
  std::vector<double> c;

  void Reserve(size_t m) {
    qd_uniform = std::numeric_limits<double>::quiet_NaN();  // Add fills qd one by one
    for (auto* v : {&qd, &c, &alpha, &g}) {
      v->clear();
      v->reserve(m);
    }
    y.clear();
    y.reserve(m);
    status.clear();
    status.reserve(m);
  }
  void Add(int8_t y_t, double qd_t, double c_t, double a_t, double g_t) {
    y.push_back(y_t);
    qd.push_back(qd_t);
    c.push_back(c_t);
    alpha.push_back(a_t);
    g.push_back(g_t);
    status.push_back(batch::StatusOf(a_t, c_t));
  }
};

// LIBSVM's Solver pair of a batched round's subproblem: i = argmax -y G over I_up, then the second-order partner j
// over I_low (j < 0: none). Returns the gap max_{I_up} -y G + max_{I_low} y G; *i < 0 when I_up is empty.
template <typename QEntry>
double SelectBatchPair(const BatchVars& v, QEntry q, int64_t* out_i, int64_t* out_j) {
  const auto m = static_cast<int64_t>(v.y.size());
  double gmax = -kInf;
  int64_t i = -1;
  for (int64_t t = 0; t < m; ++t) {
    if (batch::InUp(v.y[t], v.status[t]) && -v.y[t] * v.g[t] >= gmax) {
      gmax = -v.y[t] * v.g[t];
      i = t;
    }
  }
  *out_i = i;
  *out_j = -1;
  if (i < 0) return -kInf;
  double gmax2 = -kInf;
  double best = kInf;
  for (int64_t t = 0; t < m; ++t) {
    if (!batch::InLow(v.y[t], v.status[t])) continue;
    const double yg = v.y[t] * v.g[t];
    if (yg >= gmax2) gmax2 = yg;
    const double grad_diff = gmax + yg;
    if (grad_diff <= 0) continue;
    const double gain = batch::PairGain(v.y[i], v.y[t], v.qd[i], v.qd[t], q(i, t), grad_diff);
    if (gain <= best) {
      best = gain;
      *out_j = t;
    }
  }
  return gmax + gmax2;
}

// Solver_NU's pair (LIBSVM's select_working_set of Solver_NU) on a batched round's subproblem: per label the
// largest -y G over I_up (i_p, i_n), then over I_low the second-order partner of its own label's i, so a step keeps
// both labels' sums. Returns the larger of the two labels' gaps; *i < 0 when no label has an I_up sample.
template <typename QEntry>
double SelectBatchNuPair(const BatchVars& v, QEntry q, int64_t* out_i, int64_t* out_j) {
  const auto m = static_cast<int64_t>(v.y.size());
  double gmax[2] = {-kInf, -kInf};  // [y = +1, y = -1]
  int64_t first[2] = {-1, -1};
  for (int64_t t = 0; t < m; ++t) {
    const int side = v.y[t] > 0 ? 0 : 1;
    if (batch::InUp(v.y[t], v.status[t]) && -v.y[t] * v.g[t] >= gmax[side]) {
      gmax[side] = -v.y[t] * v.g[t];
      first[side] = t;
    }
  }
  *out_i = first[0] >= 0 ? first[0] : first[1];
  *out_j = -1;
  if (*out_i < 0) return -kInf;
  double gmax2[2] = {-kInf, -kInf};
  double best = kInf;
  for (int64_t t = 0; t < m; ++t) {
    if (!batch::InLow(v.y[t], v.status[t])) continue;
    const int side = v.y[t] > 0 ? 0 : 1;
    const double yg = v.y[t] * v.g[t];
    if (yg >= gmax2[side]) gmax2[side] = yg;
    const int64_t i = first[side];
    const double grad_diff = gmax[side] + yg;
    if (i < 0 || grad_diff <= 0) continue;
    const double gain = batch::PairGain(v.y[i], v.y[t], v.qd[i], v.qd[t], q(i, t), grad_diff);
    if (gain <= best) {
      best = gain;
      *out_j = t;
    }
  }
  if (*out_j >= 0) *out_i = first[v.y[*out_j] > 0 ? 0 : 1];
  return std::max(gmax[0] + gmax2[0], gmax[1] + gmax2[1]);
}

// A batched round's subproblem: LIBSVM's pair (SelectBatchPair, or with `nu` Solver_NU's, SelectBatchNuPair) and
// update on the m working-set variables, their gradient g updated inside, until the gap falls under
// max(eps, inner_factor x the first gap), no pair is left, or `limit` steps. q(t, u) is the float Q entry; vars.alpha,
// vars.g and vars.status change. Returns the steps taken. The one-process and the distributed batched solvers and the
// device loop's host twin share it, so all make the same steps.
template <typename QEntry>
int64_t SolveBatchSubproblem(BatchVars& vars, QEntry q, double eps, double inner_factor, int64_t limit,
                             bool nu = false) {
  const std::span<const int8_t> y = vars.y;
  const std::span<const double> qd = vars.qd;
  const std::span<const double> c = vars.c;
  const std::span<double> a = vars.alpha;
  const std::span<double> g = vars.g;
  const std::span<int8_t> st = vars.status;
  const auto m = static_cast<int64_t>(y.size());
  double local_eps = eps;
  int64_t steps = 0;
  for (; steps < limit; ++steps) {
    int64_t i = -1;
    int64_t j = -1;
    const double gap = nu ? SelectBatchNuPair(vars, q, &i, &j) : SelectBatchPair(vars, q, &i, &j);
    if (i < 0) break;
    if (steps == 0) local_eps = std::max(eps, inner_factor * gap);
    if (gap < local_eps || j < 0) break;
    const double old_i = a[i];
    const double old_j = a[j];
    batch::UpdatePair(y[i], y[j], qd[i], qd[j], q(i, j), g[i], g[j], c[i], c[j], &a[i], &a[j]);
    const double d_i = a[i] - old_i;
    const double d_j = a[j] - old_j;
    st[i] = batch::StatusOf(a[i], c[i]);
    st[j] = batch::StatusOf(a[j], c[j]);
    for (int64_t t = 0; t < m; ++t) g[t] += q(i, t) * d_i + q(j, t) * d_j;
  }
  return steps;
}

}  // namespace tessel::svm
