// The kernels library's CUDA table: the shared device wrappers (kernels/device_wrappers.h) over the raw kernels of
// kernels/cuda/*.cu. Host C++, compiled only in CUDA builds.
#include "kernels/ops.h"
#include "kernels/cuda/dense_cuda.h"
#include "kernels/cuda/gather_cuda.h"
#include "kernels/cuda/loss_cuda.h"
#include "kernels/cuda/sparse_cuda.h"
#include "kernels/cuda/topk_cuda.h"
#include "kernels/device_wrappers.h"

namespace tessel::kernels {
namespace {

// The raw CUDA kernels, as DeviceWrappers calls them.
struct CudaRaw {
  static constexpr auto Gemm = &cuda::Gemm;
  static constexpr auto AddBias = &cuda::AddBias;
  static constexpr auto BiasGrad = &cuda::BiasGrad;
  static constexpr auto Relu = &cuda::Relu;
  static constexpr auto AddBiasRelu = &cuda::AddBiasRelu;
  static constexpr auto Axpy = &cuda::Axpy;
  static constexpr auto ReluBackward = &cuda::ReluBackward;
  static constexpr auto Dropout = &cuda::Dropout;
  static constexpr auto DropoutGemm = &cuda::DropoutGemm;
  static constexpr auto DropoutGemmTN = &cuda::DropoutGemmTN;
  static constexpr auto AdamStep = &cuda::AdamStep;
  static constexpr auto AdamStepBatch = &cuda::AdamStepBatch;
  static constexpr auto GatherRows = &cuda::GatherRows;
  static constexpr auto GatherRowsDropout = &cuda::GatherRowsDropout;
  static constexpr auto GatherSpMM = &cuda::GatherSpMM;
  static constexpr auto ScatterAddRows = &cuda::ScatterAddRows;
  static constexpr auto SoftmaxCrossEntropy = &cuda::SoftmaxCrossEntropy;
  static constexpr auto LossTotal = &cuda::LossTotal;
  static constexpr auto RowSoftmax = &cuda::RowSoftmax;
  static constexpr auto RowArgmax = &cuda::RowArgmax;
  static constexpr auto ArgmaxConfusion = &cuda::ArgmaxConfusion;
  static constexpr auto SpMM = &cuda::SpMM;
  static constexpr auto Transpose = &cuda::Transpose;
  static constexpr auto GatherSparseRows = &cuda::GatherSparseRows;
  static constexpr auto TopK = &cuda::TopK;
};

}  // namespace

namespace cuda {
const KernelOps kCudaOps = MakeDeviceOps<CudaRaw>();
}  // namespace cuda

}  // namespace tessel::kernels
