// CUDA softmax cross-entropy, row softmax, arg-max and the arg-max's confusion counts: one warp per row, max in float32
// and the softmax denominator in float64, the same formulas as the CPU twin (kernels/cpu/loss.cc).
#include "kernels/cuda/launch_cuda.h"
#include "kernels/cuda/loss_cuda.h"

namespace tessel::kernels::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kRowsPerBlock = kThreads / kWarp;

__device__ float WarpMax(float v) {
  for (int o = kWarp / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffU, v, o));
  return v;
}
__device__ double WarpSum(double v) {
  for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffU, v, o);
  return v;
}
// Row max and log of sum_j exp(z_j - max) for the warp's row.
__device__ void RowStats(const float* z, int64_t c, int lane, float* mx, double* log_denom) {
  float m = -INFINITY;
  for (int64_t j = lane; j < c; j += kWarp) m = fmaxf(m, z[j]);
  m = WarpMax(m);
  double d = 0;
  for (int64_t j = lane; j < c; j += kWarp) d += exp(static_cast<double>(z[j] - m));
  *mx = m;
  *log_denom = log(WarpSum(d));
}

__global__ void CrossEntropyKernel(const float* __restrict__ logits, int64_t c, const int32_t* __restrict__ labels,
                                   const int64_t* __restrict__ rows, int64_t m, double inv_m,
                                   double* __restrict__ row_loss, float* __restrict__ grad) {
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kRowsPerBlock;
  for (int64_t k = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.x / kWarp; k < m; k += warps) {
    const int64_t r = rows[k];
    const float* z = logits + r * c;
    const int32_t y = labels[r];
    float mx = 0;
    double log_denom = 0;
    RowStats(z, c, lane, &mx, &log_denom);
    if (lane == 0) row_loss[k] = log_denom - static_cast<double>(z[y] - mx);
    if (grad != nullptr) {
      float* g = grad + r * c;
      for (int64_t j = lane; j < c; j += kWarp) {
        const double prob = exp(static_cast<double>(z[j] - mx) - log_denom);
        g[j] = static_cast<float>((prob - (j == y ? 1.0 : 0.0)) * inv_m);
      }
    }
  }
}

__global__ void RowSoftmaxKernel(const float* logits, int64_t n_rows, int64_t c, float* probs) {
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kRowsPerBlock;
  for (int64_t r = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.x / kWarp; r < n_rows; r += warps) {
    const float* z = logits + r * c;
    float mx = 0;
    double log_denom = 0;
    RowStats(z, c, lane, &mx, &log_denom);
    const double denom = exp(log_denom);
    __syncwarp();  // every lane has read the row before any lane overwrites it (probs may be logits)
    float* out = probs + r * c;
    for (int64_t j = lane; j < c; j += kWarp) out[j] = static_cast<float>(exp(static_cast<double>(z[j] - mx)) / denom);
  }
}

// The index of the largest of z[0 .. c) (first on ties; 0 when c == 0), the same on every lane of the warp.
__device__ int64_t WarpArgmax(const float* z, int64_t c, int lane) {
  float best = -INFINITY;
  int64_t best_j = c;  // "none yet": loses every tie
  for (int64_t j = lane; j < c; j += kWarp) {
    if (best_j == c || z[j] > best) {
      best = z[j];
      best_j = j;
    }
  }
  for (int o = kWarp / 2; o > 0; o /= 2) {
    const float ov = __shfl_xor_sync(0xffffffffU, best, o);
    const int64_t oj = __shfl_xor_sync(0xffffffffU, best_j, o);
    const bool other_valid = oj < c;
    if (other_valid && (best_j == c || ov > best || (ov == best && oj < best_j))) {
      best = ov;
      best_j = oj;
    }
  }
  return best_j == c ? 0 : best_j;
}

__global__ void RowArgmaxKernel(const float* x, int64_t n_rows, int64_t c, int32_t* out) {
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kRowsPerBlock;
  for (int64_t r = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.x / kWarp; r < n_rows; r += warps) {
    const int64_t best = WarpArgmax(x + r * c, c, lane);
    if (lane == 0) out[r] = static_cast<int32_t>(best);
  }
}

