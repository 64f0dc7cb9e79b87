// CUDA row-wise top-k, one warp per row: k rounds, each picking the best entry strictly after the previous pick
// in the order (value descending, column ascending), so no per-row scratch is needed. O(k * cols / 32) per row:
// meant for small k (sampling fan-outs, gradient sparsification per row), not for k near cols on wide rows.
#include "kernels/cuda/launch_cuda.h"
#include "kernels/cuda/topk_cuda.h"

namespace tessel::kernels::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kRowsPerBlock = kThreads / kWarp;

// a before b in the top-k order; column c (= "none") comes after everything.
__device__ bool Before(float av, int64_t ai, float bv, int64_t bi, int64_t c) {
  if (ai == c) return false;
  if (bi == c) return true;
  return av > bv || (av == bv && ai < bi);
}

__global__ void TopKKernel(const float* __restrict__ x, int64_t n_rows, int64_t c, int64_t k,
                           float* __restrict__ values, int32_t* __restrict__ indices) {
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kRowsPerBlock;
  for (int64_t r = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.x / kWarp; r < n_rows; r += warps) {
    const float* z = x + r * c;
    float prev_v = 0;
    int64_t prev_i = -1;  // no previous pick: every entry is eligible
    for (int64_t t = 0; t < k; ++t) {
      float best_v = 0;
      int64_t best_i = c;
      for (int64_t j = lane; j < c; j += kWarp) {
        const float v = z[j];
        const bool eligible = prev_i < 0 || v < prev_v || (v == prev_v && j > prev_i);
        if (eligible && Before(v, j, best_v, best_i, c)) {
          best_v = v;
          best_i = j;
        }
      }
      for (int o = kWarp / 2; o > 0; o /= 2) {
        const float ov = __shfl_xor_sync(0xffffffffU, best_v, o);
        const int64_t oi = __shfl_xor_sync(0xffffffffU, best_i, o);
        if (Before(ov, oi, best_v, best_i, c)) {
          best_v = ov;
          best_i = oi;
        }
      }
      if (lane == 0) {
        values[r * k + t] = best_v;
        indices[r * k + t] = static_cast<int32_t>(best_i);
      }
      prev_v = best_v;
      prev_i = best_i;
    }
  }
}

}  // namespace

void TopK(const float* x, int64_t n_rows, int64_t c, int64_t k, float* values, int32_t* indices) {
  if (n_rows == 0 || k == 0) return;
  TopKKernel<<<Blocks(n_rows, kRowsPerBlock), kThreads>>>(x, n_rows, c, k, values, indices);
  TESSEL_CUDA_CHECK_LAUNCH();
}

}  // namespace tessel::kernels::cuda
