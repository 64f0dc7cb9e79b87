// The device-copy baseline of gpu_kernels_bench: cudaMemcpy device-to-device bandwidth timed with CUDA events.
// Kept in a .cu file so the benchmark's C++20 code needs no CUDA headers.
#include <cstddef>

#include "core/cuda_check.h"

namespace tessel::bench {

// Bytes read plus bytes written per second of `reps` copies of `bytes` (after one warm-up copy).
double DeviceCopyBandwidth(size_t bytes, int reps) {
  void* src = nullptr;
  void* dst = nullptr;
  TESSEL_CUDA_CHECK(cudaMalloc(&src, bytes));
  TESSEL_CUDA_CHECK(cudaMalloc(&dst, bytes));
  TESSEL_CUDA_CHECK(cudaMemset(src, 1, bytes));
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  TESSEL_CUDA_CHECK(cudaEventCreate(&start));
  TESSEL_CUDA_CHECK(cudaEventCreate(&stop));
  TESSEL_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
  TESSEL_CUDA_CHECK(cudaEventRecord(start));
  for (int i = 0; i < reps; ++i) TESSEL_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
  TESSEL_CUDA_CHECK(cudaEventRecord(stop));
  TESSEL_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  TESSEL_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(src);
  cudaFree(dst);
  return 2.0 * static_cast<double>(bytes) * reps / (static_cast<double>(ms) * 1e-3);
}

}  // namespace tessel::bench
