// The dense kernels' public functions (argument checks, then the device table of kernels/ops.h) and their CPU
// entries: GEMM through OpenBLAS (cblas_sgemm), bias, ReLU, inverted dropout and Adam on oneTBB (the CUDA entries:
// kernels/cuda/ops.cc over kernels/cuda/dense.cu). The dropout mask is a function of (stream, element) shared with
// the CUDA kernel (kernels/dropout_math.h), so it does not depend on scheduling or device and is never stored.
#include "kernels/dense.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/mask_apply.h"
#include "kernels/cpu/skinny_gemm.h"
#include "kernels/ops.h"

// OpenBLAS's pthread build ends its pool with blas_thread_shutdown_ (its fork handler); weak, since the serial and
// other BLAS builds have none.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));

namespace tessel::kernels {
namespace {

// Rows per parallel chunk so that one chunk touches about 16K values.
int64_t RowGrain(int64_t cols) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1)); }

}  // namespace

GemmDims GemmShape(const Matrix& a, bool trans_a, const Matrix& b, bool trans_b, float beta, Matrix* c) {
  const int64_t m = trans_a ? a.cols : a.rows;
  const int64_t k = trans_a ? a.rows : a.cols;
  const int64_t kb = trans_b ? b.cols : b.rows;
  const int64_t n = trans_b ? b.rows : b.cols;
  TESSEL_CHECK(k == kb, "Gemm: inner dimensions differ ({}x{}{} times {}x{}{})", a.rows, a.cols, trans_a ? "^T" : "",
               b.rows, b.cols, trans_b ? "^T" : "");
  if (beta == 0.0F) {
    c->Resize(m, n);
  } else {
    TESSEL_CHECK(c->rows == m && c->cols == n, "Gemm: c is {}x{}, expected {}x{}", c->rows, c->cols, m, n);
  }
  return {m, n, k};
}

// ---- public functions: checks, then the device's entry

void Gemm(const Context& ctx, const Matrix& a, bool trans_a, const Matrix& b, bool trans_b, float alpha, float beta,
          Matrix* c) {
  Ops(ctx).gemm(ctx.gemm_math, a, trans_a, b, trans_b, alpha, beta, c);
}

void AddBias(const Context& ctx, const Matrix& bias, Matrix* y) {
  TESSEL_CHECK(bias.rows == 1 && bias.cols == y->cols, "AddBias: bias is {}x{}, expected 1x{}", bias.rows, bias.cols,
               y->cols);
  Ops(ctx).add_bias(bias, y);
}

void AddBiasRelu(const Context& ctx, const Matrix& bias, Matrix* y) {
  TESSEL_CHECK(bias.rows == 1 && bias.cols == y->cols, "AddBiasRelu: bias is {}x{}, expected 1x{}", bias.rows,
               bias.cols, y->cols);
  Ops(ctx).add_bias_relu(bias, y);
}

void BiasGrad(const Context& ctx, const Matrix& grad_y, Matrix* grad_bias) { Ops(ctx).bias_grad(grad_y, grad_bias); }

void Relu(const Context& ctx, const Matrix& x, Matrix* y) { Ops(ctx).relu(x, y); }

void ReluBackward(const Context& ctx, const Matrix& y, const Matrix& grad_y, Matrix* grad_x) {
  TESSEL_CHECK(y.rows == grad_y.rows && y.cols == grad_y.cols, "ReluBackward: output {}x{} but gradient {}x{}", y.rows,
               y.cols, grad_y.rows, grad_y.cols);
  Ops(ctx).relu_backward(y, grad_y, grad_x);
}

void Axpy(const Context& ctx, float alpha, const Matrix& x, Matrix* y) {
  TESSEL_CHECK(x.size() <= y->size() && x.cols == y->cols, "Axpy: {}x{} added into {}x{}", x.rows, x.cols, y->rows,
               y->cols);
  TESSEL_CHECK(&x != y, "Axpy: x must not be y");
  Ops(ctx).axpy(alpha, x, y);
}

