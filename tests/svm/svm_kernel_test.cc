// SVM kernels: every kernel type against the dense float64 textbook formula, kernel rows (Q signs, float
// rounding, arbitrary column sets, many threads) against single evaluations, and kernel-name parsing.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "core/error.h"
#include "core/memory_budget.h"
#include "core/parallel.h"
#include "kernels/svm_kernel.h"
#include "tests/svm/svm_test_util.h"

namespace tessel::kernels {
namespace {
using svm::testing::DenseKernel;
using svm::testing::DenseRow;
using svm::testing::RandomDataset;

SparseRowsView View(const datasets::SparseRowDataset& ds) { return ds.Rows(); }

std::vector<SvmKernelParams> AllKernels() {
  return {{SvmKernelType::kLinear, 3, 0, 0},
          {SvmKernelType::kPolynomial, 3, 0.05, 0.5},
          {SvmKernelType::kRbf, 3, 0.1, 0},
          {SvmKernelType::kSigmoid, 3, 0.01, -0.25}};
}

TEST(SvmKernelTest, ValuesMatchDenseFormulas) {
  const auto ds = RandomDataset(40, 30, 0.3, {1, -1}, 11);
  const auto rows = View(ds);
  for (const auto& p : AllKernels()) {
    for (int64_t a = 0; a < ds.num_rows; ++a) {
      for (int64_t b = 0; b < ds.num_rows; b += 3) {
        const double want = DenseKernel(p, DenseRow(ds, a), DenseRow(ds, b));
        const double got = KernelValue(p, rows.RowIndices(a), rows.RowValues(a), rows.RowIndices(b), rows.RowValues(b));
        EXPECT_NEAR(got, want, 1e-10 * std::max(1.0, std::fabs(want))) << SvmKernelName(p.type) << " " << a << "," << b;
      }
    }
  }
}

// Sparse rows (20% non-zero) and dense rows (90%, kept as a dense matrix, and transposed: 50 features): KRow is
// bit-identical to the sparse dot in feature order; QRow too, up to the RBF exponential (ExpInPlace), which may move
// a float by one ulp. Columns in any order, ascending runs (read from the transposed copy) with a gap, and all
// consecutive (32 at a time from the transposed copy, the last block's tail eight at a time).
TEST(SvmKernelTest, QRowsMatchSingleEvaluationsAcrossThreads) {
  enum Order { kReversed, kAscendingWithGap, kConsecutive };
  for (const auto& [density, order] : {std::pair{0.2, kReversed}, std::pair{0.9, kReversed},
                                       std::pair{0.9, kAscendingWithGap}, std::pair{0.9, kConsecutive}}) {
    const auto ds = RandomDataset(3000, 50, density, {1, -1}, 12);
    const auto rows = View(ds);
    std::vector<int32_t> cols(2000);
    std::iota(cols.begin(), cols.end(), 500);
    if (order == kAscendingWithGap) {
      for (size_t p = 1003; p < cols.size(); ++p) ++cols[p];  // a block of eight that is not one run
    } else if (order == kReversed) {
      std::reverse(cols.begin(), cols.end());
    }
    std::vector<int8_t> signs(cols.size());
    for (size_t p = 0; p < cols.size(); ++p) signs[p] = (cols[p] % 3 == 0) ? -1 : 1;
    for (const auto& params : AllKernels()) {
      SvmKernelRows k(rows, params);
      EXPECT_EQ(k.dense(), density > 0.5);
      for (const int threads : {1, 0}) {
        ThreadLimit limit(threads);
        for (const int64_t i : {int64_t{0}, int64_t{777}, int64_t{2999}}) {
          std::vector<float> q(cols.size());
          k.QRow(i, -1, cols, signs, q);
          std::vector<double> kr(cols.size());
          k.KRow(i, cols, kr);
          for (size_t p = 0; p < cols.size(); ++p) {
            const double sq_i = SparseDot(rows.RowIndices(i), rows.RowValues(i), rows.RowIndices(i), rows.RowValues(i));
            const auto c = cols[p];
            const double sq_c = SparseDot(rows.RowIndices(c), rows.RowValues(c), rows.RowIndices(c), rows.RowValues(c));
            const double dot = SparseDot(rows.RowIndices(i), rows.RowValues(i), rows.RowIndices(c), rows.RowValues(c));
            const double want = KernelFromDot(params, dot, sq_i, sq_c);
            ASSERT_EQ(kr[p], want) << "row " << i << " col " << c;  // same summation order: bit-identical
            const auto exact = static_cast<float>(-signs[p] * want);
            if (params.type == SvmKernelType::kRbf) {
              ASSERT_TRUE(q[p] == exact || q[p] == std::nextafter(exact, 2.0f) || q[p] == std::nextafter(exact, -2.0f))
                  << q[p] << " vs " << exact;
            } else {
              ASSERT_EQ(q[p], exact);
            }
          }
        }
      }
      EXPECT_EQ(k.evaluations(), 2 * 2 * 3 * static_cast<int64_t>(cols.size()));
    }
  }
}

// Feature ids spread far beyond those in use (up to 2^31 - 2) are renumbered compactly inside the kernel
// (Precomputed::calc): the Q rows and the rows of external points (ids in use, and ids no row has) are those of the
// same data numbered densely, bit for bit, for every kernel, sparse, dense and binary rows; no scratch row of 2^31
// doubles is made (found by probing: a two-line file with id 2147483647 took 16.8 GB).
TEST(SvmKernelTest, WideFeatureIdsGiveTheDenseIdsRows) {
  for (const double density : {0.3, 0.9}) {
    for (const bool binary : {false, true}) {
      auto dense = RandomDataset(200, 20, density, {1, -1}, 31);
      if (binary) {
        for (double& v : dense.values.MutableHost()) v = 1.0;
      }
      dense.num_features = 21;  // id 20: in no row (the dense twin of an external point's unused id)
      // The same rows with id c spread to c * 100000007 (up to 1.9e9: ascending, so every row keeps its order).
      datasets::SparseRowDataset wide;
      wide.num_rows = dense.num_rows;
      wide.num_features = 2147483647;
      const auto ptr = dense.indptr.Host();
      const auto val = dense.values.Host();
      std::vector<int32_t> ids(dense.indices.Host().begin(), dense.indices.Host().end());
      for (int32_t& c : ids) c = static_cast<int32_t>(int64_t{c} * 100000007);
      wide.indptr = Buffer<int64_t>(std::vector<int64_t>(ptr.begin(), ptr.end()));
      wide.indices = Buffer<int32_t>(std::move(ids));
      wide.values = Buffer<double>(std::vector<double>(val.begin(), val.end()));
      wide.labels = Buffer<double>(std::vector<double>(dense.labels.Host().begin(), dense.labels.Host().end()));
      for (const auto& p : AllKernels()) {
        SCOPED_TRACE(::testing::Message() << SvmKernelName(p.type) << " density " << density << " binary " << binary);
        SvmKernelRows a(View(dense), p);
        memory::SetLimit(int64_t{1} << 30);  // a scratch row over 2^31 ids (16 GiB) would be refused
        SvmKernelRows b(View(wide), p);
        memory::SetLimit(0);
        std::vector<int32_t> cols(static_cast<size_t>(dense.num_rows));
        std::iota(cols.begin(), cols.end(), 0);
        std::vector<float> qa(cols.size());
        std::vector<float> qb(cols.size());
        for (int64_t i = 0; i < dense.num_rows; i += 7) {
          a.QRow(i, 1, cols, {}, qa);
          b.QRow(i, 1, cols, {}, qb);
          ASSERT_EQ(qa, qb) << "row " << i;
        }
        // An external point with ids in use and one that no row has.
        const std::vector<int32_t> xa = {0, 1, 2, 3, 20};
        const std::vector<int32_t> xb = {0, 100000007, 200000014, 300000021, 2000000000};
        const std::vector<double> x = {1, 1, 1, 1, 1};
        a.QRowOf({xa, x}, 1, cols, {}, qa);
        b.QRowOf({xb, x}, 1, cols, {}, qb);
        ASSERT_EQ(qa, qb);
      }
    }
  }
}

TEST(SvmKernelTest, DiagonalAndBinaryRows) {
  const auto ds = RandomDataset(200, 130, 0.1, {1, -1}, 13, /*binary_values=*/true);
  const auto rows = View(ds);
  for (const auto& params : AllKernels()) {
    SvmKernelRows k(rows, params);
    EXPECT_TRUE(k.binary());  // the popcount path
    std::vector<int32_t> cols(200);
    std::iota(cols.begin(), cols.end(), 0);
    std::vector<double> kr(cols.size());
    for (int64_t i = 0; i < 200; i += 17) {
      k.KRow(i, cols, kr);
      EXPECT_EQ(k.Diagonal(i), kr[i]);
      for (size_t p = 0; p < cols.size(); ++p)
        EXPECT_NEAR(kr[p], DenseKernel(params, DenseRow(ds, i), DenseRow(ds, cols[p])), 1e-12);
    }
  }
}

TEST(SvmKernelTest, ParsesNamesAndDigits) {
  EXPECT_EQ(ParseSvmKernel("0"), SvmKernelType::kLinear);
  EXPECT_EQ(ParseSvmKernel("poly"), SvmKernelType::kPolynomial);
  EXPECT_EQ(ParseSvmKernel("polynomial"), SvmKernelType::kPolynomial);
  EXPECT_EQ(ParseSvmKernel("2"), SvmKernelType::kRbf);
  EXPECT_EQ(ParseSvmKernel("sigmoid"), SvmKernelType::kSigmoid);
  EXPECT_THROW(ParseSvmKernel("4"), Error);
  EXPECT_EQ(SvmKernelName(SvmKernelType::kRbf), "rbf");
}

}  // namespace
}  // namespace tessel::kernels
