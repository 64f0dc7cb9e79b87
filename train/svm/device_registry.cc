// The SVM solvers' device registry and the functions that pick from it (train/svm/svm_ops.h): the CPU table, and
// the CUDA table when this build compiled train/svm/cuda/ (the one place in the library that asks).
#include <memory>
#include <mutex>
#include <string>

#include "core/build_config.h"
#include "core/device_ops.h"
#include "core/error.h"
#include "core/log.h"
#include "train/svm/dist_solver.h"
#include "train/svm/svm_ops.h"

namespace tessel::train::svm {
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

constexpr SvmDeviceOps kCpuTable{.solve_batched = SolveBatchedCpu, .predict = PredictCpu};

}  // namespace

const SvmDeviceOps& SvmOps(const Context& ctx) { return SelectOps(ctx, kCpuTable, kCudaTable, "svm"); }

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
    // The host batched algorithm with a kernel-row cache across rounds (the table's CPU entry, the CUDA solver's
    // twin, recomputes every row).
    return [batch](const BinaryProblem& problem, const SolverOptions& o) {
      return SolveBinaryBatchedCached(problem, o, batch);
    };
  }
  return {};  // TrainSvm's default: SolveBinary
}

}  // namespace tessel::train::svm
