// Batched working-set SMO for the binary C-SVC dual (ThunderSVM, Wen et al., JMLR 2018) on the host, with LIBSVM's
// stopping rule, rho and objective and its elimination (shrinking, G_bar reconstruction): the CUDA solver's twin.
#include "svm/batch_solver.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "core/parallel.h"
#include "svm/batch_step.h"
#include "svm/solver_common.h"

namespace tessel::svm {
namespace {

constexpr int64_t kGrain = 2048;

class BatchSolver : public SolverCore {
 public:
  BatchSolver(const BinaryProblem& problem, const SolverOptions& options, const BatchOptions& batch)
      : SolverCore(problem.Cp, problem.Cn, options, static_cast<int64_t>(problem.rows.size())),
        kernel_(*problem.kernel),
        l_(static_cast<int64_t>(problem.rows.size())),
        q_(batch.working_set),
        inner_limit_(batch.inner_limit < 0 ? int64_t{10} * batch.working_set : batch.inner_limit),
        inner_factor_(batch.inner_factor) {
    CheckBinaryLabels(problem, "SolveBinaryBatched");
    rows_.assign(problem.rows.begin(), problem.rows.end());
    s_.Start(problem.y, QDiagonal(kernel_, rows_));
    SetAllActive();
  }

  SolverResult Run(BatchStats* stats);

  // RunSolverLoop's hooks (solver_common.h): one round (a working set of q and its subproblem) per Advance.
  bool Optimal() {
    tally_.last_gap = Select(&ws_);
    return tally_.last_gap < eps_;
  }
  void Shrink() { DoShrinking(); }
  bool AllActive() const { return inact_.empty(); }
  void Unshrink() {
    ReconstructGradient();
    SetAllActive();
  }
  int64_t Advance(int64_t limit);
  void CheckPoint(int64_t /*done*/) {}

 private:
  void SetAllActive();
  void SetActive(std::vector<int32_t> act);
  // out[t * cols.size() + k] = Q(samples[t], cols[k]) as float.
  void QRows(std::span<const int32_t> samples, std::span<const int32_t> cols, std::span<const int32_t> col_rows,
             std::span<const int8_t> col_y, std::vector<float>* out);
  double Select(std::vector<int32_t>* ws);
  int64_t SolveSubproblem(std::span<const int32_t> ws, int64_t limit, std::vector<double>* new_alpha);
  void ReconstructGradient();
  void DoShrinking();
  void Progress(int64_t steps, bool force);

  kernels::SvmKernelRows& kernel_;
  int64_t l_;
  int64_t q_;
  int64_t inner_limit_;
  double inner_factor_;

