// Gather/scatter of dense rows: the public functions (checks, the target grouping both devices use, then the
// device table of kernels/ops.h) and the CPU entries on oneTBB (CUDA: kernels/cuda/ops.cc, kernels/cuda/gather.cu).
// ScatterAddRows groups targets by a counting sort, so repeated ids add in index order (deterministic) on both.
#include "kernels/gather.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "core/parallel.h"
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

void GatherRows(const Context& ctx, const Matrix& src, const Buffer<int64_t>& ids, Matrix* out) {
  TESSEL_CHECK(out != &src, "GatherRows: output must not alias the source");
  CheckIds(ids.Host(), src.rows, "GatherRows");
  out->Resize(static_cast<int64_t>(ids.size()), src.cols);
  Ops(ctx).gather_rows(src, ids, out);
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

void GatherRows(const Matrix& src, const Buffer<int64_t>& ids, Matrix* out) {
  const auto n = static_cast<int64_t>(ids.size());
  const int64_t cols = src.cols;
  auto iv = ids.Host();
  auto sv = src.View();
  auto ov = out->Mut();
  parallel_for<int64_t>(0, n, std::max<int64_t>(1, 8192 / std::max<int64_t>(cols, 1)), [&](int64_t i) {
    std::memcpy(ov.data() + i * cols, sv.data() + iv[i] * cols, static_cast<size_t>(cols) * sizeof(float));
  });
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
