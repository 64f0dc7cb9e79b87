// The SVM solvers' device registry and the functions that pick from it (svm/svm_ops.h): the CPU table, and
// the CUDA table when this build compiled svm/cuda/ (the one place in the library that asks).
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "core/build_config.h"
#include "core/device_ops.h"
#include "core/error.h"
#include "core/log.h"
#include "svm/device_loop.h"
#include "svm/dist_solver.h"
#include "svm/solver_common.h"
#include "svm/svm_ops.h"

namespace tessel::svm {
namespace {

#if TESSEL_HAVE_CUDA
constexpr const SvmDeviceOps* kCudaTable = &cuda::kSvmCudaOps;
#else
constexpr const SvmDeviceOps* kCudaTable = nullptr;
#endif

SolverResult SolveBatchedCpu(const BinaryProblem& problem, const SolverOptions& options, const BatchOptions& batch,
                             BatchStats* stats) {
  return SolveBinaryBatched(problem, options, batch, stats);
}

std::vector<double> PredictCpu(const SvmModel& model, const datasets::SparseRowDataset& data) {
  return PredictSvm(model, data);
}

constexpr SvmDeviceOps kCpuTable{.solve_batched = SolveBatchedCpu,
                                 .predict = PredictCpu,
                                 .loop_device = nullptr,
                                 .batched_takes = kHostBatchedTakes};

// The simulated device: the device loop over host twins (predictions on the host: the decision values have no
// simulated twin).
SolverResult SolveBatchedSimulated(const BinaryProblem& problem, const SolverOptions& options,
                                   const BatchOptions& batch, BatchStats* stats) {
  const std::unique_ptr<devloop::LoopDevice> dev = devloop::MakeTwinLoopDevice(*problem.kernel);
  return SolveOnLoopDevice(*dev, problem, options, batch, stats);
}

constexpr SvmDeviceOps kSimulatedTable{
    .solve_batched = SolveBatchedSimulated, .predict = PredictCpu, .loop_device = devloop::MakeTwinLoopDevice};

}  // namespace

const SvmDeviceOps& SvmOps(const Context& ctx) {
  return SelectOps(ctx, kCpuTable, kCudaTable, "svm", &kSimulatedTable);
}

SolverResult SolveOnLoopDevice(devloop::LoopDevice& dev, const BinaryProblem& problem, const SolverOptions& options,
                               const BatchOptions& batch, BatchStats* stats, devloop::LoopResult* loop) {
  CheckBatchedProblem(problem, kDeviceLoopTakes);
  TESSEL_CHECK(!problem.rows.empty(), "SolveBinaryBatched (device): no samples");
  TESSEL_CHECK(problem.y.size() == problem.rows.size(), "SolveBinaryBatched (device): {} labels for {} samples",
               problem.y.size(), problem.rows.size());
  CheckBinaryLabels(problem, "SolveBinaryBatched (device)");
  TESSEL_CHECK(problem.p.empty() || problem.p.size() == problem.rows.size(),
               "SolveBinaryBatched (device): {} linear terms for {} samples", problem.p.size(), problem.rows.size());
  TESSEL_CHECK(problem.alpha0.empty() || problem.alpha0.size() == problem.rows.size(),
               "SolveBinaryBatched (device): {} starting alphas for {} samples", problem.alpha0.size(),
               problem.rows.size());
  batch.Validate(problem.nu);
  TESSEL_CHECK(batch.working_set <= devloop::kMaxQ,
               "--working-set {} exceeds the device solver's {} (one thread block)", batch.working_set, devloop::kMaxQ);
  devloop::LoopProblem p;
  p.sample_rows = problem.rows.data();
  p.y = problem.y.data();
  p.l = static_cast<int64_t>(problem.rows.size());
  p.cp = problem.Cp;
  p.cn = problem.Cn;
  p.p = problem.p.empty() ? nullptr : problem.p.data();
  p.alpha0 = problem.alpha0.empty() ? nullptr : problem.alpha0.data();
  p.nu = problem.nu;
  p.eps = options.eps;
  p.shrinking = options.shrinking;
  p.max_iterations = options.max_iterations;
  p.working_set = batch.working_set;
  p.inner_limit = batch.inner_limit;
  p.inner_factor = batch.inner_factor;
  p.cache_bytes = options.cache_bytes;
  const auto start = std::chrono::steady_clock::now();
  devloop::LoopResult c = devloop::RunDeviceLoop(dev, p);
  SolverResult r;
  FillSolution(FinalState{problem.y, c.status, c.a, c.g, {}, problem.Cp, problem.Cn, problem.p, problem.nu}, &r);
  ForEachSolveCount([](const char* /*name*/, auto& to, const auto& from) { to = from; }, r, c);
  r.hit_iteration_limit = c.hit_iteration_limit;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.device = c;  // its RoundCounts
  if (stats != nullptr) stats->rounds = c.rounds;
  if (loop != nullptr) *loop = std::move(c);
  return r;
}

SolverResult SolveBinaryBatched(const Context& ctx, const BinaryProblem& problem, const SolverOptions& options,
                                const BatchOptions& batch, BatchStats* stats) {
  return SvmOps(ctx).solve_batched(problem, options, batch, stats);
}

std::vector<double> PredictSvm(const Context& ctx, const SvmModel& model, const datasets::SparseRowDataset& data) {
  if (const int64_t wide = RowsBeyondModelFeatures(model, data); wide > 0) {
    log::Warn(
        "{}: {} of {} rows use features beyond the model's {} ({}); they enter the kernel as svm-predict uses "
        "them",
        data.name.empty() ? "data" : data.name, wide, data.num_rows, model.num_features,
        model.num_features_known ? "the training data's, from the model's sidecar"
                                 : "the support vectors' largest feature id: the model has no sidecar");
  }
  return SvmOps(ctx).predict(model, data);
}

BinarySolver MakeBinarySolver(const Context& ctx, std::string_view solver, const BatchOptions& batch) {
  TESSEL_CHECK(solver == "smo" || solver == "batch",
               "--solver '{}': use smo (LIBSVM's SMO) or batch (ThunderSVM's batched working sets)", solver);
  const SvmDeviceOps& ops = SvmOps(ctx);  // throws here, before any data is read, when CUDA is missing
  if (ctx.IsCuda()) {
    // The batched solver only; binary problems take the device one at a time.
    auto lock = std::make_shared<std::mutex>();
    return [&ops, batch, lock](const BinaryProblem& problem, const SolverOptions& o) {
      std::lock_guard<std::mutex> hold(*lock);
      return ops.solve_batched(problem, o, batch, nullptr);
    };
  }
  if (solver == "batch") {
    // The host batched algorithm with a kernel-row cache across rounds (the table's CPU entry, SolveBinaryBatched,
    // recomputes every row; it is the reference the device loop matches step for step).
    return [batch](const BinaryProblem& problem, const SolverOptions& o) {
      return SolveBinaryBatchedCached(problem, o, batch);
    };
  }
  return {};  // TrainSvm's default: SolveBinary
}

SolverTakes BinarySolverTakes(const Context& ctx, std::string_view solver) {
  if (ctx.IsCuda()) return SvmOps(ctx).batched_takes;
  return solver == "batch" ? kCachedBatchTakes : SolverTakes{"--solver smo", true};
}

}  // namespace tessel::svm
