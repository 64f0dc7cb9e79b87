// The kernels library's CUDA entries (the device table of kernels/ops.h): Matrix- and Buffer-level wrappers that
// size outputs on the device and call the raw kernels of kernels/cuda/*.cu. Host C++, compiled only in CUDA builds.
#include <algorithm>
#include <span>
#include <utility>
#include <vector>

#include "kernels/cuda/dense_cuda.h"
#include "kernels/cuda/gather_cuda.h"
#include "kernels/cuda/loss_cuda.h"
#include "kernels/cuda/sparse_cuda.h"
#include "kernels/cuda/topk_cuda.h"
#include "kernels/ops.h"

namespace tessel::kernels {
namespace {

// ---- dense

void GemmCuda(const Matrix& a, bool trans_a, const Matrix& b, bool trans_b, float alpha, float beta, Matrix* c) {
  const auto [m, n, k] = GemmShape(a, trans_a, b, trans_b, beta, c);
  cuda::Gemm(a.data.Device(), a.cols, trans_a, b.data.Device(), b.cols, trans_b, m, n, k, alpha, beta,
             c->data.MutableDevice());
}

void AddBiasCuda(const Matrix& bias, Matrix* y) {
  cuda::AddBias(bias.data.Device(), y->rows, y->cols, y->data.MutableDevice());
}

void BiasGradCuda(const Matrix& grad_y, Matrix* grad_bias) {
  grad_bias->Resize(1, grad_y.cols);
  cuda::BiasGrad(grad_y.data.Device(), grad_y.rows, grad_y.cols, grad_bias->data.MutableDevice());
}

void ReluCuda(const Matrix& x, Matrix* y) {
  if (y != &x) y->Resize(x.rows, x.cols);
  const float* in = x.data.Device();  // before MutableDevice: y may be x
  cuda::Relu(in, x.size(), y->data.MutableDevice());
}

void ReluBackwardCuda(const Matrix& y, const Matrix& grad_y, Matrix* grad_x) {
  if (grad_x != &grad_y) grad_x->Resize(y.rows, y.cols);
  const float* yd = y.data.Device();
  const float* gy = grad_y.data.Device();
  cuda::ReluBackward(yd, gy, y.size(), grad_x->data.MutableDevice());
}

void DropoutCuda(const Buffer<float>& x, const DropoutSpec& spec, Buffer<float>* y) {
  const float* in = x.Device();
  cuda::Dropout(in, static_cast<int64_t>(x.size()), spec, y->MutableDevice());
}

void AdamStepCuda(const AdamStepParams& hp, const Matrix& grad, Matrix* w, Matrix* m, Matrix* v) {
  cuda::AdamStep(w->data.MutableDevice(), grad.data.Device(), m->data.MutableDevice(), v->data.MutableDevice(),
                 w->size(), hp.weight_decay, hp.beta1, hp.beta2, hp.step_size, hp.inv_sqrt_c2, hp.eps);
}

// ---- gather

void GatherRowsCuda(const Matrix& src, const Buffer<int64_t>& ids, Matrix* out) {
  cuda::GatherRows(src.data.Device(), src.cols, ids.Device(), static_cast<int64_t>(ids.size()),
                   out->data.MutableDevice());
}

void ScatterAddRowsCuda(const Matrix& src, std::vector<int64_t> start, std::vector<int64_t> order, Matrix* out) {
  const Buffer<int64_t> start_buf(std::move(start));
  const Buffer<int64_t> order_buf(std::move(order));
  cuda::ScatterAddRows(src.data.Device(), src.cols, order_buf.Device(), start_buf.Device(), out->rows,
                       out->data.MutableDevice());
}

// ---- loss

double SoftmaxCrossEntropyCuda(const Matrix& logits, std::span<const int32_t> labels, std::span<const int64_t> rows,
                               Matrix* grad) {
  const int64_t c = logits.cols;
  for (int64_t r : rows) {
    TESSEL_CHECK(r >= 0 && r < logits.rows, "SoftmaxCrossEntropy: row {} outside [0, {})", r, logits.rows);
    const int32_t y = labels[static_cast<size_t>(r)];
    TESSEL_CHECK(y >= 0 && y < c, "SoftmaxCrossEntropy: row {} has label {} outside [0, {})", r, y, c);
  }
  const auto m = static_cast<int64_t>(rows.size());
  const double inv_m = m > 0 ? 1.0 / static_cast<double>(m) : 0.0;
  const Buffer<int32_t> label_buf = Buffer<int32_t>::CopyOf(labels);
  const Buffer<int64_t> row_buf = Buffer<int64_t>::CopyOf(rows);
  Buffer<double> row_loss(static_cast<size_t>(m));
  float* g = nullptr;
  if (grad != nullptr) {
    TESSEL_CHECK(grad != &logits, "SoftmaxCrossEntropy: grad must not alias logits");
    grad->Resize(logits.rows, c);
    g = grad->data.MutableDevice();
  }
  cuda::SoftmaxCrossEntropy(logits.data.Device(), logits.rows, c, label_buf.Device(), row_buf.Device(), m, inv_m,
                            row_loss.MutableDevice(), g);
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

void RowSoftmaxCuda(const Matrix& logits, Matrix* probs) {
  if (probs != &logits) probs->Resize(logits.rows, logits.cols);
  const float* in = logits.data.Device();  // before MutableDevice: probs may be logits
  cuda::RowSoftmax(in, logits.rows, logits.cols, probs->data.MutableDevice());
}

void RowArgmaxCuda(const Matrix& x, std::span<int32_t> out) {
  Buffer<int32_t> result(out.size());
  cuda::RowArgmax(x.data.Device(), x.rows, x.cols, result.MutableDevice());
  auto host = result.Host();
  std::copy(host.begin(), host.end(), out.begin());
}

// ---- sparse

cuda::DeviceCsr OnDevice(const SparseMatrix& a) {
  return cuda::DeviceCsr{
      &a, a.rows, a.cols, a.nnz(), a.indptr.Device(), a.indices.Device(), a.has_values() ? a.values.Device() : nullptr};
}

void SpMMCuda(const SparseMatrix& a, const Matrix& x, Matrix* y) {
  TESSEL_CHECK(a.indptr.size() == static_cast<size_t>(a.rows + 1), "SpMM: {} offsets for {} rows", a.indptr.size(),
               a.rows);
  cuda::SpMM(OnDevice(a), x.data.Device(), x.cols, y->data.MutableDevice());
}

SparseMatrix TransposeCuda(const SparseMatrix& a) {
  SparseMatrix t{a.cols, a.rows, Buffer<int64_t>(static_cast<size_t>(a.cols + 1)),
                 Buffer<int32_t>(static_cast<size_t>(a.nnz())),
                 Buffer<float>(a.has_values() ? static_cast<size_t>(a.nnz()) : 0)};
  cuda::Transpose(OnDevice(a), t.indptr.MutableDevice(), t.indices.MutableDevice(),
                  a.has_values() ? t.values.MutableDevice() : nullptr);
  return t;
}

// ---- top-k

void TopKCuda(const Matrix& x, int64_t k, Matrix* values, Buffer<int32_t>* indices) {
  cuda::TopK(x.data.Device(), x.rows, x.cols, k, values->data.MutableDevice(), indices->MutableDevice());
}

}  // namespace

namespace cuda {
const KernelOps kCudaOps{
    .gemm = GemmCuda,
    .add_bias = AddBiasCuda,
    .bias_grad = BiasGradCuda,
    .relu = ReluCuda,
    .relu_backward = ReluBackwardCuda,
    .dropout = DropoutCuda,
    .adam_step = AdamStepCuda,
    .gather_rows = GatherRowsCuda,
    .gather_rows_dropout = nullptr,  // composed by the public function: GatherRows, then Dropout
    .gather_spmm = nullptr,          // composed: GatherRowsDropout, then SpMM
    .scatter_add_rows = ScatterAddRowsCuda,
    .softmax_cross_entropy = SoftmaxCrossEntropyCuda,
    .row_softmax = RowSoftmaxCuda,
    .row_argmax = RowArgmaxCuda,
    .spmm = SpMMCuda,
    .transpose = TransposeCuda,
    .topk = TopKCuda,
};
}  // namespace cuda

}  // namespace tessel::kernels
