// The device table's wrappers (kernels/ops.h KernelOps), written once for every device that keeps its data in
// device memory behind Buffer<T>'s mirrors: they size outputs, take device pointers (Device() for inputs,
// OverwriteDevice() for outputs a kernel writes in full, MutableDevice() for outputs it updates) and call a raw
// kernel of `Raw`. Raw is the CUDA kernels of kernels/cuda/*.cu (kernels/cuda/ops.cc) or their host twins on the
// simulated device (kernels/cpu/device_twins.cc), so the data flow a CPU-only test counts on the simulated device is
// the CUDA path's own. Host C++ without CUDA headers.
//
// Kernel launches are counted here, once for both (core/device.h CountLaunches), as many per call as the CUDA raw
// kernel makes for those sizes (kernels/cuda/*.cu: its early returns, memsets, cuBLAS / cuSPARSE calls and CUB
// passes); the CUDA code's own tally at its launch sites (Counters::launches_seen) checks these numbers on a GPU.
#pragma once

#include <algorithm>
#include <span>
#include <utility>
#include <vector>

#include "core/device.h"
#include "kernels/cuda/dense_cuda.h"
#include "kernels/cuda/loss_cuda.h"
#include "kernels/cuda/sparse_cuda.h"
#include "kernels/device_csr.h"
#include "kernels/loss.h"
#include "kernels/ops.h"

namespace tessel::kernels {

template <typename Raw>
struct DeviceWrappers {
  // Counts one launch when `work` is true (the raw kernels skip empty launches).
  static void Launch(bool work, int64_t n = 1) {
    if (work) device::CountLaunches(n);
  }

  // ---- dense

  static void Gemm(GemmMath math, const Matrix& a, bool trans_a, const Matrix& b, bool trans_b, float alpha, float beta,
                   Matrix* c) {
    const auto [m, n, k] = GemmShape(a, trans_a, b, trans_b, beta, c);
    Launch(m > 0 && n > 0);  // cublasSgemm, or a scale when k == 0
    Raw::Gemm(math, a.data.Device(), a.cols, trans_a, b.data.Device(), b.cols, trans_b, m, n, k, alpha, beta,
              beta == 0.0F ? c->data.OverwriteDevice() : c->data.MutableDevice());
  }

  static void AddBias(const Matrix& bias, Matrix* y) {
    Launch(y->rows * y->cols > 0);
    Raw::AddBias(bias.data.Device(), y->rows, y->cols, y->data.MutableDevice());
  }

  static void BiasGrad(const Matrix& grad_y, Matrix* grad_bias) {
    grad_bias->Resize(1, grad_y.cols);
    const int64_t chunks = (grad_y.rows + 255) / 256;  // the CUDA kernel's chunks of 256 rows (more only beyond 2^24)
    const bool one = grad_y.rows == 0 || chunks * grad_y.cols <= cuda::kBiasGradOneLaunch;
    Launch(grad_y.cols > 0, one ? 1 : 2);  // a memset or one block, or partial sums and their total
    Raw::BiasGrad(grad_y.data.Device(), grad_y.rows, grad_y.cols, grad_bias->data.OverwriteDevice());
  }

  static void Relu(const Matrix& x, Matrix* y) {
    if (y != &x) y->Resize(x.rows, x.cols);
    const float* in = x.data.Device();  // before MutableDevice: y may be x
    Launch(x.size() > 0);
    Raw::Relu(in, x.size(), y->data.OverwriteDevice());
  }

  static void AddBiasRelu(const Matrix& bias, Matrix* y) {
    Launch(y->rows * y->cols > 0);
    Raw::AddBiasRelu(bias.data.Device(), y->rows, y->cols, y->data.MutableDevice());
  }

  static void Axpy(float alpha, const Matrix& x, Matrix* y) {
    const float* in = x.data.Device();
    Launch(x.size() > 0);
    Raw::Axpy(alpha, in, x.size(), y->data.MutableDevice());
  }

  static void ReluBackward(const Matrix& y, const Matrix& grad_y, Matrix* grad_x) {
    if (grad_x != &grad_y) grad_x->Resize(y.rows, y.cols);
    const float* yd = y.data.Device();
    const float* gy = grad_y.data.Device();
    Launch(y.size() > 0);
    Raw::ReluBackward(yd, gy, y.size(), grad_x->data.OverwriteDevice());
  }

