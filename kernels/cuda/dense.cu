// CUDA dense kernels: GEMM through cuBLAS (row-major by the transpose identity C^T = op(B)^T op(A)^T), and
// grid-stride element-wise kernels for bias, ReLU, dropout (the CPU's RNG stream, core/rng.h) and Adam.
#include "core/rng.h"
#include "kernels/cuda/dense_cuda.h"
#include "kernels/cuda/launch_cuda.h"

namespace tessel::kernels::cuda {
namespace {

__global__ void ScaleKernel(float* c, int64_t n, float beta) {
  for (int64_t i = GlobalIndex(); i < n; i += GlobalStride()) c[i] = beta == 0.0F ? 0.0F : c[i] * beta;
}

__global__ void AddBiasKernel(const float* __restrict__ bias, int64_t rows, int64_t cols, float* __restrict__ y) {
  const int64_t n = rows * cols;
  for (int64_t i = GlobalIndex(); i < n; i += GlobalStride()) y[i] += bias[i % cols];
}

// One thread per column walks the rows in order: coalesced across the warp, deterministic, float64 sums.
__global__ void BiasGradKernel(const float* __restrict__ g, int64_t rows, int64_t cols, float* __restrict__ out) {
  for (int64_t j = GlobalIndex(); j < cols; j += GlobalStride()) {
    double s = 0;
    for (int64_t i = 0; i < rows; ++i) s += g[i * cols + j];
    out[j] = static_cast<float>(s);
  }
}

__global__ void ReluKernel(const float* x, int64_t n, float* y) {
  for (int64_t i = GlobalIndex(); i < n; i += GlobalStride())
    y[i] = x[i] < 0.0F ? 0.0F : x[i];  // std::max(x, 0) exactly
}

__global__ void ReluBackwardKernel(const float* y, const float* gy, int64_t n, float* gx) {
  for (int64_t i = GlobalIndex(); i < n; i += GlobalStride()) gx[i] = y[i] > 0.0F ? gy[i] : 0.0F;
}

// One thread per chunk: the stream of a chunk is sequential, exactly as on the CPU.
__global__ void DropoutKernel(const float* x, int64_t n, float p, float scale, uint64_t base, int64_t chunk, float* y,
                              uint8_t* mask) {
  const int64_t chunks = (n + chunk - 1) / chunk;
  for (int64_t c = GlobalIndex(); c < chunks; c += GlobalStride()) {
    Rng rng(Mix64(base ^ Mix64(static_cast<uint64_t>(c))));
    const int64_t end = n < (c + 1) * chunk ? n : (c + 1) * chunk;
    for (int64_t i = c * chunk; i < end; ++i) {
      const bool keep = p == 0.0F || rng.Uniform() >= static_cast<double>(p);
      mask[i] = keep ? 1 : 0;
      y[i] = keep ? __fmul_rn(x[i], scale) : 0.0F;
    }
  }
}

__global__ void DropoutBackwardKernel(const float* gy, const uint8_t* mask, int64_t n, float scale, float* gx) {
  for (int64_t i = GlobalIndex(); i < n; i += GlobalStride()) gx[i] = mask[i] != 0 ? __fmul_rn(gy[i], scale) : 0.0F;
}

// Explicit round-to-nearest operations (no FMA contraction) so each value follows the CPU's float32 sequence.
__global__ void AdamKernel(float* w, const float* g, float* m, float* v, int64_t n, float wd, float beta1, float beta2,
                           float step_size, float inv_sqrt_c2, float eps) {
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

}  // namespace

void Gemm(const float* a, int64_t lda, bool trans_a, const float* b, int64_t ldb, bool trans_b, int64_t m, int64_t n,
          int64_t k, float alpha, float beta, float* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    ScaleKernel<<<Blocks(m * n), kThreads>>>(c, m * n, beta);
    TESSEL_CUDA_CHECK_LAUNCH();
    return;
  }
  TESSEL_CHECK(m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX && lda <= INT32_MAX && ldb <= INT32_MAX,
               "Gemm: dimensions {}x{}x{} exceed cuBLAS's 32-bit sizes", m, n, k);
  // Row-major X is column-major X^T: C^T[n x m] = op(B)^T[n x k] * op(A)^T[k x m].
  TESSEL_CUBLAS_CHECK(cublasSgemm(CublasHandle(), trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                  trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                                  static_cast<int>(k), &alpha, b, static_cast<int>(ldb), a, static_cast<int>(lda),
                                  &beta, c, static_cast<int>(n)));
}

void AddBias(const float* bias, int64_t rows, int64_t cols, float* y) {
  if (rows * cols == 0) return;
  AddBiasKernel<<<Blocks(rows * cols), kThreads>>>(bias, rows, cols, y);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void BiasGrad(const float* grad_y, int64_t rows, int64_t cols, float* grad_bias) {
  if (cols == 0) return;
  BiasGradKernel<<<Blocks(cols, 128), 128>>>(grad_y, rows, cols, grad_bias);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void Relu(const float* x, int64_t n, float* y) {
  if (n == 0) return;
  ReluKernel<<<Blocks(n), kThreads>>>(x, n, y);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void ReluBackward(const float* y, const float* grad_y, int64_t n, float* grad_x) {
  if (n == 0) return;
  ReluBackwardKernel<<<Blocks(n), kThreads>>>(y, grad_y, n, grad_x);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void Dropout(const float* x, int64_t n, float p, uint64_t base, int64_t chunk, float* y, uint8_t* mask) {
  if (n == 0) return;
  const int64_t chunks = (n + chunk - 1) / chunk;
  DropoutKernel<<<Blocks(chunks, 64), 64>>>(x, n, p, 1.0F / (1.0F - p), base, chunk, y, mask);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void DropoutBackward(const float* grad_y, const uint8_t* mask, int64_t n, float p, float* grad_x) {
  if (n == 0) return;
  DropoutBackwardKernel<<<Blocks(n), kThreads>>>(grad_y, mask, n, 1.0F / (1.0F - p), grad_x);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void AdamStep(float* w, const float* g, float* m, float* v, int64_t n, float wd, float beta1, float beta2,
              float step_size, float inv_sqrt_c2, float eps) {
  if (n == 0) return;
  AdamKernel<<<Blocks(n), kThreads>>>(w, g, m, v, n, wd, beta1, beta2, step_size, inv_sqrt_c2, eps);
  TESSEL_CUDA_CHECK_LAUNCH();
}

}  // namespace tessel::kernels::cuda
