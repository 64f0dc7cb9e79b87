// The checking macros for CUDA runtime, cuBLAS and cuSPARSE calls: each failure becomes tessel::Error with
// the library's own message and the call site. Include only from .cu files (it pulls in CUDA headers).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <fmt/format.h>

#include "core/device.h"
#include "core/error.h"

namespace tessel::cuda {

[[noreturn]] inline void ThrowCuda(cudaError_t e, const char* call, const char* file, int line) {
  throw Error(
      fmt::format("CUDA error {} ({}) in {} at {}:{}", cudaGetErrorName(e), cudaGetErrorString(e), call, file, line));
}
[[noreturn]] inline void ThrowCublas(cublasStatus_t s, const char* call, const char* file, int line) {
  throw Error(fmt::format("cuBLAS error {} ({}) in {} at {}:{}", cublasGetStatusName(s), cublasGetStatusString(s), call,
                          file, line));
}
[[noreturn]] inline void ThrowCusparse(cusparseStatus_t s, const char* call, const char* file, int line) {
  throw Error(fmt::format("cuSPARSE error {} ({}) in {} at {}:{}", cusparseGetErrorName(s), cusparseGetErrorString(s),
                          call, file, line));
}

}  // namespace tessel::cuda

#define TESSEL_CUDA_CHECK(call)                                                                    \
  do {                                                                                             \
    const cudaError_t tessel_e_ = (call);                                                          \
    if (tessel_e_ != cudaSuccess) ::tessel::cuda::ThrowCuda(tessel_e_, #call, __FILE__, __LINE__); \
  } while (0)
#define TESSEL_CUBLAS_CHECK(call)                                                                              \
  do {                                                                                                         \
    const cublasStatus_t tessel_s_ = (call);                                                                   \
    if (tessel_s_ != CUBLAS_STATUS_SUCCESS) ::tessel::cuda::ThrowCublas(tessel_s_, #call, __FILE__, __LINE__); \
  } while (0)
#define TESSEL_CUSPARSE_CHECK(call)                                                                                \
  do {                                                                                                             \
    const cusparseStatus_t tessel_s_ = (call);                                                                     \
    if (tessel_s_ != CUSPARSE_STATUS_SUCCESS) ::tessel::cuda::ThrowCusparse(tessel_s_, #call, __FILE__, __LINE__); \
  } while (0)
// Checks the last kernel launch, and tallies it (Counters::launches_seen: the launches the CUDA code made, which
// tests compare with what the shared layer counts).
#define TESSEL_CUDA_CHECK_LAUNCH()         \
  do {                                     \
    ::tessel::device::NoteLaunchesSeen(1); \
    TESSEL_CUDA_CHECK(cudaGetLastError()); \
  } while (0)