  static void Dropout(const Buffer<float>& x, const DropoutSpec& spec, Buffer<float>* y) {
    const float* in = x.Device();
    Launch(y->size() > 0);
    Raw::Dropout(in, static_cast<int64_t>(y->size()), spec, y->OverwriteDevice());
  }

  // The product of dropped-out x with b, x read once (c sized by the public function): one launch, or two for the
  // transposed product (its partial sums over chunks of rows, then their ordered sum).
  static void DropoutGemm(const Matrix& x, bool trans_x, const DropoutSpec& spec, const Matrix& b, Matrix* c) {
    const float* xd = x.data.Device();
    const float* bd = b.data.Device();
    if (trans_x) {
      Launch(x.cols > 0 && b.cols > 0, 2);
      Raw::DropoutGemmTN(xd, x.rows, x.cols, spec, bd, b.cols, c->data.OverwriteDevice());
    } else {
      Launch(x.rows > 0 && b.cols > 0);
      Raw::DropoutGemm(xd, x.rows, x.cols, spec, bd, b.cols, c->data.OverwriteDevice());
    }
  }

  static void AdamStep(const AdamStepParams& hp, const Matrix& grad, Matrix* w, Matrix* m, Matrix* v) {
    Launch(w->size() > 0);
    Raw::AdamStep(w->data.MutableDevice(), grad.data.Device(), m->data.MutableDevice(), v->data.MutableDevice(),
                  w->size(), hp.weight_decay, hp.beta1, hp.beta2, hp.step_size, hp.inv_sqrt_c2, hp.eps);
  }

  // One launch per kAdamBatch tensors (those with elements).
  static void AdamStepMany(const AdamStepParams& hp, std::span<const AdamTensor> tensors) {
    cuda::AdamBatch b;
    const auto flush = [&] {
      Launch(b.count > 0);
      Raw::AdamStepBatch(b, hp.beta1, hp.beta2, hp.step_size, hp.inv_sqrt_c2, hp.eps);
      b = cuda::AdamBatch{};
    };
    for (const AdamTensor& t : tensors) {
      if (t.w->size() == 0) continue;
      b.w[b.count] = t.w->data.MutableDevice();
      b.g[b.count] = t.grad->data.Device();
      b.m[b.count] = t.m->data.MutableDevice();
      b.v[b.count] = t.v->data.MutableDevice();
      b.n[b.count] = static_cast<int64_t>(t.w->size());
      b.wd[b.count] = t.weight_decay;
      if (++b.count == cuda::kAdamBatch) flush();
    }
    if (b.count > 0) flush();
  }

  // ---- gather

  static void GatherRows(const Matrix& src, const Buffer<int64_t>& ids, Matrix* out) {
    Launch(out->rows * src.cols > 0);
    Raw::GatherRows(src.data.Device(), src.cols, ids.Device(), out->rows,  // the first out->rows ids
                    out->data.OverwriteDevice());
  }

  // The ids on the device: the caller's Buffer when it has one (no upload in steady state), else a copy uploaded
  // into `copy`; null for no ids (rows in order). Host ids empty with a non-empty Buffer: ids only on the device
  // (a device wrote them; the callers take their count from the Buffer's size).
  static const int64_t* DeviceIds(std::span<const int64_t> ids, const Buffer<int64_t>* ids_buf, Buffer<int64_t>* copy) {
    if (ids.empty() && ids_buf != nullptr && !ids_buf->empty()) return ids_buf->Device();  // ids only on the device
    if (ids.empty()) return nullptr;
    if (ids_buf == nullptr) {
      *copy = Buffer<int64_t>::CopyOf(ids);
      ids_buf = copy;
    }
    return ids_buf->Device();
  }

  // Gather and dropout in one pass.
  static void GatherRowsDropout(const Matrix& src, std::span<const int64_t> ids, const Buffer<int64_t>* ids_buf,
                                const DropoutSpec& spec, Matrix* out) {
    Buffer<int64_t> copy;
    const int64_t* id_ptr = DeviceIds(ids, ids_buf, &copy);
    Launch(out->rows * src.cols > 0);
    Raw::GatherRowsDropout(src.data.Device(), src.cols, id_ptr, out->rows, spec, out->data.OverwriteDevice());
  }

