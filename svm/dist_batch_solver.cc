// The batched working-set solver (batch_solver.cc, ThunderSVM) across the ranks of a communicator. A round costs
// two collectives whatever the number of SMO steps inside it:
//   1. every rank sends its q best candidates of each side (-y G over I_up and I_low, with their global ids) in
//      one allgather of fixed-size records; every rank merges them into the one-process working set (the global
//      top q of each side is among the ranks' top q);
//   2. the owners of the working set send its samples (state and row) in one allgatherv, whose counts every rank
//      knows from the owner and non-zero tables.
// Then every rank computes the q x q kernel block among the working set and solves the subproblem with the same
// arithmetic (so all get the same new alphas), computes the q kernel rows over its own active samples and updates
// its own gradient. Elimination and G_bar as the one-process batched solver, with the extremes, the active count
// and the free vectors of reconstruction reduced over the ranks. Ties go to the smaller global id, as there.
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/fault_inject.h"
#include "core/log.h"
#include "core/parallel.h"
#include "svm/batch_solver.h"
#include "svm/batch_step.h"
#include "svm/dist_common.h"
#include "svm/dist_solver.h"
#include "svm/elimination.h"
#include "svm/kernel_cache.h"
#include "svm/solver_common.h"

namespace tessel::svm {
namespace {

using dist::Check;
using dist::Sample;
using dist::SampleHeader;

constexpr int64_t kGrain = 2048;

using Entry = std::pair<double, int64_t>;  // (-y G, global id)

class DistBatchSolver : public dist::RankSamples {
 public:
  DistBatchSolver(comm::Communicator& comm, const DistBinaryProblem& p, const SolverOptions& options,
                  const BatchOptions& batch)
      : RankSamples(comm, p, options),
        owner_(p.owner),
        nnz_(p.nnz),
        q_(batch.working_set),
        inner_limit_(batch.inner_limit < 0 ? int64_t{10} * batch.working_set : batch.inner_limit),
        inner_factor_(batch.inner_factor) {}

  SolverResult Run(DistStats* stats, BatchStats* batch_stats);

  // RunSolverLoop's hooks (solver_common.h): one round (a working set of q and its subproblem) per Advance, every
  // collective inside the hooks, so every rank takes the same branches.
  bool Optimal() {
    tally_.last_gap = Select(&ws_);
    return tally_.last_gap < eps_;
  }
  void Shrink() { (void)ShrinkRanks(); }
  bool AllActive() const { return global_active_ == big_l_; }
  void Unshrink() {
    ReconstructGradient();
    SetAllActive();
  }
  int64_t Advance(int64_t limit);
  void CheckPoint(int64_t /*done: progress is logged per round*/) {}

 private:
  // Collective: the working set (global ids, the one-process order) and the global gap.
  double Select(std::vector<int64_t>* ws);
  // Collective: the working set's samples, in ws order, from their owners.
  std::vector<Sample> Fetch(std::span<const int64_t> ws);
  int64_t SolveSubproblem(std::span<const Sample> ws, std::span<const float> q, int64_t limit,
                          std::vector<double>* new_alpha) const;
  void Progress(int64_t rounds, int64_t steps, bool force);

