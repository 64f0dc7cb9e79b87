// Softmax cross-entropy against a float64 reference and finite differences (the loss gradient check);
// row softmax and arg-max against serial loops.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/context.h"
#include "kernels/loss.h"
#include "tests/kernels/kernel_test_util.h"

namespace tessel::kernels {
namespace {

using testing::RandomMatrix;

double RefLoss(const std::vector<double>& z, int64_t c, const std::vector<int32_t>& labels,
               const std::vector<int64_t>& rows) {
  double total = 0;
  for (int64_t r : rows) {
    double mx = -1e300;
    for (int64_t j = 0; j < c; ++j) mx = std::max(mx, z[r * c + j]);
    double s = 0;
    for (int64_t j = 0; j < c; ++j) s += std::exp(z[r * c + j] - mx);
    total += std::log(s) + mx - z[r * c + labels[r]];
  }
  return total / static_cast<double>(rows.size());
}

TEST(SoftmaxCrossEntropy, LossMatchesFloat64AndGradientMatchesFiniteDifferences) {
  const Context ctx;
  const int64_t n = 40, c = 6;
  Matrix logits = RandomMatrix(n, c, 21);
  std::vector<int32_t> labels(n);
  for (int64_t i = 0; i < n; ++i) labels[i] = static_cast<int32_t>((i * 7) % c);
  const std::vector<int64_t> rows{0, 3, 4, 10, 11, 25, 39};
  Matrix grad;
  const double loss = SoftmaxCrossEntropy(ctx, logits, labels, rows, &grad);
  auto z = testing::ToDouble(logits);
  EXPECT_NEAR(loss, RefLoss(z, c, labels, rows), 1e-6);  // float32 logit differences
  const double h = 1e-6;
  for (int64_t i = 0; i < n * c; ++i) {
    auto zp = z;
    auto zm = z;
    zp[i] += h;
    zm[i] -= h;
    const double fd = (RefLoss(zp, c, labels, rows) - RefLoss(zm, c, labels, rows)) / (2 * h);
    ASSERT_NEAR(grad.View()[i], fd, 1e-6) << "entry " << i;
  }
}

TEST(SoftmaxCrossEntropy, StableForHugeLogitsAndRejectsBadLabels) {
  const Context ctx;
  Matrix logits(1, 3, {1000.0F, 0.0F, -1000.0F});
  std::vector<int32_t> labels{0};
  const std::vector<int64_t> rows{0};
  EXPECT_NEAR(SoftmaxCrossEntropy(ctx, logits, labels, rows, nullptr), 0.0, 1e-12);
  labels[0] = 2;
  EXPECT_NEAR(SoftmaxCrossEntropy(ctx, logits, labels, rows, nullptr), 2000.0, 1e-3);
  labels[0] = 3;
  EXPECT_THROW(SoftmaxCrossEntropy(ctx, logits, labels, rows, nullptr), Error);
}

TEST(RowSoftmax, RowsSumToOneAndArgmaxPicksLargest) {
  const Context ctx;
  Matrix x = RandomMatrix(50, 5, 22);
  Matrix p;
  RowSoftmax(ctx, x, &p);
  std::vector<int32_t> am(50);
  RowArgmax(ctx, x, am);
  for (int64_t r = 0; r < 50; ++r) {
    double s = 0;
    int32_t best = 0;
    for (int64_t j = 0; j < 5; ++j) {
      s += p.View()[r * 5 + j];
      if (x.View()[r * 5 + j] > x.View()[r * 5 + best]) best = static_cast<int32_t>(j);
    }
    EXPECT_NEAR(s, 1.0, 1e-6);
    EXPECT_EQ(am[r], best);
  }
}

}  // namespace
}  // namespace tessel::kernels
