// The device runtime seen from host code without CUDA headers: device counts, memory, copies.
// Implemented in device_cuda.cu in CUDA builds and device_none.cc otherwise (which throws "built without CUDA").
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

}  // namespace tessel::device
