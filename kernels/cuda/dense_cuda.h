// Host-side declarations of the CUDA dense kernels (kernels/cuda/dense.cu): cuBLAS GEMM, bias, ReLU, dropout
// and the Adam update. No CUDA headers; every pointer is a device pointer; shapes are checked by the callers.
#pragma once

#include <cstdint>

#include "core/gemm_math.h"
#include "kernels/dropout_math.h"

namespace tessel::kernels::cuda {

// Row-major c[m x n] = alpha * op(a) * op(b) + beta * c (lda = a's column count, ldb = b's); k may be 0. math: exact
// float32 (cuBLAS's pedantic mode) or TF32 tensor cores.
void Gemm(GemmMath math, const float* a, int64_t lda, bool trans_a, const float* b, int64_t ldb, bool trans_b,
          int64_t m, int64_t n, int64_t k, float alpha, float beta, float* c);
void AddBias(const float* bias, int64_t rows, int64_t cols, float* y);
// grad_bias[j] = sum_i grad_y[i, j], accumulated in float64 in row order per column (deterministic).
void AddBiasRelu(const float* bias, int64_t rows, int64_t cols, float* y);  // y = max(y + bias, 0)
// Two launches (each chunk of 256 rows' column sums, then their totals in chunk order), or one block doing both in
// shared memory when chunks x cols is at most kBiasGradOneLaunch (a mini-batch's layers): the same sums in the same
// order either way.
inline constexpr int64_t kBiasGradOneLaunch = 2048;
void BiasGrad(const float* grad_y, int64_t rows, int64_t cols, float* grad_bias);
void Relu(const float* x, int64_t n, float* y);
void Axpy(float alpha, const float* x, int64_t n, float* y);  // y[i] += alpha * x[i], i < n
void ReluBackward(const float* y, const float* grad_y, int64_t n, float* grad_x);
// y[i] = keep(i) ? x[i] * scale : 0 with the CPU's mask function (kernels/dropout_math.h); y may be x.
void Dropout(const float* x, int64_t n, const DropoutSpec& spec, float* y);
// The product of dropped-out x (x[i] * scale where the mask of index i keeps it, else 0: Dropout's values) with b,
// x never copied (kernels/cuda/dropout_gemm.cu). x is rows x cols, b row-major with n columns, float32 products
// accumulated in float32 in order of the inner index (fmaf: within Gemm's float32 bound; the same bits every run).
// DropoutGemm: c[rows x n] = drop(x) · b (b: cols x n); one launch.
// DropoutGemmTN: c[cols x n] = drop(x)ᵀ · b (b: rows x n); partial products over chunks of x's rows, then their sum
// in chunk order (two launches; the partials in a scratch allocation).
void DropoutGemm(const float* x, int64_t rows, int64_t cols, const DropoutSpec& spec, const float* b, int64_t n,
                 float* c);
void DropoutGemmTN(const float* x, int64_t rows, int64_t cols, const DropoutSpec& spec, const float* b, int64_t n,
                   float* c);
// Adam: g' = g + wd·w; m = b1·m + (1-b1)·g'; v = b2·v + (1-b2)·g'²; w -= step·m / (sqrt(v)·inv_sqrt_c2 + eps).
void AdamStep(float* w, const float* g, float* m, float* v, int64_t n, float wd, float beta1, float beta2,
              float step_size, float inv_sqrt_c2, float eps);
// Up to kAdamBatch tensors' Adam steps in one launch (the pointers passed by value: nothing uploaded), each tensor
// t's elements exactly as AdamStep(w[t], g[t], m[t], v[t], n[t], wd[t], ...) makes them.
constexpr int kAdamBatch = 8;
struct AdamBatch {
  int count = 0;
  float* w[kAdamBatch] = {};
  const float* g[kAdamBatch] = {};
  float* m[kAdamBatch] = {};
  float* v[kAdamBatch] = {};
  int64_t n[kAdamBatch] = {};
  float wd[kAdamBatch] = {};
};
void AdamStepBatch(const AdamBatch& b, float beta1, float beta2, float step_size, float inv_sqrt_c2, float eps);

}  // namespace tessel::kernels::cuda
