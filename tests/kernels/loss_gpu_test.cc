// Loss kernels on {cpu, cuda}: softmax cross-entropy (loss and gradient), row softmax and arg-max against
// float64 serial references on random logits, with odd widths, one class column and empty selections.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/device.h"
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

// The confusion counts of the arg-max against a serial reference (RowArgmax on the CPU, each row scored by hand):
// ties (first index wins), rows listed twice, empty segments, rows outside the logits and labels outside [0, C)
// (counted apart), one class, and counts too many for a block's shared memory (C = 600: the CUDA kernel's global
// path). On a device only the counts come back: one download of their bytes.
TEST_P(LossOnDevice, ArgmaxConfusionMatchesTheCountsOfTheArgmax) {
  uint64_t seed = 9000;
  for (const auto& shape : std::vector<std::pair<int64_t, int64_t>>{{200, 7}, {1, 1}, {90, 40}, {50, 600}}) {
    const int64_t n = shape.first;
    const int64_t c = shape.second;
    Matrix logits = RandomMatrix(n, c, ++seed);
    if (c > 3) {  // ties on row 0: the first index wins
      logits.Mut()[1] = 9.0F;
      logits.Mut()[3] = 9.0F;
    }
    Rng rng(++seed);
    std::vector<int32_t> labels(static_cast<size_t>(n));
    for (auto& y : labels) y = static_cast<int32_t>(rng.UniformInt(static_cast<uint64_t>(c)));
    // Make some predictions right, so that true positives are not all zero.
    std::vector<int32_t> pred(static_cast<size_t>(n));
    RowArgmax(cpu_, logits, pred);
    for (int64_t r = 0; r < n; r += 3) labels[static_cast<size_t>(r)] = pred[static_cast<size_t>(r)];
    if (n > 5) labels[5] = static_cast<int32_t>(c);  // outside [0, C)
    if (n > 6) labels[6] = -1;                       // no label
    std::vector<int64_t> rows;
    std::vector<int64_t> ends;
    for (int s = 0; s < 3; ++s) {
      if (s != 1) {  // segment 1 empty
        for (int64_t r = 0; r < n; ++r) {
          if (rng.Uniform() < 0.7) rows.push_back(r);
        }
        rows.push_back(0);  // listed twice
        if (n > 6) rows.insert(rows.end(), {5, 6});
      }
      ends.push_back(static_cast<int64_t>(rows.size()));
    }
    rows.push_back(n);  // outside the logits, in a fourth segment
    ends.push_back(static_cast<int64_t>(rows.size()));
    std::vector<int64_t> want(ends.size() * static_cast<size_t>(3 * c + 1), 0);
    for (size_t k = 0, s = 0; k < rows.size(); ++k) {
      while (static_cast<int64_t>(k) >= ends[s]) ++s;
      int64_t* seg = want.data() + static_cast<int64_t>(s) * (3 * c + 1);
      const int64_t r = rows[k];
      const int32_t y = r < n ? labels[static_cast<size_t>(r)] : -1;
      if (y < 0 || y >= c) {
        ++seg[3 * c];
      } else if (pred[static_cast<size_t>(r)] == y) {
        ++seg[y];
      } else {
        ++seg[c + pred[static_cast<size_t>(r)]];
        ++seg[2 * c + y];
      }
    }
    if (c > 3) {
      EXPECT_EQ(pred[0], 1) << "the first of the tied values";
    }
    const device::Counters before = device::ReadCounters();
    const std::vector<int64_t> got =
        ArgmaxConfusion(ctx_, logits, Buffer<int32_t>::CopyOf(labels), Buffer<int64_t>::CopyOf(rows), ends);
    const device::Counters after = device::ReadCounters();
    ASSERT_EQ(got, want) << n << " x " << c;
    int64_t tp = 0;
    for (int64_t j = 0; j < c; ++j) tp += got[static_cast<size_t>(j)];
    if (n > 6) {
      EXPECT_GT(tp, 0);
      EXPECT_GE(got[static_cast<size_t>(3 * c)], 2) << "the two bad labels";
    }
    EXPECT_EQ(got.back(), 1) << "the row outside the logits";
    if (ctx_.IsCuda()) {  // the counts come back, nothing else
      EXPECT_EQ(after.d2h_copies - before.d2h_copies, 1);
      EXPECT_EQ(after.d2h_bytes - before.d2h_bytes, static_cast<int64_t>(want.size() * sizeof(int64_t)));
      EXPECT_EQ(after.launches - before.launches, 2) << "a memset and one kernel";
    }
  }
  const Matrix logits = RandomMatrix(4, 3, 1);
  const Buffer<int32_t> labels{0, 1, 2, 0};
  EXPECT_THROW(ArgmaxConfusion(ctx_, logits, labels, Buffer<int64_t>{1, 2}, std::vector<int64_t>{1}), Error);
  EXPECT_THROW(ArgmaxConfusion(ctx_, logits, labels, Buffer<int64_t>{1, 2}, std::vector<int64_t>{2, 1, 2}), Error);
  EXPECT_THROW(ArgmaxConfusion(ctx_, logits, labels, Buffer<int64_t>{1}, std::vector<int64_t>{}), Error);
  EXPECT_THROW(ArgmaxConfusion(ctx_, logits, Buffer<int32_t>{0, 1}, Buffer<int64_t>{1}, std::vector<int64_t>{1}),
               Error);
}

INSTANTIATE_TEST_SUITE_P(Devices, LossOnDevice, ::testing::Values(Device::kCpu, Device::kCuda),
                         testing::DeviceParamName);
TESSEL_SIMULATED_DEVICE_SUITE(LossOnDevice);

}  // namespace
}  // namespace tessel::kernels
