// Row-wise top-k: the public function (checks, then the device table of kernels/ops.h) and the CPU entry on oneTBB
// (rows in parallel, std::partial_sort on (value desc, column asc) per row), the test oracle of the CUDA twin
// (kernels/cuda/topk.cu).
#include "kernels/topk.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/parallel.h"
#include "kernels/ops.h"

namespace tessel::kernels {

void TopK(const Context& ctx, const Matrix& x, int64_t k, Matrix* values, Buffer<int32_t>* indices) {
  TESSEL_CHECK(k >= 0 && k <= x.cols, "TopK: k = {} must be in [0, {}] (the row length)", k, x.cols);
  TESSEL_CHECK(values != &x, "TopK: values must not alias the input");
  values->Resize(x.rows, k);
  const auto total = static_cast<size_t>(x.rows * k);
  if (indices->size() != total) *indices = Buffer<int32_t>(total);
  Ops(ctx).topk(x, k, values, indices);
}

namespace cpu {

void TopK(const Matrix& x, int64_t k, Matrix* values, Buffer<int32_t>* indices) {
  const int64_t c = x.cols;
  auto xv = x.View();
  auto vv = values->Mut();
  auto iv = indices->MutableHost();
  parallel_for<int64_t>(0, x.rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(c, 1)), [&](int64_t r) {
    const float* z = xv.data() + r * c;
    std::vector<int32_t> cols(static_cast<size_t>(c));
    std::iota(cols.begin(), cols.end(), 0);
    std::partial_sort(cols.begin(), cols.begin() + k, cols.end(),
                      [z](int32_t a, int32_t b) { return z[a] > z[b] || (z[a] == z[b] && a < b); });
    for (int64_t t = 0; t < k; ++t) {
      iv[static_cast<size_t>(r * k + t)] = cols[static_cast<size_t>(t)];
      vv[static_cast<size_t>(r * k + t)] = z[cols[static_cast<size_t>(t)]];
    }
  });
}

}  // namespace cpu
}  // namespace tessel::kernels
