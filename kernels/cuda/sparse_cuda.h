// Host-side declarations of the CUDA sparse kernels (kernels/cuda/sparse.cu): CSR x dense through cuSPARSE's
// generic SpMM and CSR transposition through cusparseCsr2cscEx2. No CUDA headers; pointers are device pointers.
#pragma once

#include <cstdint>

#include "kernels/device_csr.h"

namespace tessel::kernels::cuda {

using ::tessel::kernels::DeviceCsr;  // kernels/device_csr.h

// y[a.rows x n] = a * x[a.cols x n], row-major dense. Narrow outputs (n <= kSpMMRowKernelMaxWidth) of matrices
// without very long mean rows go to tessel's row kernel: a group of lanes per row, each value the in-order sum of
// its row's products, bit for bit the CPU's SpMM, nothing narrowed or allocated. (Measured on an H200 with the
// 1M-node CSBM adjacency, 20M entries, widths 8 and 16: docs/benchmarks.md "GPU".) Wider outputs go to cuSPARSE
// (SpMMCusparse). A few rows far longer than the rest (hubs of a power-law graph) are walked by one group each.
inline constexpr int64_t kSpMMRowKernelMaxWidth = 64;
inline constexpr int64_t kSpMMRowKernelMaxMeanRow = 512;  // entries per row on average
inline bool SpMMUsesRowKernel(const DeviceCsr& a, int64_t n) {
  return n <= kSpMMRowKernelMaxWidth && a.nnz <= a.rows * kSpMMRowKernelMaxMeanRow;
}
void SpMM(const DeviceCsr& a, const float* x, int64_t n, float* y);

// The same through cuSPARSE's generic SpMM (the baseline tools/bench/gpu_kernels_bench measures the row kernel
// against). Descriptors are cached per thread by (key, shape, n) and only re-pointed at the current arrays on each
// call, so a stale key can never read freed memory; the work buffer is a grow-only per-thread allocation. cuSPARSE
// needs equal offset and column index types: with nnz < 2^31 the offsets are narrowed to int32 into scratch,
// otherwise the columns are widened to int64.
void SpMMCusparse(const DeviceCsr& a, const float* x, int64_t n, float* y);

// The transpose as CSR: t_indptr[a.cols + 1], t_indices[nnz], t_values[nnz] (when a has values) are written.
// Within a row of the result, entries are in increasing column order (the CPU's order). Needs nnz < 2^31.
void Transpose(const DeviceCsr& a, int64_t* t_indptr, int32_t* t_indices, float* t_values);

// The rows ids[0 .. m) of a (ids in range) as CSR: out_indptr[m + 1] (row lengths, then an exclusive scan),
// out_indices and out_values (when a has values; sized by the caller from the entry count) with each row's
// entries in a's order. One warp per row.
void GatherSparseRows(const DeviceCsr& a, const int64_t* ids, int64_t m, int64_t* out_indptr, int32_t* out_indices,
                      float* out_values);

}  // namespace tessel::kernels::cuda
