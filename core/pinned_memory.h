// Page-locked (pinned) host memory for data that crosses to the device every step: the GPU copies it by DMA, at
// full PCIe bandwidth and without the driver's staging copy through its own pinned bounce buffer that a pageable
// source costs. Allocated by cudaMallocHost in a CUDA build, by the host heap on the simulated device
// (core/device.h), and refused ("built without CUDA") otherwise. Pinning is slow (the pages are locked one by one)
// and takes memory from the rest of the system, so holders grow and keep their arrays (PinnedArray) instead of
// allocating per step; the counters below let a test assert that steady-state steps pin nothing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/grow_array.h"

namespace tessel::device {

void* MallocPinned(size_t bytes);
void FreePinned(void* ptr) noexcept;

// Mapped pinned memory (zero-copy; cudaHostAlloc with cudaHostAllocMapped): page-locked host memory that kernels
// read and write in place over the bus, for data too large for the device that a step touches only sparsely (the
// input rows a mini-batch gathers). Counted and freed as pinned memory (FreePinned). MappedDevicePointer gives the
// device's address of such memory (with unified addressing the same pointer; on the simulated device always).
void* MallocMapped(size_t bytes);
void* MappedDevicePointer(void* host);

// Process-wide counts of pinned allocations since the start; differences of two readings give an interval's.
struct PinnedCounters {
  int64_t allocations = 0;      // MallocPinned calls
  int64_t allocated_bytes = 0;  // bytes they asked for
  int64_t frees = 0;            // FreePinned calls (of non-null pointers)
  int64_t in_use_bytes = 0;     // a gauge: pinned bytes live at the reading
};
PinnedCounters ReadPinnedCounters();

// The CUDA runtime's entries (core/device_cuda.cu).
struct PinnedOps {
  void* (*alloc)(size_t bytes);
  void (*release)(void* ptr) noexcept;
  void* (*alloc_mapped)(size_t bytes);
  void* (*device_pointer)(void* host);
};

// Where PinnedArray's memory comes from: MallocPinned and FreePinned above.
struct PinnedMemory {
  static void* Allocate(size_t bytes) { return MallocPinned(bytes); }
  static void Release(void* ptr) noexcept { FreePinned(ptr); }
};

// A grow-only array in pinned host memory (device::Array's host twin): Reserve keeps the memory when it is large
// enough and otherwise grows by at least half, dropping the contents.
template <typename T>
using PinnedArray = GrowArray<T, PinnedMemory>;

}  // namespace tessel::device
