// The CUDA entries of the device runtime (the table core/device.cc forwards core/device.h's functions to): device
// queries, memory and copies on the CUDA runtime. Compiled only in CUDA builds. A machine without a driver or GPU
// reports 0 devices instead of throwing, so tests can skip cleanly.
#include <fmt/format.h>

#include "core/cuda_check.h"
#include "core/device.h"
#include "core/pinned_memory.h"

namespace tessel::device {
namespace {

int CudaDeviceCountCuda() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return count;
}

std::string DescribeCuda(int device_id) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return fmt::format("no CUDA device: {}", cudaGetErrorString(e));
  }
  if (device_id < 0 || device_id >= count) return fmt::format("no CUDA device {} ({} visible)", device_id, count);
  cudaDeviceProp prop{};
  TESSEL_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_id));
  return fmt::format("{}, sm_{}{}, {:.1f} GiB", prop.name, prop.major, prop.minor,
                     static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
}

void SetDeviceCuda(int device_id) { TESSEL_CUDA_CHECK(cudaSetDevice(device_id)); }

int CurrentDeviceCuda() {
  int device_id = 0;
  TESSEL_CUDA_CHECK(cudaGetDevice(&device_id));
  return device_id;
}

void* MallocCuda(size_t bytes) {
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    // A failed allocation also sets the runtime's last error; left unread, the next kernel launch's check would
    // report it as that kernel's failure. Read it here: the failure belongs to this call.
    cudaGetLastError();
    ::tessel::cuda::ThrowCuda(e, "cudaMalloc", __FILE__, __LINE__);
  }
  return p;
}

void FreeCuda(void* ptr) noexcept {
  if (ptr != nullptr) cudaFree(ptr);
}

void CopyToDeviceCuda(void* dst, const void* src, size_t bytes) {
  TESSEL_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}

void CopyToHostCuda(void* dst, const void* src, size_t bytes) {
  TESSEL_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

void SynchronizeCuda() { TESSEL_CUDA_CHECK(cudaDeviceSynchronize()); }

void* MallocPinnedCuda(size_t bytes) {
  void* p = nullptr;
  const cudaError_t e = cudaMallocHost(&p, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();  // as MallocCuda: the failure belongs to this call
    ::tessel::cuda::ThrowCuda(e, "cudaMallocHost", __FILE__, __LINE__);
  }
  return p;
}

void FreePinnedCuda(void* ptr) noexcept {
  if (ptr != nullptr && cudaFreeHost(ptr) != cudaSuccess) cudaGetLastError();  // not the next launch's error
}

void* MallocMappedCuda(size_t bytes) {
  void* p = nullptr;
  const cudaError_t e = cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
  if (e != cudaSuccess) {
    cudaGetLastError();
    ::tessel::cuda::ThrowCuda(e, "cudaHostAlloc", __FILE__, __LINE__);
  }
  return p;
}

void* MappedDevicePointerCuda(void* host) {
  void* d = nullptr;
  TESSEL_CUDA_CHECK(cudaHostGetDevicePointer(&d, host, 0));
  return d;
}

MemoryInfo MemoryInfoCuda() {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  TESSEL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return MemoryInfo{static_cast<int64_t>(free_bytes), static_cast<int64_t>(total_bytes)};
}

}  // namespace

extern const RuntimeOps kCudaRuntime;  // read by core/device.cc
const RuntimeOps kCudaRuntime{CudaDeviceCountCuda, DescribeCuda,  SetDeviceCuda,    CurrentDeviceCuda,
                              MallocCuda,          FreeCuda,      CopyToDeviceCuda, CopyToHostCuda,
                              SynchronizeCuda,     MemoryInfoCuda};
extern const PinnedOps kCudaPinned;  // read by core/device.cc
const PinnedOps kCudaPinned{MallocPinnedCuda, FreePinnedCuda, MallocMappedCuda, MappedDevicePointerCuda};

}  // namespace tessel::device
