// Sparse GCN kernels: CSR x dense (SpMM, used both for the graph aggregation Â·H and for sparse input
// features · W), its transpose for the backward pass, CSR transposition and row gathers of a CSR matrix.
#pragma once

#include <cstdint>
#include <span>

#include "core/context.h"
#include "kernels/matrix.h"

namespace tessel::kernels {

// y = a * x, a: [m x k] sparse, x: [k x n] dense, y resized to [m x n]. Rows in parallel, deterministic.
void SpMM(const Context& ctx, const SparseMatrix& a, const Matrix& x, Matrix* y);
// y = a^T * x, x: [m x n], y resized to [k x n]. Builds a^T once per call; pass `a_t` (from Transpose) to reuse it.
void SpMMTranspose(const Context& ctx, const SparseMatrix& a, const Matrix& x, Matrix* y);
// The transpose as a CSR matrix (rows sorted by column of a; entries within a row keep a's row order).
SparseMatrix Transpose(const Context& ctx, const SparseMatrix& a);

// The rows `ids` of a (in that order, repeats allowed) as a new [ids.size() x a.cols] CSR matrix. On a device the
// result is built there (the entry count from a's host offsets, the rows on the device: nothing goes through the
// host); `ids_buf`, when given, starts with the same ids, already on the device (e.g. Block::device_src), and is
// read in place; otherwise the ids go up once.
SparseMatrix GatherSparseRows(const Context& ctx, const SparseMatrix& a, std::span<const int64_t> ids,
                              const Buffer<int64_t>* ids_buf = nullptr);

// Sparse input features times dense weights (the first GCN layer): y = x * w; and its weight gradient
// grad_w = x^T * grad_y. Same kernels as SpMM / SpMMTranspose, named for the call sites.
inline void SparseDenseMatmul(const Context& ctx, const SparseMatrix& x, const Matrix& w, Matrix* y) {
  SpMM(ctx, x, w, y);
}
inline void SparseDenseMatmulWeightGrad(const Context& ctx, const SparseMatrix& x, const Matrix& grad_y,
                                        Matrix* grad_w) {
  SpMMTranspose(ctx, x, grad_y, grad_w);
}

}  // namespace tessel::kernels