  // The aggregation of gathered, dropped-out rows in one kernel (the CPU's fused kernel's values): the gathered
  // matrix is never built.
  static void GatherSpMM(const SparseMatrix& a, const Matrix& src, std::span<const int64_t> ids,
                         const Buffer<int64_t>* ids_buf, const DropoutSpec& spec, Matrix* out) {
    Buffer<int64_t> copy;
    const int64_t* id_ptr = DeviceIds(ids, ids_buf, &copy);
    Launch(a.rows > 0 && src.cols > 0);
    Raw::GatherSpMM(OnDevice(a), src.data.Device(), src.rows, src.cols, id_ptr, spec, out->data.OverwriteDevice());
  }

  // The row gather with one column per row.
  static void GatherValues(const Buffer<float>& src, const Buffer<int64_t>& ids, Buffer<float>* out) {
    Launch(ids.size() > 0);
    Raw::GatherRows(src.Device(), 1, ids.Device(), static_cast<int64_t>(ids.size()), out->OverwriteDevice());
  }

  static void ScatterAddRows(const Matrix& src, std::vector<int64_t> start, std::vector<int64_t> order, Matrix* out) {
    const Buffer<int64_t> start_buf(std::move(start));
    const Buffer<int64_t> order_buf(std::move(order));
    Launch(out->rows * src.cols > 0);
    Raw::ScatterAddRows(src.data.Device(), src.cols, order_buf.Device(), start_buf.Device(), out->rows,
                        out->data.MutableDevice());
  }

  // ---- loss

  // The per-row losses on the device (and grad, when asked), after the host-side checks of rows and labels.
  static Buffer<double> RowLosses(const Matrix& logits, const Buffer<int32_t>& label_buf,
                                  const Buffer<int64_t>& row_buf, Matrix* grad, double* inv_m) {
    const std::span<const int32_t> labels = label_buf.Host();
    const std::span<const int64_t> rows = row_buf.Host();
    const int64_t c = logits.cols;
    for (int64_t r : rows) {
      TESSEL_CHECK(r >= 0 && r < logits.rows, "SoftmaxCrossEntropy: row {} outside [0, {})", r, logits.rows);
      const int32_t y = labels[static_cast<size_t>(r)];
      TESSEL_CHECK(y >= 0 && y < c, "SoftmaxCrossEntropy: row {} has label {} outside [0, {})", r, y, c);
    }
    const auto m = static_cast<int64_t>(rows.size());
    *inv_m = m > 0 ? 1.0 / static_cast<double>(m) : 0.0;
    Buffer<double> row_loss = Buffer<double>::Uninitialized(static_cast<size_t>(m));
    float* g = nullptr;
    if (grad != nullptr) {
      TESSEL_CHECK(grad != &logits, "SoftmaxCrossEntropy: grad must not alias logits");
      grad->Resize(logits.rows, c);
      g = grad->data.OverwriteDevice();  // the kernel zeroes it first
    }
    device::CountLaunches((g != nullptr && logits.rows * c > 0 ? 1 : 0) + (m > 0 ? 1 : 0));  // a memset, the rows
    Raw::SoftmaxCrossEntropy(logits.data.Device(), logits.rows, c, label_buf.Device(), row_buf.Device(), m, *inv_m,
                             row_loss.OverwriteDevice(), g);
    return row_loss;
  }

  static double SoftmaxCrossEntropy(const Matrix& logits, const Buffer<int32_t>& label_buf,
                                    const Buffer<int64_t>& row_buf, Matrix* grad) {
    double inv_m = 0;
    const Buffer<double> row_loss = RowLosses(logits, label_buf, row_buf, grad, &inv_m);
    const auto m = static_cast<int64_t>(row_loss.size());
    if (m == 0) return 0.0;
    auto terms = row_loss.Host();
    double total = 0;
    for (int64_t begin = 0; begin < m; begin += kLossChunk) {  // the CPU's chunk order
      double sum = 0;
      for (int64_t k = begin; k < std::min(m, begin + kLossChunk); ++k) sum += terms[static_cast<size_t>(k)];
      total += sum;
    }
    return total * inv_m;
  }

