// The device runtime seen from host code without CUDA headers: device counts, memory, copies. core/device.cc
// forwards these to the CUDA runtime's table (core/device_cuda.cu) when the build has one; without it the queries
// answer "none" and memory calls throw "built without CUDA". A simulated device (host memory behind the same table,
// ScopedSimulatedDevice) stands in for a GPU in tests of the device data flow.
//
// Memory comes from a caching pool: a freed block is kept and handed to the next request of about its size, so a
// training step that frees and re-allocates its temporaries makes no runtime allocation (cudaMalloc/cudaFree, which
// also synchronise) once the pool is warm. One stream (the legacy default) orders every kernel and copy, so a block
// freed by one operation is safe to reuse by the next. Every allocation, copy, kernel launch and synchronisation is
// counted (Counters), process-wide, the same way on a GPU and on the simulated device.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "core/grow_array.h"

namespace tessel::device {

// True when this binary was built with CUDA support.
bool BuiltWithCuda();
// Number of usable CUDA devices (0 in a CPU-only build or when the driver finds none; never throws).
int CudaDeviceCount();
// A one-line description ("NVIDIA H100 80GB HBM3, sm_90, 79.1 GiB") or why there is none.
std::string Describe(int device_id);

// The calling thread's device (cudaSetDevice / cudaGetDevice): every allocation, copy and kernel of that thread
// goes there. Each rank (an MPI process, or a thread of the thread backend) sets its own.
void SetDevice(int device_id);
int CurrentDevice();
void* Malloc(size_t bytes);
void Free(void* ptr) noexcept;
void CopyToDevice(void* dst, const void* src, size_t bytes);
// A download: the host waits for the device (cudaMemcpy to pageable memory), so it also counts as a
// synchronisation.
void CopyToHost(void* dst, const void* src, size_t bytes);
void Synchronize();

// Kernel launches, counted by the layer the CUDA code and its host twins share (kernels/device_wrappers.h, the SVM
// loop's and the GPU sampler's device tables), as many as the CUDA code launches for the same call: every
// <<<...>>> kernel, every cudaMemset, every cuBLAS / cuSPARSE call that runs on the device, and two per CUB
// algorithm call (its init and its main pass). So the simulated device counts what a GPU would launch.
void CountLaunches(int64_t n = 1);
// The CUDA code's own tally at the launch sites (core/cuda_check.h TESSEL_CUDA_CHECK_LAUNCH and the library calls):
// Counters::launches_seen, 0 on the simulated device. On a GPU it must equal launches
// (tests/core/device_counts_gpu_test).
void NoteLaunchesSeen(int64_t n = 1);

// The device's free and total memory in bytes (cudaMemGetInfo; the simulated device's capacity, or the host's
// memory). Blocks the pool caches count as free. Each device has its own blocks in the pool: a block freed on one
// device serves later requests on that device only.
struct MemoryInfo {
  int64_t free_bytes = 0;
  int64_t total_bytes = 0;
};
MemoryInfo ReadMemoryInfo();

// Process-wide counts of the device runtime's work since the start (all threads). Differences of two readings
// (operator-) give the work of an interval, e.g. a training step or epoch.
struct Counters {
  int64_t allocations = 0;          // Malloc calls
  int64_t runtime_allocations = 0;  // of those, the ones the pool could not serve (cudaMalloc calls)
  int64_t allocated_bytes = 0;      // bytes asked for by Malloc
  int64_t frees = 0;                // Free calls (blocks back to the pool)
  int64_t h2d_copies = 0;           // host-to-device copies and their bytes
  int64_t h2d_bytes = 0;
  int64_t d2h_copies = 0;  // device-to-host copies and their bytes
  int64_t d2h_bytes = 0;
  int64_t synchronizations = 0;  // Synchronize calls and downloads (each waits for the device)
  int64_t launches = 0;          // kernel launches (CountLaunches: what the CUDA path launches)
  int64_t launches_seen = 0;     // launches the CUDA code counted where it made them (0 on the simulated device)
  // Gauges (not differences): bytes in live blocks and bytes cached free in the pool, at the reading.
  int64_t in_use_bytes = 0;
  int64_t cached_bytes = 0;

  Counters operator-(const Counters& earlier) const;
};
Counters ReadCounters();

// Returns the pool's free blocks to the runtime (cudaFree). Also done, and the allocation retried, when the runtime
// refuses an allocation.
void ReleaseCachedMemory();

// While alive, the device runtime is a simulated one: one device ("simulated device, host memory"), memory from the
// host heap, copies by memcpy, every call counted as on a GPU. Device pointers are then host-readable, so a test can
// run device code paths whose kernels have host twins and check their allocations and copies without a GPU.
// Not nestable; create no device buffers before it that outlive it.
class ScopedSimulatedDevice {
 public:
  // capacity_bytes >= 0 gives the device that much memory: an allocation beyond it fails as cudaMalloc does (the
  // pool then releases its cache and retries); -1 is the host's memory.
  // `devices` simulated devices are visible (all share the host memory and one pool; each thread has a current one).
  explicit ScopedSimulatedDevice(int64_t capacity_bytes = -1, int devices = 1);
  ~ScopedSimulatedDevice();
  ScopedSimulatedDevice(const ScopedSimulatedDevice&) = delete;
  ScopedSimulatedDevice& operator=(const ScopedSimulatedDevice&) = delete;
};
// True while a ScopedSimulatedDevice is alive, or after UseSimulatedDevice.
bool Simulated();
// `--device sim` (a testing device): the simulated device for the rest of the process (idempotent; nothing when a
// ScopedSimulatedDevice is alive). The process's CUDA is simulated from then on.
void UseSimulatedDevice();

// Where device::Array's memory comes from: the pool (Malloc and Free above, counted).
struct PoolMemory {
  static void* Allocate(size_t bytes) { return Malloc(bytes); }
  static void Release(void* ptr) noexcept { Free(ptr); }
};

// A device array from the pool that frees itself: grown by Reserve, never shrunk (GrowArray: its contents are not
// kept when it grows; it grows by at least half). For device code paths that hold raw device arrays (solvers,
// samplers, kernel workspaces); Buffer<T> (core/buffer.h) is the host-mirrored array.
template <typename T>
class Array : public GrowArray<T, PoolMemory> {
 public:
  Array() = default;
  explicit Array(size_t n) { this->Reserve(n); }

  // Reserve(n), then n elements from the host.
  void Upload(const T* host, size_t n) {
    this->Reserve(n);
    if (n > 0) CopyToDevice(this->data(), host, n * sizeof(T));
  }
  // The first n elements to the host.
  void Download(T* host, size_t n) const {
    if (n > 0) CopyToHost(host, this->data(), n * sizeof(T));
  }
};

// The CUDA runtime's entry points (core/device_ops.h's table pattern; C++17 for the .cu side).
struct RuntimeOps {
  int (*device_count)();
  std::string (*describe)(int device_id);
  void (*set_device)(int device_id);
  int (*current_device)();
  void* (*alloc)(size_t bytes);
  void (*release)(void* ptr) noexcept;
  void (*copy_to_device)(void* dst, const void* src, size_t bytes);
  void (*copy_to_host)(void* dst, const void* src, size_t bytes);
  void (*synchronize)();
  MemoryInfo (*memory_info)();
};

}  // namespace tessel::device
