// The SVM solvers' CUDA entries (the device table of svm/svm_ops.h): the batched solver and the decision
// values on the current CUDA device, over the device loop (svm/device_loop.h, svm/cuda/loop_device.cu)
// and svm/cuda/decision_values.cu. Host C++, compiled only in CUDA builds.
#include <algorithm>
#include <memory>
#include <vector>

#include "core/error.h"
#include "core/parallel.h"
#include "kernels/cuda/svm_kernel_cuda.h"
#include "svm/cuda/decision_values_cuda.h"
#include "svm/device_loop.h"
#include "svm/solver_common.h"
#include "svm/svm_ops.h"

namespace tessel::svm {
namespace {

// The device loop's CUDA operations over the kernel's rows (uploaded once) and parameters.
std::unique_ptr<devloop::LoopDevice> LoopDeviceCuda(kernels::SvmKernelRows& kernel) {
  const kernels::SparseRowsView& v = kernel.rows();
  const kernels::SvmKernelParams& k = kernel.params();
  const kernels::cuda::HostCsr rows{v.indptr.data(), v.indices.data(), v.values.data(), v.num_rows(), v.num_cols};
  const kernels::cuda::KernelSpec spec{static_cast<int>(k.type), k.degree, k.gamma, k.coef0};
  return devloop::MakeCudaLoopDevice(rows, spec);
}

SolverResult SolveBatchedCuda(const BinaryProblem& problem, const SolverOptions& options, const BatchOptions& batch,
                              BatchStats* stats) {
  TESSEL_CHECK(problem.kernel != nullptr, "SolveBinaryBatched (cuda): no kernel");
  const std::unique_ptr<devloop::LoopDevice> dev = LoopDeviceCuda(*problem.kernel);
  return SolveOnLoopDevice(*dev, problem, options, batch, stats);
}

std::vector<double> PredictCuda(const SvmModel& model, const datasets::SparseRowDataset& data) {
  model.Validate();
  const auto indices = data.indices.Host();  // features beyond the model's widen dim below (as PredictSvm)
  // One CSR: the query rows, then the support vectors.
  const auto q_ptr = data.indptr.Host();
  const auto values = data.values.Host();
  std::vector<int64_t> indptr(q_ptr.begin(), q_ptr.end());
  std::vector<int32_t> idx(indices.begin(), indices.end());
  std::vector<double> val(values.begin(), values.end());
  const int64_t base = indptr.back();
  for (size_t s = 1; s < model.sv_indptr.size(); ++s) indptr.push_back(base + model.sv_indptr[s]);
  idx.insert(idx.end(), model.sv_indices.begin(), model.sv_indices.end());
  val.insert(val.end(), model.sv_values.begin(), model.sv_values.end());
  int64_t dim = std::max<int64_t>(model.num_features, 1);
  for (const int32_t f : idx) dim = std::max<int64_t>(dim, int64_t{f} + 1);
  const int64_t l = model.total_sv();
  const bool classes = IsClassification(model.type);
  const int32_t nc = model.nr_class;
  const int64_t pairs = classes ? int64_t{nc} * (nc - 1) / 2 : 1;
  // coef[p][s]: LIBSVM's sv_coef entries of pair p = (i, j) for the SVs of classes i and j, 0 elsewhere; one-class
  // and the regressions: the one row of coefficients.
  std::vector<int64_t> start(static_cast<size_t>(nc), 0);
  for (int32_t c = 1; c < nc && classes; ++c) start[c] = start[c - 1] + model.nr_sv[c - 1];
  std::vector<double> coef(static_cast<size_t>(pairs * l), 0.0);
  if (!classes) coef.assign(model.sv_coef.begin(), model.sv_coef.end());
  int64_t p = 0;
  for (int32_t i = 0; i < nc && classes; ++i) {
    for (int32_t j = i + 1; j < nc; ++j, ++p) {
      for (int64_t k = 0; k < model.nr_sv[i]; ++k)
        coef[p * l + start[i] + k] = model.sv_coef[static_cast<size_t>((j - 1) * l + start[i] + k)];
      for (int64_t k = 0; k < model.nr_sv[j]; ++k)
        coef[p * l + start[j] + k] = model.sv_coef[static_cast<size_t>(i * l + start[j] + k)];
    }
  }
  const int64_t n = data.num_rows;
  const kernels::cuda::HostCsr csr{indptr.data(), idx.data(), val.data(), n + l, dim};
  const kernels::cuda::KernelSpec spec{static_cast<int>(model.kernel.type), model.kernel.degree, model.kernel.gamma,
                                       model.kernel.coef0};
  const std::vector<double> dec = cuda::DecisionValuesCuda(csr, n, spec, coef.data(), pairs, model.rho.data());
  std::vector<double> out(static_cast<size_t>(n));
  if (!classes) {  // LIBSVM: one-class by the sign of the decision value, the regressions the value itself
    for (int64_t r = 0; r < n; ++r) out[r] = model.type == SvmType::kOneClass ? (dec[r] > 0 ? 1 : -1) : dec[r];
    return out;
  }
  parallel_for<int64_t>(0, n, 1024, [&](int64_t r) {
    std::vector<int32_t> vote(static_cast<size_t>(nc), 0);
    int64_t pp = 0;
    for (int32_t i = 0; i < nc; ++i)
      for (int32_t j = i + 1; j < nc; ++j, ++pp) ++vote[dec[static_cast<size_t>(pp * n + r)] > 0 ? i : j];
    int32_t best = 0;
    for (int32_t c = 1; c < nc; ++c)
      if (vote[c] > vote[best]) best = c;
    out[r] = model.labels[best];
  });
  return out;
}
}  // namespace

namespace cuda {
const SvmDeviceOps kSvmCudaOps{
    .solve_batched = SolveBatchedCuda, .predict = PredictCuda, .loop_device = LoopDeviceCuda};
}  // namespace cuda

}  // namespace tessel::svm
