// The kernels library's device registry: the CPU table, and the CUDA table when this build compiled
// kernels/cuda/ (the one place in the library that asks; see core/device_ops.h).
#include "kernels/ops.h"

#include "core/build_config.h"

namespace tessel::kernels {

#if TESSEL_HAVE_CUDA
constexpr const KernelOps* kCudaTable = &cuda::kCudaOps;
#else
constexpr const KernelOps* kCudaTable = nullptr;
#endif

namespace {

// The CPU's GEMM is float32 whatever the context's --math says (TF32 is a tensor-core format).
void CpuGemm(GemmMath /*math*/, const Matrix& a, bool trans_a, const Matrix& b, bool trans_b, float alpha, float beta,
             Matrix* c) {
  cpu::Gemm(a, trans_a, b, trans_b, alpha, beta, c);
}

constexpr KernelOps kCpuOps{
    .gemm = CpuGemm,
    .add_bias = cpu::AddBias,
    .bias_grad = cpu::BiasGrad,
    .relu = cpu::Relu,
    .add_bias_relu = cpu::AddBiasRelu,
    .axpy = cpu::Axpy,
    .relu_backward = cpu::ReluBackward,
    .dropout = cpu::Dropout,
    .dropout_gemm = nullptr,  // Dropout, then Gemm
    .adam_step = cpu::AdamStep,
    .adam_step_many = nullptr,  // one adam_step a tensor
    .gather_rows = cpu::GatherRows,
    .gather_values = cpu::GatherValues,
    .gather_rows_dropout = cpu::GatherRowsDropout,
    .gather_spmm = cpu::GatherSpMM,
    .scatter_add_rows = cpu::ScatterAddRows,
    .softmax_cross_entropy = cpu::SoftmaxCrossEntropy,
    .softmax_cross_entropy_add = cpu::SoftmaxCrossEntropyAdd,
    .row_softmax = cpu::RowSoftmax,
    .row_argmax = cpu::RowArgmax,
    .argmax_confusion = cpu::ArgmaxConfusion,
    .spmm = cpu::SpMM,
    .transpose = cpu::Transpose,
    .gather_sparse_rows = cpu::GatherSparseRows,
    .topk = cpu::TopK,
};

}  // namespace

const KernelOps& Ops(const Context& ctx) { return SelectOps(ctx, kCpuOps, kCudaTable, "kernels", &sim::kSimulatedOps); }

}  // namespace tessel::kernels
