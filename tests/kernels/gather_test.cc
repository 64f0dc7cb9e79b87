// Dense row gather on CPU and CUDA (value-parameterised over devices; CUDA skips without a GPU; output
// poisoned before each run) against a serial gather, and scatter-add against a serial loop.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/device.h"
#include "kernels/dropout_math.h"
#include "kernels/gather.h"
#include "tests/kernels/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace tessel::kernels {
namespace {

using testing::RandomMatrix;

const std::span<const int64_t> kAllRows{};  // no ids: the source's own rows

class GatherOnDevice : public testing::OnDevice {};

TEST_P(GatherOnDevice, MatchesSerialGather) {
  Context ctx;
  ctx.device = GetParam();
  for (int64_t cols : {1, 7, 64}) {
    const int64_t rows = 500;
    Matrix src = RandomMatrix(rows, cols, 30 + static_cast<uint64_t>(cols));
    Rng rng(31);
    std::vector<int64_t> ids(1234);
    for (auto& id : ids) id = static_cast<int64_t>(rng.UniformInt(rows));
    Buffer<int64_t> id_buf = Buffer<int64_t>::CopyOf(ids);
    Matrix out(static_cast<int64_t>(ids.size()), cols);
    for (float& v : out.Mut()) v = std::numeric_limits<float>::quiet_NaN();  // poison
    GatherRows(ctx, src, id_buf, &out);
    auto o = out.View();
    auto s = src.View();
    for (size_t i = 0; i < ids.size(); ++i)
      for (int64_t j = 0; j < cols; ++j) ASSERT_EQ(o[i * cols + j], s[ids[i] * cols + j]) << i << "," << j;
  }
  Matrix src(3, 2);
  Matrix out;
  EXPECT_THROW(GatherRows(ctx, src, Buffer<int64_t>{0, 3}, &out), Error);
}

// Serial references: the dropped-out gathered matrix from the mask function, and its aggregation in float64.
std::vector<float> ReferenceGatherDropout(const Matrix& src, const std::vector<int64_t>& ids, float p,
                                          const StreamKey& key) {
  const DropoutSpec spec = MakeDropoutSpec(p, Rng(key)());
  const int64_t cols = src.cols;
  std::vector<float> out(ids.size() * static_cast<size_t>(cols));
  auto s = src.View();
  for (size_t i = 0; i < ids.size(); ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      const uint64_t e = i * static_cast<uint64_t>(cols) + static_cast<uint64_t>(j);
      out[e] = DropoutKeep(spec, e) ? s[ids[i] * cols + j] * spec.scale : 0.0F;
    }
  }
  return out;
}

TEST_P(GatherOnDevice, GatherRowsDropoutIsGatherThenDropout) {
  Context ctx;
  ctx.device = GetParam();
  for (int64_t cols : {1, 7, 16, 64, 130}) {
    const int64_t rows = 300;
    Matrix src = RandomMatrix(rows, cols, 60 + static_cast<uint64_t>(cols));
    Rng rng(61);
    std::vector<int64_t> ids(517);
    for (auto& id : ids) id = static_cast<int64_t>(rng.UniformInt(rows));
    const StreamKey key{.seed = 5, .batch = static_cast<uint64_t>(cols), .purpose = 9};
    for (const float p : {0.0F, 0.5F, 0.3F}) {
      Matrix out;
      GatherRowsDropout(ctx, src, ids, 0, p, key, &out);
      ASSERT_EQ(out.rows, static_cast<int64_t>(ids.size()));
      EXPECT_EQ(out.data.ToVector(), ReferenceGatherDropout(src, ids, p, key)) << cols << " " << p;
      // ids empty: the source's first `count` rows, the same mask positions.
      std::vector<int64_t> first(40);
      for (size_t i = 0; i < first.size(); ++i) first[i] = static_cast<int64_t>(i);
      Matrix prefix;
      GatherRowsDropout(ctx, src, kAllRows, 40, p, key, &prefix);
      EXPECT_EQ(prefix.data.ToVector(), ReferenceGatherDropout(src, first, p, key)) << cols << " " << p;
      // Ids in a Buffer (kept resident by the caller): the same values, also for the first `count` of them only.
      const Buffer<int64_t> id_buf = Buffer<int64_t>::CopyOf(ids);
      Matrix from_buf;
      GatherRowsDropout(ctx, src, id_buf, static_cast<int64_t>(ids.size()), p, key, &from_buf);
      EXPECT_EQ(from_buf.data.ToVector(), out.data.ToVector());
      GatherRowsDropout(ctx, src, id_buf, 100, p, key, &from_buf);
      const std::vector<int64_t> first100(ids.begin(), ids.begin() + 100);
      EXPECT_EQ(from_buf.data.ToVector(), ReferenceGatherDropout(src, first100, p, key)) << cols << " " << p;
    }
  }
  Matrix src(3, 2);
  Matrix out;
  const std::vector<int64_t> bad{0, 3};
  EXPECT_THROW(GatherRowsDropout(ctx, src, bad, 0, 0.5F, StreamKey{}, &out), Error);
  EXPECT_THROW(GatherRowsDropout(ctx, src, kAllRows, 4, 0.5F, StreamKey{}, &out), Error);
  EXPECT_THROW(GatherRowsDropout(ctx, src, Buffer<int64_t>{0, 1}, 3, 0.5F, StreamKey{}, &out), Error);
}

