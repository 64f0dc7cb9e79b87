// Dense kernels on {cpu, cuda}: GEMM (every transpose, beta 0 and 1, odd and empty shapes) against a float64
// product, bias/ReLU/dropout and their backward passes against serial loops; cuda against the CPU twin.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ios>
#include <tuple>
#include <vector>

#include "core/device.h"
#include "kernels/dense.h"
#include "kernels/dropout_math.h"
#include "tests/kernels/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace tessel::kernels {
namespace {

using testing::DotTolerance;
using testing::Poisoned;
using testing::RandomMatrix;

class DenseOnDevice : public testing::OnDevice {};

// The float64 product op(a) · op(b) and, for its error bound, |op(a)| · |op(b)|.
struct Product {
  std::vector<double> value, abs;
};
Product Float64Product(const Matrix& a, bool ta, const Matrix& b, bool tb) {
  const auto ad = testing::ToDouble(a);
  const auto bd = testing::ToDouble(b);
  std::vector<double> abs_a(ad.size());
  std::vector<double> abs_b(bd.size());
  for (size_t i = 0; i < ad.size(); ++i) abs_a[i] = std::fabs(ad[i]);
  for (size_t i = 0; i < bd.size(); ++i) abs_b[i] = std::fabs(bd[i]);
  return {testing::RefMatmul(ad, a.rows, a.cols, ta, bd, b.rows, b.cols, tb),
          testing::RefMatmul(abs_a, a.rows, a.cols, ta, abs_b, b.rows, b.cols, tb)};
}

TEST_P(DenseOnDevice, GemmMatchesFloat64ProductForEveryTransposeAndShape) {
  struct Shape {
    int64_t m, n, k;
  };
  uint64_t seed = 100;
  for (const Shape s :
       {Shape{33, 7, 65}, Shape{1, 1, 1}, Shape{0, 5, 3}, Shape{4, 0, 3}, Shape{5, 3, 0}, Shape{70, 33, 31}}) {
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        for (const float beta : {0.0F, 1.0F}) {
          const Matrix a = ta ? RandomMatrix(s.k, s.m, ++seed) : RandomMatrix(s.m, s.k, ++seed);
          const Matrix b = tb ? RandomMatrix(s.n, s.k, ++seed) : RandomMatrix(s.k, s.n, ++seed);
          const Matrix c0 = RandomMatrix(s.m, s.n, ++seed);
          Matrix c = beta == 0.0F ? Poisoned(s.m, s.n) : c0.Clone();
          const float alpha = 0.75F;
          Gemm(ctx_, a, ta != 0, b, tb != 0, alpha, beta, &c);
          ASSERT_EQ(c.rows, s.m);
          ASSERT_EQ(c.cols, s.n);
          const auto [want, bound] = Float64Product(a, ta != 0, b, tb != 0);
          auto got = c.View();
          auto old = c0.View();
          for (size_t i = 0; i < want.size(); ++i) {
            const double expect = alpha * want[i] + (beta != 0.0F ? old[i] : 0.0);
            ASSERT_NEAR(got[i], expect, DotTolerance(s.k, alpha * bound[i] + std::fabs(old[i])))
                << "m=" << s.m << " n=" << s.n << " k=" << s.k << " ta=" << ta << " tb=" << tb << " i=" << i;
          }
        }
      }
    }
  }
  Matrix c;
  EXPECT_THROW(Gemm(ctx_, Matrix(2, 3), false, Matrix(2, 3), false, 1.0F, 0.0F, &c), Error);
}

