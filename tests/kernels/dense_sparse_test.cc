// GCN CPU kernels against serial float64 references on random inputs: GEMM (all transposes), SpMM and its
// transpose (weighted and unweighted), CSR transpose, sparse row gather, bias, ReLU and dropout.
#include <gtest/gtest.h>

#include <bit>

#include <cmath>
#include <limits>
#include <vector>

#include "core/context.h"
#include "core/parallel.h"
#include "kernels/dense.h"
#include "kernels/dropout_math.h"
#include "kernels/sparse.h"
#include "tests/kernels/kernel_test_util.h"

namespace tessel::kernels {
namespace {

using testing::Densify;
using testing::RandomMatrix;
using testing::RandomSparse;
using testing::RefMatmul;
using testing::ToDouble;

void ExpectNear(const std::vector<double>& want, const Matrix& got, double tol) {
  auto g = got.View();
  ASSERT_EQ(want.size(), g.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(want[i], g[i], tol * (1.0 + std::abs(want[i]))) << "at " << i;
  }
}

// Within the float32 dot-product error of sums over k terms, statistically sqrt(k) roundings of the magnitude
// sum |a||b| (the worst case, k roundings, is too loose to catch a lost term): |got - want| <= 8 sqrt(k) 2^-24
// mag + 1e-6, with want = alpha·op(a)·op(b) + beta·c0 in float64 and mag its sum of absolute terms.
void ExpectWithinDotBound(const Matrix& a, bool ta, const Matrix& b, bool tb, float alpha, float beta,
                          const std::vector<double>& c0, const Matrix& got) {
  auto abs_of = [](std::vector<double> v) {
    for (double& x : v) x = std::fabs(x);
    return v;
  };
  const int64_t k = ta ? a.rows : a.cols;
  const auto want = RefMatmul(ToDouble(a), a.rows, a.cols, ta, ToDouble(b), b.rows, b.cols, tb);
  const auto mag = RefMatmul(abs_of(ToDouble(a)), a.rows, a.cols, ta, abs_of(ToDouble(b)), b.rows, b.cols, tb);
  auto g = got.View();
  ASSERT_EQ(want.size(), g.size());
  const double rel = 8.0 * std::sqrt(static_cast<double>(k)) * 0x1.0p-24;
  for (size_t i = 0; i < want.size(); ++i) {
    const double c_term = beta == 0.0F ? 0.0 : beta * c0[i];  // c0 may be NaN (ignored) when beta is 0
    const double w = alpha * want[i] + c_term;
    const double bound = rel * (std::fabs(alpha) * mag[i] + std::fabs(c_term)) + 1e-6;
    ASSERT_NEAR(g[i], w, bound) << "at " << i << " (k = " << k << ")";
  }
}

TEST(Gemm, MatchesFloat64ForEveryTranspose) {
  const Context ctx;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      const int64_t m = 37, k = 23, n = 11;
      Matrix a = ta ? RandomMatrix(k, m, 1) : RandomMatrix(m, k, 1);
      Matrix b = tb ? RandomMatrix(n, k, 2) : RandomMatrix(k, n, 2);
      Matrix c0 = RandomMatrix(m, n, 3);
      auto want = RefMatmul(ToDouble(a), a.rows, a.cols, ta, ToDouble(b), b.rows, b.cols, tb);
      auto c_init = ToDouble(c0);
      for (size_t i = 0; i < want.size(); ++i) want[i] = 0.5 * want[i] + 2.0 * c_init[i];
      Gemm(ctx, a, ta != 0, b, tb != 0, 0.5F, 2.0F, &c0);
      ExpectNear(want, c0, 1e-5);
    }
  }
}

// Shapes large enough for the CPU's split products: many output rows (row chunks, also at a SAGE layer's 128 x 128),
// and few rows over a long inner dimension (inner chunks added in order), with beta 0 (c's contents ignored, even NaN)
// and beta != 0; the result must also be the same at one thread as at all.
TEST(Gemm, SplitProductsMatchFloat64AndAnyThreadCount) {
  const Context ctx;
  struct Shape {
    int64_t m, k, n;
  };
  for (const Shape sh : {Shape{5000, 128, 16}, Shape{128, 20000, 16}, Shape{16, 9000, 128}, Shape{3000, 128, 128}}) {
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        Matrix a = ta ? RandomMatrix(sh.k, sh.m, 11) : RandomMatrix(sh.m, sh.k, 11);
        Matrix b = tb ? RandomMatrix(sh.n, sh.k, 12) : RandomMatrix(sh.k, sh.n, 12);
        for (const float beta : {0.0F, 1.0F}) {
          Matrix c0 = RandomMatrix(sh.m, sh.n, 13);
          if (beta == 0.0F) {
            for (float& v : c0.Mut()) v = std::numeric_limits<float>::quiet_NaN();
          }
          const auto c_init = ToDouble(c0);
          Matrix c1 = c0.Clone();
          Gemm(ctx, a, ta != 0, b, tb != 0, 0.5F, beta, &c0);
          ExpectWithinDotBound(a, ta != 0, b, tb != 0, 0.5F, beta, c_init, c0);
          {
            ThreadLimit one(1);
            Gemm(ctx, a, ta != 0, b, tb != 0, 0.5F, beta, &c1);
          }
          ASSERT_EQ(c0.data.ToVector(), c1.data.ToVector()) << sh.m << "x" << sh.k << "x" << sh.n;
        }
      }
    }
  }
}

