// The device runtime seen from host code without CUDA headers: device counts, memory, copies. core/device.cc
// forwards these to the CUDA runtime's table (core/device_cuda.cu) when the build has one; without it the queries
// answer "none" and memory calls throw "built without CUDA".
#pragma once

#include <cstddef>
#include <string>

namespace tessel::device {

// True when this binary was built with CUDA support.
bool BuiltWithCuda();
// Number of usable CUDA devices (0 in a CPU-only build or when the driver finds none; never throws).
int CudaDeviceCount();
// A one-line description ("NVIDIA H100 80GB HBM3, sm_90, 79.1 GiB") or why there is none.
std::string Describe(int device_id);

void SetDevice(int device_id);
void* Malloc(size_t bytes);
void Free(void* ptr) noexcept;
void CopyToDevice(void* dst, const void* src, size_t bytes);
void CopyToHost(void* dst, const void* src, size_t bytes);
void Synchronize();

// The CUDA runtime's entry points (core/device_ops.h's table pattern; C++17 for the .cu side).
struct RuntimeOps {
  int (*device_count)();
  std::string (*describe)(int device_id);
  void (*set_device)(int device_id);
  void* (*alloc)(size_t bytes);
  void (*release)(void* ptr) noexcept;
  void (*copy_to_device)(void* dst, const void* src, size_t bytes);
  void (*copy_to_host)(void* dst, const void* src, size_t bytes);
  void (*synchronize)();
};

}  // namespace tessel::device
