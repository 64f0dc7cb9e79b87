// CUDA row gather (out[i, :] = src[ids[i], :]) and scatter-add (out[t, :] += src[i, :] for ids[i] = t, grouped by
// target so repeats add in index order), one thread per output value; the gather with dropout, and the fused
// aggregation of gathered rows (GatherSpMM, one warp per output row). CPU twins in kernels/cpu/gather.cc.
#include "core/cuda_check.h"
#include "kernels/cuda/gather_cuda.h"
#include "kernels/cuda/launch_cuda.h"

namespace tessel::kernels::cuda {
namespace {

__global__ void GatherRowsKernel(const float* __restrict__ src, int64_t cols, const int64_t* __restrict__ ids,
                                 int64_t n, float* __restrict__ out) {
  const int64_t total = n * cols;
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = k / cols;
    const int64_t j = k - i * cols;
    out[k] = src[ids[i] * cols + j];
  }
}

// Thread (t, j) adds the source rows of target t in their index order: the same float sequence as the CPU.
__global__ void ScatterAddRowsKernel(const float* __restrict__ src, int64_t cols, const int64_t* __restrict__ order,
                                     const int64_t* __restrict__ start, int64_t targets, float* __restrict__ out) {
  const int64_t total = targets * cols;
  for (int64_t q = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; q < total;
       q += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = q / cols;
    const int64_t j = q - t * cols;
    float acc = out[q];
    for (int64_t k = start[t]; k < start[t + 1]; ++k) acc += src[order[k] * cols + j];
    out[q] = acc;
  }
}

}  // namespace

// One thread per output value: the source value (gathered, or in place with ids null) times the mask bit of its
// output index, the kernels/dropout_math.h function the CPU evaluates too (bit-identical).
__global__ void GatherRowsDropoutKernel(const float* __restrict__ src, int64_t cols, const int64_t* __restrict__ ids,
                                        int64_t n, DropoutSpec spec, float* __restrict__ out) {
  const int64_t total = n * cols;
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = k / cols;
    const int64_t j = k - i * cols;
    const float x = src[(ids != nullptr ? ids[i] : i) * cols + j];
    if (!spec.Active()) {
      out[k] = x;
    } else {
      const uint64_t word = DropoutMaskWord(spec, static_cast<uint64_t>(k) >> 6);
      out[k] = ((word >> (k & 63)) & 1U) != 0 ? __fmul_rn(x, spec.scale) : 0.0F;
    }
  }
}

void GatherRowsDropout(const float* src, int64_t cols, const int64_t* ids, int64_t n, const DropoutSpec& spec,
                       float* out) {
  const int64_t total = n * cols;
  if (total == 0) return;
  GatherRowsDropoutKernel<<<Blocks(total), kThreads>>>(src, cols, ids, n, spec, out);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void GatherRows(const float* src, int64_t cols, const int64_t* ids, int64_t n, float* out) {
  const int64_t total = n * cols;
  if (total == 0) return;
  GatherRowsKernel<<<Blocks(total), kThreads>>>(src, cols, ids, n, out);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void ScatterAddRows(const float* src, int64_t cols, const int64_t* order, const int64_t* start, int64_t targets,
                    float* out) {
  const int64_t total = targets * cols;
  if (total == 0) return;
  ScatterAddRowsKernel<<<Blocks(total), kThreads>>>(src, cols, order, start, targets, out);
  TESSEL_CUDA_CHECK_LAUNCH();
}

// GatherSpMM: warp w of the grid takes destination rows w, w + warps, ...; lane l the columns l, l + 32, ... Each
// value sums its row's entries in order, w * dropout(x) rounded at each step (__fmul_rn/__fadd_rn: no contraction),
// as the CPU's fused kernel does, so the two agree bit for bit.
__global__ void GatherSpMMKernel(const int64_t* __restrict__ indptr, const int32_t* __restrict__ indices,
                                 const float* __restrict__ values, int64_t rows, const float* __restrict__ src,
                                 int64_t cols, const int64_t* __restrict__ ids, DropoutSpec spec,
                                 float* __restrict__ out) {
  constexpr int kWarp = 32;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / kWarp);
  const bool drop = spec.Active();
  for (int64_t d = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / kWarp; d < rows; d += warps) {
    const int64_t begin = indptr[d];
    const int64_t end = indptr[d + 1];
    for (int64_t j = lane; j < cols; j += kWarp) {
      float acc = 0.0F;
      for (int64_t e = begin; e < end; ++e) {
        const int64_t s = indices[e];
        const float w = values != nullptr ? values[e] : 1.0F;
        float x = src[(ids != nullptr ? ids[s] : s) * cols + j];
        if (drop) {
          const auto k = static_cast<uint64_t>(s * cols + j);
          x = ((DropoutMaskWord(spec, k >> 6) >> (k & 63)) & 1U) != 0 ? __fmul_rn(x, spec.scale) : 0.0F;
        }
        acc = __fadd_rn(acc, __fmul_rn(w, x));
      }
      out[d * cols + j] = acc;
    }
  }
}

void GatherSpMM(const DeviceCsr& a, const float* src, int64_t src_rows, int64_t cols, const int64_t* ids,
                const DropoutSpec& spec, float* out) {
  (void)src_rows;  // the twin's view size; ids were checked against it by the public function
  if (a.rows == 0 || cols == 0) return;
  constexpr int kWarpsPerBlock = kThreads / 32;
  GatherSpMMKernel<<<Blocks(a.rows, kWarpsPerBlock), kThreads>>>(a.indptr, a.indices, a.values, a.rows, src, cols, ids,
                                                                 spec, out);
  TESSEL_CUDA_CHECK_LAUNCH();
}

}  // namespace tessel::kernels::cuda
