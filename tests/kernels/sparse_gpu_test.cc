// Sparse kernels on {cpu, cuda}: SpMM and SpMMTranspose against a float64 dense product (weighted and 0/1
// matrices, empty rows, one column, widths off multiples of 32), and Transpose equal to the CPU's CSR exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/device.h"
#include "core/rng.h"
#include "kernels/sparse.h"
#include "tests/kernels/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace tessel::kernels {
namespace {

using testing::DotTolerance;
using testing::Poisoned;
using testing::RandomMatrix;
using testing::RandomSparse;

class SparseOnDevice : public testing::OnDevice {};

struct Case {
  int64_t rows, cols, width;
  double density;
};
const Case kCases[] = {{
                           60,
                           45,
                           33,
                           0.1,
                       },
                       {1, 1, 1, 1.0},
                       {0, 5, 3, 0.5},
                       {7, 0, 4, 0.5},
                       {100, 80, 1, 0.05},
                       {31, 64, 65, 0.3},
                       {20, 20, 8, 0.0}};

// |a| * |x| in float64, the scale of each output's rounding error.
std::vector<double> AbsProduct(const SparseMatrix& a, bool trans, const Matrix& x) {
  auto d = testing::Densify(a);
  for (double& v : d) v = std::fabs(v);
  auto xd = testing::ToDouble(x);
  for (double& v : xd) v = std::fabs(v);
  return testing::RefMatmul(d, a.rows, a.cols, trans, xd, x.rows, x.cols, false);
}

TEST_P(SparseOnDevice, SpMMMatchesFloat64Product) {
  uint64_t seed = 1000;
  for (const Case& c : kCases) {
    for (const bool weighted : {true, false}) {
      const SparseMatrix a = RandomSparse(c.rows, c.cols, c.density, weighted, ++seed);
      const Matrix x = RandomMatrix(c.cols, c.width, ++seed);
      Matrix y = Poisoned(c.rows, c.width);
      SpMM(ctx_, a, x, &y);
      ASSERT_EQ(y.rows, c.rows);
      ASSERT_EQ(y.cols, c.width);
      const auto want =
          testing::RefMatmul(testing::Densify(a), a.rows, a.cols, false, testing::ToDouble(x), x.rows, x.cols, false);
      const auto bound = AbsProduct(a, false, x);
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(y.View()[i], want[i], DotTolerance(c.cols, bound[i])) << c.rows << "x" << c.cols << " i=" << i;
      if (c.width <= 64) {  // the row kernel's outputs (kernels/cuda/sparse_cuda.h): the CPU's, bit for bit
        Matrix on_cpu;
        SpMM(cpu_, a, x, &on_cpu);
        ASSERT_EQ(y.data.ToVector(), on_cpu.data.ToVector()) << c.rows << "x" << c.cols << " width " << c.width;
      }
      // A second call with the same shape reuses the cached descriptors but must read the new values.
      const Matrix x2 = RandomMatrix(c.cols, c.width, ++seed);
      SpMM(ctx_, a, x2, &y);
      const auto want2 = testing::RefMatmul(testing::Densify(a), a.rows, a.cols, false, testing::ToDouble(x2), x2.rows,
                                            x2.cols, false);
      const auto bound2 = AbsProduct(a, false, x2);
      for (size_t i = 0; i < want2.size(); ++i) ASSERT_NEAR(y.View()[i], want2[i], DotTolerance(c.cols, bound2[i]));
    }
  }
  Matrix y;
  EXPECT_THROW(SpMM(ctx_, RandomSparse(3, 4, 0.5, true, 1), Matrix(5, 2), &y), Error);
}

TEST_P(SparseOnDevice, SpMMTransposeMatchesFloat64Product) {
  uint64_t seed = 2000;
  for (const Case& c : kCases) {
    for (const bool weighted : {true, false}) {
      const SparseMatrix a = RandomSparse(c.rows, c.cols, c.density, weighted, ++seed);
      const Matrix x = RandomMatrix(c.rows, c.width, ++seed);
      Matrix y = Poisoned(c.cols, c.width);
      SpMMTranspose(ctx_, a, x, &y);
      ASSERT_EQ(y.rows, c.cols);
      const auto want =
          testing::RefMatmul(testing::Densify(a), a.rows, a.cols, true, testing::ToDouble(x), x.rows, x.cols, false);
      const auto bound = AbsProduct(a, true, x);
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(y.View()[i], want[i], DotTolerance(c.rows, bound[i])) << c.rows << "x" << c.cols << " i=" << i;
    }
  }
}

TEST_P(SparseOnDevice, TransposeEqualsTheCpuCsr) {
  uint64_t seed = 3000;
  for (const Case& c : kCases) {
    for (const bool weighted : {true, false}) {
      const SparseMatrix a = RandomSparse(c.rows, c.cols, c.density, weighted, ++seed);
      const SparseMatrix t = Transpose(ctx_, a);
      const SparseMatrix want = Transpose(cpu_, a);
      ASSERT_EQ(t.rows, c.cols);
      ASSERT_EQ(t.cols, c.rows);
      EXPECT_EQ(t.indptr.ToVector(), want.indptr.ToVector());
      EXPECT_EQ(t.indices.ToVector(), want.indices.ToVector());
      EXPECT_EQ(t.values.ToVector(), want.values.ToVector());
      t.Validate("transpose");
      // Independent of the CPU twin: the transpose's dense form is the dense form transposed.
      const auto d = testing::Densify(a);
      const auto dt = testing::Densify(t);
      for (int64_t r = 0; r < a.rows; ++r)
        for (int64_t col = 0; col < a.cols; ++col) ASSERT_EQ(dt[col * a.rows + r], d[r * a.cols + col]);
    }
  }
}

TEST_P(SparseOnDevice, GatherSparseRowsCopiesTheRows) {
  const SparseMatrix a = RandomSparse(40, 30, 0.2, true, 4000);
  const std::vector<int64_t> ids{5, 0, 39, 5, 17};
  const SparseMatrix g = GatherSparseRows(ctx_, a, ids);
  const auto d = testing::Densify(a);
  const auto dg = testing::Densify(g);
  for (size_t i = 0; i < ids.size(); ++i)
    for (int64_t col = 0; col < 30; ++col) ASSERT_EQ(dg[i * 30 + col], d[ids[i] * 30 + col]);
}

// Every shape, weighted or not, with the ids in a Buffer already on the device (read in place) or not: the CPU's
// CSR exactly (rows in the order of ids, entries in a's order), built without reading anything back.
TEST_P(SparseOnDevice, GatherSparseRowsEqualsTheCpuCsr) {
  uint64_t seed = 5000;
  for (const Case& c : kCases) {
    if (c.rows == 0) continue;
    for (const bool weighted : {true, false}) {
      const SparseMatrix a = RandomSparse(c.rows, c.cols, c.density, weighted, ++seed);
      Rng rng(seed);
      std::vector<int64_t> ids(static_cast<size_t>(rng.UniformInt(3 * static_cast<uint64_t>(c.rows)) + 1));
      for (auto& id : ids) id = static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(c.rows)));
      const SparseMatrix want = GatherSparseRows(cpu_, a, ids);
      for (const bool resident : {false, true}) {
        const Buffer<int64_t> id_buf = Buffer<int64_t>::CopyOf(ids);
        if (ctx_.IsCuda()) {
          if (resident) (void)id_buf.Device();
          (void)a.indptr.Device();  // inputs resident, as the trainer's features are
          (void)a.indices.Device();
          if (weighted) (void)a.values.Device();
        }
        const device::Counters before = device::ReadCounters();
        const SparseMatrix g = GatherSparseRows(ctx_, a, ids, resident ? &id_buf : nullptr);
        const device::Counters used = device::ReadCounters() - before;
        ASSERT_EQ(g.rows, static_cast<int64_t>(ids.size()));
        ASSERT_EQ(g.cols, c.cols);
        if (ctx_.IsCuda()) {
          EXPECT_EQ(used.d2h_copies, 0);  // the entry count comes from the host offsets
          EXPECT_EQ(used.h2d_copies, resident ? 0 : 1);
        }
        EXPECT_EQ(g.indptr.ToVector(), want.indptr.ToVector());
        EXPECT_EQ(g.indices.ToVector(), want.indices.ToVector());
        EXPECT_EQ(g.values.ToVector(), want.values.ToVector());
        g.Validate("gathered rows");
      }
    }
  }
  EXPECT_THROW(GatherSparseRows(ctx_, RandomSparse(4, 4, 0.5, true, 1), std::vector<int64_t>{4}), Error);
  EXPECT_THROW(GatherSparseRows(ctx_, RandomSparse(4, 4, 0.5, true, 1), std::vector<int64_t>{-1}), Error);
}

INSTANTIATE_TEST_SUITE_P(Devices, SparseOnDevice, ::testing::Values(Device::kCpu, Device::kCuda),
                         testing::DeviceParamName);
TESSEL_SIMULATED_DEVICE_SUITE(SparseOnDevice);

}  // namespace
}  // namespace tessel::kernels
