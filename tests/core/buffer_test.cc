// Buffer<T>: ownership, borrowing, moves and the host/device flags; device paths skip without a GPU.
// The CUDA round trip runs only where a device is visible (label gpu is on the kernel tests).
#include "core/buffer.h"

#include <gtest/gtest.h>

#include <numeric>

#include "core/error.h"

namespace tessel {
namespace {

TEST(Buffer, ZeroInitialisedAndWritable) {
  Buffer<int> b(5);
  ASSERT_EQ(b.size(), 5U);
  for (int x : b.Host()) EXPECT_EQ(x, 0);
  auto h = b.MutableHost();
  std::iota(h.begin(), h.end(), 10);
  EXPECT_EQ(b[4], 14);
  EXPECT_EQ(b.bytes(), 5 * sizeof(int));
}

TEST(Buffer, TakesVectorWithoutCopy) {
  std::vector<double> v{1.5, 2.5, 3.5};
  const double* p = v.data();
  Buffer<double> b(std::move(v));
  EXPECT_EQ(b.Host().data(), p);
  EXPECT_EQ(b.ToVector(), (std::vector<double>{1.5, 2.5, 3.5}));
}

TEST(Buffer, MoveLeavesSourceEmpty) {
  Buffer<int> a{1, 2, 3};
  Buffer<int> b = std::move(a);
  EXPECT_EQ(b.size(), 3U);
  EXPECT_EQ(a.size(), 0U);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  EXPECT_TRUE(a.Host().empty());
}

TEST(Buffer, CloneIsDeep) {
  Buffer<int> a{1, 2, 3};
  Buffer<int> b = a.Clone();
  b.MutableHost()[0] = 99;
  EXPECT_EQ(a[0], 1);
  EXPECT_EQ(b[0], 99);
}

TEST(Buffer, BorrowKeepsOwnerAlive) {
  auto owner = std::make_shared<std::vector<float>>(std::vector<float>{4, 5, 6});
  std::weak_ptr<std::vector<float>> weak = owner;
  Buffer<float> b = Buffer<float>::Borrow(owner, owner->data(), owner->size());
  owner.reset();
  EXPECT_FALSE(weak.expired());
  EXPECT_EQ(b[2], 6.0F);
  b = Buffer<float>();
  EXPECT_TRUE(weak.expired());
}

TEST(Buffer, DeviceRoundTripOrCleanError) {
  Buffer<int> b{7, 8, 9};
  if (!device::BuiltWithCuda() || device::CudaDeviceCount() == 0) {
    EXPECT_THROW((void)b.Device(), Error);
    GTEST_SKIP() << "no CUDA device: " << device::Describe(0);
  }
  (void)b.Device();
  EXPECT_TRUE(b.DeviceCurrent());
  b.MutableDevice();  // host becomes stale; reading it copies back
  EXPECT_FALSE(b.HostCurrent());
  EXPECT_EQ(b.ToVector(), (std::vector<int>{7, 8, 9}));
}

}  // namespace
}  // namespace tessel
