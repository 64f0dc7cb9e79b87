// The device runtime's accounting and caching pool, on the simulated device (host memory behind the same table):
// every allocation, copy and synchronisation is counted; a block freed is reused by the next request of about its
// size, so a loop that frees and re-allocates its temporaries makes no runtime allocation once warm; outputs written
// in full (OverwriteDevice) are never uploaded. Runs in every build, with or without CUDA or a GPU.
#include <gtest/gtest.h>

#include <numeric>
#include <thread>
#include <vector>

#include "core/buffer.h"
#include "core/device.h"
#include "core/pinned_memory.h"

namespace tessel {
namespace {

using device::Counters;
using device::ReadCounters;

TEST(SimulatedDevice, InstallsOneHostMemoryDevice) {
  EXPECT_FALSE(device::Simulated());
  {
    device::ScopedSimulatedDevice sim;
    EXPECT_TRUE(device::Simulated());
    EXPECT_EQ(device::CudaDeviceCount(), 1);
    EXPECT_EQ(device::Describe(0), "simulated device, host memory");
    EXPECT_THROW(device::SetDevice(1), Error);
    EXPECT_THROW(device::ScopedSimulatedDevice(), Error) << "not nestable";
  }
  EXPECT_FALSE(device::Simulated());
}

TEST(SimulatedDevice, CopiesAndAllocationsAreCountedWithTheirBytes) {
  device::ScopedSimulatedDevice sim;
  const Counters before = ReadCounters();
  Buffer<float> b(1000);
  std::iota(b.MutableHost().begin(), b.MutableHost().end(), 0.0F);
  const float* d = b.Device();  // allocate and upload
  EXPECT_EQ(d[999], 999.0F) << "simulated device memory is host-readable";
  float* w = b.MutableDevice();  // already current: no copy
  w[0] = -1.0F;
  EXPECT_EQ(b.Host()[0], -1.0F);  // one download
  device::Synchronize();
  const Counters d1 = ReadCounters() - before;
  EXPECT_EQ(d1.allocations, 1);
  EXPECT_EQ(d1.runtime_allocations, 1);
  EXPECT_EQ(d1.allocated_bytes, 4000);
  EXPECT_EQ(d1.h2d_copies, 1);
  EXPECT_EQ(d1.h2d_bytes, 4000);
  EXPECT_EQ(d1.d2h_copies, 1);
  EXPECT_EQ(d1.d2h_bytes, 4000);
  EXPECT_EQ(d1.synchronizations, 2);  // the download waits for the device, and the explicit one
  EXPECT_GE(d1.in_use_bytes, 4000);
}

// An output the kernel writes in full is allocated on the device and never uploaded; MutableDevice (a kernel that
// reads the old values) uploads them.
// Every download waits for the device, so it counts as a synchronisation; launches are counted by the layer the CUDA
// code and its twins share (CountLaunches), and the simulated device has no CUDA launch sites of its own.
TEST(SimulatedDevice, DownloadsAreSynchronisationsAndLaunchesAreCounted) {
  device::ScopedSimulatedDevice sim;
  device::Array<int32_t> a(4);
  const std::vector<int32_t> up = {1, 2, 3, 4};
  a.Upload(up.data(), up.size());
  const Counters before = ReadCounters();
  std::vector<int32_t> down(4);
  a.Download(down.data(), down.size());
  a.Download(down.data(), 2);
  device::CountLaunches(3);
  device::Synchronize();
  const Counters d = ReadCounters() - before;
  EXPECT_EQ(down, up);
  EXPECT_EQ(d.d2h_copies, 2);
  EXPECT_EQ(d.synchronizations, 3);  // two downloads and the explicit one
  EXPECT_EQ(d.h2d_copies, 0);        // an upload does not wait
  EXPECT_EQ(d.launches, 3);
  EXPECT_EQ(d.launches_seen, 0);
}

TEST(SimulatedDevice, OverwrittenOutputsAreNeverUploaded) {
  device::ScopedSimulatedDevice sim;
  Buffer<float> out = Buffer<float>::Uninitialized(4096);
  Counters before = ReadCounters();
  float* p = out.OverwriteDevice();
  for (int i = 0; i < 4096; ++i) p[i] = static_cast<float>(i);
  Counters d = ReadCounters() - before;
  EXPECT_EQ(d.allocations, 1);
  EXPECT_EQ(d.h2d_copies, 0);
  EXPECT_FALSE(out.HostCurrent());
  EXPECT_EQ(out.Host()[4095], 4095.0F);

  Buffer<float> in_place(4096, 2.0F);
  before = ReadCounters();
  in_place.MutableDevice()[0] += 1.0F;
  d = ReadCounters() - before;
  EXPECT_EQ(d.h2d_copies, 1);
  EXPECT_EQ(in_place.Host()[0], 3.0F);
}

// The caching pool: a freed block serves the next request of about its size, so a loop that creates and drops its
// temporaries every step makes runtime allocations in its first step only.
TEST(SimulatedDevice, ThePoolServesRepeatedTemporariesWithoutRuntimeAllocations) {
  device::ScopedSimulatedDevice sim;
  const std::vector<size_t> sizes = {100, 5000, 70000, size_t{3} << 20};
  Counters warm;
  for (int step = 0; step < 5; ++step) {
    const Counters before = ReadCounters();
    {
      std::vector<Buffer<float>> temps;  // alive together, as a step's temporaries are
      for (size_t n : sizes) {
        temps.push_back(Buffer<float>::Uninitialized(n));
        temps.back().OverwriteDevice()[n - 1] = 1.0F;
      }
    }
    const Counters d = ReadCounters() - before;
    EXPECT_EQ(d.allocations, static_cast<int64_t>(sizes.size()));
    EXPECT_EQ(d.frees, static_cast<int64_t>(sizes.size()));
    EXPECT_EQ(d.h2d_copies + d.d2h_copies, 0);
    if (step == 0) {
      EXPECT_EQ(d.runtime_allocations, static_cast<int64_t>(sizes.size()));
      warm = ReadCounters();
    } else {
      EXPECT_EQ(d.runtime_allocations, 0) << "step " << step;
    }
  }
  EXPECT_EQ(warm.in_use_bytes, ReadCounters().in_use_bytes);
  EXPECT_GT(ReadCounters().cached_bytes, static_cast<int64_t>(3) << 20);
  // A slightly different size shares the rounded block (all requests up to 64 KiB share one class); one more than
  // twice as large as any cached block does not.
  Counters before = ReadCounters();
  {
    Buffer<float> t = Buffer<float>::Uninitialized(5001);
    t.OverwriteDevice();
  }
  EXPECT_EQ((ReadCounters() - before).runtime_allocations, 0);
  before = ReadCounters();
  {
    Buffer<float> t = Buffer<float>::Uninitialized(size_t{8} << 20);
    t.OverwriteDevice();
  }
  EXPECT_EQ((ReadCounters() - before).runtime_allocations, 1);
  device::ReleaseCachedMemory();
  EXPECT_EQ(ReadCounters().cached_bytes, 0);
}

// A workspace kept from step to step (the trainer's per-layer buffers) costs nothing after its first step: no
// allocation, no copy, whatever the host did with its own memory.
TEST(SimulatedDevice, AWorkspaceKeptBetweenStepsCostsNothingInSteadyState) {
  device::ScopedSimulatedDevice sim;
  Buffer<float> work;
  Buffer<float> weights(64, 0.5F);
  for (int step = 0; step < 4; ++step) {
    const Counters before = ReadCounters();
    work.ResizeUninitialized(10000);
    const float* w = weights.Device();
    float* out = work.OverwriteDevice();
    for (int i = 0; i < 10000; ++i) out[i] = w[i % 64];
    const Counters d = ReadCounters() - before;
    if (step == 0) {
      EXPECT_EQ(d.allocations, 2);  // the workspace and the weights' mirror
      EXPECT_EQ(d.h2d_copies, 1);   // the weights, once
    } else {
      EXPECT_EQ(d.allocations, 0) << "step " << step;
      EXPECT_EQ(d.h2d_copies + d.d2h_copies, 0) << "step " << step;
    }
  }
  EXPECT_EQ(work.Host()[9999], 0.5F);
}

// A device with a capacity: an allocation beyond it fails like cudaMalloc, and the pool first gives its cached
// blocks back and retries, so memory a freed buffer left cached is found again.
TEST(SimulatedDevice, ACapacityIsEnforcedAfterThePoolReleasesItsCache) {
  device::ScopedSimulatedDevice sim(1 << 20);
  void* a = device::Malloc(400 << 10);  // a 512 KiB block (a miss takes a quarter more)
  EXPECT_THROW(device::Malloc(700 << 10), Error) << "1.2 MiB on a 1 MiB device, even without the quarter";
  device::Free(a);  // cached by the pool, still held from the device
  const Counters before = ReadCounters();
  void* b = device::Malloc(800 << 10);  // does not fit beside the cached block: the pool releases it and retries
  EXPECT_EQ((ReadCounters() - before).runtime_allocations, 1);
  EXPECT_EQ(ReadCounters().cached_bytes, 0);
  device::Free(b);
  device::ReleaseCachedMemory();
  EXPECT_EQ(ReadCounters().in_use_bytes, 0);
}

// Pinned host memory: counted, grown by half and kept (so a staging array sized once pins nothing per step), freed
// with its holder; without a device runtime it is refused, since only a device can page-lock memory for its DMA.
TEST(SimulatedDevice, PinnedArraysGrowByHalfAndPinNothingOnceLargeEnough) {
  if (!device::BuiltWithCuda()) {
    EXPECT_THROW(device::MallocPinned(16), Error) << "no runtime, nothing to pin for";
  }
  device::ScopedSimulatedDevice sim;
  const device::PinnedCounters before = device::ReadPinnedCounters();
  {
    device::PinnedArray<float> a;
    float* p = a.Reserve(100);
    for (int i = 0; i < 100; ++i) p[i] = static_cast<float>(i);
    EXPECT_EQ(a.capacity(), 100U);
    EXPECT_EQ(a.Reserve(80), p) << "room enough: the same memory";
    a.Reserve(120);  // grows to max(120, 150)
    EXPECT_EQ(a.capacity(), 150U);
    a.Reserve(150);
    const device::PinnedCounters d = device::ReadPinnedCounters();
    EXPECT_EQ(d.allocations - before.allocations, 2);
    EXPECT_EQ(d.allocated_bytes - before.allocated_bytes, (100 + 150) * 4);
    EXPECT_EQ(d.frees - before.frees, 1);
    EXPECT_EQ(d.in_use_bytes - before.in_use_bytes, 150 * 4);
    // Pinned memory is a valid source of a device copy.
    Buffer<float> on_device = Buffer<float>::Uninitialized(150);
    for (int i = 0; i < 150; ++i) a.data()[i] = 2.0F * static_cast<float>(i);
    device::CopyToDevice(on_device.OverwriteDevice(), a.data(), 150 * sizeof(float));
    EXPECT_EQ(on_device.Host()[149], 298.0F);
  }
  const device::PinnedCounters after = device::ReadPinnedCounters();
  EXPECT_EQ(after.frees - before.frees, 2);
  EXPECT_EQ(after.in_use_bytes, before.in_use_bytes);
  device::FreePinned(nullptr);  // a no-op, as free(nullptr)
  EXPECT_EQ(device::ReadPinnedCounters().frees, after.frees);
}

// Several simulated devices: each thread has its own current one (cudaSetDevice is per thread), so thread ranks
// can each take theirs; a device that does not exist is refused.
TEST(SimulatedDevice, EachThreadHasItsCurrentDevice) {
  device::ScopedSimulatedDevice sim(-1, 2);
  EXPECT_EQ(device::CudaDeviceCount(), 2);
  EXPECT_EQ(device::CurrentDevice(), 0);
  device::SetDevice(1);
  EXPECT_EQ(device::CurrentDevice(), 1);
  int other = -1;
  std::thread t([&] { other = device::CurrentDevice(); });
  t.join();
  EXPECT_EQ(other, 0) << "a new thread starts on device 0";
  EXPECT_THROW(device::SetDevice(2), Error);
  device::SetDevice(0);
}

// The simulated device's memory: a capacity's unused part is free, and pool blocks count as used.
TEST(SimulatedDevice, MemoryInfoReportsTheCapacityLeft) {
  device::ScopedSimulatedDevice sim(4 << 20);
  EXPECT_EQ(device::ReadMemoryInfo().total_bytes, 4 << 20);
  EXPECT_EQ(device::ReadMemoryInfo().free_bytes, 4 << 20);
  void* p = device::Malloc(1 << 20);  // a miss takes a quarter more: 1.25 MiB
  EXPECT_EQ(device::ReadMemoryInfo().free_bytes, (4 << 20) - (5 << 18));
  device::Free(p);
  EXPECT_EQ(device::ReadMemoryInfo().free_bytes, 4 << 20) << "cached by the pool, free to the next request";
  device::ReleaseCachedMemory();
  EXPECT_EQ(device::ReadMemoryInfo().free_bytes, 4 << 20);
}

// The pool keeps each device's blocks apart: a block freed on device 0 never serves device 1 (whose kernels could
// not read it), only later requests on device 0.
TEST(SimulatedDevice, ThePoolServesEachDeviceFromItsOwnBlocks) {
  device::ScopedSimulatedDevice sim(-1, 2);
  device::Free(device::Malloc(1 << 20));  // cached for device 0
  Counters before = ReadCounters();
  device::SetDevice(1);
  void* on1 = device::Malloc(1 << 20);
  EXPECT_EQ((ReadCounters() - before).runtime_allocations, 1) << "device 0's block is not device 1's";
  device::Free(on1);
  device::SetDevice(0);
  before = ReadCounters();
  void* on0 = device::Malloc(1 << 20);
  EXPECT_EQ((ReadCounters() - before).runtime_allocations, 0) << "device 0's own block";
  device::SetDevice(1);
  before = ReadCounters();
  device::Free(device::Malloc(1 << 20));
  EXPECT_EQ((ReadCounters() - before).runtime_allocations, 0) << "device 1's own block";
  device::SetDevice(0);
  device::Free(on0);
}

// A mapped buffer is one array both sides read and write in place: Device() is its device address, nothing is ever
// copied or allocated from the pool, writes on either side are seen on the other, and a resize within its size
// keeps it mapped (beyond, it becomes an ordinary buffer and the pinned memory is freed).
TEST(SimulatedDevice, MappedBuffersAreReadInPlaceAndNeverCopied) {
  device::ScopedSimulatedDevice sim;
  const std::vector<float> values = {1, 2, 3, 4, 5};
  const device::PinnedCounters pinned0 = device::ReadPinnedCounters();
  const Counters before = ReadCounters();
  {
    Buffer<float> b = Buffer<float>::MappedCopyOf(values);
    EXPECT_TRUE(b.Mapped());
    EXPECT_TRUE(b.DeviceCurrent());
    EXPECT_TRUE(b.HostCurrent());
    EXPECT_EQ(b.Device(), b.Host().data()) << "the simulated device's address of host memory is the host address";
    Counters sync0 = ReadCounters();
    b.MutableDevice()[2] = 30.0F;
    EXPECT_EQ(b.Host()[2], 30.0F);
    EXPECT_EQ((ReadCounters() - sync0).synchronizations, 1) << "a host read after a device write waits for it";
    sync0 = ReadCounters();
    EXPECT_EQ(b.Host()[2], 30.0F);
    EXPECT_EQ((ReadCounters() - sync0).synchronizations, 0) << "once";
    b.MutableHost()[3] = 40.0F;
    EXPECT_EQ(b.Device()[3], 40.0F);
    const uint64_t v = b.version();
    b.OverwriteDevice()[0] = 10.0F;
    EXPECT_NE(b.version(), v);
    EXPECT_EQ(b.Host()[0], 10.0F);
    b.ResizeUninitialized(3);
    EXPECT_TRUE(b.Mapped());
    EXPECT_EQ(b.size(), 3U);
    Buffer<float> moved = std::move(b);
    EXPECT_TRUE(moved.Mapped());
    EXPECT_FALSE(b.Mapped());  // NOLINT(bugprone-use-after-move): a moved-from buffer is empty and ordinary
    const Counters d = ReadCounters() - before;
    EXPECT_EQ(d.allocations + d.h2d_copies + d.d2h_copies, 0);
    EXPECT_EQ(device::ReadPinnedCounters().allocations - pinned0.allocations, 1);
    moved.ResizeUninitialized(8);  // larger than the mapping: an ordinary buffer
    EXPECT_FALSE(moved.Mapped());
    EXPECT_EQ(device::ReadPinnedCounters().in_use_bytes, pinned0.in_use_bytes) << "the mapping was freed";
  }
}

}  // namespace
}  // namespace tessel