TEST_P(GatherOnDevice, GatherSpMMIsTheAggregationOfTheDroppedOutRows) {
  Context ctx;
  ctx.device = GetParam();
  for (int64_t cols : {3, 8, 64, 128}) {
    const int64_t rows = 400;
    Matrix src = RandomMatrix(rows, cols, 70 + static_cast<uint64_t>(cols));
    Rng rng(71);
    std::vector<int64_t> ids(250);
    for (auto& id : ids) id = static_cast<int64_t>(rng.UniformInt(rows));
    const SparseMatrix a = testing::RandomSparse(60, static_cast<int64_t>(ids.size()), 0.05, true, 72);
    const StreamKey key{.seed = 6, .purpose = static_cast<uint64_t>(cols)};
    for (const float p : {0.0F, 0.5F, 0.2F}) {
      Matrix out;
      GatherSpMM(ctx, a, src, ids, p, key, &out);
      ASSERT_EQ(out.rows, a.rows);
      ASSERT_EQ(out.cols, cols);
      const std::vector<float> x = ReferenceGatherDropout(src, ids, p, key);
      auto ap = a.indptr.Host();
      auto ai = a.indices.Host();
      auto av = a.values.Host();
      auto o = out.View();
      for (int64_t d = 0; d < a.rows; ++d) {
        for (int64_t j = 0; j < cols; ++j) {
          double want = 0;
          double mag = 0;
          for (int64_t e = ap[d]; e < ap[d + 1]; ++e) {
            const double term = static_cast<double>(av[e]) * x[static_cast<size_t>(ai[e] * cols + j)];
            want += term;
            mag += std::fabs(term);
          }
          ASSERT_NEAR(o[d * cols + j], want, 1e-5 * mag + 1e-7) << cols << " " << p << " " << d << "," << j;
        }
      }
    }
    // ids empty: the source's own rows.
    const SparseMatrix b = testing::RandomSparse(30, rows, 0.02, true, 73);
    std::vector<int64_t> all(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) all[static_cast<size_t>(i)] = i;
    Matrix direct;
    Matrix by_id;
    GatherSpMM(ctx, b, src, kAllRows, 0.5F, key, &direct);
    GatherSpMM(ctx, b, src, all, 0.5F, key, &by_id);
    EXPECT_EQ(direct.data.ToVector(), by_id.data.ToVector());
    Matrix from_buf;  // the ids in a Buffer: the same values
    GatherSpMM(ctx, b, src, Buffer<int64_t>::CopyOf(all), 0.5F, key, &from_buf);
    EXPECT_EQ(from_buf.data.ToVector(), by_id.data.ToVector());
    // Every device's fused kernel makes the CPU's values bit for bit (same entry order, no contraction), weighted
    // or not, with and without dropout.
    for (const bool weighted : {true, false}) {
      const SparseMatrix c = testing::RandomSparse(70, static_cast<int64_t>(ids.size()), 0.05, weighted, 74);
      for (const float p : {0.0F, 0.5F, 0.3F}) {
        Matrix got;
        Matrix want;
        GatherSpMM(ctx, c, src, ids, p, key, &got);
        GatherSpMM(Context{}, c, src, ids, p, key, &want);
        ASSERT_EQ(got.data.ToVector(), want.data.ToVector()) << cols << " " << p << " weighted " << weighted;
      }
    }
  }
  Matrix src(3, 2);
  Matrix out;
  const SparseMatrix a = testing::RandomSparse(2, 3, 0.5, true, 1);
  const std::vector<int64_t> two{0, 1};
  EXPECT_THROW(GatherSpMM(ctx, a, src, two, 0.5F, StreamKey{}, &out), Error);  // a has 3 columns, 2 rows gathered
}

