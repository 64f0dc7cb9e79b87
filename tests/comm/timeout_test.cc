// The thread backend's timeout (ThreadOptions::timeout_seconds): a rank that never arrives at a collective, or never
// sends an awaited message, fails every rank within the timeout with a message naming it; slow ranks within the
// timeout and a timeout of 0 (no limit) change nothing; invalid timeouts are refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm/communicator.h"
#include "comm/thread_comm.h"
#include "core/error.h"
#include "tests/comm/comm_test_util.h"

namespace tessel::comm {
namespace {

using ::testing::HasSubstr;
using testing::WithWatchdog;

using Clock = std::chrono::steady_clock;
constexpr double kTimeout = 0.5;
constexpr auto kStall = std::chrono::milliseconds(2000);  // how long the stalled rank stays away (> kTimeout)

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Outcome {
  std::string thrown;             // what Run threw
  std::vector<std::string> seen;  // the failed Status each waiting rank got
  std::vector<double> waited;     // seconds each waiting rank spent in the failing call
};

class Timeout : public ::testing::TestWithParam<int> {};

// Rank 1 stays away (a stalled rank) while the others wait in an allreduce: they fail after the timeout, well before
// it comes back, and the message names rank 1 as the one that did not arrive.
TEST_P(Timeout, RankThatNeverArrivesFailsTheCollective) {
  const int p = GetParam();
  Outcome o;
  std::mutex mu;
  WithWatchdog(std::chrono::seconds(60), [&] {
    try {
      ThreadGroup::Run(p,
                       [&](Communicator& c) {
                         std::vector<double> v(16, 1.0);
                         c.Allreduce<double>(v, ReduceOp::kSum, "warm-up").ThrowIfError();  // every rank is up
                         if (c.Rank() == 1) {
                           std::this_thread::sleep_for(kStall);
                           EXPECT_FALSE(c.Barrier().ok());  // back too late: the group has failed
                           return;
                         }
                         const auto t0 = Clock::now();
                         const Status s = c.Allreduce<double>(v, ReduceOp::kSum, "gradients");
                         std::lock_guard lock(mu);
                         o.waited.push_back(Since(t0));
                         o.seen.push_back(s.message());
                         EXPECT_FALSE(s.ok());
                       },
                       {.timeout_seconds = kTimeout});
    } catch (const Error& e) {
      o.thrown = e.what();
    }
  });
  ASSERT_EQ(o.seen.size(), static_cast<size_t>(p - 1));
  for (size_t i = 0; i < o.seen.size(); ++i) {
    EXPECT_GE(o.waited[i], kTimeout * 0.9) << "failed before the timeout";
    EXPECT_LT(o.waited[i], kTimeout + 1.0) << "not failed promptly after the timeout";
    EXPECT_EQ(o.seen[i], o.thrown);  // every rank sees the one failure
  }
  EXPECT_THAT(o.thrown, HasSubstr("s in Allreduce (purpose \"gradients\") but rank(s) 1 did not arrive"));
  EXPECT_THAT(o.thrown, HasSubstr("rank 1 is running outside any communicator call"));
  EXPECT_THAT(o.thrown, HasSubstr("timeout_seconds"));  // the fix
}

// Rank 0 waits for a message rank 1 sends only after the timeout: rank 0 fails, naming rank 1 and the tag.
TEST_P(Timeout, MessageThatNeverComesFailsTheReceive) {
  const int p = GetParam();
  std::string thrown;
  std::string seen;
  double waited = 0;
  WithWatchdog(std::chrono::seconds(60), [&] {
    try {
      ThreadGroup::Run(p,
                       [&](Communicator& c) {
                         std::vector<float> block(8, 1.0F);
                         if (c.Rank() == 0) {
                           const auto t0 = Clock::now();
                           const Status s = c.Recv<float>(block, 1, 7);
                           waited = Since(t0);
                           seen = s.message();
                           EXPECT_FALSE(s.ok());
                         } else if (c.Rank() == 1) {
                           std::this_thread::sleep_for(kStall);
                           EXPECT_FALSE(c.Send<float>(block, 0, 7).ok());  // too late
                         }
                       },
                       {.timeout_seconds = kTimeout});
    } catch (const Error& e) {
      thrown = e.what();
    }
  });
  EXPECT_GE(waited, kTimeout * 0.9);
  EXPECT_LT(waited, kTimeout + 1.0);
  EXPECT_EQ(seen, thrown);
  EXPECT_THAT(thrown, HasSubstr("rank 0 waited 0.5 s for a message from rank 1 with tag 7, but rank 1 is running"));
}

// Ranks that are slow but within the timeout, and a timeout of 0 (no limit) with a rank slower than the other
// test's timeout: the collectives and messages succeed.
TEST_P(Timeout, SlowRanksWithinTheTimeoutSucceed) {
  const int p = GetParam();
  for (const double timeout : {2.0, 0.0}) {
    WithWatchdog(std::chrono::seconds(60), [&] {
      ThreadGroup::Run(p,
                       [&](Communicator& c) {
                         std::vector<double> v(4, 1.0);
                         if (c.Rank() == p - 1) std::this_thread::sleep_for(std::chrono::milliseconds(700));
                         c.Allreduce<double>(v).ThrowIfError();
                         EXPECT_EQ(v[0], p);
                         std::vector<double> in(4);
                         if (c.Rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(700));
                         c.SendRecv<double>(v, (c.Rank() + 1) % p, in, (c.Rank() + p - 1) % p, 3).ThrowIfError();
                         EXPECT_EQ(in[0], p);
                       },
                       {.timeout_seconds = timeout});
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, Timeout, ::testing::Values(2, 3, 4));

TEST(TimeoutContract, InvalidTimeoutsAreRefused) {
  for (const double bad : {-1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    try {
      ThreadGroup::Run(2, [](Communicator&) {}, {.timeout_seconds = bad});
      ADD_FAILURE() << "timeout " << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("must be a finite number of seconds >= 0 (0 = no limit)"));
    }
  }
  EXPECT_EQ(ThreadOptions{}.timeout_seconds, Communicator::kDefaultTimeoutSeconds);
  EXPECT_EQ(Communicator::kDefaultTimeoutSeconds, 600);
}

// The collective hooks of TESSEL_FAULT (core/fault_inject.h) on thread ranks: run by the ctest comm_fault_hook with
// TESSEL_FAULT=fail@barrier,rank=1,after=2 (skipped otherwise). Only rank 1's barriers count, and the third one
// throws "injected fault at barrier", which fails the group.
TEST(FaultHook, FailsTheThirdBarrierOfRank1) {
  const char* spec = std::getenv("TESSEL_FAULT");
  if (spec == nullptr || std::string(spec) != "fail@barrier,rank=1,after=2") {
    GTEST_SKIP() << "run with TESSEL_FAULT=fail@barrier,rank=1,after=2 (ctest comm_fault_hook)";
  }
  std::vector<int> done(3, 0);
  std::string thrown;
  WithWatchdog(std::chrono::seconds(60), [&] {
    try {
      ThreadGroup::Run(3, [&](Communicator& c) {
        for (int i = 0; i < 5; ++i) {
          c.Barrier().ThrowIfError();
          ++done[static_cast<size_t>(c.Rank())];
        }
      });
    } catch (const Error& e) {
      thrown = e.what();
    }
  });
  EXPECT_EQ(thrown, "rank 1 failed: injected fault at barrier on rank 1 (TESSEL_FAULT)");
  EXPECT_EQ(done[1], 2);  // barriers 1 and 2 passed, the third threw before entering
  EXPECT_EQ(done[0], 2);  // the others waited in the third and failed with the group
  EXPECT_EQ(done[2], 2);
}

}  // namespace
}  // namespace tessel::comm
