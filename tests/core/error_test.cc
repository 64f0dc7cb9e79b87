// tessel::Error formats, TESSEL_CHECK, Context::Dispatch and the log-level parser.
// Dispatch to CUDA in a build or machine without it must throw before the CUDA branch runs.
#include <gtest/gtest.h>

#include "core/context.h"
#include "core/error.h"
#include "core/log.h"

namespace tessel {
namespace {

TEST(Error, AtLineFormat) {
  const Error e = Error::AtLine("cora.cites", 1042, "node id 'x7' is not an integer");
  EXPECT_STREQ(e.what(), "cora.cites:1042: node id 'x7' is not an integer");
}

TEST(Error, CheckThrowsFormattedMessage) {
  try {
    TESSEL_CHECK(1 + 1 == 3, "arithmetic is broken: {} != {}", 2, 3);
    FAIL() << "TESSEL_CHECK did not throw";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "arithmetic is broken: 2 != 3");
  }
  EXPECT_NO_THROW(TESSEL_CHECK(true, "never"));
}

TEST(Context, DispatchCpu) {
  Context ctx;
  const int r = ctx.Dispatch([] { return 1; }, [] { return 2; });
  EXPECT_EQ(r, 1);
}

TEST(Context, DispatchCudaWithoutDeviceThrows) {
  if (device::CudaDeviceCount() > 0) GTEST_SKIP() << "a CUDA device is present";
  Context ctx;
  ctx.device = Device::kCuda;
  bool ran = false;
  EXPECT_THROW(ctx.Dispatch([] {}, [&] { ran = true; }), Error);
  EXPECT_FALSE(ran);
}

TEST(Context, ParseDevice) {
  EXPECT_EQ(ParseDevice("cpu"), Device::kCpu);
  EXPECT_EQ(ParseDevice("cuda"), Device::kCuda);
  EXPECT_THROW(ParseDevice("tpu"), Error);
}

TEST(Log, ParseLevel) {
  EXPECT_EQ(log::ParseLevel("debug"), log::Level::kDebug);
  EXPECT_THROW(log::ParseLevel("loud"), Error);
}

}  // namespace
}  // namespace tessel
