// Row-wise top-k and scatter-add on {cpu, cuda}: top-k against a full sort per row (ties by column, k from 0 to
// the row length), scatter-add with repeated targets against a serial loop in index order.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/rng.h"
#include "kernels/gather.h"
#include "kernels/topk.h"
#include "tests/kernels/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace tessel::kernels {
namespace {

using testing::Poisoned;
using testing::RandomMatrix;

class TopKOnDevice : public testing::OnDevice {};

TEST_P(TopKOnDevice, MatchesAFullSortPerRow) {
  uint64_t seed = 7000;
  for (const auto& [rows, c] : std::vector<std::pair<int64_t, int64_t>>{{0, 5}, {1, 1}, {65, 33}, {10, 100}}) {
    Matrix x = RandomMatrix(rows, c, ++seed);
    // Quantise some rows so ties occur: the smaller column must come first.
    for (int64_t i = 0; i < x.size(); i += 3) x.Mut()[i] = std::round(x.View()[i]);
    for (const int64_t k : {int64_t{0}, int64_t{1}, std::min<int64_t>(c, 5), c}) {
      Matrix values = Poisoned(rows, k);
      Buffer<int32_t> idx(static_cast<size_t>(rows * k), -1);
      TopK(ctx_, x, k, &values, &idx);
      ASSERT_EQ(values.rows, rows);
      ASSERT_EQ(values.cols, k);
      for (int64_t r = 0; r < rows; ++r) {
        const float* z = x.View().data() + r * c;
        std::vector<int32_t> order(static_cast<size_t>(c));
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [z](int32_t a, int32_t b) { return z[a] > z[b]; });
        for (int64_t t = 0; t < k; ++t) {
          ASSERT_EQ(idx[static_cast<size_t>(r * k + t)], order[static_cast<size_t>(t)]) << r << "," << t;
          ASSERT_EQ(values.View()[r * k + t], z[order[static_cast<size_t>(t)]]) << r << "," << t;
        }
      }
    }
  }
  Matrix values;
  Buffer<int32_t> idx;
  EXPECT_THROW(TopK(ctx_, Matrix(2, 3), 4, &values, &idx), Error);
}

TEST_P(TopKOnDevice, ScatterAddRowsAddsRepeatedTargetsInIndexOrder) {
  for (const int64_t cols : {int64_t{1}, int64_t{33}}) {
    const int64_t n = 500;
    const int64_t targets = 37;
    const Matrix src = RandomMatrix(n, cols, 8000 + static_cast<uint64_t>(cols));
    Rng rng(8100);
    std::vector<int64_t> ids(static_cast<size_t>(n));
    for (auto& id : ids) id = static_cast<int64_t>(rng.UniformInt(targets - 1));  // the last target gets nothing
    Matrix out = RandomMatrix(targets, cols, 8200);
    std::vector<float> want(out.View().begin(), out.View().end());
    for (int64_t i = 0; i < n; ++i)  // float32 adds in index order: what both devices promise
      for (int64_t j = 0; j < cols; ++j) want[ids[i] * cols + j] += src.View()[i * cols + j];
    ScatterAddRows(ctx_, src, Buffer<int64_t>::CopyOf(ids), &out);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(out.View()[i], want[i]) << i;
  }
  Matrix out(3, 2);
  EXPECT_THROW(ScatterAddRows(ctx_, Matrix(1, 2), Buffer<int64_t>{3}, &out), Error);
}

INSTANTIATE_TEST_SUITE_P(Devices, TopKOnDevice, ::testing::Values(Device::kCpu, Device::kCuda),
                         testing::DeviceParamName);
TESSEL_SIMULATED_DEVICE_SUITE(TopKOnDevice);

}  // namespace
}  // namespace tessel::kernels
