// Loss kernels on {cpu, cuda}: softmax cross-entropy (loss and gradient), row softmax and arg-max against
// float64 serial references on random logits, with odd widths, one class column and empty selections.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/rng.h"
#include "kernels/loss.h"
#include "tests/kernels/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace tessel::kernels {
namespace {

using testing::Poisoned;
using testing::RandomMatrix;

class LossOnDevice : public testing::OnDevice {};

TEST_P(LossOnDevice, CrossEntropyMatchesFloat64Reference) {
  uint64_t seed = 5000;
  for (const auto& shape : std::vector<std::pair<int64_t, int64_t>>{{50, 7}, {1, 1}, {300, 33}, {9, 65}}) {
    const int64_t rows = shape.first;
    const int64_t c = shape.second;  // plain variables: Clang 14 lambdas cannot capture structured bindings
    const Matrix logits = RandomMatrix(rows, c, ++seed);
    Rng rng(++seed);
    std::vector<int32_t> labels(static_cast<size_t>(rows));
    for (auto& y : labels) y = static_cast<int32_t>(rng.UniformInt(static_cast<uint64_t>(c)));
    std::vector<int64_t> sel;
    for (int64_t r = 0; r < rows; ++r)
      if (rng.Uniform() < 0.6 || r == 0) sel.push_back(r);
    Matrix grad = Poisoned(rows, c);
    const double loss = SoftmaxCrossEntropy(ctx_, logits, labels, sel, &grad);
    // Reference: float64 log-softmax of the float32 differences z - max (the kernels' contract: the max and the
    // shift are float32, everything after float64), so only summation order separates it from the kernels.
    auto z = logits.View();
    std::vector<double> want_grad(static_cast<size_t>(rows * c), 0.0);
    double want = 0;
    const double inv_m = 1.0 / static_cast<double>(sel.size());
    for (int64_t r : sel) {
      float mx = -INFINITY;
      for (int64_t j = 0; j < c; ++j) mx = std::max(mx, z[r * c + j]);
      auto shifted = [&](int64_t j) { return static_cast<double>(z[r * c + j] - mx); };
      double denom = 0;
      for (int64_t j = 0; j < c; ++j) denom += std::exp(shifted(j));
      want += std::log(denom) - shifted(labels[r]);
      for (int64_t j = 0; j < c; ++j)
        want_grad[r * c + j] = (std::exp(shifted(j)) / denom - (j == labels[r] ? 1.0 : 0.0)) * inv_m;
    }
    want *= inv_m;
    EXPECT_NEAR(loss, want, 1e-9 * (1.0 + std::fabs(want)));  // float64 throughout; only summation order differs
    for (size_t i = 0; i < want_grad.size(); ++i)
      ASSERT_NEAR(grad.View()[i], want_grad[i], 1e-7 * inv_m + 1e-12) << i;  // float32 rounding of a value <= inv_m
    EXPECT_NEAR(SoftmaxCrossEntropy(ctx_, logits, labels, sel, nullptr), loss, 1e-12);
  }
  // Empty selection: loss 0 and an all-zero gradient.
  const Matrix logits = RandomMatrix(4, 3, 1);
  const std::vector<int32_t> labels{0, 1, 2, 0};
  Matrix grad = Poisoned(4, 3);
  EXPECT_EQ(SoftmaxCrossEntropy(ctx_, logits, labels, std::vector<int64_t>{}, &grad), 0.0);
  for (float g : grad.View()) ASSERT_EQ(g, 0.0F);
  const std::vector<int32_t> bad{0, 3, 2, 0};
  EXPECT_THROW(SoftmaxCrossEntropy(ctx_, logits, bad, std::vector<int64_t>{1}, &grad), Error);
  EXPECT_THROW(SoftmaxCrossEntropy(ctx_, logits, labels, std::vector<int64_t>{4}, &grad), Error);
}

// The loss summed where the total lives (SoftmaxCrossEntropyAdd): bit-identical to adding the returned losses times
// their weights on the host, over several steps of different sizes (more than one 256-row chunk), restarting with
// `first`; the gradient is SoftmaxCrossEntropy's.
TEST_P(LossOnDevice, LossAddedWhereTheTotalLivesEqualsTheHostSum) {
  Buffer<double> total;
  for (int round = 0; round < 2; ++round) {
    double want = 0;
    for (const auto& [rows, take] : std::vector<std::pair<int64_t, int64_t>>{{700, 600}, {50, 0}, {300, 299}}) {
      const int64_t c = 6;
      const Matrix logits = RandomMatrix(rows, c, 7000 + static_cast<uint64_t>(rows + round));
      Rng rng(7100 + static_cast<uint64_t>(rows));
      std::vector<int32_t> labels(static_cast<size_t>(rows));
      for (auto& y : labels) y = static_cast<int32_t>(rng.UniformInt(static_cast<uint64_t>(c)));
      std::vector<int64_t> sel(static_cast<size_t>(take));
      for (int64_t i = 0; i < take; ++i) sel[static_cast<size_t>(i)] = (i * 7) % rows;
      const double weight = static_cast<double>(take + 3);
      Matrix want_grad;
      const double cpu_loss = SoftmaxCrossEntropy(cpu_, logits, labels, sel, &want_grad);
      // The host sum of this device's own losses (its exp and log may differ from the CPU's in the last bit),
      // and within rounding of the CPU's.
      const double loss = SoftmaxCrossEntropy(ctx_, logits, labels, sel, nullptr);
      ASSERT_NEAR(loss, cpu_loss, 1e-12 * std::max(1.0, std::fabs(cpu_loss)));
      want += loss * weight;
      Matrix grad = Poisoned(rows, c);
      SoftmaxCrossEntropyAdd(ctx_, logits, Buffer<int32_t>::CopyOf(labels), Buffer<int64_t>::CopyOf(sel), weight,
                             rows == 700, &grad, &total);
      ASSERT_EQ(grad.data.ToVector(), want_grad.data.ToVector());
      ASSERT_EQ(total.Host()[0], want) << "round " << round << ", rows " << rows;
    }
  }
  Buffer<double> fresh;
  const Matrix logits = RandomMatrix(4, 3, 1);
  EXPECT_THROW(SoftmaxCrossEntropyAdd(ctx_, logits, Buffer<int32_t>{0, 1, 2, 0}, Buffer<int64_t>{1}, 1.0, false,
                                      nullptr, &fresh),
               Error);  // adding into a total never started
}

TEST_P(LossOnDevice, RowSoftmaxAndArgmaxMatchSerialReferences) {
  uint64_t seed = 6000;
  for (const auto& shape : std::vector<std::pair<int64_t, int64_t>>{{0, 4}, {1, 1}, {77, 5}, {40, 70}}) {
    const int64_t rows = shape.first;
    const int64_t c = shape.second;  // plain variables: Clang 14 lambdas cannot capture structured bindings
    Matrix logits = RandomMatrix(rows, c, ++seed);
    if (rows > 2 && c > 3) {  // a tie: the first index must win
      logits.Mut()[2 * c + 1] = 9.0F;
      logits.Mut()[2 * c + 3] = 9.0F;
    }
    Matrix probs = Poisoned(rows, c);
    RowSoftmax(ctx_, logits, &probs);
    std::vector<int32_t> arg(static_cast<size_t>(rows), -1);
    RowArgmax(ctx_, logits, arg);
    auto z = logits.View();
    for (int64_t r = 0; r < rows; ++r) {
      float mx = -INFINITY;
      int32_t best = 0;
      for (int64_t j = 0; j < c; ++j) {
        if (z[r * c + j] > mx) {
          mx = z[r * c + j];
          best = static_cast<int32_t>(j);
        }
      }
      auto shifted = [&](int64_t j) { return static_cast<double>(z[r * c + j] - mx); };
      double denom = 0;
      for (int64_t j = 0; j < c; ++j) denom += std::exp(shifted(j));
      for (int64_t j = 0; j < c; ++j) {
        const double want = std::exp(shifted(j)) / denom;  // float64; the kernel rounds it once to float32
        ASSERT_NEAR(probs.View()[r * c + j], want, 0x1.0p-24 * want + 1e-15) << r << "," << j;
      }
      ASSERT_EQ(arg[static_cast<size_t>(r)], best) << r;
    }
    if (rows > 2 && c > 3) {
      EXPECT_EQ(arg[2], 1);
    }
    Matrix in_place = logits.Clone();
    RowSoftmax(ctx_, in_place, &in_place);
    for (int64_t i = 0; i < logits.size(); ++i) ASSERT_EQ(in_place.View()[i], probs.View()[i]) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, LossOnDevice, ::testing::Values(Device::kCpu, Device::kCuda),
                         testing::DeviceParamName);
TESSEL_SIMULATED_DEVICE_SUITE(LossOnDevice);

}  // namespace
}  // namespace tessel::kernels
