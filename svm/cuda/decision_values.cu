// Decision values of a C-SVC model on CUDA: kernel rows of the support vectors against the query rows (cuSPARSE,
// float64, kernels/cuda/svm_kernel.cu) accumulated per one-vs-one pair on the device; voting stays on the host
// (svm/cuda/svm_ops.cc). Device arrays come from the counted pool.
#include <algorithm>
#include <memory>
#include <numeric>
#include <vector>

#include "core/cuda_check.h"
#include "core/device.h"
#include "svm/cuda/decision_values_cuda.h"

namespace tessel::svm::cuda {
namespace {

constexpr int kThreads = 256;

int Blocks(int64_t n) { return static_cast<int>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 65535 * 32)); }

__global__ void AccumulateDecisions(int64_t n, int64_t m, int64_t pairs, const double* __restrict__ k,
                                    const double* __restrict__ coef, int64_t nsv, int64_t offset,
                                    double* __restrict__ out) {
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < n * pairs;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t p = idx / n;
    const int64_t x = idx - p * n;
    double v = out[idx];
    for (int64_t t = 0; t < m; ++t) v += coef[p * nsv + offset + t] * k[t * n + x];
    out[idx] = v;
  }
}

}  // namespace

std::vector<double> DecisionValuesCuda(const kernels::cuda::HostCsr& data, int64_t num_queries,
                                       const kernels::cuda::KernelSpec& kernel, const double* coef, int64_t pairs,
                                       const double* rho) {
  const int64_t nsv = data.num_rows - num_queries;
  kernels::cuda::SvmKernelRowsCuda rows(data, kernel);
  std::vector<int32_t> h_ids(static_cast<size_t>(data.num_rows));
  std::iota(h_ids.begin(), h_ids.end(), 0);
  device::Array<int32_t> ids;
  ids.Upload(h_ids.data(), h_ids.size());
  rows.SetColumns(0, ids.data(), num_queries);
  std::vector<double> init(static_cast<size_t>(pairs * num_queries));
  for (int64_t p = 0; p < pairs; ++p)
    std::fill(init.begin() + p * num_queries, init.begin() + (p + 1) * num_queries, -rho[p]);
  device::Array<double> out;
  out.Upload(init.data(), init.size());
  device::Array<double> d_coef;
  d_coef.Upload(coef, static_cast<size_t>(pairs * nsv));
  constexpr int64_t kChunk = 1024;
  const device::Array<double> k(static_cast<size_t>(std::min(kChunk, std::max<int64_t>(nsv, 1)) * num_queries));
  for (int64_t b = 0; b < nsv; b += kChunk) {
    const int64_t m = std::min(kChunk, nsv - b);
    rows.KRows(0, ids.data() + num_queries + b, m, k.data());
    AccumulateDecisions<<<Blocks(num_queries * pairs), kThreads>>>(num_queries, m, pairs, k.data(), d_coef.data(), nsv,
                                                                   b, out.data());
    TESSEL_CUDA_CHECK_LAUNCH();
  }
  std::vector<double> h(init.size());
  out.Download(h.data(), h.size());
  return h;
}

}  // namespace tessel::svm::cuda