  // Per sample (the problem's order).
  std::vector<int32_t> rows_;
  std::vector<int32_t> pos_;  // position in act_, or -1 when eliminated
  // The active samples in increasing order, their dataset rows and labels (the columns of every kernel row).
  std::vector<int32_t> act_;
  std::vector<int32_t> act_rows_;
  std::vector<int8_t> act_y_;
  std::vector<int32_t> inact_;
  std::vector<float> ws_rows_;  // q rows over the active columns
  std::vector<float> scratch_;
  std::vector<int32_t> ws_;        // the working set Optimal() selected
  std::vector<double> new_alpha_;  // its alphas after the subproblem
  int64_t steps_ = 0;              // iterations so far (for the progress lines)
  int64_t rounds_ = 0;
};

void BatchSolver::SetAllActive() {
  std::vector<int32_t> all(static_cast<size_t>(l_));
  for (int64_t s = 0; s < l_; ++s) all[s] = static_cast<int32_t>(s);
  SetActive(std::move(all));
}

void BatchSolver::SetActive(std::vector<int32_t> act) {
  act_ = std::move(act);
  pos_.assign(static_cast<size_t>(l_), -1);
  act_rows_.resize(act_.size());
  act_y_.resize(act_.size());
  for (size_t k = 0; k < act_.size(); ++k) {
    pos_[act_[k]] = static_cast<int32_t>(k);
    act_rows_[k] = rows_[act_[k]];
    act_y_[k] = s_.y[act_[k]];
  }
  inact_.clear();
  for (int64_t s = 0; s < l_; ++s)
    if (pos_[s] < 0) inact_.push_back(static_cast<int32_t>(s));
}

void BatchSolver::QRows(std::span<const int32_t> samples, std::span<const int32_t> cols,
                        std::span<const int32_t> col_rows, std::span<const int8_t> col_y, std::vector<float>* out) {
  const size_t n = cols.size();
  out->resize(samples.size() * n);
  for (size_t t = 0; t < samples.size(); ++t)
    kernel_.QRow(rows_[samples[t]], s_.y[samples[t]], col_rows, col_y, {out->data() + t * n, n});
}

// The working set: up to q/2 samples of I_up with the largest -y G, then samples of I_low with the smallest -y G
// until there are q (then I_up again). Ties go to the smaller sample id. Returns the active set's gap
// max_{I_up} -y G - min_{I_low} -y G (-inf when a side is empty).
double BatchSolver::Select(std::vector<int32_t>* ws) {
  std::vector<std::pair<double, int32_t>> up;
  std::vector<std::pair<double, int32_t>> low;
  for (const int32_t s : act_) {
    const double v = -s_.y[s] * s_.g[s];
    if (InUp(s_.y[s], s_.status[s])) up.emplace_back(v, s);
    if (InLow(s_.y[s], s_.status[s])) low.emplace_back(v, s);
  }
  ws->clear();
  if (up.empty() || low.empty()) return -kInf;
  KeepBestCandidates(&up, static_cast<size_t>(q_), true);
  KeepBestCandidates(&low, static_cast<size_t>(q_), false);
  OrderWorkingSet<int32_t>(up, low, static_cast<size_t>(q_), ws);
  const double gap = up[0].first - low[0].first;
  return gap;
}

// SMO on the working set with its rows in ws_rows_: LIBSVM's pair (max -y G over I_up, then the second-order
// partner over I_low) and update, the local gradient updated inside. Returns the steps taken.
int64_t BatchSolver::SolveSubproblem(std::span<const int32_t> ws, int64_t limit, std::vector<double>* new_alpha) {
  const auto m = static_cast<size_t>(ws.size());
  const auto n = act_.size();
  BatchVars v;
  v.Reserve(m);
  std::vector<size_t> col(m);
  for (size_t t = 0; t < m; ++t) {
    v.Add(s_.y[ws[t]], s_.qd[ws[t]], C(ws[t]), s_.alpha[ws[t]], s_.g[ws[t]]);
    col[t] = static_cast<size_t>(pos_[ws[t]]);
  }
  const auto q = [&](int64_t t, int64_t u) {
    return ws_rows_[static_cast<size_t>(t) * n + col[static_cast<size_t>(u)]];
  };
  const int64_t steps = SolveBatchSubproblem(v, q, eps_, inner_factor_, limit);
  *new_alpha = std::move(v.alpha);
  return steps;
}

// G of the eliminated samples from G_bar (the part of the samples at C) plus the free samples' rows, summed in
// increasing sample order (the free samples are all active).
void BatchSolver::ReconstructGradient() {
  if (inact_.empty()) return;
  ++tally_.reconstructions;
  for (const int32_t s : inact_) s_.g[s] = s_.g_bar[s] - 1.0;
  std::vector<int32_t> free;
  for (const int32_t s : act_)
    if (s_.status[s] == kFree) free.push_back(s);
  std::vector<int32_t> in_rows(inact_.size());
  std::vector<int8_t> in_y(inact_.size());
  for (size_t k = 0; k < inact_.size(); ++k) {
    in_rows[k] = rows_[inact_[k]];
    in_y[k] = s_.y[inact_[k]];
  }
  const auto n = static_cast<int64_t>(inact_.size());
  for (size_t b = 0; b < free.size(); b += static_cast<size_t>(q_)) {
    const auto chunk = std::span<const int32_t>(free).subspan(b, std::min(free.size() - b, static_cast<size_t>(q_)));
    QRows(chunk, inact_, in_rows, in_y, &scratch_);
    parallel_for<int64_t>(0, n, kGrain, [&](int64_t k) {
      double v = s_.g[inact_[k]];
      for (size_t t = 0; t < chunk.size(); ++t) v += s_.alpha[chunk[t]] * scratch_[t * static_cast<size_t>(n) + k];
      s_.g[inact_[k]] = v;
    });
  }
}

void BatchSolver::DoShrinking() {
  ++tally_.shrink_checks;
  ViolationExtremes ext;
  for (const int32_t s : act_) ext.Add(s_.y[s], s_.status[s], s_.g[s]);
  const double gmax1 = ext.gmax1;
  const double gmax2 = ext.gmax2;
  if (schedule_.Unshrink(unshrink_, gmax1 + gmax2)) {
    unshrink_ = true;
    ReconstructGradient();
    SetAllActive();
  }
  std::vector<int32_t> keep;
  for (const int32_t s : act_)
    if (!batch::BeShrunk(s_.y[s], s_.status[s], s_.g[s], gmax1, gmax2)) keep.push_back(s);
  if (keep.size() != act_.size()) SetActive(std::move(keep));
  tally_.min_active = std::min(tally_.min_active, static_cast<int64_t>(act_.size()));
}

void BatchSolver::Progress(int64_t steps, bool force) {
  if (!tally_.LogDue(force)) return;
  log::Info("svm batch: {} steps, gap {:.6g} (tolerance {:g}), active {}/{}, kernel evaluations {}", steps,
            tally_.last_gap, eps_, act_.size(), l_, kernel_.evaluations());
}

int64_t BatchSolver::Advance(int64_t limit) {
  ++rounds_;
  interrupt::Check("svm");
  QRows(ws_, act_, act_rows_, act_y_, &ws_rows_);
  const int64_t taken = SolveSubproblem(ws_, std::min(inner_limit_, limit), &new_alpha_);
  steps_ += taken;
  // G += sum_t d_t Q_t over the active samples, t in working-set order.
  std::vector<std::pair<size_t, double>> moved;
  for (size_t t = 0; t < ws_.size(); ++t)
    if (new_alpha_[t] != s_.alpha[ws_[t]]) moved.emplace_back(t, new_alpha_[t] - s_.alpha[ws_[t]]);
  const auto n = static_cast<int64_t>(act_.size());
  parallel_for<int64_t>(0, n, kGrain, [&](int64_t k) {
    double v = s_.g[act_[k]];
    for (const auto& [t, d] : moved) v += d * ws_rows_[t * static_cast<size_t>(n) + static_cast<size_t>(k)];
    s_.g[act_[k]] = v;
  });
  for (const auto& [t, d] : moved) {
    const int32_t s = ws_[t];
    const bool was_upper = s_.status[s] == kUpper;
    s_.alpha[s] = new_alpha_[t];
    s_.status[s] = batch::StatusOf(s_.alpha[s], C(s));
    // G_bar (the gradient part of the samples at C) only serves reconstruction.
    if (!schedule_.eliminates() || was_upper == (s_.status[s] == kUpper)) continue;
    ++tally_.bound_changes;
    const double c = was_upper ? -C(s) : C(s);
    const float* row = ws_rows_.data() + t * static_cast<size_t>(n);
    parallel_for<int64_t>(0, n, kGrain, [&](int64_t k) { s_.g_bar[act_[k]] += c * row[k]; });
    if (!inact_.empty()) {
      std::vector<int32_t> in_rows(inact_.size());
      std::vector<int8_t> in_y(inact_.size());
      for (size_t k = 0; k < inact_.size(); ++k) {
        in_rows[k] = rows_[inact_[k]];
        in_y[k] = s_.y[inact_[k]];
      }
      const int32_t one[1] = {s};
      QRows(one, inact_, in_rows, in_y, &scratch_);
      for (size_t k = 0; k < inact_.size(); ++k) s_.g_bar[inact_[k]] += c * scratch_[k];
    }
  }
  Progress(steps_, false);
  return taken;
}

SolverResult BatchSolver::Run(BatchStats* stats) {
  const int64_t evals_before = kernel_.evaluations();
  tally_.min_active = l_;
  const LoopEnd end = RunSolverLoop(*this, schedule_, max_iter_, "svm");
  Progress(end.iterations, true);

  SolverResult r;
  FillSolution({s_.y, s_.status, s_.alpha, s_.g, {}, cp_, cn_}, &r);
  tally_.Fill(end.iterations, kernel_.evaluations() - evals_before, end.hit_limit, &r);
  if (stats != nullptr) stats->rounds = rounds_;
  return r;
}

}  // namespace

BatchOptions BatchOptions::ForWorkingSet(int working_set, bool cuda) {
  BatchOptions batch;
  batch.working_set = working_set > 0 ? working_set : (cuda ? 1024 : 256);
  TESSEL_CHECK(working_set >= 0 && batch.working_set % 2 == 0 && batch.working_set >= 2,
               "--working-set {} must be an even number >= 2 (or 0 for the default)", working_set);
  TESSEL_CHECK(!cuda || batch.working_set <= 1024,
               "--working-set {} exceeds 1024, the most one CUDA thread block solves", batch.working_set);
  return batch;
}

void BatchOptions::Validate(bool nu) const {
  TESSEL_CHECK(working_set >= 2 && working_set % 2 == 0,
               "batch solver: working set size {} must be an even number >= 2 (e.g. 256)", working_set);
  TESSEL_CHECK(!nu || working_set >= 4,
               "--working-set {}: Solver_NU's batched rounds (nu-SVC, nu-SVR) need at least 4, two per label",
               working_set);
  TESSEL_CHECK(inner_limit == -1 || inner_limit >= 1, "batch solver: inner step limit {} must be -1 (10 q) or positive",
               inner_limit);
  TESSEL_CHECK(inner_factor >= 0 && inner_factor < 1, "batch solver: inner factor {} must lie in [0, 1)", inner_factor);
}

SolverResult SolveBinaryBatched(const BinaryProblem& problem, const SolverOptions& options, const BatchOptions& batch,
                                BatchStats* stats) {
  CheckBatchedProblem(problem, kHostBatchedTakes);
  TESSEL_CHECK(!problem.rows.empty(), "SolveBinaryBatched: no samples");
  batch.Validate();
  BatchSolver solver(problem, options, batch);
  return solver.Run(stats);
}

}  // namespace tessel::svm