  std::span<const int32_t> owner_;  // per global sample
  std::span<const int32_t> nnz_;    // per global sample
  int64_t q_;
  int64_t inner_limit_;
  double inner_factor_;
  std::vector<double> candidates_;  // every rank's candidate record
  std::vector<float> scratch_;
  int64_t extra_evaluations_ = 0;  // the q x q blocks (kernels of their own)
  int64_t bytes_start_ = 0;
  int64_t rounds_ = 0;
  int64_t steps_ = 0;
  // A round's working set (global ids), its samples' rows, the q x q block and the new alphas.
  std::vector<int64_t> ws_;
  dist::RowBlock ws_rows_;
  std::vector<int8_t> ws_y_;
  std::vector<int32_t> ws_cols_;
  std::vector<float> block_;
  std::vector<double> new_alpha_;
};

// The candidates of a round, (-y G, global id) lists in pairs (I_up, I_low): one pair over every sample, or with
// Solver_NU one per label (y = +1, then y = -1), whose working sets and gaps are separate.
double DistBatchSolver::Select(std::vector<int64_t>* ws) {
  const auto q = static_cast<size_t>(q_);
  const size_t lists = nu_ ? 4 : 2;
  // This rank's q best of each list.
  std::vector<std::vector<Entry>> cand(lists);
  for (int64_t k = 0; k < active_; ++k) {
    const double v = -s_.y[k] * s_.g[k];
    const size_t at = nu_ && s_.y[k] < 0 ? 2 : 0;
    if (InUp(s_.y[k], s_.status[k])) cand[at].emplace_back(v, gid_[k]);
    if (InLow(s_.y[k], s_.status[k])) cand[at + 1].emplace_back(v, gid_[k]);
  }
  for (size_t c = 0; c < lists; ++c) KeepBestCandidates(&cand[c], q, c % 2 == 0);
  // A record of lists + 2 q lists doubles: [the lists' sizes, (value, id) of each list in turn, padding]; ids
  // < 2^31 are exact as doubles. A fixed size, so one allgather without a count exchange.
  const size_t rec = lists + 2 * q * lists;
  std::vector<double> mine(rec, 0.0);
  size_t w_at = lists;
  for (size_t c = 0; c < lists; ++c) {
    mine[c] = static_cast<double>(cand[c].size());
    for (const Entry& e : cand[c]) {
      mine[w_at++] = e.first;
      mine[w_at++] = static_cast<double>(e.second);
    }
  }
  candidates_.resize(rec * static_cast<size_t>(comm_.Size()));
  Check(comm_.Allgather<double>(mine, candidates_, "svm-select"));
  for (auto& c : cand) c.clear();
  for (int r = 0; r < comm_.Size(); ++r) {
    const double* at = candidates_.data() + rec * static_cast<size_t>(r);
    const double* e = at + lists;
    for (size_t c = 0; c < lists; ++c) {
      const auto count = static_cast<size_t>(at[c]);
      TESSEL_CHECK(count <= q, "distributed SVM: a malformed candidate list from rank {}", r);
      for (size_t t = 0; t < count; ++t) cand[c].emplace_back(e[2 * t], static_cast<int64_t>(e[2 * t + 1]));
      e += 2 * count;
    }
  }
  // The global q best of each list are among the ranks' q best: the one-process working set. Solver_NU: up to q/2
  // from the first label, the rest from the second.
  ws->clear();
  double gap = -kInf;
  for (size_t c = 0; c < lists; c += 2) {
    std::vector<Entry>& up = cand[c];
    std::vector<Entry>& low = cand[c + 1];
    if (up.empty() || low.empty()) continue;
    KeepBestCandidates(&up, q, true);
    KeepBestCandidates(&low, q, false);
    std::vector<int64_t> part;
    OrderWorkingSet<int64_t>(up, low, c + 2 < lists ? q / 2 : q - ws->size(), &part);
    ws->insert(ws->end(), part.begin(), part.end());
    gap = std::max(gap, up[0].first - low[0].first);
  }
  return gap;
}

std::vector<Sample> DistBatchSolver::Fetch(std::span<const int64_t> ws) {
  std::vector<std::byte> mine;
  for (const int64_t g : ws) {
    const int32_t k = pos_of_[static_cast<size_t>(g)];
    if (k < 0) continue;
    dist::AppendSample(kernel_->rows(), row_[k], HeaderOf(k), &mine);
  }
  // Every rank knows what each owner sends (the owner and non-zero tables): one allgatherv without counts.
  std::vector<int64_t> counts(static_cast<size_t>(comm_.Size()), 0);
  for (const int64_t g : ws)
    counts[static_cast<size_t>(owner_[static_cast<size_t>(g)])] +=
        static_cast<int64_t>(Sample::Bytes(static_cast<size_t>(nnz_[static_cast<size_t>(g)])));
  TESSEL_CHECK(static_cast<int64_t>(mine.size()) == counts[static_cast<size_t>(comm_.Rank())],
               "distributed SVM: rank {} sends {} bytes of the working set, the tables say {}", comm_.Rank(),
               mine.size(), counts[static_cast<size_t>(comm_.Rank())]);
  int64_t total = 0;
  for (const int64_t c : counts) total += c;
  std::vector<std::byte> all(static_cast<size_t>(total));
  Check(comm_.Allgatherv<std::byte>(mine, all, counts, "svm-rows"));
  std::vector<Sample> got = dist::UnpackSamples(all);
  std::unordered_map<int64_t, size_t> at;
  for (size_t t = 0; t < got.size(); ++t) at.emplace(got[t].h.gid, t);
  std::vector<Sample> out;
  out.reserve(ws.size());
  for (const int64_t g : ws) {
    const auto it = at.find(g);
    TESSEL_CHECK(it != at.end(), "distributed SVM: no rank sent sample {} of the working set", g);
    out.push_back(std::move(got[it->second]));
  }
  return out;
}

// The subproblem (SolveBatchSubproblem, as the one-process solver) on the working set with its q x q block.
int64_t DistBatchSolver::SolveSubproblem(std::span<const Sample> ws, std::span<const float> q, int64_t limit,
                                         std::vector<double>* new_alpha) const {
  const auto m = ws.size();
  BatchVars v;
  v.Reserve(m);
  for (const Sample& s : ws) v.Add(s.h.y, s.h.qd, UpperBound(s.h.y), s.h.alpha, s.h.g);
  const auto entry = [&](int64_t t, int64_t u) { return q[static_cast<size_t>(t) * m + static_cast<size_t>(u)]; };
  const int64_t steps = SolveBatchSubproblem(v, entry, eps_, inner_factor_, limit, nu_);
  *new_alpha = std::move(v.alpha);
  return steps;
}

void DistBatchSolver::Progress(int64_t rounds, int64_t steps, bool force) {
  if (!tally_.LogDue(force)) return;
  const auto sent = static_cast<double>(comm_.Bytes().Total() - bytes_start_);
  log::Info(
      "svm batch: round {}, {} steps, gap {:.6g} (tolerance {:g}), active {}/{} over {} ranks, {:.0f} bytes sent "
      "per round",
      rounds, steps, tally_.last_gap, eps_, global_active_, big_l_, comm_.Size(),
      rounds > 0 ? sent / static_cast<double>(rounds) : 0.0);
}

SolverResult DistBatchSolver::Run(DistStats* stats, BatchStats* batch_stats) {
  const comm::ByteCounter bytes_before = comm_.Bytes();
  bytes_start_ = static_cast<int64_t>(bytes_before.Total());
  const LoopEnd end = RunSolverLoop(*this, schedule_, max_iter_, "svm");
  Progress(rounds_, end.iterations, true);
  SolverResult r = FinishSolve(end.iterations, end.hit_limit, extra_evaluations_, bytes_before, stats);
  if (batch_stats != nullptr) batch_stats->rounds = rounds_;
  if (stats != nullptr) stats->rounds = rounds_;
  return r;
}

int64_t DistBatchSolver::Advance(int64_t limit) {
  (void)fault::FaultPoint("epoch", comm_.Rank());  // a round; TESSEL_FAULT tests (core/fault_inject.h)
  ++rounds_;
  const std::vector<Sample> samples = Fetch(ws_);
  const auto m = static_cast<int64_t>(samples.size());
  // The q x q block among the working set, by a kernel over the working set's rows (the same arithmetic as a row
  // over this rank's samples: QRowOf's contract).
  ws_rows_.Clear();
  ws_y_.clear();
  ws_cols_.clear();
  for (int64_t t = 0; t < m; ++t) {
    const auto row = samples[t].Row();
    ws_rows_.Append(row.indices, row.values);
    ws_y_.push_back(samples[t].h.y);
    ws_cols_.push_back(static_cast<int32_t>(t));
  }
  {
    kernels::SvmKernelRows ws_kernel(ws_rows_.View(kernel_->rows().num_cols), kernel_->params(), kernel_->binary());
    block_.resize(static_cast<size_t>(m * m));
    for (int64_t t = 0; t < m; ++t)
      ws_kernel.QRow(t, ws_y_[t], ws_cols_, ws_y_, {block_.data() + t * m, static_cast<size_t>(m)});
    extra_evaluations_ += ws_kernel.evaluations();
  }
  const int64_t taken = SolveSubproblem(samples, block_, std::min(inner_limit_, limit), &new_alpha_);
  steps_ += taken;
  std::vector<std::pair<size_t, double>> moved;
  for (size_t t = 0; t < samples.size(); ++t)
    if (new_alpha_[t] != samples[t].h.alpha) moved.emplace_back(t, new_alpha_[t] - samples[t].h.alpha);
  // G += sum_t d_t Q_t over this rank's active samples, t in working-set order (one row at a time: the same
  // sum per sample), with each moved sample's row from the cache; then the owners store the new alphas and
  // G_bar follows the samples that reached or left C.
  for (const auto& move : moved) {
    const size_t t = move.first;
    const double d = move.second;
    const Sample& s = samples[t];
    const float* row = GetQ(s, active_);
    parallel_for<int64_t>(0, active_, kGrain, [&](int64_t k) { s_.g[k] += d * row[k]; });
    const double c_s = UpperBound(s.h.y);
    const bool was_upper = batch::StatusOf(s.h.alpha, c_s) == kUpper;
    const bool is_upper = batch::StatusOf(new_alpha_[t], c_s) == kUpper;
    const int32_t k = pos_of_[static_cast<size_t>(s.h.gid)];
    if (k >= 0) {
      s_.alpha[k] = new_alpha_[t];
      s_.status[k] = batch::StatusOf(new_alpha_[t], c_s);
    }
    if (mirror_ != nullptr) mirror_->alpha[static_cast<size_t>(s.h.gid)] = new_alpha_[t];
    // G_bar (the gradient part of the samples at C) only serves reconstruction.
    if (!schedule_.eliminates() || was_upper == is_upper) continue;
    UpdateGBar(s, was_upper ? -c_s : c_s);
  }
  if (mirror_ != nullptr) mirror_->steps = steps_;
  Progress(rounds_, steps_, false);
  return taken;
}

}  // namespace

SolverResult SolveBinaryDistributedBatched(comm::Communicator& comm, const DistBinaryProblem& problem,
                                           const SolverOptions& options, const BatchOptions& batch, DistStats* stats,
                                           BatchStats* batch_stats) {
  batch.Validate(problem.nu);
  dist::ValidateDistProblem(comm, problem);
  DistBatchSolver solver(comm, problem, options, batch);
  return solver.Run(stats, batch_stats);
}

SolverResult SolveBinaryBatchedCached(const BinaryProblem& problem, const SolverOptions& options,
                                      const BatchOptions& batch, BatchStats* stats) {
  CheckBatchedProblem(problem, kCachedBatchTakes);
  TESSEL_CHECK(!problem.rows.empty(), "SolveBinaryBatched: no samples");
  const auto l = static_cast<int64_t>(problem.rows.size());
  std::vector<int64_t> gids(static_cast<size_t>(l));
  std::vector<int32_t> owner(static_cast<size_t>(l), 0);
  std::vector<int32_t> nnz(static_cast<size_t>(l));
  for (int64_t s = 0; s < l; ++s) {
    gids[s] = s;
    nnz[s] = static_cast<int32_t>(problem.kernel->rows().RowIndices(problem.rows[s]).size());
  }
  const std::unique_ptr<comm::Communicator> local = comm::MakeLocalCommunicator();
  DistBinaryProblem p{problem.kernel, problem.rows, gids, problem.y, l, owner, nnz};
  p.Cp = problem.Cp;
  p.Cn = problem.Cn;
  p.p = problem.p;
  p.alpha0 = problem.alpha0;
  p.has_p = !problem.p.empty();
  p.has_alpha0 = !problem.alpha0.empty();
  p.nu = problem.nu;
  return SolveBinaryDistributedBatched(*local, p, options, batch, nullptr, stats);
}

}  // namespace tessel::svm