  // The loss summed on the device in the CPU's chunk order and written or added into total[0]: no download.
  static void SoftmaxCrossEntropyAdd(const Matrix& logits, const Buffer<int32_t>& label_buf,
                                     const Buffer<int64_t>& row_buf, double weight, bool first, Matrix* grad,
                                     Buffer<double>* total) {
    double inv_m = 0;
    const Buffer<double> row_loss = RowLosses(logits, label_buf, row_buf, grad, &inv_m);
    const auto chunks = (static_cast<int64_t>(row_loss.size()) + kLossChunk - 1) / kLossChunk;
    Launch(true, chunks <= cuda::kLossOneLaunchChunks ? 1 : 2);  // one block, or the chunks' sums, then their total
    Raw::LossTotal(row_loss.Device(), static_cast<int64_t>(row_loss.size()), kLossChunk, inv_m, weight, first,
                   first ? total->OverwriteDevice() : total->MutableDevice());
  }

  static void RowSoftmax(const Matrix& logits, Matrix* probs) {
    if (probs != &logits) probs->Resize(logits.rows, logits.cols);
    const float* in = logits.data.Device();  // before MutableDevice: probs may be logits
    Launch(logits.rows > 0 && logits.cols > 0);
    Raw::RowSoftmax(in, logits.rows, logits.cols, probs->data.OverwriteDevice());
  }

  static void RowArgmax(const Matrix& x, std::span<int32_t> out) {
    Buffer<int32_t> result = Buffer<int32_t>::Uninitialized(out.size());
    Launch(x.rows > 0);
    Raw::RowArgmax(x.data.Device(), x.rows, x.cols, result.OverwriteDevice());
    auto host = result.Host();
    std::copy(host.begin(), host.end(), out.begin());
  }

  // The confusion counts reduced on the device: a memset and one kernel, then one download of the counts (a few
  // hundred bytes) instead of a prediction per row.
  static void ArgmaxConfusion(const Matrix& logits, const Buffer<int32_t>& labels, const Buffer<int64_t>& rows,
                              std::span<const int64_t> ends, std::span<int64_t> counts) {
    static_assert(cuda::kConfusionSegments == kMaxConfusionSegments);
    cuda::ConfusionSegments seg;
    seg.count = static_cast<int>(ends.size());
    std::copy(ends.begin(), ends.end(), seg.end);
    Buffer<int64_t> out = Buffer<int64_t>::Uninitialized(counts.size());
    Launch(true, rows.empty() ? 1 : 2);  // the memset, then the rows
    Raw::ArgmaxConfusion(logits.data.Device(), logits.rows, logits.cols, labels.Device(), rows.Device(), seg,
                         out.OverwriteDevice());
    const std::span<const int64_t> host = out.Host();
    std::copy(host.begin(), host.end(), counts.begin());
  }

  // ---- sparse

  // The CUDA SpMM's launches for a non-empty product: a memset without entries, the row kernel, or cuSPARSE's
  // (an index conversion and the product; a first use without values also fills its ones, not counted).
  static int64_t SpMMLaunches(const SparseMatrix& a, int64_t n) {
    if (a.nnz() == 0) return 1;
    return cuda::SpMMUsesRowKernel(DeviceCsr{&a, a.rows, a.cols, a.nnz(), nullptr, nullptr, nullptr}, n) ? 1 : 2;
  }

  static DeviceCsr OnDevice(const SparseMatrix& a) {
    return DeviceCsr{&a,
                     a.rows,
                     a.cols,
                     a.nnz(),
                     a.indptr.Device(),
                     a.indices.Device(),
                     a.has_values() ? a.values.Device() : nullptr};
  }

  static void SpMM(const SparseMatrix& a, const Matrix& x, Matrix* y) {
    TESSEL_CHECK(a.indptr.size() == static_cast<size_t>(a.rows + 1), "SpMM: {} offsets for {} rows", a.indptr.size(),
                 a.rows);
    Launch(a.rows > 0 && x.cols > 0, SpMMLaunches(a, x.cols));
    Raw::SpMM(OnDevice(a), x.data.Device(), x.cols, y->data.OverwriteDevice());
  }

