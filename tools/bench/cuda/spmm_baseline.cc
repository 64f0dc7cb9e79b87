// The SpMM benchmark's baseline (tools/bench/gpu_kernels_bench.cc): the product through cuSPARSE's generic SpMM
// on the matrix's and x's device arrays, and which kernel tessel's own SpMM picks for the shape. In a cuda/
// folder: the only place outside kernels/ that may read kernels/cuda/'s declarations (docs/design.md, layers).
#include <chrono>

#include "core/device.h"
#include "kernels/cuda/sparse_cuda.h"
#include "kernels/device_csr.h"
#include "kernels/matrix.h"

namespace tessel::bench {

namespace {
kernels::DeviceCsr OnDevice(const kernels::SparseMatrix& a) {
  return kernels::DeviceCsr{
      &a, a.rows, a.cols, a.nnz(), a.indptr.Device(), a.indices.Device(), a.has_values() ? a.values.Device() : nullptr};
}
}  // namespace

double CusparseSpMMSeconds(const kernels::SparseMatrix& a, const kernels::Matrix& x, int reps, kernels::Matrix* y) {
  const kernels::DeviceCsr dev = OnDevice(a);
  y->Resize(a.rows, x.cols);
  float* out = y->data.OverwriteDevice();
  kernels::cuda::SpMMCusparse(dev, x.data.Device(), x.cols, out);  // warm-up: descriptors, work buffer
  device::Synchronize();
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) kernels::cuda::SpMMCusparse(dev, x.data.Device(), x.cols, out);
  device::Synchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
}

bool SpMMUsesRowKernel(const kernels::SparseMatrix& a, int64_t width) {
  return kernels::cuda::SpMMUsesRowKernel(OnDevice(a), width);
}

}  // namespace tessel::bench
