// The SVM solvers' device table (core/device_ops.h): the device-dependent operations of C-SVC training and
// prediction, a CPU instance (batch_solver.cc, svm_model.cc) and, in CUDA builds, a CUDA instance
// (svm/cuda/svm_ops.cc). svm/device_registry.cc is the one file that knows whether it was built.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "core/context.h"
#include "datasets/dataset.h"
#include "svm/batch_solver.h"
#include "svm/svm_model.h"
#include "svm/svm_train.h"

namespace tessel::svm {

namespace devloop {
class LoopDevice;
struct LoopResult;
}  // namespace devloop

// What the device loop takes (every formulation: the linear term, the starting alpha and Solver_NU's selection are
// the loop's data, LoopProblem): the CUDA and simulated tables' batched_takes.
inline constexpr SolverTakes kDeviceLoopTakes{"--device cuda (the device loop)", true};

struct SvmDeviceOps {
  // The batched solver (batch_solver.h). The CUDA entry runs the device loop (svm/device_loop.h) on the
  // current CUDA device: kernel rows by cuSPARSE into a device row cache, selection by a device top-k, the
  // subproblem in one thread block (q <= 1024), elimination on the device; problem.kernel supplies the rows and
  // kernel parameters. On the simulated device (tests) the same loop runs over host twins.
  SolverResult (*solve_batched)(const BinaryProblem& problem, const SolverOptions& options, const BatchOptions& batch,
                                BatchStats* stats);
  // Predicted labels (PredictSvm's meaning). CUDA: float64 kernel and decision values on the device (cuSPARSE dot
  // products, RBF through squared norms), voting on the host.
  std::vector<double> (*predict)(const SvmModel& model, const datasets::SparseRowDataset& data);
  // The device loop's raw operations over a kernel's rows and parameters (svm/device_loop.h): the CUDA
  // kernels, or the host twins on the simulated device; null in the CPU table.
  std::unique_ptr<devloop::LoopDevice> (*loop_device)(kernels::SvmKernelRows& kernel);
  // What solve_batched takes (CheckSolverTakes, smo_solver.h).
  SolverTakes batched_takes = kDeviceLoopTakes;
};

namespace cuda {
extern const SvmDeviceOps kSvmCudaOps;  // svm/cuda/svm_ops.cc, CUDA builds only
}  // namespace cuda

// The batched solver on a device loop (svm/device_loop.h: the CUDA kernels, or their host twins on the
// simulated device): the problem's checks, the loop, and its final state turned into SolveBinary's result by the
// host solvers' own code (FillSolution). `loop`, when given, receives the loop's own counts.
SolverResult SolveOnLoopDevice(devloop::LoopDevice& dev, const BinaryProblem& problem, const SolverOptions& options,
                               const BatchOptions& batch, BatchStats* stats, devloop::LoopResult* loop = nullptr);

// The table for ctx's device; throws "built without CUDA" (or no such device) when CUDA is asked for and absent.
const SvmDeviceOps& SvmOps(const Context& ctx);

// SolveBinaryBatched and PredictSvm on ctx's device.
SolverResult SolveBinaryBatched(const Context& ctx, const BinaryProblem& problem, const SolverOptions& options,
                                const BatchOptions& batch = {}, BatchStats* stats = nullptr);
std::vector<double> PredictSvm(const Context& ctx, const SvmModel& model, const datasets::SparseRowDataset& data);

// `train svm`'s choice of binary solver: "smo" (LIBSVM's SMO, SolveBinary) or "batch" (SolveBinaryBatched) on the
// CPU; on CUDA always the batched solver, one binary problem on the device at a time. Throws naming the choices.
BinarySolver MakeBinarySolver(const Context& ctx, std::string_view solver, const BatchOptions& batch);
// What MakeBinarySolver's choice takes (its table's field on CUDA; on the CPU the SMO and the cached batched solver
// take every formulation); `train svm` checks it (CheckSolverTakes) before reading the data.
SolverTakes BinarySolverTakes(const Context& ctx, std::string_view solver);

}  // namespace tessel::svm
