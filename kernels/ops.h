// The kernels library's device table (core/device_ops.h): one entry per device-dependent operation, a CPU
// instance (kernels/cpu/*.cc) and, in CUDA builds, a CUDA instance (kernels/cuda/ops.cc over the .cu kernels).
// The public functions of dense.h, gather.h, loss.h, sparse.h and topk.h check their arguments and do the
// device-independent preparation, then call Ops(ctx).entry(...). Private to the library: callers use the public
// functions. kernels/ops.cc is the one file that knows whether the CUDA instance was compiled in.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/context.h"
#include "core/device_ops.h"
#include "core/rng.h"
#include "kernels/dense.h"
#include "kernels/dropout_math.h"
#include "kernels/matrix.h"

namespace tessel::kernels {

inline constexpr int64_t kLossChunk = 256;  // rows per partial sum of the loss (same order on every device)

// Entries are called after the public function's checks; shapes agree, ids are in range.
struct KernelOps {
  // dense.h (gemm: math is the context's --math; the CPU entry computes float32 whatever it says)
  void (*gemm)(GemmMath math, const Matrix& a, bool trans_a, const Matrix& b, bool trans_b, float alpha, float beta,
               Matrix* c);
  void (*add_bias)(const Matrix& bias, Matrix* y);
  void (*bias_grad)(const Matrix& grad_y, Matrix* grad_bias);
  void (*relu)(const Matrix& x, Matrix* y);
  void (*add_bias_relu)(const Matrix& bias, Matrix* y);
  void (*axpy)(float alpha, const Matrix& x, Matrix* y);  // x.size() <= y->size()
  void (*relu_backward)(const Matrix& y, const Matrix& grad_y, Matrix* grad_x);
  // y sized (may be x); the first y->size() values of x (a prefix when y is shorter)
  void (*dropout)(const Buffer<float>& x, const DropoutSpec& spec, Buffer<float>* y);
  // c sized: rows op(x) x b.cols (kernels/dense.h DropoutGemm); null (the CPU): the public function composes dropout
  // and gemm
  void (*dropout_gemm)(const Matrix& x, bool trans_x, const DropoutSpec& spec, const Matrix& b, Matrix* c);
  void (*adam_step)(const AdamStepParams& hp, const Matrix& grad, Matrix* w, Matrix* m, Matrix* v);
  // Several tensors' steps (sizes checked; hp.weight_decay ignored: each tensor's own); null: adam_step on each.
  void (*adam_step_many)(const AdamStepParams& hp, std::span<const AdamTensor> tensors);
  // gather.h (out is sized; gather_rows reads the first out->rows ids; for scatter, order[start[t] .. start[t+1])
  // lists the source rows of target t)
  void (*gather_rows)(const Matrix& src, const Buffer<int64_t>& ids, Matrix* out);
  void (*gather_values)(const Buffer<float>& src, const Buffer<int64_t>& ids, Buffer<float>* out);  // out sized
  // Fused gathers (gather.h; out sized; ids checked, empty = identity). gather_rows_dropout is in every table;
  // gather_spmm may be null: the public function then composes gather_rows_dropout and spmm (the same values).
  // ids: the first out->rows row ids on the host (empty: rows 0, 1, ...); ids_buf: the same ids in a Buffer a device
  // entry reads in place (null: it uploads a copy); a host entry ignores it. A device entry given empty ids and a
  // non-empty ids_buf reads ids_buf alone (ids a device wrote: gather.cc's DeviceOnlyIds).
  void (*gather_rows_dropout)(const Matrix& src, std::span<const int64_t> ids, const Buffer<int64_t>* ids_buf,
                              const DropoutSpec& spec, Matrix* out);
  void (*gather_spmm)(const SparseMatrix& a, const Matrix& src, std::span<const int64_t> ids,
                      const Buffer<int64_t>* ids_buf, const DropoutSpec& spec, Matrix* out);
  void (*scatter_add_rows)(const Matrix& src, std::vector<int64_t> start, std::vector<int64_t> order, Matrix* out);
  // loss.h
  double (*softmax_cross_entropy)(const Matrix& logits, const Buffer<int32_t>& labels, const Buffer<int64_t>& rows,
                                  Matrix* grad);
  void (*softmax_cross_entropy_add)(const Matrix& logits, const Buffer<int32_t>& labels, const Buffer<int64_t>& rows,
                                    double weight, bool first, Matrix* grad, Buffer<double>* total);  // total sized 1
  void (*row_softmax)(const Matrix& logits, Matrix* probs);
  void (*row_argmax)(const Matrix& x, std::span<int32_t> out);
  // ends checked (1 to kMaxConfusionSegments, non-decreasing, the last rows.size()); counts sized and zeroed
  void (*argmax_confusion)(const Matrix& logits, const Buffer<int32_t>& labels, const Buffer<int64_t>& rows,
                           std::span<const int64_t> ends, std::span<int64_t> counts);
  // sparse.h (y is sized)
  void (*spmm)(const SparseMatrix& a, const Matrix& x, Matrix* y);
  SparseMatrix (*transpose)(const SparseMatrix& a);
  // ids checked; ids_buf: a Buffer starting with the same ids, which a device entry reads in place (null: it
  // uploads a copy)
  SparseMatrix (*gather_sparse_rows)(const SparseMatrix& a, std::span<const int64_t> ids,
                                     const Buffer<int64_t>* ids_buf);
  // topk.h (values and indices are sized)
  void (*topk)(const Matrix& x, int64_t k, Matrix* values, Buffer<int32_t>* indices);
};

// The CPU entries, defined next to the public functions in kernels/cpu/*.cc.
namespace cpu {
void Gemm(const Matrix& a, bool trans_a, const Matrix& b, bool trans_b, float alpha, float beta, Matrix* c);
void AddBias(const Matrix& bias, Matrix* y);
void BiasGrad(const Matrix& grad_y, Matrix* grad_bias);
void Relu(const Matrix& x, Matrix* y);
void AddBiasRelu(const Matrix& bias, Matrix* y);
void Axpy(float alpha, const Matrix& x, Matrix* y);
void ReluBackward(const Matrix& y, const Matrix& grad_y, Matrix* grad_x);
void Dropout(const Buffer<float>& x, const DropoutSpec& spec, Buffer<float>* y);
void AdamStep(const AdamStepParams& hp, const Matrix& grad, Matrix* w, Matrix* m, Matrix* v);
void GatherRows(const Matrix& src, const Buffer<int64_t>& ids, Matrix* out);
void GatherValues(const Buffer<float>& src, const Buffer<int64_t>& ids, Buffer<float>* out);
void GatherRowsDropout(const Matrix& src, std::span<const int64_t> ids, const Buffer<int64_t>* ids_buf,
                       const DropoutSpec& spec, Matrix* out);
void GatherSpMM(const SparseMatrix& a, const Matrix& src, std::span<const int64_t> ids, const Buffer<int64_t>* ids_buf,
                const DropoutSpec& spec, Matrix* out);
void ScatterAddRows(const Matrix& src, std::vector<int64_t> start, std::vector<int64_t> order, Matrix* out);
double SoftmaxCrossEntropy(const Matrix& logits, const Buffer<int32_t>& labels, const Buffer<int64_t>& rows,
                           Matrix* grad);
void SoftmaxCrossEntropyAdd(const Matrix& logits, const Buffer<int32_t>& labels, const Buffer<int64_t>& rows,
                            double weight, bool first, Matrix* grad, Buffer<double>* total);
void RowSoftmax(const Matrix& logits, Matrix* probs);
void RowArgmax(const Matrix& x, std::span<int32_t> out);
void ArgmaxConfusion(const Matrix& logits, const Buffer<int32_t>& labels, const Buffer<int64_t>& rows,
                     std::span<const int64_t> ends, std::span<int64_t> counts);
void SpMM(const SparseMatrix& a, const Matrix& x, Matrix* y);
SparseMatrix Transpose(const SparseMatrix& a);
SparseMatrix GatherSparseRows(const SparseMatrix& a, std::span<const int64_t> ids, const Buffer<int64_t>* ids_buf);
void TopK(const Matrix& x, int64_t k, Matrix* values, Buffer<int32_t>* indices);
}  // namespace cpu

// The CUDA entries (kernels/cuda/ops.cc), defined only when the build compiles kernels/cuda/.
namespace cuda {
extern const KernelOps kCudaOps;
}  // namespace cuda

// The simulated device's entries (kernels/cpu/device_twins.cc): the CUDA table's wrappers over host twins of the
// raw kernels, in every build, chosen while a core/device.h ScopedSimulatedDevice is installed.
namespace sim {
extern const KernelOps kSimulatedOps;
}  // namespace sim

// The table for ctx's device; throws "built without CUDA" (or no such device) when CUDA is asked for and absent.
const KernelOps& Ops(const Context& ctx);

// Row shape of Gemm's output: checks the inner dimensions and sizes c (beta == 0) or checks it (beta != 0).
struct GemmDims {
  int64_t m, n, k;
};
GemmDims GemmShape(const Matrix& a, bool trans_a, const Matrix& b, bool trans_b, float beta, Matrix* c);

}  // namespace tessel::kernels
