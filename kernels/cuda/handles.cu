// Per-thread cuBLAS / cuSPARSE handles and grow-only device scratch for the CUDA kernels (launch_cuda.h).
// Lifetime: created lazily on the calling thread's current device (one set per device), released when the thread
// exits.
#include <cub/device/device_scan.cuh>

#include <array>
#include <map>

#include "core/device.h"
#include "kernels/cuda/launch_cuda.h"

namespace tessel::kernels::cuda {
namespace {

struct ThreadResources {
  cublasHandle_t cublas = nullptr;
  cusparseHandle_t cusparse = nullptr;
  std::array<void*, static_cast<size_t>(ScratchSlot::kCount)> scratch{};
  std::array<size_t, static_cast<size_t>(ScratchSlot::kCount)> scratch_bytes{};

  ThreadResources() = default;
  ThreadResources(const ThreadResources&) = delete;
  ThreadResources& operator=(const ThreadResources&) = delete;
  // Statuses are ignored: at process exit the runtime may already be unloading, and a destructor must not throw.
  ~ThreadResources() {
    if (cublas != nullptr) cublasDestroy(cublas);
    if (cusparse != nullptr) cusparseDestroy(cusparse);
    for (void* p : scratch) device::Free(p);  // back to the pool (null is ignored)
  }
};

// One set per device the thread has used: handles and scratch belong to the device that was current when they were
// made, so a thread that changes device (a Python session training on device 1, then on device 0) gets that
// device's.
ThreadResources& Resources() {
  thread_local std::map<int, ThreadResources> per_device;
  int device_id = 0;
  TESSEL_CUDA_CHECK(cudaGetDevice(&device_id));
  return per_device[device_id];
}

}  // namespace

cublasHandle_t CublasHandle() {
  ThreadResources& r = Resources();
  if (r.cublas == nullptr) {
    TESSEL_CUBLAS_CHECK(cublasCreate(&r.cublas));
    // Plain FP32 (no TF32 tensor-core rounding), so results stay within float32 error of the CPU oracle.
    TESSEL_CUBLAS_CHECK(cublasSetMathMode(r.cublas, CUBLAS_PEDANTIC_MATH));
  }
  return r.cublas;
}

cusparseHandle_t CusparseHandle() {
  ThreadResources& r = Resources();
  if (r.cusparse == nullptr) TESSEL_CUSPARSE_CHECK(cusparseCreate(&r.cusparse));
  return r.cusparse;
}

void* Scratch(ScratchSlot slot, size_t bytes) {
  ThreadResources& r = Resources();
  const auto k = static_cast<size_t>(slot);
  if (r.scratch_bytes[k] < bytes || r.scratch[k] == nullptr) {
    device::Free(r.scratch[k]);
    r.scratch[k] = nullptr;
    r.scratch_bytes[k] = 0;
    const size_t grown = bytes + bytes / 4 + 256;  // headroom so slowly growing sizes do not reallocate each call
    r.scratch[k] = device::Malloc(grown);          // the pool, counted (core/device.h)
    r.scratch_bytes[k] = grown;
  }
  return r.scratch[k];
}

template <typename T>
void ScanInPlace(T* a, int64_t n, bool inclusive) {
  if (n <= 0) return;
  size_t bytes = 0;
  if (inclusive) {
    TESSEL_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, a, a, n));
    TESSEL_CUDA_CHECK(cub::DeviceScan::InclusiveSum(Scratch(ScratchSlot::kScan, bytes), bytes, a, a, n));
    ::tessel::device::NoteLaunchesSeen(2);
  } else {
    TESSEL_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, a, a, n));
    TESSEL_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(Scratch(ScratchSlot::kScan, bytes), bytes, a, a, n));
    ::tessel::device::NoteLaunchesSeen(2);
  }
}

void InclusiveSumInPlace(int32_t* a, int64_t n) { ScanInPlace(a, n, true); }
void ExclusiveSumInPlace(int64_t* a, int64_t n) { ScanInPlace(a, n, false); }

}  // namespace tessel::kernels::cuda
