// CUDA dense kernels: GEMM through cuBLAS (row-major by the transpose identity C^T = op(B)^T op(A)^T), and
// grid-stride element-wise kernels for bias, ReLU, dropout (the CPU's RNG stream, core/rng.h) and Adam.
#include "core/gemm_math.h"
#include "core/rng.h"
#include "kernels/cuda/dense_cuda.h"
#include "kernels/cuda/launch_cuda.h"
#include "kernels/dropout_math.h"

namespace tessel::kernels::cuda {
namespace {

__global__ void ScaleKernel(float* c, int64_t n, float beta) {
  for (int64_t i = GlobalIndex(); i < n; i += GlobalStride()) c[i] = beta == 0.0F ? 0.0F : c[i] * beta;
}

__global__ void AddBiasKernel(const float* __restrict__ bias, int64_t rows, int64_t cols, float* __restrict__ y) {
  const int64_t n = rows * cols;
  for (int64_t i = GlobalIndex(); i < n; i += GlobalStride()) y[i] += bias[i % cols];
}

// Column sums in two deterministic passes, so that many threads share a tall matrix (before: one thread per column
// over every row, 8 threads for 8 classes of a 1M-row gradient): partial[c][j] = sum of rows [c * chunk, (c + 1) *
// chunk) of column j (one block row per chunk, consecutive threads on consecutive columns: coalesced), then
// out[j] = sum over c in order. float64 throughout, one rounding to float32 at the end.
// The float64 sum of x[0], x[stride], ... x[(n - 1) stride] in that order (the same bits on every run), with
// sixteen loads in flight before their additions: one load per addition left a 1024-row batch's bias gradient at
// 60-80 us on an H200.
template <typename T>
__device__ double OrderedStridedSum(const T* __restrict__ x, int64_t stride, int64_t n) {
  double s = 0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    T v[16];
#pragma unroll
    for (int k = 0; k < 16; ++k) v[k] = x[(i + k) * stride];
#pragma unroll
    for (int k = 0; k < 16; ++k) s += v[k];
  }
  for (; i < n; ++i) s += x[i * stride];
  return s;
}

__global__ void BiasGradPartialKernel(const float* __restrict__ g, int64_t rows, int64_t cols, int64_t chunk,
                                      double* __restrict__ partial) {
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * chunk;
  const int64_t r1 = r0 + chunk < rows ? r0 + chunk : rows;
  for (int64_t j = GlobalIndex(); j < cols; j += GlobalStride())
    partial[static_cast<int64_t>(blockIdx.y) * cols + j] = OrderedStridedSum(g + r0 * cols + j, cols, r1 - r0);
}

__global__ void BiasGradFinishKernel(const double* __restrict__ partial, int64_t chunks, int64_t cols,
                                     float* __restrict__ out) {
  for (int64_t j = GlobalIndex(); j < cols; j += GlobalStride())
    out[j] = static_cast<float>(OrderedStridedSum(partial + j, cols, chunks));
}

// BiasGradPartialKernel and BiasGradFinishKernel in one block (chunks x cols <= kBiasGradOneLaunch, chunks of
// `chunk` rows): the partial sums into shared memory, then each column's total over the chunks in order.
__global__ void BiasGradOneBlockKernel(const float* __restrict__ g, int64_t rows, int64_t cols, int64_t chunk,
                                       float* __restrict__ out) {
  __shared__ double partial[kBiasGradOneLaunch];
  const int64_t chunks = (rows + chunk - 1) / chunk;
  for (int64_t idx = threadIdx.x; idx < chunks * cols; idx += blockDim.x) {
    const int64_t c = idx / cols;
    const int64_t j = idx % cols;
    const int64_t r0 = c * chunk;
    const int64_t r1 = r0 + chunk < rows ? r0 + chunk : rows;
    partial[idx] = OrderedStridedSum(g + r0 * cols + j, cols, r1 - r0);
  }
  __syncthreads();
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
    out[j] = static_cast<float>(OrderedStridedSum(partial + j, cols, chunks));
}

// AddBias then Relu in one pass over y (the hidden layers' epilogue): the same float32 add and select.
__global__ void AddBiasReluKernel(const float* __restrict__ bias, int64_t rows, int64_t cols, float* __restrict__ y) {
  const int64_t n = rows * cols;
  for (int64_t i = GlobalIndex(); i < n; i += GlobalStride()) {
    const float v = y[i] + bias[i % cols];
    y[i] = v < 0.0F ? 0.0F : v;
  }
}

__global__ void ReluKernel(const float* x, int64_t n, float* y) {
  for (int64_t i = GlobalIndex(); i < n; i += GlobalStride())
    y[i] = x[i] < 0.0F ? 0.0F : x[i];  // std::max(x, 0) exactly
}

__global__ void AxpyKernel(float alpha, const float* x, int64_t n, float* y) {
  // Rounded multiply, then add (no FMA contraction): the CPU's float32 sequence.
  for (int64_t i = GlobalIndex(); i < n; i += GlobalStride()) y[i] = __fadd_rn(y[i], __fmul_rn(alpha, x[i]));
}

__global__ void ReluBackwardKernel(const float* y, const float* gy, int64_t n, float* gx) {
  for (int64_t i = GlobalIndex(); i < n; i += GlobalStride()) gx[i] = y[i] > 0.0F ? gy[i] : 0.0F;
}

// One thread per value; the mask word of its group of 64 is recomputed per value (at most 16 Mix64, one for
// dropout 0.5), the same function of (stream, index) as the CPU's (kernels/dropout_math.h).
__global__ void DropoutKernel(const float* x, int64_t n, DropoutSpec spec, float* y) {
  for (int64_t i = GlobalIndex(); i < n; i += GlobalStride()) {
    const uint64_t word = DropoutMaskWord(spec, static_cast<uint64_t>(i) >> 6);
    y[i] = ((word >> (i & 63)) & 1U) != 0 ? __fmul_rn(x[i], spec.scale) : 0.0F;
  }
}

// Explicit round-to-nearest operations (no FMA contraction) so each value follows the CPU's float32 sequence.
__device__ inline void AdamRange(float* w, const float* g, float* m, float* v, int64_t n, float wd, float beta1,
                                 float beta2, float step_size, float inv_sqrt_c2, float eps) {
  for (int64_t i = GlobalIndex(); i < n; i += GlobalStride()) {
    const float grad = __fadd_rn(g[i], __fmul_rn(wd, w[i]));
    const float mi = __fadd_rn(__fmul_rn(beta1, m[i]), __fmul_rn(1.0F - beta1, grad));
    const float vi = __fadd_rn(__fmul_rn(beta2, v[i]), __fmul_rn(__fmul_rn(1.0F - beta2, grad), grad));
    m[i] = mi;
    v[i] = vi;
    const float denom = __fadd_rn(__fmul_rn(__fsqrt_rn(vi), inv_sqrt_c2), eps);
    w[i] = __fsub_rn(w[i], __fdiv_rn(__fmul_rn(step_size, mi), denom));
  }
}

__global__ void AdamKernel(float* w, const float* g, float* m, float* v, int64_t n, float wd, float beta1, float beta2,
                           float step_size, float inv_sqrt_c2, float eps) {
  AdamRange(w, g, m, v, n, wd, beta1, beta2, step_size, inv_sqrt_c2, eps);
}

// Tensor blockIdx.y of the batch.
__global__ void AdamBatchKernel(AdamBatch b, float beta1, float beta2, float step_size, float inv_sqrt_c2, float eps) {
  const int t = static_cast<int>(blockIdx.y);
  AdamRange(b.w[t], b.g[t], b.m[t], b.v[t], b.n[t], b.wd[t], beta1, beta2, step_size, inv_sqrt_c2, eps);
}

}  // namespace

