// The operand types of the GCN kernels: Matrix (dense row-major float32) and SparseMatrix (CSR with int64
// offsets, int32 column ids and optional float32 values), both on Buffer<T> so a CUDA path can mirror them.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/buffer.h"
#include "core/csr_view.h"
#include "core/error.h"

namespace tessel::kernels {

// Dense row-major [rows x cols] float32 matrix.
struct Matrix {
  int64_t rows = 0;
  int64_t cols = 0;
  Buffer<float> data;

  Matrix() = default;
  Matrix(int64_t r, int64_t c) : rows(r), cols(c), data(static_cast<size_t>(r * c)) {}  // zeros
  Matrix(int64_t r, int64_t c, std::vector<float> values) : rows(r), cols(c), data(std::move(values)) {
    TESSEL_CHECK(static_cast<int64_t>(data.size()) == r * c, "matrix {}x{} given {} values", r, c, data.size());
  }

  int64_t size() const { return rows * cols; }
  std::span<const float> View() const { return data.Host(); }
  std::span<float> Mut() { return data.MutableHost(); }
  Matrix Clone() const { return Matrix(rows, cols, data.ToVector()); }
  // Resizes to [r x c]; the contents are undefined (callers write every element). The memory is kept when the
  // element count is unchanged or, for a matrix that allocated its own memory, when it fits (a workspace reused
  // from step to step).
  void Resize(int64_t r, int64_t c) {
    rows = r;
    cols = c;
    data.ResizeUninitialized(static_cast<size_t>(r * c));
  }
};

// CSR sparse [rows x cols] matrix; `values` empty means every stored entry is 1.
struct SparseMatrix {
  int64_t rows = 0;
  int64_t cols = 0;
  Buffer<int64_t> indptr;   // rows + 1 offsets
  Buffer<int32_t> indices;  // column ids in [0, cols)
  Buffer<float> values;     // nnz values, or empty

  int64_t nnz() const { return static_cast<int64_t>(indices.size()); }
  bool has_values() const { return !values.empty(); }
  // The host arrays as the one CSR view (core/csr_view.h).
  CsrView<int32_t, float> HostView() const { return {indptr.Host(), indices.Host(), values.Host(), cols}; }
  // Throws unless offsets are monotone from 0 to nnz, columns are in range and values (when given) match nnz.
  void Validate(std::string_view what = "sparse matrix") const;
  SparseMatrix Clone() const { return SparseMatrix{rows, cols, indptr.Clone(), indices.Clone(), values.Clone()}; }
};

}  // namespace tessel::kernels
