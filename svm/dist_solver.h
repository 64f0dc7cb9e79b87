// The binary dual of every LIBSVM formulation (smo_solver.h's BinaryProblem) solved by SMO across the ranks of a
// communicator (Narasimhan, Vishnu, Holder, Hoisie, "Fast Support Vector Machines Using Parallel Adaptive Shrinking on
// Distributed Systems", 2014): each rank holds a share of the samples with their alpha, gradient, G_bar and kernel-row
// cache; an iteration picks the working pair with two fused (value, index) allreduces and broadcasts the two samples'
// rows from their owners, or, for short rows, with two allgathers of every rank's candidate together with its row.
// LIBSVM's second-order selection, update, elimination and gradient reconstruction as the one-process solver
// (smo_solver.h). docs/svm.md.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "comm/communicator.h"
#include "comm/net_model.h"
#include "kernels/svm_kernel.h"
#include "svm/batch_solver.h"
#include "svm/smo_solver.h"

namespace tessel::svm {

// A copy of a problem's whole alpha kept by every rank (replicated): each rank writes every new alpha of a step
// here as the step ends (both distributed solvers compute each step's new alphas identically on every rank), so any
// survivor of a failed job holds the alpha of the last completed step (svm/dist_checkpoint.h).
struct AlphaMirror {
  std::vector<double> alpha;  // num_samples values in global-id order; the caller fills it with the starting alpha
  int64_t steps = 0;          // SMO steps whose alphas are in `alpha`
};

// This rank's share of one binary problem of `num_samples` samples; global sample g is the one-process solver's
// position g (so ties go the same way: to the larger global id).
struct DistBinaryProblem {
  // Over this rank's rows, with num_cols and allow_bits the same on every rank (a row from another rank is
  // computed against this rank's rows by QRowOf).
  kernels::SvmKernelRows* kernel = nullptr;
  std::span<const int32_t> rows;   // this rank's samples: the kernel row of each
  std::span<const int64_t> gids;   // ... their global ids, strictly ascending, in [0, num_samples)
  std::span<const int8_t> y;       // ... their labels, +1 or -1
  int64_t num_samples = 0;         // the same on every rank
  std::span<const int32_t> owner;  // per global sample: the rank holding it
  std::span<const int32_t> nnz;    // per global sample: its non-zeros (the size of its broadcast)
  double Cp = 1;
  double Cn = 1;
  // Selection: 1 fused (one allgather of every rank's candidate with its row per half-step: two collectives per
  // iteration), 0 max-loc allreduce then the owner's broadcast (four), -1 fused when the ranks' records total at
  // most 8 KB (sparse rows; dense rows broadcast). The same iterations either way.
  int fuse = -1;
  // Elimination can leave one rank far more active samples than another; at a check point where the largest share
  // exceeds `rebalance` times the mean, the ranks above their share send their last active samples to the ranks
  // below it (state and row; a receiving rank rebuilds its kernel over the rows it now holds). 0: never. The
  // choices, and so the iterations, do not depend on where a sample lives.
  double rebalance = 1.2;
  // The other formulations (BinaryProblem's p, alpha0 and nu; nu-SVC, one-class and the regressions), per local
  // sample: the linear term (has_p false: -1), the starting a (not y a; has_alpha0 false: 0), and Solver_NU. The
  // flags are the same on every rank, also on one that holds no samples (whose spans are empty). Both solvers take
  // them (the batched one Solver_NU's selection with its working set split between the labels, q >= 4).
  std::span<const double> p = {};
  std::span<const double> alpha0 = {};
  bool has_p = false;
  bool has_alpha0 = false;
  bool nu = false;
  // When set, the SMO solver predicts its time on this network (DistStats::predicted_seconds); the same on every rank.
  const comm::NetworkModel* network = nullptr;
  // When set, kept up to date on every rank (AlphaMirror); the same on every rank.
  AlphaMirror* mirror = nullptr;
};

// What the solve cost, over all ranks (the same on every rank, but local_kernel_evaluations).
struct DistStats {
  int64_t rounds = 0;         // the batched solver's rounds (0 for SMO)
  int64_t rebalances = 0;     // SMO: check points that moved active samples between ranks
  int64_t moved_samples = 0;  // ... and how many samples they moved in all
  int64_t min_local_samples = 0;
  int64_t max_local_samples = 0;
  int64_t min_kernel_evaluations = 0;  // per rank
  int64_t max_kernel_evaluations = 0;
  int64_t local_kernel_evaluations = 0;  // this rank's (differs between ranks)
  int64_t min_local_active = 0;          // the smallest active share of a rank at any check point
  int64_t max_bytes = 0;                 // the most bytes one rank sent
  int64_t collectives = 0;               // per rank
  double max_comm_seconds = 0;           // the most seconds one rank spent in communicator calls
  comm::CallCost max_cost;               // the alpha-beta terms of the busiest rank's calls (comm/net_model.h)
  // SMO with DistBinaryProblem::network: the solve's seconds on that network, predicted as the sum over iterations of
  // the slowest rank's iteration (its wall time with its calls' measured seconds replaced by the model's: every
  // iteration ends in collectives, so ranks wait for the slowest each time), plus the slowest rank's rest; and the
  // solve's measured seconds (the slowest rank's). 0 otherwise.
  double predicted_seconds = 0;
  double solve_seconds = 0;
};

// Collective over `comm`: every rank calls it with its share of the same problem and the same options. The result
// is SolveBinary's, the same on every rank: alpha over all num_samples samples (global-id order), obj and rho summed
// over the ranks, iterations, kernel_evaluations summed over the ranks, min_active the smallest global active set.
// Throws tessel::Error when a collective fails (a peer failed or left): the caller's rank then ends too.
SolverResult SolveBinaryDistributed(comm::Communicator& comm, const DistBinaryProblem& problem,
                                    const SolverOptions& options, DistStats* stats = nullptr);

// The batched working-set solver (batch_solver.h) over the ranks: per round one allgather of every rank's q best
// candidates of each side (every rank merges them into the one-process working set) and one allgatherv of the
// working set's samples from their owners; every rank solves the same q-variable subproblem and updates the
// gradient of its own samples. Without elimination the rounds and steps are SolveBinaryBatched's. `iterations`
// counts SMO steps; batch_stats->rounds the rounds (two collectives each).
SolverResult SolveBinaryDistributedBatched(comm::Communicator& comm, const DistBinaryProblem& problem,
                                           const SolverOptions& options, const BatchOptions& batch = {},
                                           DistStats* stats = nullptr, BatchStats* batch_stats = nullptr);

// SolveBinaryDistributedBatched on one rank (a local communicator): SolveBinaryBatched's steps with a kernel-row
// cache of options.cache_bytes across rounds (batch_solver.cc, the device loop's reference, recomputes every row).
// What `tessel train svm --solver batch` runs on the CPU.
inline constexpr SolverTakes kCachedBatchTakes{"--solver batch", true};  // what SolveBinaryBatchedCached takes
SolverResult SolveBinaryBatchedCached(const BinaryProblem& problem, const SolverOptions& options,
                                      const BatchOptions& batch = {}, BatchStats* stats = nullptr);

}  // namespace tessel::svm