void Gemm(GemmMath math, const float* a, int64_t lda, bool trans_a, const float* b, int64_t ldb, bool trans_b,
          int64_t m, int64_t n, int64_t k, float alpha, float beta, float* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    ScaleKernel<<<Blocks(m * n), kThreads>>>(c, m * n, beta);
    TESSEL_CUDA_CHECK_LAUNCH();
    return;
  }
  TESSEL_CHECK(m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX && lda <= INT32_MAX && ldb <= INT32_MAX,
               "Gemm: dimensions {}x{}x{} exceed cuBLAS's 32-bit sizes", m, n, k);
  // Exact float32 unless the run's context asks for TF32 tensor cores (--math tf32). The handle is the thread's, so
  // the mode is set before every product.
  cublasHandle_t handle = CublasHandle();
  TESSEL_CUBLAS_CHECK(
      cublasSetMathMode(handle, math == GemmMath::kTf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH));
  // Row-major X is column-major X^T: C^T[n x m] = op(B)^T[n x k] * op(A)^T[k x m].
  TESSEL_CUBLAS_CHECK(cublasSgemm(handle, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                                  static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha, b,
                                  static_cast<int>(ldb), a, static_cast<int>(lda), &beta, c, static_cast<int>(n)));
  ::tessel::device::NoteLaunchesSeen(1);
}