// The GEMM precision is the context's own (--math in Context, not a process-wide switch): products under a TF32
// context and under a float32 one, interleaved in one process, each get their context's precision. Inputs
// 1 + 2^-20 need more than TF32's 10 mantissa bits: float32 sums them exactly, TF32 rounds them to 1. The CPU
// computes float32 for both; the simulated device's twin rounds TF32 inputs as tensor cores do; a real GPU may or
// may not use tensor cores for so small a product (cuBLAS chooses), so there TF32 is checked against its bound.
TEST_P(DenseOnDevice, GemmMathIsTheContextsOwn) {
  constexpr int64_t k = 4;
  constexpr float x = 1.0F + 0x1.0p-20F;
  const Matrix a(1, k, std::vector<float>(k, x));
  const Matrix b(k, 1, std::vector<float>(k, 1.0F));
  Context fp32 = ctx_;
  Context tf32 = ctx_;
  tf32.gemm_math = GemmMath::kTf32;
  ASSERT_EQ(fp32.gemm_math, GemmMath::kFp32);  // the default: exact float32
  const float exact = k * x;                   // 4 + 2^-18, exact in float32
  const float rounded = k * 1.0F;              // x rounded to TF32 is 1
  for (int round = 0; round < 2; ++round) {
    Matrix c_tf32;
    Gemm(tf32, a, false, b, false, 1.0F, 0.0F, &c_tf32);
    Matrix c_fp32;
    Gemm(fp32, a, false, b, false, 1.0F, 0.0F, &c_fp32);
    EXPECT_EQ(c_fp32.View()[0], exact) << std::hexfloat << c_fp32.View()[0] << ", round " << round;
    const float got = c_tf32.View()[0];
    if (!cuda()) {
      EXPECT_EQ(got, exact) << std::hexfloat << got << ", round " << round;  // the CPU ignores the mode
    } else if (device::Simulated()) {
      EXPECT_EQ(got, rounded) << std::hexfloat << got << ", round " << round;
    } else {
      EXPECT_TRUE(got == exact || got == rounded) << std::hexfloat << got << ", round " << round;
    }
  }
  EXPECT_EQ(ParseGemmMath("fp32"), GemmMath::kFp32);
  EXPECT_EQ(ParseGemmMath("tf32"), GemmMath::kTf32);
  EXPECT_THROW(ParseGemmMath("fp16"), Error);
}

// y[i] += alpha x[i] over the first x.size() values of y (a row prefix when x has fewer rows), the rest of y kept;
// bit-identical to the serial float32 loop (rounded multiply, then add).
TEST_P(DenseOnDevice, AxpyAddsIntoTheRowPrefix) {
  for (const auto& [rows, prefix, cols] :
       std::vector<std::tuple<int64_t, int64_t, int64_t>>{{0, 0, 3}, {5, 5, 1}, {257, 257, 33}, {300, 41, 7}}) {
    const Matrix x = RandomMatrix(prefix, cols, 500 + static_cast<uint64_t>(rows + cols));
    const Matrix y0 = RandomMatrix(rows, cols, 600 + static_cast<uint64_t>(rows));
    for (const float alpha : {1.0F, -0.75F}) {
      Matrix y = y0.Clone();
      Axpy(ctx_, alpha, x, &y);
      ASSERT_EQ(y.rows, rows);
      for (int64_t i = 0; i < y.size(); ++i) {
        const float want = i < x.size() ? y0.View()[i] + alpha * x.View()[i] : y0.View()[i];
        ASSERT_EQ(y.View()[i], want) << rows << "x" << cols << " prefix " << prefix << " at " << i;
      }
    }
  }
  Matrix big = RandomMatrix(4, 3, 1);
  Matrix small = RandomMatrix(2, 3, 2);
  EXPECT_THROW(Axpy(ctx_, 1.0F, big, &small), Error);  // x larger than y
  Matrix other = RandomMatrix(4, 2, 3);
  EXPECT_THROW(Axpy(ctx_, 1.0F, other, &big), Error);  // columns differ
}

