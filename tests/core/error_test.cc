// tessel::Error formats, TESSEL_CHECK, SelectOps (the device-table choice) and the log-level parser.
// Asking for CUDA in a build or machine without it must throw instead of running a CUDA entry.
#include <gtest/gtest.h>

#include <string>

#include "core/context.h"
#include "core/device_ops.h"
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

// A device table of two entries, as a library declares one (kernels/ops.h).
struct TwoOps {
  int (*id)();
};
constexpr TwoOps kCpuTwo{[] { return 1; }};
constexpr TwoOps kCudaTwo{[] { return 2; }};

TEST(SelectOps, CpuContextGetsTheCpuTable) {
  const Context ctx;
  EXPECT_EQ(SelectOps(ctx, kCpuTwo, &kCudaTwo, "test").id(), 1);
  EXPECT_EQ(SelectOps(ctx, kCpuTwo, nullptr, "test").id(), 1) << "a CPU-only library still serves the CPU";
}

TEST(SelectOps, CudaWithoutDeviceOrTableThrows) {
  Context ctx;
  ctx.device = Device::kCuda;
  if (device::CudaDeviceCount() == 0) {
    EXPECT_THROW(SelectOps(ctx, kCpuTwo, &kCudaTwo, "test"), Error);  // no device: RequireCuda refuses
    return;
  }
  EXPECT_EQ(SelectOps(ctx, kCpuTwo, &kCudaTwo, "test").id(), 2);
  try {
    SelectOps(ctx, kCpuTwo, nullptr, "testlib");
    FAIL() << "a library without its CUDA half must refuse CUDA";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("testlib: this tessel was built without its CUDA implementation"),
              std::string::npos);
  }
}

TEST(Context, ParseDevice) {
  EXPECT_EQ(ParseDevice("cpu"), Device::kCpu);
  EXPECT_EQ(ParseDevice("cuda"), Device::kCuda);
  EXPECT_THROW(ParseDevice("tpu"), Error);
}

TEST(PrintableText, EscapesControlBytesButKeepsTextNewlinesAndUtf8) {
  EXPECT_EQ(PrintableText("plain name"), "plain name");
  EXPECT_EQ(PrintableText("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(PrintableText(std::string("a\0b\r\x7f", 5)), "a\\x00b\\x0d\\x7f");
  EXPECT_EQ(PrintableText("line 1\n\tline 2"), "line 1\n\tline 2");
  EXPECT_EQ(PrintableText("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 stays as it is
}

TEST(Error, NulBytesSurviveWhatAsEscapes) {
  // what() is a C string: a raw NUL from a file's content would cut every reader of the message short.
  const std::string name("bad\0name.txt", 12);
  const Error e = Error::InFile(name, "unexpected byte");
  EXPECT_STREQ(e.what(), "bad\\x00name.txt: unexpected byte");
  try {
    TESSEL_CHECK(false, "field '{}' is not a number (in {})",
                 std::string("1\0"
                             "2",
                             3),
                 "rows.txt");
  } catch (const Error& c) {
    EXPECT_STREQ(c.what(), "field '1\\x002' is not a number (in rows.txt)");
    EXPECT_EQ(PrintableText(c.what()), "field '1\\x002' is not a number (in rows.txt)");  // nothing left to escape
  }
  EXPECT_EQ(WithoutNul("plain"), "plain");
}

TEST(Log, ParseLevel) {
  EXPECT_EQ(log::ParseLevel("debug"), log::Level::kDebug);
  EXPECT_THROW(log::ParseLevel("loud"), Error);
}

}  // namespace
}  // namespace tessel
