// SVM training across the ranks of a communicator (`mpirun -np K tessel train svm`): the rows are split into K
// contiguous blocks balanced on rows and non-zeros, and every binary problem of the one-vs-one decomposition (or the
// one problem of one-class and the regressions) is solved by all ranks together with the distributed SMO or batched
// solver (dist_solver.h), or, with many pairs, each pair by one rank alone; -b 1's fits are spread over the ranks.
// The model is the one-process model.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "comm/communicator.h"
#include "core/params.h"
#include "datasets/dataset.h"
#include "svm/batch_solver.h"
#include "svm/dist_solver.h"
#include "svm/svm_model.h"
#include "svm/svm_params.h"
#include "svm/svm_train.h"

namespace tessel::svm {

// K + 1 row boundaries: block k is rows [b[k], b[k+1]), contiguous, each with about the same rows + non-zeros
// (a row weighs its non-zeros plus the mean non-zeros per row). Blocks may be empty when K exceeds the rows.
std::vector<int64_t> BalancedRowBlocks(std::span<const int64_t> indptr, int parts);

// How the one-vs-one pairs use the ranks: kShared solves each pair with all ranks (the distributed SMO over the row
// blocks); kSpread gives each pair to one rank, which solves it alone with the one-process solver (pairs balanced
// by their size squared), and then shares the results; kAuto spreads when there are at least as many pairs as
// ranks (docs/benchmarks.md: with many small pairs, communication-free pairs win).
enum class PairSchedule { kAuto, kShared, kSpread };

// The run's costs over all ranks (the same on every rank).
struct DistTrainStats {
  PairSchedule schedule = PairSchedule::kShared;  // the one used (never kAuto)
  int64_t min_kernel_evaluations = 0;             // per rank, over the whole run
  int64_t max_kernel_evaluations = 0;
  int64_t max_bytes = 0;         // the most bytes one rank sent
  int64_t collectives = 0;       // per rank
  double max_comm_seconds = 0;   // the most seconds one rank spent in communicator calls
  comm::CallCost max_cost;       // element-wise maxima over ranks of the alpha-beta terms (comm/net_model.h)
  std::vector<DistStats> pairs;  // kShared: each pair's solve
};

class SvmElasticState;  // svm/dist_checkpoint.h

// How TrainSvmDistributed solves the pairs.
struct DistTrainOptions {
  PairSchedule schedule = PairSchedule::kAuto;
  // Pairs shared by all ranks: the distributed batched solver with this working set (SolveBinaryDistributedBatched)
  // when true, else the distributed SMO (SolveBinaryDistributed).
  bool batched = false;
  BatchOptions batch;
  // Spread pairs: the one-process solver each rank runs on its own pairs (empty: SolveBinary); MakeBinarySolver's
  // choice, so `--solver batch` and `--device cuda` (one GPU per rank) apply there.
  BinarySolver spread_solver;
  // When not empty, shared pairs are refused with this message on every rank (a solver that only runs whole pairs,
  // such as the CUDA one).
  std::string shared_refusal;
  // Shared pairs, SMO: rebalance active samples when a rank's share exceeds this times the mean (0: never;
  // DistBinaryProblem::rebalance).
  double rebalance = 1.2;
  // Shared pairs, SMO: predict each solve's time on this network (DistStats::predicted_seconds).
  std::optional<comm::NetworkModel> network;
  // When set, every problem shared by the ranks starts from its saved alpha (if any) and keeps its alpha replicated
  // for the just-in-time state; pairs are then always shared (kAuto: kShared; kSpread is refused).
  SvmElasticState* elastic = nullptr;
};

// The fits of -b 1 and the folds of -v over the ranks (FitRunner): task t runs on rank t mod K (a rank's tasks
// concurrently), the results are shared by one allgatherv, and a task that throws on any rank ends every rank with
// its message. Its solver is the one-process SolveBinary. `comm` must outlive the runner.
FitRunner RankFitRunner(comm::Communicator& comm);

// Collective: every rank passes the same dataset (each rank reads the file; the ranks compare its size, features,
// non-zeros and a checksum of labels and entries first, and all fail with the same message when they differ) and
// the same parameters, of any type (nu-SVC, one-class and the regressions with the SMO solver: --solver batch is
// C-SVC's). Throws on every rank when there are more ranks than rows. The report and the model are the same on
// every rank.
SvmModel TrainSvmDistributed(comm::Communicator& comm, const datasets::SparseRowDataset& data, const SvmParams& params,
                             TrainReport* report = nullptr, DistTrainStats* stats = nullptr,
                             const DistTrainOptions& options = {});

}  // namespace tessel::svm

namespace tessel {
TESSEL_ENUM_NAMES(svm::PairSchedule, {svm::PairSchedule::kAuto, "auto"}, {svm::PairSchedule::kShared, "shared"},
                  {svm::PairSchedule::kSpread, "spread"});
}  // namespace tessel