void Dropout(const Context& ctx, const Buffer<float>& x, float p, const StreamKey& key, Buffer<float>* y) {
  TESSEL_CHECK(p >= 0.0F && p < 1.0F, "dropout probability must be in [0, 1), got {}", p);
  if (y != &x && y->size() != x.size()) *y = Buffer<float>::Uninitialized(x.size());
  Ops(ctx).dropout(x, MakeDropoutSpec(p, Rng(key)()), y);
}

bool DropoutGemmFuses(const Context& ctx, int64_t n) {
  return Ops(ctx).dropout_gemm != nullptr && n <= kDropoutGemmMaxWidth && ctx.gemm_math == GemmMath::kFp32;
}

void DropoutGemm(const Context& ctx, const Matrix& x, bool trans_x, float p, const StreamKey& key, const Matrix& b,
                 Matrix* c) {
  TESSEL_CHECK(p >= 0.0F && p < 1.0F, "dropout probability must be in [0, 1), got {}", p);
  TESSEL_CHECK(c != &x && c != &b, "DropoutGemm: the output must not be an operand");
  if (DropoutGemmFuses(ctx, b.cols)) {
    GemmShape(x, trans_x, b, false, 0.0F, c);
    Ops(ctx).dropout_gemm(x, trans_x, MakeDropoutSpec(p, Rng(key)()), b, c);
    return;
  }
  Matrix dropped;
  dropped.rows = x.rows;
  dropped.cols = x.cols;
  dropped.data = Buffer<float>::Uninitialized(static_cast<size_t>(x.size()));
  Dropout(ctx, x.data, p, key, &dropped.data);
  Gemm(ctx, dropped, trans_x, b, false, 1.0F, 0.0F, c);
}

void DropoutPrefix(const Context& ctx, const Buffer<float>& x, int64_t n, float p, const StreamKey& key,
                   Buffer<float>* y) {
  TESSEL_CHECK(p >= 0.0F && p < 1.0F, "dropout probability must be in [0, 1), got {}", p);
  TESSEL_CHECK(n >= 0 && static_cast<size_t>(n) <= x.size(), "DropoutPrefix: {} of {} values", n, x.size());
  TESSEL_CHECK(y != &x || static_cast<size_t>(n) == x.size(), "DropoutPrefix: an in-place prefix");
  if (y->size() != static_cast<size_t>(n)) *y = Buffer<float>::Uninitialized(static_cast<size_t>(n));
  Ops(ctx).dropout(x, MakeDropoutSpec(p, Rng(key)()), y);
}

void DropoutBackward(const Context& ctx, const Buffer<float>& grad_y, float p, const StreamKey& key,
                     Buffer<float>* grad_x) {
  Dropout(ctx, grad_y, p, key, grad_x);  // the same mask and scale, regenerated
}

void AdamStep(const Context& ctx, const AdamStepParams& hp, const Matrix& grad, Matrix* w, Matrix* m, Matrix* v) {
  TESSEL_CHECK(grad.size() == w->size() && m->size() == w->size() && v->size() == w->size(),
               "AdamStep: {} values, {} gradients, {} and {} moments", w->size(), grad.size(), m->size(), v->size());
  Ops(ctx).adam_step(hp, grad, w, m, v);
}

void AdamStepMany(const Context& ctx, const AdamStepParams& hp, std::span<const AdamTensor> tensors) {
  for (const AdamTensor& t : tensors) {
    TESSEL_CHECK(t.grad->size() == t.w->size() && t.m->size() == t.w->size() && t.v->size() == t.w->size(),
                 "AdamStep: {} values, {} gradients, {} and {} moments", t.w->size(), t.grad->size(), t.m->size(),
                 t.v->size());
  }
  const KernelOps& ops = Ops(ctx);
  if (ops.adam_step_many != nullptr) {
    ops.adam_step_many(hp, tensors);
    return;
  }
  for (const AdamTensor& t : tensors) {
    AdamStepParams one = hp;
    one.weight_decay = t.weight_decay;
    ops.adam_step(one, *t.grad, t.w, t.m, t.v);
  }
}

