// Failure handling of the thread backend (a throwing or departing rank fails every peer promptly, no hang, checked
// by a watchdog), argument-mismatch detection, local contract checks, the local backend and the reduction kernel.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/thread_comm.h"
#include "core/error.h"
#include "tests/comm/comm_test_util.h"

namespace tessel::comm {
namespace {

using ::testing::HasSubstr;
using testing::WithWatchdog;

constexpr auto kLimit = std::chrono::seconds(60);

// Runs ThreadGroup::Run under the watchdog and returns the message it threw ("" if none).
std::string RunExpectingFailure(int ranks, const std::function<void(Communicator&)>& fn) {
  std::string message;
  WithWatchdog(kLimit, [&] {
    try {
      ThreadGroup::Run(ranks, fn);
    } catch (const Error& e) {
      message = e.what();
    }
  });
  return message;
}

class Failure : public ::testing::TestWithParam<int> {};

// One rank throws while the others wait in a collective: each waiter gets "rank f failed: ..." and Run rethrows it.
TEST_P(Failure, ThrowingRankWakesEveryPeerBlockedInACollective) {
  const int p = GetParam();
  for (int failing = 0; failing < p; ++failing) {
    std::mutex mu;
    std::vector<std::string> peer_messages;
    const std::string message = RunExpectingFailure(p, [&](Communicator& c) {
      std::vector<double> v(1000, 1.0);
      for (int step = 0; step < 3; ++step) c.Allreduce<double>(v).ThrowIfError();
      if (c.Rank() == failing) throw std::runtime_error("out of memory in step 3");
      Status s = c.Allreduce<double>(v);  // blocks until the failure wakes it
      {
        std::lock_guard lock(mu);
        peer_messages.push_back(s.message());
      }
      ASSERT_FALSE(s.ok());
      s = c.Barrier();  // later collectives fail at once too
      ASSERT_FALSE(s.ok());
      s.ThrowIfError();
    });
    EXPECT_EQ(message, "rank " + std::to_string(failing) + " failed: out of memory in step 3");
    ASSERT_EQ(peer_messages.size(), static_cast<size_t>(p - 1));
    for (const std::string& m : peer_messages) EXPECT_EQ(m, message);
  }
}

TEST_P(Failure, RankThatFailsBeforeAnyCollective) {
  const int p = GetParam();
  const std::string message = RunExpectingFailure(p, [&](Communicator& c) {
    if (c.Rank() == p - 1) throw Error("cannot open part-" + std::to_string(c.Rank()));
    std::vector<int64_t> counts(static_cast<size_t>(p), 1);
    std::vector<int64_t> send(static_cast<size_t>(p)), recv(static_cast<size_t>(p));
    c.Alltoallv<int64_t>(send, counts, recv, counts).ThrowIfError();
  });
  EXPECT_EQ(message, "rank " + std::to_string(p - 1) + " failed: cannot open part-" + std::to_string(p - 1));
}

// A rank that returns while its peers wait (different collective sequences) must not leave them hanging.
TEST_P(Failure, RankThatReturnsEarlyFailsThePeers) {
  const int p = GetParam();
  if (p == 1) GTEST_SKIP() << "needs a peer";
  const std::string message = RunExpectingFailure(p, [&](Communicator& c) {
    c.Barrier().ThrowIfError();
    if (c.Rank() == 0) return;
    c.Barrier().ThrowIfError();
  });
  EXPECT_THAT(message, HasSubstr("rank 0 returned while other ranks wait in a collective"));
}

TEST_P(Failure, MismatchedArgumentsFailEveryRankInsteadOfHanging) {
  const int p = GetParam();
  if (p == 1) GTEST_SKIP() << "needs a peer";
  std::atomic<int> failed{0};
  auto expect_failed = [&](const Status& s, const char* what) {
    EXPECT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr(what));
    failed++;
  };
  WithWatchdog(kLimit, [&] {
    ThreadGroup::Run(p, [&](Communicator& c) {
      std::vector<float> v(static_cast<size_t>(10 + (c.Rank() == 1 ? 1 : 0)));
      expect_failed(c.Allreduce<float>(v), "Allreduce arguments differ");
      expect_failed(c.Broadcast<float>(std::span(v).first(10), c.Rank() == 1 ? 1 : 0), "Broadcast arguments differ");
      if (c.Rank() == 1) {
        expect_failed(c.Barrier(), "ranks called different collectives");
      } else {
        expect_failed(c.Allreduce<float>(std::span(v).first(10)), "ranks called different collectives");
      }
      std::vector<int64_t> counts(static_cast<size_t>(p), 1);
      std::vector<int64_t> recv_counts = counts;
      if (c.Rank() == 0) recv_counts[1] = 2;  // rank 0 expects 2 elements from rank 1, which sends 1
      std::vector<int32_t> send(static_cast<size_t>(p)), recv(static_cast<size_t>(p + (c.Rank() == 0 ? 1 : 0)));
      expect_failed(c.Alltoallv<int32_t>(send, counts, recv, recv_counts), "rank 0 expects 8 bytes from rank 1");
      // After a mismatch the group is still usable.
      std::vector<int32_t> ok(3, 1);
      c.Allreduce<int32_t>(ok).ThrowIfError();
      EXPECT_EQ(ok[0], p);
    });
  });
  EXPECT_EQ(failed.load(), 4 * p);
}

TEST(ThreadGroup, RejectsBadRankCounts) {
  EXPECT_THROW(ThreadGroup::Run(0, [](Communicator&) {}), Error);
  EXPECT_THROW(ThreadGroup::Run(ThreadGroup::kMaxRanks + 1, [](Communicator&) {}), Error);
}

// Bugs at the call site throw on that rank (and the group turns that into a failure of all ranks).
TEST(Communicator, LocalContractViolationsThrow) {
  auto c = MakeLocalCommunicator();
  std::vector<int32_t> v(4);
  std::vector<int32_t> small(2);
  EXPECT_THROW((void)c->Broadcast<int32_t>(v, 1), Error);
  EXPECT_THROW((void)c->Allgather<int32_t>(v, small), Error);
  const std::vector<int64_t> two_counts{1, 1};
  EXPECT_THROW((void)c->Allgatherv<int32_t>(v, v, two_counts), Error);
  const std::vector<int64_t> negative{-1};
  EXPECT_THROW((void)c->Alltoallv<int32_t>(v, negative, v, negative), Error);
  EXPECT_THROW((void)c->AllreduceRaw(v.data(), 4, DataType::kInt32, ReduceOp::kMaxLoc), Error);
  std::vector<ValueIndex<double>> loc(1);
  EXPECT_THROW((void)c->Allreduce<ValueIndex<double>>(loc, ReduceOp::kSum), Error);
  try {
    (void)c->Allgather<int32_t>(v, small);
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("should have 4 elements, has 2"));
  }
}