void AddBias(const float* bias, int64_t rows, int64_t cols, float* y) {
  if (rows * cols == 0) return;
  AddBiasKernel<<<Blocks(rows * cols), kThreads>>>(bias, rows, cols, y);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void AddBiasRelu(const float* bias, int64_t rows, int64_t cols, float* y) {
  if (rows * cols == 0) return;
  AddBiasReluKernel<<<Blocks(rows * cols), kThreads>>>(bias, rows, cols, y);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void BiasGrad(const float* grad_y, int64_t rows, int64_t cols, float* grad_bias) {
  if (cols == 0) return;
  if (rows == 0) {
    TESSEL_CUDA_CHECK(cudaMemset(grad_bias, 0, static_cast<size_t>(cols) * sizeof(float)));
    ::tessel::device::NoteLaunchesSeen(1);
    return;
  }
  constexpr int64_t kMaxChunks = 65535;  // gridDim.y
  int64_t chunk = 256;
  while ((rows + chunk - 1) / chunk > kMaxChunks) chunk *= 2;
  const int64_t chunks = (rows + chunk - 1) / chunk;
  if (chunks * cols <= kBiasGradOneLaunch) {
    BiasGradOneBlockKernel<<<1, 256>>>(grad_y, rows, cols, chunk, grad_bias);
    TESSEL_CUDA_CHECK_LAUNCH();
    return;
  }
  auto* partial =
      static_cast<double*>(Scratch(ScratchSlot::kReduce, static_cast<size_t>(chunks * cols) * sizeof(double)));
  const dim3 grid(static_cast<unsigned>(Blocks(cols, 128)), static_cast<unsigned>(chunks));
  BiasGradPartialKernel<<<grid, 128>>>(grad_y, rows, cols, chunk, partial);
  TESSEL_CUDA_CHECK_LAUNCH();
  BiasGradFinishKernel<<<Blocks(cols, 128), 128>>>(partial, chunks, cols, grad_bias);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void Relu(const float* x, int64_t n, float* y) {
  if (n == 0) return;
  ReluKernel<<<Blocks(n), kThreads>>>(x, n, y);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void Axpy(float alpha, const float* x, int64_t n, float* y) {
  if (n == 0) return;
  AxpyKernel<<<Blocks(n), kThreads>>>(alpha, x, n, y);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void ReluBackward(const float* y, const float* grad_y, int64_t n, float* grad_x) {
  if (n == 0) return;
  ReluBackwardKernel<<<Blocks(n), kThreads>>>(y, grad_y, n, grad_x);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void Dropout(const float* x, int64_t n, const DropoutSpec& spec, float* y) {
  if (n == 0) return;
  DropoutKernel<<<Blocks(n), kThreads>>>(x, n, spec, y);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void AdamStep(float* w, const float* g, float* m, float* v, int64_t n, float wd, float beta1, float beta2,
              float step_size, float inv_sqrt_c2, float eps) {
  if (n == 0) return;
  AdamKernel<<<Blocks(n), kThreads>>>(w, g, m, v, n, wd, beta1, beta2, step_size, inv_sqrt_c2, eps);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void AdamStepBatch(const AdamBatch& b, float beta1, float beta2, float step_size, float inv_sqrt_c2, float eps) {
  int64_t most = 0;
  for (int t = 0; t < b.count; ++t) most = b.n[t] > most ? b.n[t] : most;
  if (b.count == 0 || most == 0) return;
  const dim3 grid(static_cast<unsigned>(Blocks(most)), static_cast<unsigned>(b.count));
  AdamBatchKernel<<<grid, kThreads>>>(b, beta1, beta2, step_size, inv_sqrt_c2, eps);
  TESSEL_CUDA_CHECK_LAUNCH();
}

}  // namespace tessel::kernels::cuda