// ---- the CPU entries

void ReleaseBlasThreads() {
  if (blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
}

namespace cpu {

void Gemm(const Matrix& a, bool trans_a, const Matrix& b, bool trans_b, float alpha, float beta, Matrix* c) {
  const GemmDims dims = GemmShape(a, trans_a, b, trans_b, beta, c);
  const int64_t m = dims.m, n = dims.n, k = dims.k;  // not a structured binding: lambdas capture them (Clang 14)
  auto cv = c->Mut();
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (float& v : cv) v = beta == 0.0F ? 0.0F : v * beta;
    return;
  }
  // OpenBLAS runs on one thread per call and the parallelism is oneTBB's: its own pool would spin (sched_yield)
  // beside oneTBB's workers and the sampling thread, which cost a quarter of a mini-batch epoch's cycles.
  static const bool serial_blas = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)serial_blas;
  // BLAS takes int sizes: the leading dimensions (the operands' widths) must fit. Row counts and (beyond 2^31 - 1)
  // inner lengths are cut into chunks of at most 2^22 below (rows_per, inner_per), so any height is fine.
  constexpr int64_t kBlasMax = std::numeric_limits<int>::max();
  TESSEL_CHECK(a.cols <= kBlasMax && b.cols <= kBlasMax && n <= kBlasMax,
               "Gemm: {}x{} times {}x{}: a matrix wider than {} columns does not fit BLAS's 32-bit sizes", a.rows,
               a.cols, b.rows, b.cols, kBlasMax);
  const float* ap = a.View().data();
  const float* bp = b.View().data();
  const auto lda = static_cast<int>(a.cols);
  const auto ldb = static_cast<int>(b.cols);
  auto sgemm = [&](int64_t rows, int64_t inner, const float* a0, const float* b0, float al, float be, float* c0) {
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                static_cast<int>(rows), static_cast<int>(n), static_cast<int>(inner), al, a0, lda, b0, ldb, be, c0,
                static_cast<int>(n));
  };
  // c = alpha * (sum of the chunks' partial products, in chunk order) + beta * c (beta 0: c not read).
  auto add_partials = [&](const std::vector<float>& partial, int64_t chunks) {
    parallel_for<int64_t>(0, m * n, 4096, [&](int64_t i) {
      float sum = 0.0F;
      for (int64_t t = 0; t < chunks; ++t) sum += partial[static_cast<size_t>(t * m * n + i)];
      cv[static_cast<size_t>(i)] = beta == 0.0F ? alpha * sum : alpha * sum + beta * cv[static_cast<size_t>(i)];
    });
  };
  // Work split in fixed chunks (independent of the thread count, so results are too): rows of c when there are
  // enough of them, otherwise the inner dimension with the partial products added in chunk order.
  constexpr int64_t kChunkWork = int64_t{1} << 20;  // multiply-adds per task
  const int64_t work = m * n * k;
  if (!trans_b && n <= kSkinnyMaxCols) {
    // Narrow outputs (GCN layer widths): the register-blocked kernels of skinny_gemm.h (they pack nothing).
    if (!trans_a) {
      const int64_t skinny_rows = std::max<int64_t>(16, kChunkWork / std::max<int64_t>(n * k, 1));
      parallel_for<int64_t>(0, (m + skinny_rows - 1) / skinny_rows, 1, [&](int64_t t) {
        const int64_t r0 = t * skinny_rows;
        SkinnyGemmNN(ap, a.cols, bp, b.cols, k, n, alpha, beta, cv.data(), r0, std::min(m, r0 + skinny_rows));
      });
      return;
    }
    const int64_t per = std::max<int64_t>(256, kChunkWork / std::max<int64_t>(m * n, 1));
    const int64_t chunks = (k + per - 1) / per;
    std::vector<float> partial(static_cast<size_t>(chunks * m * n));
    parallel_for<int64_t>(0, chunks, 1, [&](int64_t t) {
      SkinnyGemmTN(ap, a.cols, bp, b.cols, m, n, t * per, std::min(k, (t + 1) * per), partial.data() + t * m * n);
    });
    add_partials(partial, chunks);
    return;
  }
  // Every BLAS call packs its share of b (and of a) before multiplying, so a chunk must be large enough to pay for
  // that: at least 256 rows of c (a 32-row chunk of SAGE's 10,000 x 256 times 256 x 128 product ran at 27 GFLOP/s
  // against 42 with 256 rows), and a weight gradient (a^T b with a short m and an inner dimension of the batch's
  // nodes) is split along that inner dimension in chunks of at least 2,048 (16-row chunks of c repacked all of b
  // each time: 20 GFLOP/s against 39).
  const int64_t rows_per = std::max<int64_t>(256, 4 * kChunkWork / std::max<int64_t>(n * k, 1));
  const int64_t inner_per = std::max<int64_t>(2048, 4 * kChunkWork / std::max<int64_t>(m * n, 1));
  if (work < 2 * kChunkWork || (m < 2 * rows_per && k < 2 * inner_per)) {
    sgemm(m, k, ap, bp, alpha, beta, cv.data());
  } else if (m >= 2 * rows_per && k <= kBlasMax) {
    parallel_for<int64_t>(0, (m + rows_per - 1) / rows_per, 1, [&](int64_t t) {
      const int64_t r0 = t * rows_per;
      const int64_t rows = std::min(m, r0 + rows_per) - r0;
      sgemm(rows, k, trans_a ? ap + r0 : ap + r0 * a.cols, bp, alpha, beta, cv.data() + r0 * n);
    });
  } else {
    const int64_t chunks = (k + inner_per - 1) / inner_per;
    std::vector<float> partial(static_cast<size_t>(chunks * m * n));
    parallel_for<int64_t>(0, chunks, 1, [&](int64_t t) {
      const int64_t k0 = t * inner_per;
      const int64_t inner = std::min(k, k0 + inner_per) - k0;
      sgemm(m, inner, trans_a ? ap + k0 * a.cols : ap + k0, trans_b ? bp + k0 : bp + k0 * b.cols, 1.0F, 0.0F,
            partial.data() + t * m * n);
    });
    add_partials(partial, chunks);
  }
}

