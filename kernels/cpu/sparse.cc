// Sparse kernels: the public functions (checks, then the device table of kernels/ops.h) and the CPU entries: CSR x
// dense (row-parallel, so each output row is written by one thread and results do not depend on the thread count),
// CSR transpose by counting sort, row gathers of a CSR matrix. CUDA: kernels/cuda/ops.cc over cuSPARSE
// (kernels/cuda/sparse.cu). Row gathers stay on the host on every device.
#include "kernels/sparse.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/mask_apply.h"
#include "kernels/ops.h"

namespace tessel::kernels {
namespace {

void SpMMShape(const SparseMatrix& a, const Matrix& x, Matrix* y) {
  TESSEL_CHECK(a.cols == x.rows, "SpMM: sparse {}x{} times dense {}x{}", a.rows, a.cols, x.rows, x.cols);
  TESSEL_CHECK(y != &x, "SpMM: output must not alias the input");
  y->Resize(a.rows, x.cols);
}

}  // namespace

// ---- the CPU entries (sized y: SpMM's public function calls SpMMShape)

namespace cpu {

void SpMM(const SparseMatrix& a, const Matrix& x, Matrix* y) {
  const int64_t n = x.cols;
  auto p = a.indptr.Host();
  auto idx = a.indices.Host();
  auto val = a.values.Host();
  const bool weighted = a.has_values();
  auto xv = x.View();
  auto yv = y->Mut();
  const int64_t avg = a.rows > 0 ? (a.nnz() / a.rows + 1) * std::max<int64_t>(n, 1) : 1;
  const int64_t grain = std::max<int64_t>(1, 32768 / avg);
  // Raw pointers per chunk: through spans captured by reference the inner loop reloaded them and stayed scalar.
  const int64_t* ptr = p.data();
  const int32_t* col = idx.data();
  const float* wv = weighted ? val.data() : nullptr;
  const float* x0 = xv.data();
  float* y0 = yv.data();
  parallel_for_chunks<int64_t>(0, a.rows, grain, [=](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i) {
      float* out = y0 + i * n;
      std::fill(out, out + n, 0.0F);
      for (int64_t e = ptr[i]; e < ptr[i + 1]; ++e) {
        const float w = wv != nullptr ? wv[e] : 1.0F;
        Axpy(w, x0 + static_cast<int64_t>(col[e]) * n, n, out);
      }
    }
  });
}

SparseMatrix Transpose(const SparseMatrix& a) {
  TESSEL_CHECK(a.rows <= INT32_MAX, "Transpose: {} rows do not fit 32-bit column ids", a.rows);
  auto p = a.indptr.Host();
  auto idx = a.indices.Host();
  auto val = a.values.Host();
  std::vector<int64_t> tp(static_cast<size_t>(a.cols + 1), 0);
  for (int32_t c : idx) ++tp[static_cast<size_t>(c) + 1];
  for (int64_t c = 0; c < a.cols; ++c) tp[c + 1] += tp[c];
  std::vector<int64_t> next(tp.begin(), tp.end() - 1);
  std::vector<int32_t> ti(idx.size());
  std::vector<float> tv(a.has_values() ? idx.size() : 0);
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t e = p[r]; e < p[r + 1]; ++e) {
      const int64_t dst = next[static_cast<size_t>(idx[e])]++;
      ti[dst] = static_cast<int32_t>(r);
      if (a.has_values()) tv[dst] = val[e];
    }
  }
  return SparseMatrix{a.cols, a.rows, Buffer<int64_t>(std::move(tp)), Buffer<int32_t>(std::move(ti)),
                      Buffer<float>(std::move(tv))};
}

