// CUDA row gather: out[i, :] = src[ids[i], :], one thread per output value (grid-stride loop).
// The CPU twin in kernels/cpu/gather.cc is the test oracle (tests/kernels/gather_test.cc).
#include "core/cuda_check.h"
#include "kernels/cuda/gather_cuda.h"

namespace tessel::kernels::cuda {
namespace {

__global__ void GatherRowsKernel(const float* __restrict__ src, int64_t cols, const int64_t* __restrict__ ids,
                                 int64_t n, float* __restrict__ out) {
  const int64_t total = n * cols;
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = k / cols;
    const int64_t j = k - i * cols;
    out[k] = src[ids[i] * cols + j];
  }
}

}  // namespace

void GatherRows(const float* src, int64_t cols, const int64_t* ids, int64_t n, float* out) {
  const int64_t total = n * cols;
  if (total == 0) return;
  constexpr int kThreads = 256;
  const int64_t blocks = (total + kThreads - 1) / kThreads;
  const int grid = static_cast<int>(blocks < 65535 * 16 ? blocks : 65535 * 16);
  GatherRowsKernel<<<grid, kThreads>>>(src, cols, ids, n, out);
  TESSEL_CUDA_CHECK_LAUNCH();
  TESSEL_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace tessel::kernels::cuda
