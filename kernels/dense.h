// Dense GCN kernels: GEMM (OpenBLAS on the CPU), bias add and its gradient, ReLU and dropout with their
// backward passes. Each takes a Context and dispatches by device; outputs are resized by the callee.
#pragma once

#include <cstdint>
#include <span>

#include "core/context.h"
#include "core/rng.h"
#include "kernels/matrix.h"

namespace tessel::kernels {

// c = alpha * op(a) * op(b) + beta * c, op(x) = x or x^T. With beta == 0, c is resized and its contents ignored.
// CPU: single-threaded OpenBLAS calls over fixed chunks of c's rows (or of the inner dimension, partial products
// added in chunk order) run by oneTBB, so --threads is the one limit and results do not depend on it.
void Gemm(const Context& ctx, const Matrix& a, bool trans_a, const Matrix& b, bool trans_b, float alpha, float beta,
          Matrix* c);

// Ends OpenBLAS's own worker threads, which the library starts when it loads and which spin (sched_yield) for about
// 0.1 s before they sleep: a job that makes no BLAS call (SVM training) would lose that core time to them. A later
// Gemm starts them again. Nothing with a BLAS that has no such pool.
void ReleaseBlasThreads();

// y[i, :] += bias (bias is [1 x y.cols]).
void AddBias(const Context& ctx, const Matrix& bias, Matrix* y);
// grad_bias[0, j] = sum over rows i of grad_y[i, j] (overwrites; resized to [1 x cols]).
void BiasGrad(const Context& ctx, const Matrix& grad_y, Matrix* grad_bias);

// y = max(x, 0). y may be x.
void Relu(const Context& ctx, const Matrix& x, Matrix* y);
// y = relu(y + bias) in one pass: the same values as AddBias then Relu (the hidden layers' epilogue).
void AddBiasRelu(const Context& ctx, const Matrix& bias, Matrix* y);
// y[i] += alpha * x[i] for the first x.size() values of y (x may be shorter: the first rows of a row-major y).
// Adds on the device where y lives, instead of a round trip through host memory.
void Axpy(const Context& ctx, float alpha, const Matrix& x, Matrix* y);
// grad_x = grad_y where y > 0, else 0 (y is the ReLU output). grad_x may be grad_y.
void ReluBackward(const Context& ctx, const Matrix& y, const Matrix& grad_y, Matrix* grad_x);

// Inverted dropout on a flat array: keeps each value with probability 1 - p (to 2^-16, kernels/dropout_math.h) and
// scales it by 1 / (1 - p); the mask is a function of (key, element index), never stored, so the result does not
// depend on the thread count or the device. y may be x. p = 0 copies x.
void Dropout(const Context& ctx, const Buffer<float>& x, float p, const StreamKey& key, Buffer<float>* y);
// Dropout of the first n values of x (n <= x.size()) into y, resized to n: Dropout of that prefix, the same values
// (the mask is a function of the index). A constant kept at its largest size serves every shorter call.
void DropoutPrefix(const Context& ctx, const Buffer<float>& x, int64_t n, float p, const StreamKey& key,
                   Buffer<float>* y);
// The backward pass of Dropout(x, p, key): grad_x = grad_y * mask / (1 - p) with the mask regenerated from the same
// key (it is Dropout applied to the gradient). grad_x may be grad_y.
void DropoutBackward(const Context& ctx, const Buffer<float>& grad_y, float p, const StreamKey& key,
                     Buffer<float>* grad_x);

// c = op(Dropout(x, p, key)) · b, op = transpose when trans_x (c resized): the product of x's dropped-out values
// (the mask of each element's index in x, Dropout's values). Where the device has a fused kernel and the product is
// narrow (DropoutGemmFuses) x is read once and never copied: the mask is applied as the product reads it (a model
// layer then keeps no dropped-out copy of its input, and the backward pass's weight gradient, trans_x, regenerates
// the mask). Elsewhere: Dropout into a temporary, then Gemm, the same values as those two calls.
void DropoutGemm(const Context& ctx, const Matrix& x, bool trans_x, float p, const StreamKey& key, const Matrix& b,
                 Matrix* c);
// Whether DropoutGemm runs fused on ctx's device for a product whose output is n columns wide: a device with the
// kernel (CUDA; the simulated device's host twin), n <= kDropoutGemmMaxWidth (one column tile: x read once; wider,
// cuBLAS over a dropped-out copy reads it less often) and exact float32 math (--math tf32 keeps cuBLAS's TF32).
inline constexpr int64_t kDropoutGemmMaxWidth = 32;
bool DropoutGemmFuses(const Context& ctx, int64_t n);

// One Adam step on a flat parameter (Kingma & Ba): g' = g + wd*w; m = b1*m + (1-b1)*g'; v = b2*v + (1-b2)*g'^2;
// w -= step_size*m / (sqrt(v)*inv_sqrt_c2 + eps), where step_size = lr / (1 - b1^t) and inv_sqrt_c2 =
// 1 / sqrt(1 - b2^t) carry the bias corrections. Element-wise in the same operation order on every device.
struct AdamStepParams {
  float weight_decay = 0;
  float beta1 = 0.9F;
  float beta2 = 0.999F;
  float step_size = 0;
  float inv_sqrt_c2 = 1;
  float eps = 1e-8F;
};
void AdamStep(const Context& ctx, const AdamStepParams& hp, const Matrix& grad, Matrix* w, Matrix* m, Matrix* v);
// AdamStep on several parameters with one hp but each tensor's own weight decay: the same values as one AdamStep
// each, in one launch on a device (up to 8 tensors a launch) instead of one a tensor.
struct AdamTensor {
  const Matrix* grad = nullptr;
  Matrix* w = nullptr;
  Matrix* m = nullptr;
  Matrix* v = nullptr;
  float weight_decay = 0;
};
void AdamStepMany(const Context& ctx, const AdamStepParams& hp, std::span<const AdamTensor> tensors);

}  // namespace tessel::kernels