// One warp per listed row: its arg-max (RowArgmax's) scored against its label. kShared: the block counts in shared
// memory and adds its non-zero counts to the global ones at its end (a few hundred atomics a block instead of one
// or two a row); otherwise (counts too many for shared memory) every row adds to the global counts.
template <bool kShared>
__global__ void ArgmaxConfusionKernel(const float* __restrict__ x, int64_t n_rows, int64_t c,
                                      const int32_t* __restrict__ labels, const int64_t* __restrict__ rows,
                                      ConfusionSegments seg, unsigned long long* __restrict__ counts) {
  extern __shared__ unsigned long long block_counts[];
  const int64_t stride = 3 * c + 1;
  const int64_t size = seg.count * stride;
  unsigned long long* h = kShared ? block_counts : counts;
  if constexpr (kShared) {
    for (int64_t i = threadIdx.x; i < size; i += blockDim.x) block_counts[i] = 0;
    __syncthreads();
  }
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kRowsPerBlock;
  int64_t m = 0;  // the last segment's end
#pragma unroll
  for (int t = 0; t < kConfusionSegments; ++t) m = t == seg.count - 1 ? seg.end[t] : m;
  for (int64_t k = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.x / kWarp; k < m; k += warps) {
    int s = 0;  // the segments ending at or before k (constant indices: seg stays in registers)
#pragma unroll
    for (int t = 0; t < kConfusionSegments - 1; ++t) s += t < seg.count - 1 && seg.end[t] <= k ? 1 : 0;
    unsigned long long* sc = h + s * stride;
    const int64_t r = rows[k];  // the same on every lane: the branches below are the warp's
    const int32_t y = r >= 0 && r < n_rows ? labels[r] : -1;
    if (y < 0 || y >= c) {
      if (lane == 0) atomicAdd(sc + 3 * c, 1ULL);
      continue;
    }
    const int64_t p = WarpArgmax(x + r * c, c, lane);
    if (lane == 0) {
      if (p == y) {
        atomicAdd(sc + y, 1ULL);
      } else {
        atomicAdd(sc + c + p, 1ULL);
        atomicAdd(sc + 2 * c + y, 1ULL);
      }
    }
  }
  if constexpr (kShared) {
    __syncthreads();
    for (int64_t i = threadIdx.x; i < size; i += blockDim.x) {
      if (block_counts[i] != 0) atomicAdd(counts + i, block_counts[i]);
    }
  }
}

int RowBlocks(int64_t rows) { return Blocks(rows, kRowsPerBlock); }

// One thread per chunk sums its terms in order; then one thread sums the chunks in order (a few thousand values).
__global__ void LossChunkKernel(const double* __restrict__ t, int64_t m, int64_t chunk, double* __restrict__ partial) {
  const int64_t chunks = (m + chunk - 1) / chunk;
  for (int64_t c = GlobalIndex(); c < chunks; c += GlobalStride()) {
    const int64_t end = (c + 1) * chunk < m ? (c + 1) * chunk : m;
    double s = 0;
    for (int64_t k = c * chunk; k < end; ++k) s += t[k];
    partial[c] = s;
  }
}

__global__ void LossTotalKernel(const double* __restrict__ partial, int64_t chunks, double inv_m, double weight,
                                bool first, double* __restrict__ total) {
  if (GlobalIndex() != 0) return;
  double s = 0;
  for (int64_t c = 0; c < chunks; ++c) s += partial[c];
  // Rounded as the host rounds it: nvcc would contract `total + x * weight` into one fused multiply-add (one
  // rounding where the host has two), and the sum would differ from the CPU's in its last bit.
  total[0] = __dadd_rn(first ? 0.0 : total[0], __dmul_rn(__dmul_rn(s, inv_m), weight));
}