// The narrow-output kernels (n <= 32, b not transposed: forward products and weight gradients of GCN layers) for
// every vector count (n = 1 .. 32, with partial vectors), row blocks with remainders, short and long inner
// dimensions (one chunk, several), alpha and beta, against float64; transposed b takes the OpenBLAS path.
TEST(Gemm, NarrowOutputsMatchFloat64) {
  const Context ctx;
  struct Shape {
    int64_t m, k, n;
  };
  for (const Shape sh : {Shape{1, 1, 1}, Shape{7, 3, 5}, Shape{13, 128, 8}, Shape{601, 128, 16}, Shape{37, 9, 17},
                         Shape{3000, 64, 24}, Shape{200, 700, 32}, Shape{128, 5000, 16}, Shape{9, 40000, 3}}) {
    for (int ta = 0; ta < 2; ++ta) {
      Matrix a = ta ? RandomMatrix(sh.k, sh.m, 21) : RandomMatrix(sh.m, sh.k, 21);
      Matrix b = RandomMatrix(sh.k, sh.n, 22);
      for (const float beta : {0.0F, -0.5F}) {
        Matrix c = RandomMatrix(sh.m, sh.n, 23);
        const auto c_init = ToDouble(c);
        if (beta == 0.0F) {
          for (float& v : c.Mut()) v = std::numeric_limits<float>::quiet_NaN();
        }
        Gemm(ctx, a, ta != 0, b, false, 2.0F, beta, &c);
        ExpectWithinDotBound(a, ta != 0, b, false, 2.0F, beta, c_init, c);
      }
    }
  }
}

// SVM training ends OpenBLAS's worker pool (ReleaseBlasThreads); a GEMM after it, and after a second release, still
// gives the product (the pool is started again or the call runs on the caller's thread).
TEST(Gemm, WorksAfterTheBlasThreadsAreReleased) {
  const Context ctx;
  const int64_t m = 300, k = 200, n = 150;
  const Matrix a = RandomMatrix(m, k, 4);
  const Matrix b = RandomMatrix(k, n, 5);
  const auto want = RefMatmul(ToDouble(a), m, k, false, ToDouble(b), k, n, false);
  for (int round = 0; round < 2; ++round) {
    ReleaseBlasThreads();
    Matrix c;
    Gemm(ctx, a, false, b, false, 1.0F, 0.0F, &c);
    ExpectNear(want, c, 1e-4);
  }
}

TEST(Gemm, RejectsMismatchedShapes) {
  const Context ctx;
  Matrix a(3, 4), b(5, 2), c;
  EXPECT_THROW(Gemm(ctx, a, false, b, false, 1.0F, 0.0F, &c), Error);
}

TEST(SpMM, MatchesFloat64WeightedAndUnweighted) {
  const Context ctx;
  for (bool weighted : {false, true}) {
    SparseMatrix a = RandomSparse(300, 200, 0.03, weighted, 7);
    a.Validate();
    Matrix x = RandomMatrix(200, 13, 8);
    Matrix y;
    SpMM(ctx, a, x, &y);
    ExpectNear(RefMatmul(Densify(a), 300, 200, false, ToDouble(x), 200, 13, false), y, 1e-5);
  }
}

TEST(SpMM, TransposeMatchesFloat64) {
  const Context ctx;
  SparseMatrix a = RandomSparse(150, 90, 0.05, true, 9);
  Matrix x = RandomMatrix(150, 7, 10);
  Matrix y;
  SpMMTranspose(ctx, a, x, &y);
  EXPECT_EQ(y.rows, 90);
  ExpectNear(RefMatmul(Densify(a), 150, 90, true, ToDouble(x), 150, 7, false), y, 1e-5);
}