TEST(Communicator, LocalBackendIsOneRankIdentity) {
  auto c = MakeLocalCommunicator();
  EXPECT_EQ(c->Rank(), 0);
  EXPECT_EQ(c->Size(), 1);
  EXPECT_EQ(c->Backend(), "local");
  std::vector<double> v{1.5, -2, 3};
  c->Allreduce<double>(v).ThrowIfError();
  EXPECT_EQ(v, (std::vector<double>{1.5, -2, 3}));
  c->Broadcast<double>(v, 0).ThrowIfError();
  std::vector<double> g(3);
  c->Allgather<double>(v, g).ThrowIfError();
  EXPECT_EQ(g, v);
  std::vector<double> a(3);
  c->Alltoall<double>(v, a).ThrowIfError();
  EXPECT_EQ(a, v);
  c->Barrier().ThrowIfError();
  EXPECT_EQ(c->Bytes().Total(), 0u);  // nothing leaves a single rank
  EXPECT_EQ(c->Bytes().TotalCalls(), 4u);
}

TEST(Communicator, WorldIsLocalOutsideALauncher) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr) {
    GTEST_SKIP() << "running under an MPI launcher";
  }
  EXPECT_EQ(MakeWorldCommunicator()->Backend(), "local");
}

TEST(Status, CarriesMessageAndThrows) {
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_NO_THROW(Status::Ok().ThrowIfError());
  const Status s = Status::Failed("rank 2 failed: boom");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "rank 2 failed: boom");
  EXPECT_THROW(s.ThrowIfError(), Error);
}

// The loc reduction is commutative and associative, so any reduction tree gives the same answer.
TEST(ReduceInto, LocOpsAreOrderIndependentWithSmallestIndexOnTies) {
  std::vector<ValueIndex<double>> xs;
  for (int v = -1; v <= 1; ++v) {
    for (int64_t i : {0, 3, 7}) xs.push_back({static_cast<double>(v), i});
  }
  for (ReduceOp op : {ReduceOp::kMaxLoc, ReduceOp::kMinLoc}) {
    for (const auto& a : xs) {
      for (const auto& b : xs) {
        ValueIndex<double> ab = a;
        ValueIndex<double> ba = b;
        ReduceInto(&ab, &b, 1, DataType::kFloat64Index, op);
        ReduceInto(&ba, &a, 1, DataType::kFloat64Index, op);
        EXPECT_EQ(ab, ba);
        const bool a_wins =
            a.value == b.value ? a.index <= b.index : (op == ReduceOp::kMaxLoc ? a.value > b.value : a.value < b.value);
        EXPECT_EQ(ab, a_wins ? a : b);
        for (const auto& c : xs) {
          ValueIndex<double> left = a;  // (a . b) . c
          ReduceInto(&left, &b, 1, DataType::kFloat64Index, op);
          ReduceInto(&left, &c, 1, DataType::kFloat64Index, op);
          ValueIndex<double> right = b;  // a . (b . c)
          ReduceInto(&right, &c, 1, DataType::kFloat64Index, op);
          ValueIndex<double> left2 = a;
          ReduceInto(&left2, &right, 1, DataType::kFloat64Index, op);
          EXPECT_EQ(left, left2);
        }
      }
    }
  }
  int32_t x[2] = {1, 2};
  EXPECT_THROW(ReduceInto(x, x, 2, DataType::kInt32, ReduceOp::kMinLoc), Error);
}

INSTANTIATE_TEST_SUITE_P(Ranks, Failure, ::testing::Values(1, 2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& param) { return std::to_string(param.param); });

}  // namespace
}  // namespace tessel::comm