// LossChunkKernel and LossTotalKernel in one launch of one block, for at most kLossOneLaunchChunks chunks: each
// thread sums its chunks' terms in order into shared memory, then thread 0 sums the chunks in order (the same
// additions in the same order as the two kernels: the same bits).
constexpr int kLossThreads = 256;
__global__ void LossOneBlockKernel(const double* __restrict__ t, int64_t m, int64_t chunk, double inv_m, double weight,
                                   bool first, double* __restrict__ total) {
  __shared__ double partial[kLossOneLaunchChunks];
  const int64_t chunks = (m + chunk - 1) / chunk;
  for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) {
    const int64_t end = (c + 1) * chunk < m ? (c + 1) * chunk : m;
    double s = 0;
    for (int64_t k = c * chunk; k < end; ++k) s += t[k];
    partial[c] = s;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  double s = 0;
  for (int64_t c = 0; c < chunks; ++c) s += partial[c];
  total[0] = __dadd_rn(first ? 0.0 : total[0], __dmul_rn(__dmul_rn(s, inv_m), weight));  // as LossTotalKernel
}

}  // namespace

void SoftmaxCrossEntropy(const float* logits, int64_t n_rows, int64_t c, const int32_t* labels, const int64_t* rows,
                         int64_t m, double inv_m, double* row_loss, float* grad) {
  if (grad != nullptr && n_rows * c > 0) {
    TESSEL_CUDA_CHECK(cudaMemset(grad, 0, static_cast<size_t>(n_rows * c) * sizeof(float)));
    ::tessel::device::NoteLaunchesSeen(1);
  }
  if (m == 0) return;
  CrossEntropyKernel<<<RowBlocks(m), kThreads>>>(logits, c, labels, rows, m, inv_m, row_loss, grad);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void LossTotal(const double* t, int64_t m, int64_t chunk, double inv_m, double weight, bool first, double* total) {
  const int64_t chunks = (m + chunk - 1) / chunk;
  if (chunks <= kLossOneLaunchChunks) {
    LossOneBlockKernel<<<1, kLossThreads>>>(t, m, chunk, inv_m, weight, first, total);
    TESSEL_CUDA_CHECK_LAUNCH();
    return;
  }
  double* partial = nullptr;
  if (chunks > 0) {
    partial = static_cast<double*>(Scratch(ScratchSlot::kReduce, static_cast<size_t>(chunks) * sizeof(double)));
    LossChunkKernel<<<Blocks(chunks), kThreads>>>(t, m, chunk, partial);
    TESSEL_CUDA_CHECK_LAUNCH();
  }
  LossTotalKernel<<<1, 32>>>(partial, chunks, inv_m, weight, first, total);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void RowSoftmax(const float* logits, int64_t n_rows, int64_t c, float* probs) {
  if (n_rows == 0 || c == 0) return;
  RowSoftmaxKernel<<<RowBlocks(n_rows), kThreads>>>(logits, n_rows, c, probs);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void RowArgmax(const float* x, int64_t n_rows, int64_t c, int32_t* out) {
  if (n_rows == 0) return;
  RowArgmaxKernel<<<RowBlocks(n_rows), kThreads>>>(x, n_rows, c, out);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void ArgmaxConfusion(const float* x, int64_t n_rows, int64_t c, const int32_t* labels, const int64_t* rows,
                     const ConfusionSegments& seg, int64_t* counts) {
  static_assert(sizeof(unsigned long long) == sizeof(int64_t));
  const size_t bytes = static_cast<size_t>(seg.count) * static_cast<size_t>(3 * c + 1) * sizeof(int64_t);
  TESSEL_CUDA_CHECK(cudaMemset(counts, 0, bytes));
  ::tessel::device::NoteLaunchesSeen(1);
  const int64_t m = seg.end[seg.count - 1];
  if (m == 0) return;
  auto* out = reinterpret_cast<unsigned long long*>(counts);
  constexpr size_t kSharedLimit = 32 * 1024;  // under the 48 KiB a block may take without opting in
  if (bytes <= kSharedLimit) {
    // A block flushes its counts once: about as many blocks as run at a time (8 of 256 threads per SM on an H200's
    // 132), each over many rows.
    const int blocks = RowBlocks(m) < 1024 ? RowBlocks(m) : 1024;
    ArgmaxConfusionKernel<true><<<blocks, kThreads, bytes>>>(x, n_rows, c, labels, rows, seg, out);
  } else {
    ArgmaxConfusionKernel<false><<<RowBlocks(m), kThreads>>>(x, n_rows, c, labels, rows, seg, out);
  }
  TESSEL_CUDA_CHECK_LAUNCH();
}

}  // namespace tessel::kernels::cuda
