// parallel_for covers every index exactly once, propagates worker exceptions, and ThreadLimit validates.
#include "core/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "core/error.h"

namespace tessel {
namespace {

TEST(ParallelFor, EveryIndexOnce) {
  for (int64_t n : {0, 1, 7, 1000, 100003}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    parallel_for<int64_t>(0, n, 64, [&](int64_t i) { hits[i]++; });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ParallelFor, ChunksAreDisjointAndCover) {
  const int64_t n = 50000;
  std::atomic<int64_t> total{0};
  parallel_for_chunks<int64_t>(0, n, 100, [&](int64_t b, int64_t e) {
    ASSERT_LT(b, e);
    total += e - b;
  });
  EXPECT_EQ(total.load(), n);
}

TEST(ParallelFor, ExceptionReachesCaller) {
  EXPECT_THROW(parallel_for<int64_t>(0, 100000, 10,
                                     [](int64_t i) {
                                       if (i == 77777) throw Error("boom");
                                     }),
               Error);
}

TEST(ThreadLimit, RejectsNegative) {
  EXPECT_THROW(ThreadLimit(-1), Error);
  ThreadLimit one(1);
  EXPECT_GE(ThreadLimit::HardwareThreads(), 1);
}

// Current: the innermost limit alive, never more than the process's CPUs. CoresPerRank: a rank alone has its CPUs;
// more ranks than the machine's CPUs share them (below one core each).
TEST(ThreadLimit, CurrentAndCoresPerRank) {
  const int hw = ThreadLimit::HardwareThreads();
  EXPECT_EQ(ThreadLimit::Current(), hw);
  {
    ThreadLimit one(1);
    EXPECT_EQ(ThreadLimit::Current(), 1);
  }
  EXPECT_EQ(ThreadLimit::Current(), hw);
  EXPECT_LE(ThreadLimit::CoresPerRank(1), hw);
  EXPECT_GT(ThreadLimit::CoresPerRank(1), 0.0);
  EXPECT_LT(ThreadLimit::CoresPerRank(100000), 1.0);
  EXPECT_GE(ThreadLimit::CoresPerRank(2), ThreadLimit::CoresPerRank(4));
}

}  // namespace
}  // namespace tessel