void AddBias(const Matrix& bias, Matrix* y) {
  const float* b = bias.View().data();
  float* yv = y->Mut().data();
  const int64_t cols = y->cols;
  parallel_for_chunks<int64_t>(0, y->rows, RowGrain(cols), [=](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i) Axpy(1.0F, b, cols, yv + i * cols);
  });
}

void AddBiasRelu(const Matrix& bias, Matrix* y) {
  const float* b = bias.View().data();
  float* yv = y->Mut().data();
  const int64_t cols = y->cols;
  parallel_for_chunks<int64_t>(0, y->rows, RowGrain(cols), [=](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i) {
      float* row = yv + i * cols;
      for (int64_t j = 0; j < cols; ++j) {
        const float v = row[j] + b[j];
        row[j] = v < 0.0F ? 0.0F : v;
      }
    }
  });
}

void BiasGrad(const Matrix& grad_y, Matrix* grad_bias) {
  const int64_t cols = grad_y.cols;
  grad_bias->Resize(1, cols);
  auto g = grad_y.View();
  auto out = grad_bias->Mut();
  // Column sums in fixed row chunks, combined in chunk order (deterministic for any thread count).
  constexpr int64_t kChunk = 1024;
  const int64_t chunks = (grad_y.rows + kChunk - 1) / kChunk;
  std::vector<double> partial(static_cast<size_t>(chunks * cols), 0.0);
  parallel_for<int64_t>(0, chunks, 1, [&](int64_t c) {
    double* acc = partial.data() + c * cols;
    const int64_t end = std::min(grad_y.rows, (c + 1) * kChunk);
    for (int64_t i = c * kChunk; i < end; ++i) {
      for (int64_t j = 0; j < cols; ++j) acc[j] += g[static_cast<size_t>(i * cols + j)];
    }
  });
  for (int64_t j = 0; j < cols; ++j) {
    double s = 0;
    for (int64_t c = 0; c < chunks; ++c) s += partial[static_cast<size_t>(c * cols + j)];
    out[static_cast<size_t>(j)] = static_cast<float>(s);
  }
}