TEST(SpMM, EmptyRowsGiveZeros) {
  const Context ctx;
  SparseMatrix a{3, 2, Buffer<int64_t>{0, 0, 1, 1}, Buffer<int32_t>{1}, Buffer<float>{2.0F}};
  Matrix x(2, 2, {1, 2, 3, 4});
  Matrix y(3, 2, {9, 9, 9, 9, 9, 9});
  SpMM(ctx, a, x, &y);
  EXPECT_EQ(y.data.ToVector(), (std::vector<float>{0, 0, 6, 8, 0, 0}));
}

TEST(Transpose, TwiceIsIdentityAndMatchesDense) {
  const Context ctx;
  SparseMatrix a = RandomSparse(60, 45, 0.1, true, 11);
  SparseMatrix t = Transpose(ctx, a);
  t.Validate();
  auto da = Densify(a);
  auto dt = Densify(t);
  for (int64_t r = 0; r < 60; ++r)
    for (int64_t c = 0; c < 45; ++c) ASSERT_EQ(da[r * 45 + c], dt[c * 60 + r]);
  SparseMatrix tt = Transpose(ctx, t);
  EXPECT_EQ(tt.indptr.ToVector(), a.indptr.ToVector());
  EXPECT_EQ(tt.indices.ToVector(), a.indices.ToVector());
  EXPECT_EQ(tt.values.ToVector(), a.values.ToVector());
}

TEST(GatherSparseRows, CopiesRowsInOrderWithRepeats) {
  const Context ctx;
  SparseMatrix a = RandomSparse(40, 30, 0.2, true, 12);
  const std::vector<int64_t> ids{5, 0, 39, 5, 17};
  SparseMatrix g = GatherSparseRows(ctx, a, ids);
  g.Validate();
  auto da = Densify(a);
  auto dg = Densify(g);
  for (size_t i = 0; i < ids.size(); ++i)
    for (int64_t c = 0; c < 30; ++c) ASSERT_EQ(dg[i * 30 + c], da[ids[i] * 30 + c]);
  EXPECT_THROW(GatherSparseRows(ctx, a, std::vector<int64_t>{40}), Error);
}

TEST(Bias, AddAndGradientMatchFloat64) {
  const Context ctx;
  Matrix y = RandomMatrix(2500, 9, 13);  // more rows than one chunk of BiasGrad
  Matrix b = RandomMatrix(1, 9, 14);
  auto want = ToDouble(y);
  for (int64_t i = 0; i < 2500; ++i)
    for (int64_t j = 0; j < 9; ++j) want[i * 9 + j] += b.View()[j];
  AddBias(ctx, b, &y);
  ExpectNear(want, y, 1e-6);
  Matrix gb;
  BiasGrad(ctx, y, &gb);
  std::vector<double> colsum(9, 0.0);
  for (int64_t i = 0; i < 2500; ++i)
    for (int64_t j = 0; j < 9; ++j) colsum[j] += y.View()[i * 9 + j];
  ExpectNear(colsum, gb, 1e-5);
}

TEST(Relu, ForwardAndBackward) {
  const Context ctx;
  Matrix x = RandomMatrix(100, 5, 15);
  Matrix y;
  Relu(ctx, x, &y);
  Matrix g = RandomMatrix(100, 5, 16);
  Matrix gx;
  ReluBackward(ctx, y, g, &gx);
  for (int64_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(y.View()[i], std::max(x.View()[i], 0.0F));
    EXPECT_EQ(gx.View()[i], x.View()[i] > 0 ? g.View()[i] : 0.0F);
  }
}

