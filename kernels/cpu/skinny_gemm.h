// GEMM with a narrow output (at most 32 columns: the hidden and class widths of GCN layers), the two shapes
// OpenBLAS handles poorly in mini-batch steps (about 30 GFLOP/s here): c = alpha·a·b + beta·c with a [m x k]
// (forward: activations times weights) and c = alpha·aᵀ·b + beta·c with a [k x m] (weight gradients). Register
// blocked, eight floats per vector, cloned for AVX2 (chosen at load time). Callers split the work: rows of c
// for the first, the inner dimension in fixed chunks for the second (partial sums added in chunk order by the
// caller). Private to kernels/cpu/.
#pragma once

#include <cstdint>

namespace tessel::kernels::cpu {

inline constexpr int64_t kSkinnyMaxCols = 32;

// Rows [r0, r1) of c = alpha·a·b + beta·c: a row-major with leading dimension lda, b [k x n] with ldb, c [* x n]
// with leading dimension n; n <= kSkinnyMaxCols. beta == 0: c is not read.
void SkinnyGemmNN(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t k, int64_t n, float alpha,
                  float beta, float* c, int64_t r0, int64_t r1);
// p[m x n] = a[k0 .. k1, :]ᵀ · b[k0 .. k1, :] (a [k x m] with lda, b [k x n] with ldb), overwriting p (leading
// dimension n); n <= kSkinnyMaxCols.
void SkinnyGemmTN(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t m, int64_t n, int64_t k0,
                  int64_t k1, float* p);

}  // namespace tessel::kernels::cpu
