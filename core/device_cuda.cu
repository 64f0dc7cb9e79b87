// The device runtime of a CUDA build (core/device.h): device queries, memory and copies on the CUDA runtime.
// A machine without a driver or GPU reports 0 devices instead of throwing, so tests can skip cleanly.
#include <fmt/format.h>

#include "core/cuda_check.h"
#include "core/device.h"

namespace tessel::device {

bool BuiltWithCuda() { return true; }

int CudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return count;
}

std::string Describe(int device_id) {
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

void SetDevice(int device_id) { TESSEL_CUDA_CHECK(cudaSetDevice(device_id)); }

void* Malloc(size_t bytes) {
  void* p = nullptr;
  TESSEL_CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
}

void Free(void* ptr) noexcept {
  if (ptr != nullptr) cudaFree(ptr);
}

void CopyToDevice(void* dst, const void* src, size_t bytes) {
  TESSEL_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}

void CopyToHost(void* dst, const void* src, size_t bytes) {
  TESSEL_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

void Synchronize() { TESSEL_CUDA_CHECK(cudaDeviceSynchronize()); }

}  // namespace tessel::device
