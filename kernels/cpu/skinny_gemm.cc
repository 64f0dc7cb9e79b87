#include "kernels/cpu/skinny_gemm.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/target_clones.h"

namespace tessel::kernels::cpu {
namespace {

using V8f = float __attribute__((vector_size(32)));

// *dst = the 8 floats at p, any alignment (through a pointer: a function returning a 32-byte vector would change
// the ABI outside AVX code; the reduced-alignment vector typedef idiom gave an aligned load, and a crash, under
// Clang 14).
__attribute__((always_inline)) inline void LoadV8(V8f* dst, const float* p) { std::memcpy(dst, p, sizeof(V8f)); }

// b's k0 .. k1 rows copied into [rows x 8 NV] with zero columns past n, so every load is a whole vector.
template <int NV>
__attribute__((always_inline)) inline void PadB(const float* b, int64_t ldb, int64_t n, int64_t k0, int64_t k1,
                                                float* bp) {
  for (int64_t kk = k0; kk < k1; ++kk) {
    float* dst = bp + (kk - k0) * 8 * NV;
    std::memcpy(dst, b + kk * ldb, static_cast<size_t>(n) * sizeof(float));
    std::fill(dst + n, dst + 8 * NV, 0.0F);
  }
}

// Writes lanes [0, n) of acc (NV vectors) to out as alpha·acc + beta·out (beta 0: out not read).
template <int NV>
__attribute__((always_inline)) inline void StoreRow(const V8f (&acc)[NV], int64_t n, float alpha, float beta,
                                                    float* out) {
  float lanes[8 * NV];
  std::memcpy(lanes, acc, sizeof(lanes));
  for (int64_t j = 0; j < n; ++j) out[j] = beta == 0.0F ? alpha * lanes[j] : alpha * lanes[j] + beta * out[j];
}

// R rows of c = alpha·a·b + beta·c from row i: R x NV accumulators held in registers (every loop bound is a
// constant, so the compiler unrolls them).
template <int NV, int R>
__attribute__((always_inline)) inline void NNRows(const float* a, int64_t lda, const float* bp, int64_t k, int64_t n,
                                                  float alpha, float beta, float* c, int64_t i) {
  V8f acc[R][NV];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < NV; ++v) acc[r][v] = V8f{};
  }
  const float* ar = a + i * lda;
  for (int64_t kk = 0; kk < k; ++kk) {
    V8f bv[NV];
    for (int v = 0; v < NV; ++v) LoadV8(&bv[v], bp + kk * 8 * NV + 8 * v);
    for (int r = 0; r < R; ++r) {
      const float s = ar[r * lda + kk];
      for (int v = 0; v < NV; ++v) acc[r][v] += s * bv[v];
    }
  }
  for (int r = 0; r < R; ++r) StoreRow<NV>(acc[r], n, alpha, beta, c + (i + r) * n);
}

template <int NV>
constexpr int BlockOf() {
  return NV == 1 ? 8 : (NV == 2 ? 6 : (NV == 3 ? 4 : 3));  // R x NV accumulators + NV b vectors fit 16 registers
}

template <int NV>
__attribute__((always_inline)) inline void NNBlock(const float* a, int64_t lda, const float* bp, int64_t k, int64_t n,
                                                   float alpha, float beta, float* c, int64_t r0, int64_t r1) {
  constexpr int kRows = BlockOf<NV>();
  int64_t i = r0;
  for (; i + kRows <= r1; i += kRows) NNRows<NV, kRows>(a, lda, bp, k, n, alpha, beta, c, i);
  for (; i < r1; ++i) NNRows<NV, 1>(a, lda, bp, k, n, alpha, beta, c, i);
}