  static SparseMatrix Transpose(const SparseMatrix& a) {
    // Written in full on the device (cuSPARSE's csr2csc, or a memset when empty): no host zero-fill, no upload.
    SparseMatrix t{a.cols, a.rows, Buffer<int64_t>::Uninitialized(static_cast<size_t>(a.cols + 1)),
                   Buffer<int32_t>::Uninitialized(static_cast<size_t>(a.nnz())),
                   Buffer<float>::Uninitialized(a.has_values() ? static_cast<size_t>(a.nnz()) : 0)};
    Launch(true, a.nnz() == 0 || a.rows == 0 ? 1 : 3);  // a memset, or narrow, csr2csc and widen
    Raw::Transpose(OnDevice(a), t.indptr.OverwriteDevice(), t.indices.OverwriteDevice(),
                   a.has_values() ? t.values.OverwriteDevice() : nullptr);
    return t;
  }

  // The rows gathered on the device: the entry count from the host offsets (a's host copy is current: features are
  // written on the host), the offsets scanned and the entries copied on the device.
  static SparseMatrix GatherSparseRows(const SparseMatrix& a, std::span<const int64_t> ids,
                                       const Buffer<int64_t>* ids_buf) {
    const auto m = static_cast<int64_t>(ids.size());
    int64_t nnz = 0;
    const std::span<const int64_t> p = a.indptr.Host();
    for (const int64_t r : ids) nnz += p[static_cast<size_t>(r) + 1] - p[static_cast<size_t>(r)];
    SparseMatrix out{m, a.cols, Buffer<int64_t>::Uninitialized(static_cast<size_t>(m) + 1),
                     Buffer<int32_t>::Uninitialized(static_cast<size_t>(nnz)),
                     Buffer<float>::Uninitialized(a.has_values() ? static_cast<size_t>(nnz) : 0)};
    Buffer<int64_t> copy;
    Launch(true, 3 + (m > 0 && a.nnz() > 0 ? 1 : 0));  // lengths, a CUB scan, the entries
    Raw::GatherSparseRows(OnDevice(a), DeviceIds(ids, ids_buf, &copy), m, out.indptr.OverwriteDevice(),
                          out.indices.OverwriteDevice(), a.has_values() ? out.values.OverwriteDevice() : nullptr);
    return out;
  }

  // ---- top-k

  static void TopK(const Matrix& x, int64_t k, Matrix* values, Buffer<int32_t>* indices) {
    Launch(x.rows > 0 && k > 0);
    Raw::TopK(x.data.Device(), x.rows, x.cols, k, values->data.OverwriteDevice(), indices->OverwriteDevice());
  }
};

// The table of a device whose raw kernels are Raw's.
template <typename Raw>
constexpr KernelOps MakeDeviceOps() {
  using W = DeviceWrappers<Raw>;
  return KernelOps{
      .gemm = W::Gemm,
      .add_bias = W::AddBias,
      .bias_grad = W::BiasGrad,
      .relu = W::Relu,
      .add_bias_relu = W::AddBiasRelu,
      .axpy = W::Axpy,
      .relu_backward = W::ReluBackward,
      .dropout = W::Dropout,
      .dropout_gemm = W::DropoutGemm,
      .adam_step = W::AdamStep,
      .adam_step_many = W::AdamStepMany,
      .gather_rows = W::GatherRows,
      .gather_values = W::GatherValues,
      .gather_rows_dropout = W::GatherRowsDropout,
      .gather_spmm = W::GatherSpMM,
      .scatter_add_rows = W::ScatterAddRows,
      .softmax_cross_entropy = W::SoftmaxCrossEntropy,
      .softmax_cross_entropy_add = W::SoftmaxCrossEntropyAdd,
      .row_softmax = W::RowSoftmax,
      .row_argmax = W::RowArgmax,
      .argmax_confusion = W::ArgmaxConfusion,
      .spmm = W::SpMM,
      .transpose = W::Transpose,
      .gather_sparse_rows = W::GatherSparseRows,
      .topk = W::TopK,
  };
}

}  // namespace tessel::kernels
