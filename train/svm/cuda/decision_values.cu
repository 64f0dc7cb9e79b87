// Decision values of a C-SVC model on CUDA: kernel rows of the support vectors against the query rows (cuSPARSE,
// float64, kernels/cuda/svm_kernel.cu) accumulated per one-vs-one pair on the device; voting stays on the host
// (train/svm/cuda/svm_ops.cc).
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/sequence.h>
#include <thrust/system_error.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/cuda_check.h"
#include "train/svm/cuda/decision_values_cuda.h"

namespace tessel::train::svm::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
T* Raw(thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}
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
  try {
    const int64_t nsv = data.num_rows - num_queries;
    kernels::cuda::SvmKernelRowsCuda rows(data, kernel);
    thrust::device_vector<int32_t> ids(data.num_rows);
    thrust::sequence(thrust::device, ids.begin(), ids.end(), 0);
    rows.SetColumns(0, Raw(ids), num_queries);
    std::vector<double> init(static_cast<size_t>(pairs * num_queries));
    for (int64_t p = 0; p < pairs; ++p)
      std::fill(init.begin() + p * num_queries, init.begin() + (p + 1) * num_queries, -rho[p]);
    thrust::device_vector<double> out(init.begin(), init.end());
    thrust::device_vector<double> d_coef(coef, coef + pairs * nsv);
    constexpr int64_t kChunk = 1024;
    thrust::device_vector<double> k(static_cast<size_t>(std::min(kChunk, std::max<int64_t>(nsv, 1)) * num_queries));
    for (int64_t b = 0; b < nsv; b += kChunk) {
      const int64_t m = std::min(kChunk, nsv - b);
      rows.KRows(0, Raw(ids) + num_queries + b, m, Raw(k));
      AccumulateDecisions<<<Blocks(num_queries * pairs), kThreads>>>(num_queries, m, pairs, Raw(k), Raw(d_coef), nsv, b,
                                                                     Raw(out));
      TESSEL_CUDA_CHECK_LAUNCH();
    }
    std::vector<double> h(out.size());
    thrust::copy(out.begin(), out.end(), h.begin());
    return h;
  } catch (const thrust::system_error& e) {
    throw Error(fmt::format("CUDA decision values: {}", e.what()));
  }
}

}  // namespace tessel::train::svm::cuda
