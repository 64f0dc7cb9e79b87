// The host twins of the raw CUDA kernels (kernels/cuda/*_cuda.h signatures: device pointers and sizes), for the
// simulated device (core/device.h ScopedSimulatedDevice), whose "device" memory is host memory. Each twin views its
// pointers as borrowed matrices and runs the CPU kernel, or (the per-row cross-entropy, which the CPU kernel sums
// instead) follows the CUDA kernel's formula. With the shared wrappers (kernels/device_wrappers.h) they make the
// simulated table: the CUDA path's allocations, copies and synchronisations, counted on a machine without a GPU.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "kernels/device_wrappers.h"
#include "kernels/ops.h"

namespace tessel::kernels {
namespace {

template <typename T>
Buffer<T> View(const T* p, int64_t n) {
  return Buffer<T>::Borrow(nullptr, const_cast<T*>(p), static_cast<size_t>(n));
}

Matrix M(const float* p, int64_t rows, int64_t cols) {
  Matrix m;
  m.rows = rows;
  m.cols = cols;
  m.data = View(p, rows * cols);
  return m;
}

SparseMatrix Csr(const DeviceCsr& a) {
  return SparseMatrix{a.rows, a.cols, View(a.indptr, a.rows + 1), View(a.indices, a.nnz),
                      a.values != nullptr ? View(a.values, a.nnz) : Buffer<float>()};
}

// One past the largest id, the rows a source must have for `ids` (validated by the public functions).
int64_t RowsFor(const int64_t* ids, int64_t n) {
  int64_t most = -1;
  for (int64_t i = 0; i < n; ++i) most = std::max(most, ids[i]);
  return most + 1;
}

// x rounded to TF32 (10 mantissa bits; to nearest, ties away from zero, as PTX's cvt.rna.tf32.f32): what tensor
// cores multiply under --math tf32. Infinities and NaNs pass unchanged.
float RoundToTf32(float x) {
  uint32_t bits = std::bit_cast<uint32_t>(x);
  if ((bits & 0x7f800000U) == 0x7f800000U) return x;
  bits = (bits + 0x1000U) & ~0x1fffU;
  return std::bit_cast<float>(bits);
}

// A TF32-rounded copy of the rows x cols matrix at p (for the twin of a TF32 GEMM).
Matrix RoundedToTf32(const float* p, int64_t rows, int64_t cols) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  std::transform(p, p + rows * cols, v.begin(), RoundToTf32);
  return Matrix(rows, cols, std::move(v));
}

struct HostRaw {
  // The CPU GEMM; under TF32 on inputs rounded to TF32 first (float32 products and sums, as the tensor cores
  // accumulate), so a simulated run sees the precision it asked for.
  static void Gemm(GemmMath math, const float* a, int64_t lda, bool trans_a, const float* b, int64_t ldb, bool trans_b,
                   int64_t m, int64_t n, int64_t k, float alpha, float beta, float* c) {
    Matrix c_view = M(c, m, n);
    const int64_t a_rows = trans_a ? k : m;
    const int64_t b_rows = trans_b ? n : k;
    if (math == GemmMath::kTf32) {
      cpu::Gemm(RoundedToTf32(a, a_rows, lda), trans_a, RoundedToTf32(b, b_rows, ldb), trans_b, alpha, beta, &c_view);
      return;
    }
    cpu::Gemm(M(a, a_rows, lda), trans_a, M(b, b_rows, ldb), trans_b, alpha, beta, &c_view);
  }
  static void AddBias(const float* bias, int64_t rows, int64_t cols, float* y) {
    Matrix y_view = M(y, rows, cols);
    cpu::AddBias(M(bias, 1, cols), &y_view);
  }
  static void AddBiasRelu(const float* bias, int64_t rows, int64_t cols, float* y) {
    Matrix y_view = M(y, rows, cols);
    cpu::AddBiasRelu(M(bias, 1, cols), &y_view);
  }
  static void BiasGrad(const float* grad_y, int64_t rows, int64_t cols, float* grad_bias) {
    Matrix out = M(grad_bias, 1, cols);
    cpu::BiasGrad(M(grad_y, rows, cols), &out);
  }
  static void Relu(const float* x, int64_t n, float* y) {
    Matrix y_view = M(y, 1, n);
    cpu::Relu(M(x, 1, n), &y_view);
  }
  static void Axpy(float alpha, const float* x, int64_t n, float* y) {
    Matrix y_view = M(y, 1, n);
    cpu::Axpy(alpha, M(x, 1, n), &y_view);
  }
  static void ReluBackward(const float* y, const float* grad_y, int64_t n, float* grad_x) {
    Matrix out = M(grad_x, 1, n);
    cpu::ReluBackward(M(y, 1, n), M(grad_y, 1, n), &out);
  }
  static void Dropout(const float* x, int64_t n, const DropoutSpec& spec, float* y) {
    Buffer<float> out = View(y, n);
    cpu::Dropout(View(x, n), spec, &out);
  }
  static void AdamStep(float* w, const float* g, float* m, float* v, int64_t n, float wd, float beta1, float beta2,
                       float step_size, float inv_sqrt_c2, float eps) {
    Matrix wv = M(w, 1, n);
    Matrix mv = M(m, 1, n);
    Matrix vv = M(v, 1, n);
    cpu::AdamStep(AdamStepParams{wd, beta1, beta2, step_size, inv_sqrt_c2, eps}, M(g, 1, n), &wv, &mv, &vv);
  }
  static void AdamStepBatch(const cuda::AdamBatch& b, float beta1, float beta2, float step_size, float inv_sqrt_c2,
                            float eps) {
    for (int t = 0; t < b.count; ++t) {
      AdamStep(b.w[t], b.g[t], b.m[t], b.v[t], b.n[t], b.wd[t], beta1, beta2, step_size, inv_sqrt_c2, eps);
    }
  }
  static void GatherRows(const float* src, int64_t cols, const int64_t* ids, int64_t n, float* out) {
    Matrix out_view = M(out, n, cols);
    cpu::GatherRows(M(src, RowsFor(ids, n), cols), View(ids, n), &out_view);
  }
  static void GatherRowsDropout(const float* src, int64_t cols, const int64_t* ids, int64_t n, const DropoutSpec& spec,
                                float* out) {
    Matrix out_view = M(out, n, cols);
    const std::span<const int64_t> id_span =
        ids != nullptr ? std::span<const int64_t>(ids, static_cast<size_t>(n)) : std::span<const int64_t>();
    cpu::GatherRowsDropout(M(src, ids != nullptr ? RowsFor(ids, n) : n, cols), id_span, nullptr, spec, &out_view);
  }
  static void ScatterAddRows(const float* src, int64_t cols, const int64_t* order, const int64_t* start,
                             int64_t targets, float* out) {
    std::vector<int64_t> s(start, start + targets + 1);
    std::vector<int64_t> o(order, order + s.back());
    Matrix out_view = M(out, targets, cols);
    const Matrix src_view = M(src, RowsFor(order, s.back()), cols);  // before s is moved
    cpu::ScatterAddRows(src_view, std::move(s), std::move(o), &out_view);
  }
  // kernels/cuda/loss.cu's CrossEntropyKernel: per-row loss log(sum exp(z - max)) - (z_y - max) in float64, and
  // grad = (softmax - onehot) / m on the listed rows, zero elsewhere.
  static void SoftmaxCrossEntropy(const float* logits, int64_t n_rows, int64_t c, const int32_t* labels,
                                  const int64_t* rows, int64_t m, double inv_m, double* row_loss, float* grad) {
    if (grad != nullptr) std::fill(grad, grad + n_rows * c, 0.0F);
    parallel_for<int64_t>(0, m, 64, [&](int64_t k) {
      const int64_t r = rows[k];
      const float* z = logits + r * c;
      const int32_t y = labels[r];
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < c; ++j) mx = std::max(mx, z[j]);
      double d = 0;
      for (int64_t j = 0; j < c; ++j) d += std::exp(static_cast<double>(z[j] - mx));
      const double log_denom = std::log(d);
      row_loss[k] = log_denom - static_cast<double>(z[y] - mx);
      if (grad != nullptr) {
        float* g = grad + r * c;
        for (int64_t j = 0; j < c; ++j) {
          const double prob = std::exp(static_cast<double>(z[j] - mx) - log_denom);
          g[j] = static_cast<float>((prob - (j == y ? 1.0 : 0.0)) * inv_m);
        }
      }
    });
  }
  static void LossTotal(const double* t, int64_t m, int64_t chunk, double inv_m, double weight, bool first,
                        double* total) {
    double s = 0;
    for (int64_t begin = 0; begin < m; begin += chunk) {
      double part = 0;
      for (int64_t k = begin; k < std::min(m, begin + chunk); ++k) part += t[k];
      s += part;
    }
    total[0] = (first ? 0.0 : total[0]) + (s * inv_m) * weight;
  }
  // Dropout's values into a temporary, then the CPU's GEMM: the CPU path's values bit for bit (the CUDA kernel is
  // within Gemm's float32 bound of them).
  static Matrix Dropped(const float* x, int64_t rows, int64_t cols, const DropoutSpec& spec) {
    Matrix d(rows, cols);
    cpu::Dropout(View(x, rows * cols), spec, &d.data);
    return d;
  }
  static void DropoutGemm(const float* x, int64_t rows, int64_t cols, const DropoutSpec& spec, const float* b,
                          int64_t n, float* c) {
    Matrix c_view = M(c, rows, n);
    cpu::Gemm(Dropped(x, rows, cols, spec), false, M(b, cols, n), false, 1.0F, 0.0F, &c_view);
  }
  static void DropoutGemmTN(const float* x, int64_t rows, int64_t cols, const DropoutSpec& spec, const float* b,
                            int64_t n, float* c) {
    Matrix c_view = M(c, cols, n);
    cpu::Gemm(Dropped(x, rows, cols, spec), true, M(b, rows, n), false, 1.0F, 0.0F, &c_view);
  }
  static void RowSoftmax(const float* logits, int64_t n_rows, int64_t c, float* probs) {
    Matrix out = M(probs, n_rows, c);
    cpu::RowSoftmax(M(logits, n_rows, c), &out);
  }
  static void RowArgmax(const float* x, int64_t n_rows, int64_t c, int32_t* out) {
    cpu::RowArgmax(M(x, n_rows, c), std::span<int32_t>(out, static_cast<size_t>(n_rows)));
  }
  static void ArgmaxConfusion(const float* x, int64_t n_rows, int64_t c, const int32_t* labels, const int64_t* rows,
                              const cuda::ConfusionSegments& seg, int64_t* counts) {
    const auto n = static_cast<size_t>(seg.count) * static_cast<size_t>(3 * c + 1);
    std::fill_n(counts, n, int64_t{0});  // the CUDA code's memset
    cpu::ArgmaxConfusion(M(x, n_rows, c), View(labels, n_rows), View(rows, seg.end[seg.count - 1]),
                         std::span<const int64_t>(seg.end, static_cast<size_t>(seg.count)),
                         std::span<int64_t>(counts, n));
  }
  static void SpMM(const DeviceCsr& a, const float* x, int64_t n, float* y) {
    Matrix y_view = M(y, a.rows, n);
    cpu::SpMM(Csr(a), M(x, a.cols, n), &y_view);
  }
  static void Transpose(const DeviceCsr& a, int64_t* t_indptr, int32_t* t_indices, float* t_values) {
    const SparseMatrix t = cpu::Transpose(Csr(a));
    std::copy_n(t.indptr.Host().data(), a.cols + 1, t_indptr);
    std::copy_n(t.indices.Host().data(), a.nnz, t_indices);
    if (t_values != nullptr) std::copy_n(t.values.Host().data(), a.nnz, t_values);
  }
  static void GatherSpMM(const DeviceCsr& a, const float* src, int64_t src_rows, int64_t cols, const int64_t* ids,
                         const DropoutSpec& spec, float* out) {
    Matrix out_view = M(out, a.rows, cols);
    cpu::GatherSpMM(
        Csr(a), M(src, src_rows, cols),
        ids != nullptr ? std::span<const int64_t>(ids, static_cast<size_t>(a.cols)) : std::span<const int64_t>(),
        nullptr, spec, &out_view);
  }
  static void GatherSparseRows(const DeviceCsr& a, const int64_t* ids, int64_t m, int64_t* out_indptr,
                               int32_t* out_indices, float* out_values) {
    const SparseMatrix g =
        cpu::GatherSparseRows(Csr(a), std::span<const int64_t>(ids, static_cast<size_t>(m)), nullptr);
    std::copy_n(g.indptr.Host().data(), m + 1, out_indptr);
    std::copy_n(g.indices.Host().data(), g.nnz(), out_indices);
    if (out_values != nullptr) std::copy_n(g.values.Host().data(), g.nnz(), out_values);
  }
  static void TopK(const float* x, int64_t n_rows, int64_t c, int64_t k, float* values, int32_t* indices) {
    Matrix v = M(values, n_rows, k);
    Buffer<int32_t> i = View(indices, n_rows * k);
    cpu::TopK(M(x, n_rows, c), k, &v, &i);
  }
};

}  // namespace

namespace sim {
const KernelOps kSimulatedOps = MakeDeviceOps<HostRaw>();
}  // namespace sim

}  // namespace tessel::kernels
