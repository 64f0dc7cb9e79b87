// GCN CPU kernels against serial float64 references on random inputs: GEMM (all transposes), SpMM and its
// transpose (weighted and unweighted), CSR transpose, sparse row gather, bias, ReLU and dropout.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/context.h"
#include "kernels/dense.h"
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
  Buffer<float> y;
  Buffer<uint8_t> mask;
  const StreamKey key{.seed = 3, .epoch = 4, .purpose = 5};
  Dropout(ctx, x, 0.3F, key, &y, &mask);
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    kept += mask[i];
    EXPECT_FLOAT_EQ(y[i], mask[i] ? 2.0F / 0.7F : 0.0F);
  }
  // Binomial(1e5, 0.7): sd ~ 145; 6 sd.
  EXPECT_NEAR(static_cast<double>(kept), 70000.0, 870.0);
  Buffer<float> y2;
  Buffer<uint8_t> mask2;
  Dropout(ctx, x, 0.3F, key, &y2, &mask2);
  EXPECT_EQ(mask.ToVector(), mask2.ToVector());
  StreamKey other = key;
  other.epoch = 5;
  Dropout(ctx, x, 0.3F, other, &y2, &mask2);
  EXPECT_NE(mask.ToVector(), mask2.ToVector());
  Buffer<float> g(n, 1.0F);
  Buffer<float> gx;
  DropoutBackward(ctx, g, mask, 0.3F, &gx);
  for (size_t i = 0; i < n; ++i) EXPECT_FLOAT_EQ(gx[i], mask[i] ? 1.0F / 0.7F : 0.0F);
  EXPECT_THROW(Dropout(ctx, x, 1.0F, key, &y, &mask), Error);
}

}  // namespace
}  // namespace tessel::kernels