TEST_P(DenseOnDevice, BiasAndReluMatchSerialLoops) {
  for (const auto& [rows, cols] :
       std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {1, 1}, {257, 33}, {40, 1}, {5000, 5}}) {
    const Matrix x = RandomMatrix(rows, cols, 200 + static_cast<uint64_t>(rows + cols));
    const Matrix bias = RandomMatrix(1, cols, 300 + static_cast<uint64_t>(cols));
    Matrix y = x.Clone();
    AddBias(ctx_, bias, &y);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        ASSERT_EQ(y.View()[i * cols + j], x.View()[i * cols + j] + bias.View()[j]) << i << "," << j;

    // The fused epilogue: bit-identical to AddBias, then Relu.
    Matrix fused = x.Clone();
    AddBiasRelu(ctx_, bias, &fused);
    Matrix unfused = x.Clone();
    AddBias(cpu_, bias, &unfused);
    Relu(cpu_, unfused, &unfused);
    ASSERT_EQ(fused.data.ToVector(), unfused.data.ToVector());
    EXPECT_THROW(AddBiasRelu(ctx_, RandomMatrix(1, cols + 1, 9), &fused), Error);

    Matrix r = Poisoned(rows, cols);
    Relu(ctx_, x, &r);
    for (int64_t i = 0; i < x.size(); ++i) ASSERT_EQ(r.View()[i], std::max(x.View()[i], 0.0F)) << i;
    Matrix in_place = x.Clone();
    Relu(ctx_, in_place, &in_place);
    for (int64_t i = 0; i < x.size(); ++i) ASSERT_EQ(in_place.View()[i], r.View()[i]) << i;

    const Matrix gy = RandomMatrix(rows, cols, 400 + static_cast<uint64_t>(rows));
    Matrix gx = Poisoned(rows, cols);
    ReluBackward(ctx_, r, gy, &gx);
    for (int64_t i = 0; i < x.size(); ++i) ASSERT_EQ(gx.View()[i], r.View()[i] > 0.0F ? gy.View()[i] : 0.0F) << i;

    Matrix gb = Poisoned(1, cols);
    BiasGrad(ctx_, gy, &gb);
    ASSERT_EQ(gb.cols, cols);
    for (int64_t j = 0; j < cols; ++j) {
      double s = 0;
      double abs_sum = 0;
      for (int64_t i = 0; i < rows; ++i) {
        s += gy.View()[i * cols + j];
        abs_sum += std::fabs(gy.View()[i * cols + j]);
      }
      // Summed in float64 on both devices: only the final rounding to float32 (half an ulp) separates them.
      ASSERT_NEAR(gb.View()[j], s, 0x1.0p-23 * std::fabs(s) + 1e-12 * abs_sum) << j;
    }
  }
}

TEST_P(DenseOnDevice, DropoutDrawsTheCpuMaskAndScales) {
  for (const int64_t n : {int64_t{0}, int64_t{1}, int64_t{63}, int64_t{4096 * 3 + 17}}) {
    for (const float p : {0.0F, 0.3F, 0.5F, 0.9F}) {
      const Matrix x = RandomMatrix(1, n, 500 + static_cast<uint64_t>(n));
      const StreamKey key{.seed = 7, .rank = 1, .epoch = 2, .batch = 3, .purpose = 4};
      Buffer<float> y(static_cast<size_t>(n), std::numeric_limits<float>::quiet_NaN());
      Dropout(ctx_, x.data, p, key, &y);
      const DropoutSpec spec = MakeDropoutSpec(p, Rng(key)());
      int64_t kept = 0;
      for (int64_t i = 0; i < n; ++i) {
        const auto k = static_cast<size_t>(i);
        const bool keep = DropoutKeep(spec, static_cast<uint64_t>(i));
        ASSERT_EQ(y[k], keep ? x.View()[k] * spec.scale : 0.0F) << "the mask must be the CPU's function, i=" << i;
        kept += keep ? 1 : 0;
      }
      if (n > 10000) {
        EXPECT_NEAR(static_cast<double>(kept) / static_cast<double>(n), 1.0 - p, 0.02);
      }
      const Matrix gy = RandomMatrix(1, n, 600 + static_cast<uint64_t>(n));
      Buffer<float> gx(static_cast<size_t>(n), std::numeric_limits<float>::quiet_NaN());
      DropoutBackward(ctx_, gy.data, p, key, &gx);
      for (int64_t i = 0; i < n; ++i) {
        const auto k = static_cast<size_t>(i);
        ASSERT_EQ(gx[k], DropoutKeep(spec, static_cast<uint64_t>(i)) ? gy.View()[k] * spec.scale : 0.0F) << i;
      }
      // A prefix of x: the first m values of the whole dropout, y resized to m.
      for (const int64_t m : {int64_t{0}, n / 2, n}) {
        Buffer<float> prefix(3, std::numeric_limits<float>::quiet_NaN());
        DropoutPrefix(ctx_, x.data, m, p, key, &prefix);
        ASSERT_EQ(prefix.size(), static_cast<size_t>(m));
        for (int64_t i = 0; i < m; ++i) ASSERT_EQ(prefix[static_cast<size_t>(i)], y[static_cast<size_t>(i)]) << i;
      }
    }
  }
  Buffer<float> x(4, 1.0F);
  Buffer<float> y;
  EXPECT_THROW(DropoutPrefix(ctx_, x, 5, 0.5F, StreamKey{}, &y), Error);
  EXPECT_THROW(DropoutPrefix(ctx_, x, 2, 0.5F, StreamKey{}, &x), Error);
}

