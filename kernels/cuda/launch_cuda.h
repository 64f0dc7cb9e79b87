// Launch helpers shared by the kernels/cuda/*.cu files: grid sizes for grid-stride loops and the per-thread
// cuBLAS / cuSPARSE handles. Include only from .cu files (it pulls in CUDA headers through core/cuda_check.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/cuda_check.h"

namespace tessel::kernels::cuda {

constexpr int kThreads = 256;  // threads per block of the element-wise kernels

// Blocks for a grid-stride loop over n items (at least 1, capped so huge arrays loop instead of overflowing).
inline int Blocks(int64_t n, int threads = kThreads) {
  const int64_t b = (n + threads - 1) / threads;
  constexpr int64_t kMax = int64_t{65535} * 32;
  return static_cast<int>(b < 1 ? 1 : (b > kMax ? kMax : b));
}

// Grid-stride index range: for (int64_t i = GlobalIndex(); i < n; i += GlobalStride()).
__device__ inline int64_t GlobalIndex() { return blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; }
__device__ inline int64_t GlobalStride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// The calling host thread's cuBLAS and cuSPARSE handles, created on first use on the current device and
// destroyed at thread exit. They run on the legacy default stream, so they are ordered with every other
// kernel and with the synchronous copies of Buffer<T>.
cublasHandle_t CublasHandle();
cusparseHandle_t CusparseHandle();

// A grow-only device allocation owned by the calling thread, reused across calls (work buffers, index
// conversions). Valid until the next Scratch call with the same slot on the same thread.
enum class ScratchSlot { kSpmmWork, kIndptr32, kIndices64, kOnes, kTranspose, kReduce, kScan, kCount };
void* Scratch(ScratchSlot slot, size_t bytes);

// In-place prefix sums of n device values (CUB, its temporary storage from Scratch(kScan): counted, pooled, and
// no cudaMalloc in steady state, unlike thrust's algorithms, which allocate their own).
void InclusiveSumInPlace(int32_t* a, int64_t n);
void ExclusiveSumInPlace(int64_t* a, int64_t n);

}  // namespace tessel::kernels::cuda
