// C-SVC training on one process: LIBSVM's class grouping, class weights and one-vs-one decomposition, each
// binary problem solved by the SMO solver with sample elimination (svm/smo_solver.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/dataset.h"
#include "svm/glibc_rand.h"
#include "svm/smo_solver.h"
#include "svm/svm_model.h"
#include "svm/svm_params.h"

namespace tessel::svm {

// What happened in one binary problem (class_i against class_j).
struct PairReport {
  int32_t label_i = 0;
  int32_t label_j = 0;
  int64_t samples = 0;
  SolverResult result;  // alpha left empty
};

struct TrainReport {
  std::vector<PairReport> pairs;
  double gamma = 0;  // the gamma used (after the 1/num_features default)
  int64_t iterations = 0;
  int64_t kernel_evaluations = 0;
  double seconds = 0;
  // For the model sidecar and `--json`: totals and each pair's statistics, the first `max_pairs` pairs' only when
  // there are more (-1: all), with "pairs_total" the number of pairs (one-vs-one on k classes makes k(k-1)/2:
  // 1,124,250 for 1,500 classes, whose entries made a sidecar of 541 MB).
  nlohmann::json ToJson(int64_t max_pairs = -1) const;
};
// The pairs a model's sidecar and `train svm --json` list (TrainReport::ToJson).
inline constexpr int64_t kReportedPairs = 1000;

// The classes of `labels` in LIBSVM's order (first appearance; a -1/+1 pair puts +1 first) or ascending (`order`
// kSorted, scikit-learn's) and, per row, its class position. Throws unless every label is an integer.
struct ClassGroups {
  std::vector<int32_t> labels;
  std::vector<int32_t> row_class;
  std::vector<int64_t> count;
};
ClassGroups GroupClasses(const datasets::SparseRowDataset& data, ClassOrder order = ClassOrder::kFirstAppearance);

// Solves one binary problem (SolveBinary, SolveBinaryBatched, or MakeBinarySolver in svm_ops.h for a device).
using BinarySolver = std::function<SolverResult(const BinaryProblem&, const SolverOptions&)>;

// How the independent fits inside a training run are run: -b 1's five folds per pair (or the regressions' five
// folds) and -v's folds. `run(count, task)` runs task(0) ... task(count - 1) and returns their results in task
// order (empty: concurrently in this process); `solver` solves the fits' own problems (empty: SolveBinary). The
// distributed trainer gives each rank a share of the tasks and shares the results (RankFitRunner, dist_train.h);
// the answer does not depend on where a task ran. A task never calls `run` itself.
struct FitRunner {
  using Task = std::function<std::vector<double>(int64_t)>;
  std::function<std::vector<std::vector<double>>(int64_t count, const Task& task)> run;
  BinarySolver solver;
};

// Trains a C-SVC model. Throws on invalid parameters, labels that are not integers, or a single class.
// `solver` (default SolveBinary) solves each binary problem; one that is not thread-safe must serialise itself.
// With -b 1 (params.probability) the probability fits draw from `rand` (LIBSVM's rand(); default: a fresh generator
// with seed 1, as in a new svm-train process).
// `fits` (optional) runs -b 1's fits (FitRunner).
SvmModel TrainSvm(const datasets::SparseRowDataset& data, const SvmParams& params, TrainReport* report = nullptr,
                  const BinarySolver& solver = {}, ShuffleRand* rand = nullptr, const FitRunner* fits = nullptr);

// One binary problem of the one-vs-one decomposition: classes i < j (positions in TrainReport order), the data
// rows of its samples (class i's, then class j's, each in data order), their +1/-1 labels, the weighted C of each
// side, the kernel (gamma resolved) and the solver options (cache_mb of the whole run).
struct PairTask {
  int32_t class_i = 0;
  int32_t class_j = 0;
  const kernels::SparseRowsView* rows = nullptr;
  kernels::SvmKernelParams kernel;
  std::span<const int32_t> sub;
  std::span<const int8_t> y;
  double Cp = 1;
  double Cn = 1;
  SolverOptions options;
  // nu-SVC's pair (LIBSVM's solve_nu_svc): the linear term 0, the starting alpha, Solver_NU; empty for C-SVC.
  std::span<const double> p = {};
  std::span<const double> alpha0 = {};
  bool nu = false;

  // The pair as a BinaryProblem over `kernel` (a kernel over *rows with `kernel`'s parameters).
  BinaryProblem Problem(kernels::SvmKernelRows* k) const {
    BinaryProblem problem{k, sub, y, Cp, Cn};
    problem.p = p;
    problem.alpha0 = alpha0;
    problem.nu = nu;
    return problem;
  }
};
// Solves every task (in LIBSVM's pair order) and returns their results in the same order.
using PairsSolver = std::function<std::vector<SolverResult>(std::span<const PairTask>)>;

// TrainSvm's decomposition, class grouping, weights and model assembly with any way of solving the pairs (the
// distributed trainer solves them across ranks).
SvmModel TrainOneVsOne(const datasets::SparseRowDataset& data, const SvmParams& params, TrainReport* report,
                       const PairsSolver& solve_pairs, ShuffleRand* rand = nullptr, const FitRunner* fits = nullptr);

// Runs solve on every task, several pairs at once when there are threads for them; each concurrent pair gets an
// equal share of the cache budget, so -m stays the total. Results do not depend on the schedule.
std::vector<SolverResult> SolvePairsConcurrently(std::span<const PairTask> tasks,
                                                 const std::function<SolverResult(const PairTask&)>& solve);

}  // namespace tessel::svm