// DropoutGemm: the product of Dropout's values (the mask of each element's index in x) with b, plain or with x
// transposed (the weight gradient), within the float32 bound of the float64 product of the dropped values; fused
// where the device has the kernel (outputs at most 32 wide, float32 math: one launch, two for the transposed product,
// and no copy of x), Dropout then Gemm elsewhere. On the CPU and the simulated device (whose twins are Dropout, then
// the CPU's Gemm) equal to those two calls bit for bit. Shapes: empty rows, inner size 0, widths 1 to 33 (33: not
// fused), off multiples of 32, and more rows than one chunk of the transposed product's partial sums (4096).
TEST_P(DenseOnDevice, DropoutGemmIsTheProductOfTheDroppedValues) {
  struct Shape {
    int64_t rows, cols, n;
  };
  uint64_t seed = 800;
  for (const Shape s :
       {Shape{70, 45, 16}, Shape{1, 1, 1}, Shape{0, 5, 3}, Shape{9000, 3, 32}, Shape{33, 0, 8}, Shape{40, 31, 33}}) {
    for (const float p : {0.0F, 0.5F}) {
      for (const bool trans : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << s.rows << "x" << s.cols << ", n " << s.n << ", p " << p << ", trans " << trans);
        const Matrix x = RandomMatrix(s.rows, s.cols, ++seed);
        const Matrix b = RandomMatrix(trans ? s.rows : s.cols, s.n, ++seed);
        const StreamKey key{.seed = seed, .purpose = 3};
        Matrix c = Poisoned(2, 2);  // resized
        const device::Counters before = device::ReadCounters();
        DropoutGemm(ctx_, x, trans, p, key, b, &c);
        const device::Counters after = device::ReadCounters();
        Matrix dropped(s.rows, s.cols);
        Dropout(cpu_, x.data, p, key, &dropped.data);
        const auto [want, bound] = Float64Product(dropped, trans, b, false);
        ASSERT_EQ(c.rows, trans ? s.cols : s.rows);
        ASSERT_EQ(c.cols, s.n);
        const int64_t k = trans ? s.rows : s.cols;
        for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(c.View()[i], want[i], DotTolerance(k, bound[i])) << i;
        if (!cuda() || device::Simulated()) {  // the host twins: the two calls' values
          Matrix two_calls;
          Gemm(cpu_, dropped, trans, b, false, 1.0F, 0.0F, &two_calls);
          ASSERT_EQ(c.data.ToVector(), two_calls.data.ToVector());
        }
        EXPECT_EQ(DropoutGemmFuses(ctx_, s.n), cuda() && s.n <= 32);
        if (cuda() && DropoutGemmFuses(ctx_, s.n)) {
          const bool work = (trans ? s.cols : s.rows) > 0;
          EXPECT_EQ(after.launches - before.launches, work ? (trans ? 2 : 1) : 0);
        }
        if (cuda() && DropoutGemmFuses(ctx_, s.n) && device::Simulated()) {
          // x, b and c on the device, nothing else (no dropped-out copy of x; a GPU adds the transposed product's
          // partial sums, a grow-only scratch allocation)
          const auto bytes = [](const Matrix& m) {  // an empty array takes a 1-byte block
            return std::max<int64_t>(m.size() * static_cast<int64_t>(sizeof(float)), 1);
          };
          EXPECT_EQ(after.allocated_bytes - before.allocated_bytes, bytes(x) + bytes(b) + bytes(c));
        }
      }
    }
  }
  Context tf32 = ctx_;
  tf32.gemm_math = GemmMath::kTf32;
  EXPECT_FALSE(DropoutGemmFuses(tf32, 16)) << "TF32 products stay cuBLAS's";
  Matrix c;
  EXPECT_THROW(DropoutGemm(ctx_, Matrix(2, 3), false, 0.5F, StreamKey{}, Matrix(2, 3), &c), Error);
  EXPECT_THROW(DropoutGemm(ctx_, Matrix(2, 3), false, 1.0F, StreamKey{}, Matrix(3, 3), &c), Error);
}

INSTANTIATE_TEST_SUITE_P(Devices, DenseOnDevice, ::testing::Values(Device::kCpu, Device::kCuda),
                         testing::DeviceParamName);
TESSEL_SIMULATED_DEVICE_SUITE(DenseOnDevice);

}  // namespace
}  // namespace tessel::kernels
