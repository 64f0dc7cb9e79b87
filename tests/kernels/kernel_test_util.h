// Helpers for the kernel tests: random dense and sparse operands from seeded streams, float64 copies, and a
// float64 serial CSR x dense reference that every kernel result is compared against.
#pragma once

#include <cstdint>
#include <vector>

#include "core/rng.h"
#include "kernels/matrix.h"

namespace tessel::kernels::testing {

inline Matrix RandomMatrix(int64_t rows, int64_t cols, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (float& x : v) x = static_cast<float>(rng.Normal());
  return Matrix(rows, cols, std::move(v));
}

// Each entry present with probability `density`; values normal, or absent when `weighted` is false.
inline SparseMatrix RandomSparse(int64_t rows, int64_t cols, double density, bool weighted, uint64_t seed) {
  Rng rng(seed);
  std::vector<int64_t> p{0};
  std::vector<int32_t> idx;
  std::vector<float> val;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      if (rng.Uniform() < density) {
        idx.push_back(static_cast<int32_t>(c));
        if (weighted) val.push_back(static_cast<float>(rng.Normal()));
      }
    }
    p.push_back(static_cast<int64_t>(idx.size()));
  }
  return SparseMatrix{rows, cols, Buffer<int64_t>(std::move(p)), Buffer<int32_t>(std::move(idx)),
                      Buffer<float>(std::move(val))};
}

// Dense float64 copy of a sparse matrix.
inline std::vector<double> Densify(const SparseMatrix& a) {
  std::vector<double> d(static_cast<size_t>(a.rows * a.cols), 0.0);
  auto p = a.indptr.Host();
  auto idx = a.indices.Host();
  auto val = a.values.Host();
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t e = p[r]; e < p[r + 1]; ++e) d[r * a.cols + idx[e]] += a.has_values() ? val[e] : 1.0;
  }
  return d;
}

inline std::vector<double> ToDouble(const Matrix& m) {
  auto v = m.View();
  return std::vector<double>(v.begin(), v.end());
}

// c[m x n] = op(a)[m x k] * op(b)[k x n] in float64; a is [ar x ac] row-major.
inline std::vector<double> RefMatmul(const std::vector<double>& a, int64_t ar, int64_t ac, bool ta,
                                     const std::vector<double>& b, int64_t br, int64_t bc, bool tb) {
  const int64_t m = ta ? ac : ar;
  const int64_t k = ta ? ar : ac;
  const int64_t n = tb ? br : bc;
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t t = 0; t < k; ++t) {
        const double x = ta ? a[t * ac + i] : a[i * ac + t];
        const double y = tb ? b[j * bc + t] : b[t * bc + j];
        s += x * y;
      }
      c[i * n + j] = s;
    }
  }
  return c;
}

}  // namespace tessel::kernels::testing
