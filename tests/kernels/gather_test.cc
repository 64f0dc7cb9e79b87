// Dense row gather on CPU and CUDA (value-parameterised over devices; CUDA skips without a GPU; output
// poisoned before each run) against a serial gather, and scatter-add against a serial loop.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/device.h"
#include "kernels/gather.h"
#include "tests/kernels/kernel_test_util.h"

namespace tessel::kernels {
namespace {

using testing::RandomMatrix;

class GatherOnDevice : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override {
    if (GetParam() == Device::kCuda && device::CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

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

INSTANTIATE_TEST_SUITE_P(Devices, GatherOnDevice, ::testing::Values(Device::kCpu, Device::kCuda),
                         [](const auto& param_info) { return std::string(DeviceName(param_info.param)); });

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