// Q rows of p = a[rows]ᵀ·b[rows] from row c0 of p (columns c0 .. c0 + Q of a).
template <int NV, int Q>
__attribute__((always_inline)) inline void TNCols(const float* a, int64_t lda, const float* bp, int64_t n, int64_t rows,
                                                  float* p, int64_t c0) {
  V8f acc[Q][NV];
  for (int q = 0; q < Q; ++q) {
    for (int v = 0; v < NV; ++v) acc[q][v] = V8f{};
  }
  for (int64_t kk = 0; kk < rows; ++kk) {
    V8f bv[NV];
    for (int v = 0; v < NV; ++v) LoadV8(&bv[v], bp + kk * 8 * NV + 8 * v);
    const float* ar = a + kk * lda + c0;
    for (int q = 0; q < Q; ++q) {
      const float s = ar[q];
      for (int v = 0; v < NV; ++v) acc[q][v] += s * bv[v];
    }
  }
  for (int q = 0; q < Q; ++q) StoreRow<NV>(acc[q], n, 1.0F, 0.0F, p + (c0 + q) * n);
}

template <int NV>
__attribute__((always_inline)) inline void TNBlock(const float* a, int64_t lda, const float* bp, int64_t m, int64_t n,
                                                   int64_t rows, float* p) {
  constexpr int kCols = BlockOf<NV>();
  int64_t c0 = 0;
  for (; c0 + kCols <= m; c0 += kCols) TNCols<NV, kCols>(a, lda, bp, n, rows, p, c0);
  for (; c0 < m; ++c0) TNCols<NV, 1>(a, lda, bp, n, rows, p, c0);
}

}  // namespace

TESSEL_CLONE_AVX2 void SkinnyGemmNN(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t k, int64_t n,
                                    float alpha, float beta, float* c, int64_t r0, int64_t r1) {
  const int nv = static_cast<int>((n + 7) / 8);
  alignas(32) float bp_small[4096];
  float* bp = bp_small;
  std::unique_ptr<float[]> big;
  if (k * 8 * nv > 4096) {
    big.reset(new float[static_cast<size_t>(k * 8 * nv)]);
    bp = big.get();
  }
  switch (nv) {
    case 1:
      PadB<1>(b, ldb, n, 0, k, bp);
      NNBlock<1>(a, lda, bp, k, n, alpha, beta, c, r0, r1);
      break;
    case 2:
      PadB<2>(b, ldb, n, 0, k, bp);
      NNBlock<2>(a, lda, bp, k, n, alpha, beta, c, r0, r1);
      break;
    case 3:
      PadB<3>(b, ldb, n, 0, k, bp);
      NNBlock<3>(a, lda, bp, k, n, alpha, beta, c, r0, r1);
      break;
    default:
      PadB<4>(b, ldb, n, 0, k, bp);
      NNBlock<4>(a, lda, bp, k, n, alpha, beta, c, r0, r1);
      break;
  }
}

TESSEL_CLONE_AVX2 void SkinnyGemmTN(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t m, int64_t n,
                                    int64_t k0, int64_t k1, float* p) {
  const int nv = static_cast<int>((n + 7) / 8);
  std::unique_ptr<float[]> bp(new float[static_cast<size_t>(std::max<int64_t>(1, (k1 - k0) * 8 * nv))]);
  const float* ak = a + k0 * lda;
  switch (nv) {
    case 1:
      PadB<1>(b, ldb, n, k0, k1, bp.get());
      TNBlock<1>(ak, lda, bp.get(), m, n, k1 - k0, p);
      break;
    case 2:
      PadB<2>(b, ldb, n, k0, k1, bp.get());
      TNBlock<2>(ak, lda, bp.get(), m, n, k1 - k0, p);
      break;
    case 3:
      PadB<3>(b, ldb, n, k0, k1, bp.get());
      TNBlock<3>(ak, lda, bp.get(), m, n, k1 - k0, p);
      break;
    default:
      PadB<4>(b, ldb, n, k0, k1, bp.get());
      TNBlock<4>(ak, lda, bp.get(), m, n, k1 - k0, p);
      break;
  }
}

}  // namespace tessel::kernels::cpu