TEST(Dropout, KeepsFractionScalesAndIsReproducible) {
  const Context ctx;
  const size_t n = 100000;
  Buffer<float> x(n, 2.0F);
  const StreamKey key{.seed = 3, .epoch = 4, .purpose = 5};
  for (const float p : {0.1F, 0.3F, 0.5F, 0.9F}) {
    Buffer<float> y;
    Dropout(ctx, x, p, key, &y);
    const DropoutSpec spec = MakeDropoutSpec(p, Rng(key)());
    const double keep = spec.keep16 / 65536.0;
    EXPECT_NEAR(keep, 1.0 - p, 1.0 / 65536) << p;
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i) {
      const bool k = y[i] != 0.0F;
      kept += k ? 1 : 0;
      // The kernel's value is the reference function of (stream, index), whatever the chunking.
      ASSERT_EQ(k, DropoutKeep(spec, i)) << i;
      ASSERT_EQ(y[i], k ? 2.0F * spec.scale : 0.0F) << i;
    }
    // Binomial(1e5, keep): 6 standard deviations.
    const double sd = std::sqrt(static_cast<double>(n) * keep * (1.0 - keep));
    EXPECT_NEAR(static_cast<double>(kept), static_cast<double>(n) * keep, 6.0 * sd) << p;
    EXPECT_FLOAT_EQ(spec.scale, static_cast<float>(1.0 / keep));
  }
  Buffer<float> y;
  Buffer<float> y2;
  Dropout(ctx, x, 0.3F, key, &y);
  Dropout(ctx, x, 0.3F, key, &y2);
  EXPECT_EQ(y.ToVector(), y2.ToVector());
  StreamKey other = key;
  other.epoch = 5;
  Dropout(ctx, x, 0.3F, other, &y2);
  EXPECT_NE(y.ToVector(), y2.ToVector());
  // The backward pass regenerates the same mask: the gradient passes where the value did.
  Buffer<float> g(n, 1.0F);
  Buffer<float> gx;
  DropoutBackward(ctx, g, 0.3F, key, &gx);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(gx[i] != 0.0F, y[i] != 0.0F) << i;
  // In place, and p = 0 copies.
  Buffer<float> inplace = x.Clone();
  Dropout(ctx, inplace, 0.3F, key, &inplace);
  EXPECT_EQ(inplace.ToVector(), y.ToVector());
  Dropout(ctx, x, 0.0F, key, &y2);
  EXPECT_EQ(y2.ToVector(), x.ToVector());
  EXPECT_THROW(Dropout(ctx, x, 1.0F, key, &y), Error);
}

TEST(Dropout, MaskIsTheSameForAnyThreadCount) {
  const Context ctx;
  const size_t n = (size_t{1} << 18) + 37;  // many chunks, and a last group shorter than 64
  Buffer<float> x(n, 1.0F);
  const StreamKey key{.seed = 11, .batch = 2};
  Buffer<float> one;
  {
    ThreadLimit limit(1);
    Dropout(ctx, x, 0.5F, key, &one);
  }
  Buffer<float> all;
  Dropout(ctx, x, 0.5F, key, &all);
  EXPECT_EQ(one.ToVector(), all.ToVector());
}

TEST(Dropout, MaskBitsAreUnbiasedAndUncorrelated) {
  // Each bit of a group's word is kept with probability keep16 / 2^16 exactly (the binary-expansion construction);
  // check the rate per bit position and the joint rate of neighbouring elements and of the same bit in
  // neighbouring groups (independent draws: keep^2).
  for (const float p : {0.5F, 0.3F, 0.05F}) {
    const DropoutSpec spec = MakeDropoutSpec(p, 0x1234567ULL);
    const double keep = spec.keep16 / 65536.0;
    const int64_t groups = 20000;
    std::vector<int64_t> per_bit(64, 0);
    int64_t pairs_next = 0;
    int64_t pairs_group = 0;
    uint64_t prev = 0;
    for (int64_t g = 0; g < groups; ++g) {
      const uint64_t w = DropoutMaskWord(spec, static_cast<uint64_t>(g));
      for (int b = 0; b < 64; ++b) per_bit[static_cast<size_t>(b)] += static_cast<int64_t>((w >> b) & 1U);
      pairs_next += std::popcount(w & (w >> 1));
      if (g > 0) pairs_group += std::popcount(w & prev);
      prev = w;
    }
    const double sd_bit = std::sqrt(static_cast<double>(groups) * keep * (1 - keep));
    for (int b = 0; b < 64; ++b) {
      EXPECT_NEAR(static_cast<double>(per_bit[static_cast<size_t>(b)]), static_cast<double>(groups) * keep, 6 * sd_bit)
          << p << " bit " << b;
    }
    const double n_next = static_cast<double>(groups) * 63;
    EXPECT_NEAR(static_cast<double>(pairs_next) / n_next, keep * keep, 6 * std::sqrt(keep * keep / n_next)) << p;
    const double n_group = static_cast<double>(groups - 1) * 64;
    EXPECT_NEAR(static_cast<double>(pairs_group) / n_group, keep * keep, 6 * std::sqrt(keep * keep / n_group)) << p;
  }
  // keep = 1/2 needs one random word per group, and p = 0 keeps everything.
  EXPECT_EQ(MakeDropoutSpec(0.5F, 1).keep16, 32768U);
  EXPECT_EQ(MakeDropoutSpec(0.5F, 1).first, 15U);
  EXPECT_FALSE(MakeDropoutSpec(0.0F, 1).Active());
  EXPECT_EQ(DropoutMaskWord(MakeDropoutSpec(0.0F, 1), 3), ~uint64_t{0});
}

}  // namespace
}  // namespace tessel::kernels
