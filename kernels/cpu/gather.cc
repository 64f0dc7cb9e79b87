// Gather/scatter of dense rows: the public functions (checks, the target grouping both devices use, then the
// device table of kernels/ops.h) and the CPU entries on oneTBB (CUDA: kernels/cuda/ops.cc, kernels/cuda/gather.cu).
// ScatterAddRows groups targets by a counting sort, so repeated ids add in index order (deterministic) on both.
#include "kernels/gather.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "core/target_clones.h"
#include "kernels/cpu/mask_apply.h"
#include "kernels/dense.h"
#include "kernels/ops.h"

namespace tessel::kernels {
namespace {

void CheckIds(std::span<const int64_t> ids, int64_t rows, std::string_view what) {
  for (int64_t id : ids) TESSEL_CHECK(id >= 0 && id < rows, "{}: row id {} outside [0, {})", what, id, rows);
}

// order[start[t] .. start[t+1]) lists the i with ids[i] == t, ascending (a counting sort by target).
void GroupByTarget(std::span<const int64_t> iv, int64_t targets, std::vector<int64_t>* start,
                   std::vector<int64_t>* order) {
  start->assign(static_cast<size_t>(targets + 1), 0);
  for (int64_t t : iv) ++(*start)[static_cast<size_t>(t) + 1];
  for (int64_t t = 0; t < targets; ++t) (*start)[t + 1] += (*start)[t];
  std::vector<int64_t> next(start->begin(), start->end() - 1);
  order->resize(iv.size());
  for (size_t i = 0; i < iv.size(); ++i) (*order)[next[iv[i]]++] = static_cast<int64_t>(i);
}

}  // namespace

namespace {

// out = src[ids[0 .. n)] (a prefix of ids when n < ids.size()).
void GatherFirst(const Context& ctx, const Matrix& src, const Buffer<int64_t>& ids, int64_t n, Matrix* out) {
  TESSEL_CHECK(out != &src, "GatherRows: output must not alias the source");
  TESSEL_CHECK(n >= 0 && n <= static_cast<int64_t>(ids.size()), "GatherRows: {} of {} ids", n, ids.size());
  CheckIds(ids.Host().first(static_cast<size_t>(n)), src.rows, "GatherRows");
  out->Resize(n, src.cols);
  Ops(ctx).gather_rows(src, ids, out);
}

// Ids a device wrote (their host copy stale) are read there only, never checked on the host: downloading them
// would wait for the device. Their writer vouches for them (the GPU sampler's source ids, nodes of the graph).
bool DeviceOnlyIds(const Context& ctx, const Buffer<int64_t>& ids) {
  return ctx.IsCuda() && !ids.empty() && !ids.HostCurrent();
}

// GatherRowsDropout over host ids (`ids`: the first `count` of them, or empty) and, when the caller has them in a
// Buffer, `ids_buf` (the composed device path gathers from it instead of uploading a copy). With `ids` empty and
// `ids_buf` not (DeviceOnlyIds), the first `count` of ids_buf, on the device.
void GatherRowsDropoutImpl(const Context& ctx, const Matrix& src, std::span<const int64_t> ids,
                           const Buffer<int64_t>* ids_buf, int64_t count, float p, const StreamKey& key, Matrix* out) {
  TESSEL_CHECK(out != &src, "GatherRowsDropout: output must not alias the source");
  TESSEL_CHECK(p >= 0.0F && p < 1.0F, "dropout probability must be in [0, 1), got {}", p);
  const bool device_only = ids.empty() && ids_buf != nullptr && !ids_buf->empty();
  if (!ids.empty()) {
    CheckIds(ids, src.rows, "GatherRowsDropout");
    count = static_cast<int64_t>(ids.size());
  }
  TESSEL_CHECK(
      !ids.empty() || (count >= 0 && count <= (device_only ? static_cast<int64_t>(ids_buf->size()) : src.rows)),
      "GatherRowsDropout: the first {} rows of a {}-row source", count, src.rows);
  const DropoutSpec spec = MakeDropoutSpec(p, Rng(key)());
  out->Resize(count, src.cols);
  Ops(ctx).gather_rows_dropout(src, ids, ids_buf, spec, out);
}

void GatherSpMMImpl(const Context& ctx, const SparseMatrix& a, const Matrix& src, std::span<const int64_t> ids,
                    const Buffer<int64_t>* ids_buf, float p, const StreamKey& key, Matrix* out) {
  TESSEL_CHECK(out != &src, "GatherSpMM: output must not alias the source");
  TESSEL_CHECK(p >= 0.0F && p < 1.0F, "dropout probability must be in [0, 1), got {}", p);
  const bool device_only = ids.empty() && ids_buf != nullptr && !ids_buf->empty();  // DeviceOnlyIds
  const int64_t n = !ids.empty()  ? static_cast<int64_t>(ids.size())
                    : device_only ? static_cast<int64_t>(ids_buf->size())
                                  : src.rows;
  TESSEL_CHECK(a.cols == n, "GatherSpMM: sparse {}x{} over {} gathered rows", a.rows, a.cols, n);
  if (!ids.empty()) CheckIds(ids, src.rows, "GatherSpMM");
  const DropoutSpec spec = MakeDropoutSpec(p, Rng(key)());
  const KernelOps& ops = Ops(ctx);
  if (ops.gather_spmm == nullptr) {  // composed: the gathered, dropped-out rows, then SpMM
    Matrix x;
    GatherRowsDropoutImpl(ctx, src, ids, ids_buf, n, p, key, &x);
    out->Resize(a.rows, src.cols);
    ops.spmm(a, x, out);
    return;
  }
  out->Resize(a.rows, src.cols);
  ops.gather_spmm(a, src, ids, ids_buf, spec, out);
}

}  // namespace

void GatherRows(const Context& ctx, const Matrix& src, const Buffer<int64_t>& ids, Matrix* out) {
  GatherFirst(ctx, src, ids, static_cast<int64_t>(ids.size()), out);
}

void GatherValues(const Context& ctx, const Buffer<float>& src, const Buffer<int64_t>& ids, Buffer<float>* out) {
  TESSEL_CHECK(out != &src, "GatherValues: output must not alias the source");
  CheckIds(ids.Host(), static_cast<int64_t>(src.size()), "GatherValues");
  if (out->size() != ids.size()) *out = Buffer<float>::Uninitialized(ids.size());
  Ops(ctx).gather_values(src, ids, out);
}

void GatherRowsDropout(const Context& ctx, const Matrix& src, std::span<const int64_t> ids, int64_t count, float p,
                       const StreamKey& key, Matrix* out) {
  GatherRowsDropoutImpl(ctx, src, ids, nullptr, count, p, key, out);
}

void GatherRowsDropout(const Context& ctx, const Matrix& src, const Buffer<int64_t>& ids, int64_t count, float p,
                       const StreamKey& key, Matrix* out) {
  TESSEL_CHECK(ids.empty() || (count >= 0 && count <= static_cast<int64_t>(ids.size())),
               "GatherRowsDropout: the first {} of {} ids", count, ids.size());
  const std::span<const int64_t> first =
      ids.empty() || DeviceOnlyIds(ctx, ids) ? std::span<const int64_t>() : ids.Host().first(count);
  GatherRowsDropoutImpl(ctx, src, first, &ids, count, p, key, out);
}

void GatherSpMM(const Context& ctx, const SparseMatrix& a, const Matrix& src, std::span<const int64_t> ids, float p,
                const StreamKey& key, Matrix* out) {
  GatherSpMMImpl(ctx, a, src, ids, nullptr, p, key, out);
}

void GatherSpMM(const Context& ctx, const SparseMatrix& a, const Matrix& src, const Buffer<int64_t>& ids, float p,
                const StreamKey& key, Matrix* out) {
  GatherSpMMImpl(ctx, a, src, DeviceOnlyIds(ctx, ids) ? std::span<const int64_t>() : ids.Host(), &ids, p, key, out);
}

void ScatterAddRows(const Context& ctx, const Matrix& src, const Buffer<int64_t>& ids, Matrix* out) {
  TESSEL_CHECK(static_cast<int64_t>(ids.size()) == src.rows, "ScatterAddRows: {} ids for {} rows", ids.size(),
               src.rows);
  TESSEL_CHECK(src.cols == out->cols, "ScatterAddRows: source has {} columns, output {}", src.cols, out->cols);
  TESSEL_CHECK(out != &src, "ScatterAddRows: output must not alias the source");
  auto iv = ids.Host();
  CheckIds(iv, out->rows, "ScatterAddRows");
  std::vector<int64_t> start;
  std::vector<int64_t> order;
  GroupByTarget(iv, out->rows, &start, &order);
  Ops(ctx).scatter_add_rows(src, std::move(start), std::move(order), out);
}

namespace cpu {

void GatherValues(const Buffer<float>& src, const Buffer<int64_t>& ids, Buffer<float>* out) {
  auto sv = src.Host();
  auto iv = ids.Host();
  auto ov = out->MutableHost();
  parallel_for<int64_t>(0, static_cast<int64_t>(iv.size()), 16384, [&](int64_t i) { ov[i] = sv[iv[i]]; });
}

void GatherRows(const Matrix& src, const Buffer<int64_t>& ids, Matrix* out) {
  const int64_t n = out->rows;  // the first out->rows ids
  const int64_t cols = src.cols;
  auto iv = ids.Host();
  auto sv = src.View();
  auto ov = out->Mut();
  parallel_for<int64_t>(0, n, std::max<int64_t>(1, 8192 / std::max<int64_t>(cols, 1)), [&](int64_t i) {
    std::memcpy(ov.data() + i * cols, sv.data() + iv[i] * cols, static_cast<size_t>(cols) * sizeof(float));
  });
}

// The mask bits of the first `elements` values of the stream, 64 per word (parallel over words).
std::vector<uint64_t> MaskWords(const DropoutSpec& spec, int64_t elements) {
  std::vector<uint64_t> words(static_cast<size_t>((elements + 63) / 64));
  parallel_for<int64_t>(0, static_cast<int64_t>(words.size()), 1024,
                        [&](int64_t g) { words[g] = DropoutMaskWord(spec, static_cast<uint64_t>(g)); });
  return words;
}

void GatherRowsDropout(const Matrix& src, std::span<const int64_t> ids, const Buffer<int64_t>* /*ids_buf*/,
                       const DropoutSpec& spec, Matrix* out) {
  const int64_t n = out->rows;
  const int64_t cols = src.cols;
  auto sv = src.View();
  auto ov = out->Mut();
  auto row_of = [&](int64_t i) { return ids.empty() ? i : ids[i]; };
  const int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(cols, 1));
  if (!spec.Active()) {
    parallel_for<int64_t>(0, n, grain, [&](int64_t i) {
      if (i + 8 < n) PrefetchRow(sv.data() + row_of(i + 8) * cols, cols * static_cast<int64_t>(sizeof(float)));
      std::memcpy(ov.data() + i * cols, sv.data() + row_of(i) * cols, static_cast<size_t>(cols) * sizeof(float));
    });
    return;
  }
  // Per chunk of rows, the mask words covering its values, then one masked copy per row.
  parallel_for_chunks<int64_t>(0, n, grain, [&](int64_t r0, int64_t r1) {
    const int64_t g0 = r0 * cols / 64;
    const int64_t g1 = (r1 * cols + 63) / 64;
    std::vector<uint64_t> words(static_cast<size_t>(g1 - g0));
    for (int64_t g = g0; g < g1; ++g) words[g - g0] = DropoutMaskWord(spec, static_cast<uint64_t>(g));
    for (int64_t i = r0; i < r1; ++i) {
      if (i + 8 < n) PrefetchRow(sv.data() + row_of(i + 8) * cols, cols * static_cast<int64_t>(sizeof(float)));
      ApplyMaskBits(words.data(), i * cols - g0 * 64, sv.data() + row_of(i) * cols, cols, spec.scale,
                    ov.data() + i * cols);
    }
  });
}

// The rows [d0, d1) of GatherSpMM's output. Cloned for AVX2 (GCC/Clang target_clones, chosen once at load time by
// the CPU; the baseline x86-64-v2 clone otherwise): eight floats per operation, the mask byte of eight values
// selecting their lanes from kMaskLut. Locals only, so no 32-byte vector crosses a call (no ABI change).
struct GatherSpMMArgs {
  const int64_t* indptr;
  const int32_t* indices;
  const float* values;  // null: every weight 1
  const float* src;
  const int64_t* ids;  // null: source row s is src's row s
  int64_t cols;
  int64_t nnz;
  const uint64_t* words;  // mask bits of the gathered matrix; null: no dropout
  float scale;
  float* out;
};

TESSEL_CLONE_AVX2 void GatherSpMMRows(const GatherSpMMArgs& g, int64_t d0, int64_t d1) {
  using V8f = float __attribute__((vector_size(32)));
  using V8u = uint32_t __attribute__((vector_size(32)));
  constexpr int64_t kAhead = 8;  // edges ahead whose source row is prefetched (across destination rows)
  const int64_t cols = g.cols;
  const int64_t row_bytes = cols * static_cast<int64_t>(sizeof(float));
  const bool aligned = cols % 8 == 0;  // every row starts on a mask byte and splits into 8-float blocks
  for (int64_t d = d0; d < d1; ++d) {
    float* acc = g.out + d * cols;
    std::fill(acc, acc + cols, 0.0F);
    for (int64_t e = g.indptr[d]; e < g.indptr[d + 1]; ++e) {
      if (e + kAhead < g.nnz) {
        const int64_t s_ahead = g.indices[e + kAhead];
        PrefetchRow(g.src + (g.ids != nullptr ? g.ids[s_ahead] : s_ahead) * cols, row_bytes);
      }
      const int64_t s = g.indices[e];
      const float w = g.values != nullptr ? g.values[e] : 1.0F;
      const float* in = g.src + (g.ids != nullptr ? g.ids[s] : s) * cols;
      if (!aligned) {
        if (g.words == nullptr) {
          Axpy(w, in, cols, acc);
        } else {
          AxpyMaskBits(w, g.words, s * cols, in, cols, g.scale, acc);
        }
        continue;
      }
      for (int64_t k = 0; k < cols; k += 8) {
        V8f x;
        V8f a;
        std::memcpy(&x, in + k, sizeof(x));
        std::memcpy(&a, acc + k, sizeof(a));
        if (g.words != nullptr) {
          const int64_t b = s * cols + k;
          V8u lane;
          std::memcpy(&lane, kMaskLut.lanes[(g.words[b >> 6] >> (b & 63)) & 0xFFU], sizeof(lane));
          x = reinterpret_cast<V8f>(reinterpret_cast<V8u>(x * g.scale) & lane);
        }
        a += w * x;
        std::memcpy(acc + k, &a, sizeof(a));
      }
    }
  }
}

void GatherSpMM(const SparseMatrix& a, const Matrix& src, std::span<const int64_t> ids,
                const Buffer<int64_t>* /*ids_buf*/, const DropoutSpec& spec, Matrix* out) {
  const int64_t cols = src.cols;
  const std::vector<uint64_t> words = spec.Active() ? MaskWords(spec, a.cols * cols) : std::vector<uint64_t>();
  const GatherSpMMArgs g{a.indptr.Host().data(),
                         a.indices.Host().data(),
                         a.has_values() ? a.values.Host().data() : nullptr,
                         src.View().data(),
                         ids.empty() ? nullptr : ids.data(),
                         cols,
                         a.nnz(),
                         words.empty() ? nullptr : words.data(),
                         spec.scale,
                         out->Mut().data()};
  const int64_t avg = a.rows > 0 ? (a.nnz() / a.rows + 1) * std::max<int64_t>(cols, 1) : 1;
  parallel_for_chunks<int64_t>(0, a.rows, std::max<int64_t>(1, 32768 / avg),
                               [&](int64_t d0, int64_t d1) { GatherSpMMRows(g, d0, d1); });
}

void ScatterAddRows(const Matrix& src, std::vector<int64_t> start, std::vector<int64_t> order, Matrix* out) {
  const int64_t cols = src.cols;
  auto sv = src.View();
  auto ov = out->Mut();
  parallel_for<int64_t>(0, out->rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(cols, 1)), [&](int64_t t) {
    float* dst = ov.data() + t * cols;
    for (int64_t k = start[t]; k < start[t + 1]; ++k) {
      const float* row = sv.data() + order[k] * cols;
      for (int64_t j = 0; j < cols; ++j) dst[j] += row[j];
    }
  });
}

}  // namespace cpu
}  // namespace tessel::kernels