SparseMatrix GatherSparseRows(const SparseMatrix& a, std::span<const int64_t> ids, const Buffer<int64_t>*) {
  auto p = a.indptr.Host();
  std::vector<int64_t> out_p(ids.size() + 1, 0);
  for (size_t i = 0; i < ids.size(); ++i) out_p[i + 1] = out_p[i] + (p[ids[i] + 1] - p[ids[i]]);
  auto idx = a.indices.Host();
  auto val = a.values.Host();
  std::vector<int32_t> out_i(static_cast<size_t>(out_p.back()));
  std::vector<float> out_v(a.has_values() ? out_i.size() : 0);
  parallel_for<int64_t>(0, static_cast<int64_t>(ids.size()), 256, [&](int64_t i) {
    const int64_t r = ids[i];
    const int64_t len = p[r + 1] - p[r];
    if (len == 0) return;
    std::memcpy(out_i.data() + out_p[i], idx.data() + p[r], static_cast<size_t>(len) * sizeof(int32_t));
    if (a.has_values())
      std::memcpy(out_v.data() + out_p[i], val.data() + p[r], static_cast<size_t>(len) * sizeof(float));
  });
  return SparseMatrix{static_cast<int64_t>(ids.size()), a.cols, Buffer<int64_t>(std::move(out_p)),
                      Buffer<int32_t>(std::move(out_i)), Buffer<float>(std::move(out_v))};
}

}  // namespace cpu

void SpMM(const Context& ctx, const SparseMatrix& a, const Matrix& x, Matrix* y) {
  SpMMShape(a, x, y);
  Ops(ctx).spmm(a, x, y);
}

void SpMMTranspose(const Context& ctx, const SparseMatrix& a, const Matrix& x, Matrix* y) {
  TESSEL_CHECK(a.rows == x.rows, "SpMMTranspose: sparse {}x{} transposed times dense {}x{}", a.rows, a.cols, x.rows,
               x.cols);
  // Small outputs (weight gradients of sparse features): scatter rows of x into one accumulator per fixed chunk
  // of a's rows and add the chunks in order; no transpose is built and the result is thread-count independent.
  const int64_t n = x.cols;
  const int64_t out_size = a.cols * n;
  if (ctx.IsCuda() || out_size > (int64_t{1} << 20)) {
    SpMM(ctx, Transpose(ctx, a), x, y);
    return;
  }
  TESSEL_CHECK(y != &x, "SpMMTranspose: output must not alias the input");
  const int64_t chunks = std::clamp<int64_t>(a.nnz() * n / (out_size * 4 + 1), 1, 16);
  const int64_t rows_per = (a.rows + chunks - 1) / chunks;
  std::vector<float> acc(static_cast<size_t>((chunks - 1) * out_size), 0.0F);
  y->Resize(a.cols, n);
  auto yv = y->Mut();
  std::fill(yv.begin(), yv.end(), 0.0F);
  auto p = a.indptr.Host();
  auto idx = a.indices.Host();
  auto val = a.values.Host();
  auto xv = x.View();
  parallel_for<int64_t>(0, chunks, 1, [&](int64_t c) {
    float* out = c == 0 ? yv.data() : acc.data() + (c - 1) * out_size;
    const int64_t end = std::min(a.rows, (c + 1) * rows_per);
    for (int64_t r = c * rows_per; r < end; ++r) {
      const float* in = xv.data() + r * n;
      for (int64_t e = p[r]; e < p[r + 1]; ++e) {
        const float w = a.has_values() ? val[e] : 1.0F;
        float* dst = out + static_cast<int64_t>(idx[e]) * n;
        for (int64_t j = 0; j < n; ++j) dst[j] += w * in[j];
      }
    }
  });
  for (int64_t c = 1; c < chunks; ++c) {
    const float* src = acc.data() + (c - 1) * out_size;
    parallel_for<int64_t>(0, out_size, 16384, [&](int64_t i) { yv[i] += src[i]; });
  }
}

SparseMatrix Transpose(const Context& ctx, const SparseMatrix& a) { return Ops(ctx).transpose(a); }

SparseMatrix GatherSparseRows(const Context& ctx, const SparseMatrix& a, std::span<const int64_t> ids,
                              const Buffer<int64_t>* ids_buf) {
  TESSEL_CHECK(a.indptr.size() == static_cast<size_t>(a.rows + 1), "GatherSparseRows: {} offsets for {} rows",
               a.indptr.size(), a.rows);
  for (const int64_t r : ids) TESSEL_CHECK(r >= 0 && r < a.rows, "GatherSparseRows: row {} outside [0, {})", r, a.rows);
  TESSEL_CHECK(ids_buf == nullptr || ids_buf->size() >= ids.size(), "GatherSparseRows: {} ids but a buffer of {}",
               ids.size(), ids_buf == nullptr ? 0 : ids_buf->size());
  return Ops(ctx).gather_sparse_rows(a, ids, ids_buf);
}

}  // namespace tessel::kernels