// The element-wise loops take raw pointers per chunk: through spans captured by reference the compiler reloaded
// the pointers each iteration and kept a branch per value (a mispredicted branch for every other ReLU input).
void Relu(const Matrix& x, Matrix* y) {
  if (y != &x) y->Resize(x.rows, x.cols);
  const float* xv = x.View().data();
  float* yv = y->Mut().data();
  parallel_for_chunks<int64_t>(0, x.size(), 16384, [xv, yv](int64_t i0, int64_t i1) {
    const float* in = xv;
    float* out = yv;
    for (int64_t i = i0; i < i1; ++i) {
      const float v = in[i];
      out[i] = v < 0.0F ? 0.0F : v;
    }
  });
}

void ReluBackward(const Matrix& y, const Matrix& grad_y, Matrix* grad_x) {
  if (grad_x != &grad_y) grad_x->Resize(y.rows, y.cols);
  const float* yv = y.View().data();
  const float* gy = grad_y.View().data();
  float* gx = grad_x->Mut().data();
  parallel_for_chunks<int64_t>(0, y.size(), 16384, [yv, gy, gx](int64_t i0, int64_t i1) {
    const float* y0 = yv;
    const float* g0 = gy;
    float* out = gx;
    for (int64_t i = i0; i < i1; ++i) {
      const float g = g0[i];  // loaded unconditionally, so the select needs no branch
      out[i] = y0[i] > 0.0F ? g : 0.0F;
    }
  });
}

void Axpy(float alpha, const Matrix& x, Matrix* y) {
  const float* xv = x.View().data();
  float* yv = y->Mut().data();
  parallel_for_chunks<int64_t>(0, x.size(), 16384,
                               [xv, yv, alpha](int64_t i0, int64_t i1) { Axpy(alpha, xv + i0, i1 - i0, yv + i0); });
}

void Dropout(const Buffer<float>& x, const DropoutSpec& spec, Buffer<float>* y) {
  const auto n = static_cast<int64_t>(y->size());  // a prefix of x when y is shorter
  auto xv = x.Host();
  auto yv = y->MutableHost();
  if (!spec.Active()) {
    if (y != &x && n > 0) std::memcpy(yv.data(), xv.data(), static_cast<size_t>(n) * sizeof(float));
    return;
  }
  // Groups of 64 values share one mask word; chunks of 256 groups (16K values) per task.
  const int64_t groups = (n + 63) / 64;
  parallel_for_chunks<int64_t>(0, groups, 256, [&](int64_t g0, int64_t g1) {
    for (int64_t g = g0; g < g1; ++g) {
      const uint64_t word = DropoutMaskWord(spec, static_cast<uint64_t>(g));
      ApplyMask(xv.data() + g * 64, std::min<int64_t>(64, n - g * 64), word, 0, spec.scale, yv.data() + g * 64);
    }
  });
}

void AdamStep(const AdamStepParams& hp, const Matrix& grad, Matrix* w, Matrix* m, Matrix* v) {
  auto wv = w->Mut();
  auto g = grad.View();
  auto mv = m->Mut();
  auto vv = v->Mut();
  parallel_for<int64_t>(0, static_cast<int64_t>(wv.size()), 8192, [&](int64_t i) {
    const float gi = g[i] + hp.weight_decay * wv[i];
    mv[i] = hp.beta1 * mv[i] + (1.0F - hp.beta1) * gi;
    vv[i] = hp.beta2 * vv[i] + (1.0F - hp.beta2) * gi * gi;
    wv[i] -= hp.step_size * mv[i] / (std::sqrt(vv[i]) * hp.inv_sqrt_c2 + hp.eps);
  });
}

}  // namespace cpu
}  // namespace tessel::kernels