// Ids a device wrote (the Buffer's host copy stale, as the GPU sampler's Block::device_src) are read there only:
// the gathers make the host ids' values and never download the ids (no wait for the device).
TEST_P(GatherOnDevice, DeviceWrittenIdsAreNeverDownloaded) {
  if (GetParam() == Device::kCpu) GTEST_SKIP() << "a device's ids";
  Context ctx;
  ctx.device = GetParam();
  const int64_t rows = 300;
  const int64_t cols = 16;
  const Matrix src = RandomMatrix(rows, cols, 80);
  Rng rng(81);
  std::vector<int64_t> ids(120);
  for (auto& id : ids) id = static_cast<int64_t>(rng.UniformInt(rows));
  Buffer<int64_t> device_ids = Buffer<int64_t>::CopyOf(ids);
  (void)device_ids.MutableDevice();  // written there: the host copy is stale
  ASSERT_FALSE(device_ids.HostCurrent());
  const SparseMatrix a = testing::RandomSparse(50, static_cast<int64_t>(ids.size()), 0.05, true, 82);
  const StreamKey key{.seed = 7};
  Matrix want_agg;
  Matrix want_rows;
  GatherSpMM(ctx, a, src, ids, 0.5F, key, &want_agg);
  GatherRowsDropout(ctx, src, std::span<const int64_t>(ids).first(40), 40, 0.5F, key, &want_rows);
  const device::Counters before = device::ReadCounters();
  Matrix agg;
  Matrix first_rows;
  GatherSpMM(ctx, a, src, device_ids, 0.5F, key, &agg);
  GatherRowsDropout(ctx, src, device_ids, 40, 0.5F, key, &first_rows);
  const device::Counters d = device::ReadCounters() - before;
  EXPECT_EQ(d.d2h_copies, 0);
  EXPECT_EQ(d.synchronizations, 0);
  EXPECT_FALSE(device_ids.HostCurrent());
  EXPECT_EQ(first_rows.rows, 40);
  EXPECT_EQ(agg.data.ToVector(), want_agg.data.ToVector());
  EXPECT_EQ(first_rows.data.ToVector(), want_rows.data.ToVector());
  EXPECT_THROW(GatherRowsDropout(ctx, src, device_ids, 121, 0.5F, key, &first_rows), Error) << "more than its ids";
}

INSTANTIATE_TEST_SUITE_P(Devices, GatherOnDevice, ::testing::Values(Device::kCpu, Device::kCuda),
                         [](const auto& param_info) { return std::string(DeviceName(param_info.param)); });
TESSEL_SIMULATED_DEVICE_SUITE(GatherOnDevice);

TEST(ScatterAddRows, AddsRepeatedTargetsLikeSerialLoop) {
  const Context ctx;
  Matrix src = RandomMatrix(300, 4, 40);
  Rng rng(41);
  std::vector<int64_t> ids(300);
  for (auto& id : ids) id = static_cast<int64_t>(rng.UniformInt(20));
  Matrix out = RandomMatrix(20, 4, 42);
  std::vector<double> want = testing::ToDouble(out);
  for (size_t i = 0; i < ids.size(); ++i)
    for (int64_t j = 0; j < 4; ++j) want[ids[i] * 4 + j] += src.View()[i * 4 + j];
  ScatterAddRows(ctx, src, Buffer<int64_t>::CopyOf(ids), &out);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(out.View()[i], want[i], 1e-5);
  ids[0] = 20;
  EXPECT_THROW(ScatterAddRows(ctx, src, Buffer<int64_t>::CopyOf(ids), &out), Error);
}

}  // namespace
}  // namespace tessel::kernels
