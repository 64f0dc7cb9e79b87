// Point-to-point messages on the thread and local backends (every pair and ring shift at 1-8 ranks with random
// sizes including 0, per-tag FIFO order, byte accounting, failures and deadlocks that end instead of hanging, local
// contract checks) and RingAllreduce against a serial float64 reference, bit-identical on every rank.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm/communicator.h"
#include "comm/ring_allreduce.h"
#include "comm/thread_comm.h"
#include "core/error.h"
#include "tests/comm/comm_test_util.h"

namespace tessel::comm {
namespace {

using testing::Doubles;
using ::testing::HasSubstr;
using testing::MessagePayload;
using testing::MessageSize;
using testing::WithWatchdog;

constexpr auto kLimit = std::chrono::seconds(120);
constexpr int kTrials = 6;

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

class P2P : public ::testing::TestWithParam<int> {
 protected:
  void RunRanks(const std::function<void(Communicator&)>& fn) {
    WithWatchdog(kLimit, [&] { ThreadGroup::Run(GetParam(), fn); });
  }
};

// Every rank sends to every rank (itself included) first, then receives from every rank: the thread backend
// buffers sends, so the order is free.
TEST_P(P2P, EveryPairWithRandomSizes) {
  RunRanks([](Communicator& c) {
    const int p = c.Size();
    const int me = c.Rank();
    for (uint64_t t = 0; t < kTrials; ++t) {
      const int tag = static_cast<int>(t % 3);
      for (int d = 0; d < p; ++d) c.Send<int64_t>(MessagePayload(t, me, d), d, tag).ThrowIfError();
      for (int s = p - 1; s >= 0; --s) {
        std::vector<int64_t> got(static_cast<size_t>(MessageSize(t, s, me)));
        c.Recv<int64_t>(got, s, tag).ThrowIfError();
        ASSERT_EQ(got, MessagePayload(t, s, me)) << "trial " << t << " from rank " << s;
      }
    }
  });
}

// SendRecv with every shift k: rank r sends to r + k and receives from r - k (k = 0 is a message to itself).
TEST_P(P2P, SendRecvEveryShiftAroundTheRing) {
  RunRanks([](Communicator& c) {
    const int p = c.Size();
    const int me = c.Rank();
    for (uint64_t t = 0; t < kTrials; ++t) {
      for (int k = 0; k < p; ++k) {
        const int dest = (me + k) % p;
        const int source = (me - k + p) % p;
        std::vector<int64_t> got(static_cast<size_t>(MessageSize(t, source, me)));
        c.SendRecv<int64_t>(MessagePayload(t, me, dest), dest, got, source, 7, "ring").ThrowIfError();
        ASSERT_EQ(got, MessagePayload(t, source, me)) << "trial " << t << " shift " << k;
      }
    }
  });
}

// Same (source, dest, tag): send order. Different tags: independent queues, received in any order.
TEST_P(P2P, SameTagKeepsSendOrderAndTagsAreIndependent) {
  RunRanks([](Communicator& c) {
    const int p = c.Size();
    const int next = (c.Rank() + 1) % p;
    const int prev = (c.Rank() - 1 + p) % p;
    constexpr int kCount = 40;
    for (int i = 0; i < kCount; ++i) {  // interleaved: tag 1, tag 2, tag 3 (message i has i elements)
      const std::vector<int32_t> one{c.Rank() * 1000 + i};
      c.Send<int32_t>(one, next, 1).ThrowIfError();
      c.Send<int32_t>(std::vector<int32_t>{-i, c.Rank()}, next, 2).ThrowIfError();
      c.Send<int32_t>(std::vector<int32_t>(static_cast<size_t>(i), i), next, 3).ThrowIfError();
    }
    for (int i = 0; i < kCount; ++i) {  // tag 3 first, then 2, then 1
      std::vector<int32_t> got(static_cast<size_t>(i));
      c.Recv<int32_t>(got, prev, 3).ThrowIfError();
      ASSERT_EQ(got, std::vector<int32_t>(static_cast<size_t>(i), i));
    }
    for (int i = 0; i < kCount; ++i) {
      std::vector<int32_t> got(2);
      c.Recv<int32_t>(got, prev, 2).ThrowIfError();
      ASSERT_EQ(got, (std::vector<int32_t>{-i, prev}));
    }
    for (int i = 0; i < kCount; ++i) {
      std::vector<int32_t> got(1);
      c.Recv<int32_t>(got, prev, 1).ThrowIfError();
      ASSERT_EQ(got[0], prev * 1000 + i) << "message " << i << " overtook another with the same tag";
    }
  });
}

// Byte accounting (docs/comm.md): bytes sent to other ranks under the purpose, 0 to itself, nothing for receives.
TEST_P(P2P, ByteCountsAreExactPerPurpose) {
  RunRanks([](Communicator& c) {
    const int p = c.Size();
    const int next = (c.Rank() + 1) % p;
    const int prev = (c.Rank() - 1 + p) % p;
    const uint64_t many = p > 1 ? 1 : 0;  // with one rank, next is this rank
    std::vector<float> f(10);
    std::vector<double> d(7);
    std::vector<double> e(7);
    c.Send<float>(f, next, 0, "gradients").ThrowIfError();
    c.Send<float>(std::span(f).first(5), c.Rank(), 0, "gradients").ThrowIfError();  // to itself: 0 bytes
    c.SendRecv<double>(d, next, e, prev, 1, "ring").ThrowIfError();
    c.SendRecv<double>(std::span(d).first(3), c.Rank(), std::span(d).last(3), c.Rank(), 2, "ring").ThrowIfError();
    std::vector<float> got(10);
    c.Recv<float>(got, prev, 0).ThrowIfError();
    c.Recv<float>(std::span(got).first(5), c.Rank(), 0).ThrowIfError();
    const ByteCounter& b = c.Bytes();
    EXPECT_EQ(b.Bytes("gradients"), many * 40);
    EXPECT_EQ(b.ByPurpose().at("gradients").calls, 2u);
    EXPECT_EQ(b.Bytes("ring"), many * 56);
    EXPECT_EQ(b.ByPurpose().at("ring").calls, 2u);
    EXPECT_EQ(b.Total(), many * 96);
    EXPECT_EQ(b.TotalCalls(), 4u);  // receives are not counted
  });
}

class P2PFailure : public ::testing::TestWithParam<int> {};

// A rank throws before sending: every rank waiting for its message gets "rank f failed: ...", Run throws it.
TEST_P(P2PFailure, PeerThatThrowsBeforeSendingFailsTheReceivers) {
  const int p = GetParam();
  const int failing = p - 1;
  std::mutex mu;
  std::vector<std::string> peer_messages;
  const std::string message = RunExpectingFailure(p, [&](Communicator& c) {
    if (c.Rank() == failing) throw std::runtime_error("cannot read part-" + std::to_string(failing));
    std::vector<float> v(100);
    Status s = c.Recv<float>(v, failing, 0);
    {
      std::lock_guard lock(mu);
      peer_messages.push_back(s.message());
    }
    ASSERT_FALSE(s.ok());
    EXPECT_FALSE(c.Send<float>(v, failing, 0).ok());  // later calls fail at once too
    s.ThrowIfError();
  });
  const std::string want = "rank " + std::to_string(failing) + " failed: cannot read part-" + std::to_string(failing);
  EXPECT_EQ(message, want);
  ASSERT_EQ(peer_messages.size(), static_cast<size_t>(p - 1));
  for (const std::string& m : peer_messages) EXPECT_EQ(m, want);
}

// Messages sent before the source returned are still delivered; the next receive fails instead of waiting.
TEST_P(P2PFailure, SourceThatReturnedWithoutSendingFailsTheReceive) {
  const int p = GetParam();
  if (p == 1) GTEST_SKIP() << "needs a peer";
  const std::string message = RunExpectingFailure(p, [&](Communicator& c) {
    if (c.Rank() == 0) {
      c.Send<int32_t>(std::vector<int32_t>{42}, 1, 5).ThrowIfError();
      return;
    }
    if (c.Rank() != 1) return;
    std::vector<int32_t> got(1);
    c.Recv<int32_t>(got, 0, 5).ThrowIfError();
    EXPECT_EQ(got[0], 42);
    Status s = c.Recv<int32_t>(got, 0, 5);
    EXPECT_FALSE(s.ok());
    s.ThrowIfError();
  });
  EXPECT_THAT(message, HasSubstr("rank 1 failed: rank 0 returned with no message pending for rank 1 with tag 5"));
}

// The receiver's size is the contract: a different size is a failed Status, and the group stays usable.
TEST_P(P2PFailure, SizeMismatchIsAFailedStatus) {
  const int p = GetParam();
  std::atomic<int> checked{0};
  WithWatchdog(kLimit, [&] {
    ThreadGroup::Run(p, [&](Communicator& c) {
      const int next = (c.Rank() + 1) % p;
      const int prev = (c.Rank() - 1 + p) % p;
      c.Send<int32_t>(std::vector<int32_t>{1, 2, 3}, next, 0).ThrowIfError();
      std::vector<int32_t> four(4);
      Status s = c.Recv<int32_t>(four, prev, 0);
      EXPECT_FALSE(s.ok());
      EXPECT_THAT(s.message(), HasSubstr("expects 16 bytes from rank " + std::to_string(prev) +
                                         " with tag 0, but the message has 12"));
      std::vector<double> x{1.5};
      std::vector<double> y(1);
      c.SendRecv<double>(x, next, y, prev, 0).ThrowIfError();
      EXPECT_EQ(y[0], 1.5);
      checked++;
    });
  });
  EXPECT_EQ(checked.load(), p);
}

// Every rank waits for a message nobody sends: all fail with a description instead of hanging.
TEST_P(P2PFailure, DeadlockFailsEveryRank) {
  const int p = GetParam();
  if (p == 1) GTEST_SKIP() << "with one rank, receiving from itself with nothing pending throws at once";
  std::atomic<int> failed{0};
  const std::string message = RunExpectingFailure(p, [&](Communicator& c) {
    std::vector<int32_t> got(1);
    Status s = c.Rank() == 0 ? c.Barrier() : c.Recv<int32_t>(got, c.Rank() - 1, 3);  // rank 0 never sends
    if (!s.ok()) failed++;
    s.ThrowIfError();
  });
  EXPECT_THAT(message, HasSubstr("deadlock: no rank can go on"));
  EXPECT_THAT(message, HasSubstr("rank 0 waits in a collective"));
  EXPECT_THAT(message, HasSubstr("rank 1 waits for a message from rank 0 with tag 3"));
  EXPECT_EQ(failed.load(), p);
}

// A rank that returns with receives still waiting on it, after others already wait: the last one to return must
// still end the wait (the check runs when a rank returns, not only when one starts waiting).
TEST_P(P2PFailure, DeadlockFoundWhenTheLastRunningRankReturns) {
  const int p = GetParam();
  if (p < 3) GTEST_SKIP() << "needs two waiting ranks and a third that returns";
  std::atomic<int> waiting{0};
  const std::string message = RunExpectingFailure(p, [&](Communicator& c) {
    std::vector<int32_t> got(1);
    if (c.Rank() == 0 || c.Rank() == 1) {  // 0 and 1 wait for each other
      waiting++;
      c.Recv<int32_t>(got, 1 - c.Rank(), 0).ThrowIfError();
    }
    while (waiting.load() < 2) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // most likely both sleep in Recv by now
  });
  EXPECT_THAT(message, HasSubstr("deadlock"));
}

TEST_P(P2PFailure, SendToARankThatReturnedFails) {
  const int p = GetParam();
  if (p == 1) GTEST_SKIP() << "needs a peer";
  const std::string message = RunExpectingFailure(p, [&](Communicator& c) {
    if (c.Rank() != 0) return;
    Status s;
    while (s.ok()) s = c.Send<int32_t>(std::vector<int32_t>{1}, p - 1, 0);  // until rank p-1 has returned
    s.ThrowIfError();
  });
  EXPECT_THAT(message, HasSubstr("rank 0 failed: rank 0 sends to rank " + std::to_string(p - 1) +
                                 " (tag 0), which has returned"));
}

// Bugs at the call site throw tessel::Error on that rank.
TEST(P2PContract, LocalViolationsThrow) {
  auto c = MakeLocalCommunicator();
  std::vector<int32_t> v(4);
  EXPECT_THROW((void)c->Send<int32_t>(v, 1, 0), Error);
  EXPECT_THROW((void)c->Recv<int32_t>(v, -1, 0), Error);
  EXPECT_THROW((void)c->Send<int32_t>(v, 0, -1), Error);
  EXPECT_THROW((void)c->Send<int32_t>(v, 0, Communicator::kMaxTag + 1), Error);
  EXPECT_THROW((void)c->SendRaw(v.data(), -4, 0, 0), Error);
  EXPECT_THROW((void)c->RecvRaw(v.data(), -4, 0, 0), Error);
  EXPECT_THROW((void)c->SendRecv<int32_t>(v, 0, v, 0, 0), Error);  // overlapping buffers
  try {
    (void)c->Recv<int32_t>(v, 0, 9);
    ADD_FAILURE() << "a receive from itself with nothing pending returned";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no message to itself is pending"));
  }
  try {
    (void)c->Send<int32_t>(v, 3, 0);
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("SendRaw destination 3 is not a rank (0..0)"));
  }
  std::vector<float> data(3);
  EXPECT_THROW((void)RingAllreduce(*c, data, "x", {.chunk_bytes = -1}), Error);
  EXPECT_THROW((void)RingAllreduce(*c, data, "x", {.tag = -2}), Error);
  EXPECT_EQ(c->Bytes().TotalCalls(), 0u);
}

// With one rank the only peer is itself: messages queue per tag in order, 0 bytes counted.
TEST(P2PContract, LocalBackendMessagesToItself) {
  auto c = MakeLocalCommunicator();
  for (int i = 0; i < 3; ++i) {
    c->Send<double>(std::vector<double>{1.0 * i, 2.0 * i}, 0, 4, "self").ThrowIfError();
    c->Send<int32_t>(std::vector<int32_t>{i}, 0, 5).ThrowIfError();
  }
  c->Send<double>(std::vector<double>{}, 0, 4, "self").ThrowIfError();  // empty messages are messages too
  for (int i = 0; i < 3; ++i) {
    std::vector<int32_t> x(1);
    c->Recv<int32_t>(x, 0, 5).ThrowIfError();
    EXPECT_EQ(x[0], i);
  }
  for (int i = 0; i < 3; ++i) {
    std::vector<double> x(2);
    c->Recv<double>(x, 0, 4).ThrowIfError();
    EXPECT_EQ(x, (std::vector<double>{1.0 * i, 2.0 * i}));
  }
  std::vector<double> none;
  c->Recv<double>(none, 0, 4).ThrowIfError();
  std::vector<double> a{3.0};
  std::vector<double> b(1);
  c->SendRecv<double>(a, 0, b, 0, 4, "self").ThrowIfError();
  EXPECT_EQ(b[0], 3.0);
  c->Send<double>(a, 0, 4).ThrowIfError();
  std::vector<double> two(2);
  Status s = c->Recv<double>(two, 0, 4);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("rank 0 expects 16 bytes from rank 0 with tag 4, but the message has 8"));
  EXPECT_EQ(c->Bytes().Total(), 0u);
  EXPECT_EQ(c->Bytes().ByPurpose().at("self").calls, 5u);
}

// ---- RingAllreduce.

class Ring : public ::testing::TestWithParam<int> {};

// The sum over ranks in float64 of each rank's input (Doubles(t, r, 50, n), rounded to T).
template <typename T>
std::vector<double> SerialSum(uint64_t t, int p, int64_t n, std::vector<double>* abs_sum) {
  std::vector<double> want(static_cast<size_t>(n), 0.0);
  abs_sum->assign(static_cast<size_t>(n), 0.0);
  for (int r = 0; r < p; ++r) {
    const std::vector<double> x = Doubles(t, r, 50, n);
    for (size_t i = 0; i < want.size(); ++i) {
      want[i] += static_cast<double>(static_cast<T>(x[i]));
      (*abs_sum)[i] += std::abs(x[i]);
    }
  }
  return want;
}

template <typename T>
void CheckRing(Communicator& c, uint64_t t, int64_t n, int64_t chunk_bytes) {
  const int p = c.Size();
  const std::vector<double> x = Doubles(t, c.Rank(), 50, n);
  std::vector<T> data(x.begin(), x.end());
  c.Bytes().Reset();
  RingAllreduce(c, std::span<T>(data), "ring", {.chunk_bytes = chunk_bytes}).ThrowIfError();
  const std::string where =
      "n " + std::to_string(n) + " chunk " + std::to_string(chunk_bytes) + " " + (sizeof(T) == 4 ? "float" : "double");
  std::vector<double> abs_sum;
  const std::vector<double> want = SerialSum<T>(t, p, n, &abs_sum);
  const double eps = sizeof(T) == 4 ? 1e-6 : 1e-14;  // a few ulps of the largest partial sum
  for (size_t i = 0; i < data.size(); ++i) {
    ASSERT_NEAR(static_cast<double>(data[i]), want[i], eps * (1 + abs_sum[i])) << where << " i " << i;
  }
  if (p == 1) {  // nothing to add: the input, bit for bit
    ASSERT_TRUE(data.empty() ||
                std::memcmp(data.data(), std::vector<T>(x.begin(), x.end()).data(), data.size() * sizeof(T)) == 0);
  }
  EXPECT_EQ(c.Bytes().Bytes("ring"), static_cast<uint64_t>(RingElementsSent(n, p, c.Rank())) * sizeof(T)) << where;
  // Bit-identical on every rank: gather everyone's result and compare the bytes.
  std::vector<T> all(data.size() * static_cast<size_t>(p));
  c.Allgather<T>(data, all).ThrowIfError();
  for (int r = 0; r < p; ++r) {
    ASSERT_TRUE(data.empty() || std::memcmp(all.data() + data.size() * static_cast<size_t>(r), data.data(),
                                            data.size() * sizeof(T)) == 0)
        << where << ": rank " << r << " differs from rank " << c.Rank();
  }
}

TEST_P(Ring, MatchesSerialSumAndIsBitIdenticalOnEveryRank) {
  WithWatchdog(kLimit, [&] {
    ThreadGroup::Run(GetParam(), [](Communicator& c) {
      const int64_t p = c.Size();
      uint64_t t = 0;
      for (int64_t n : {int64_t{0}, int64_t{1}, p - 1, p + 1, int64_t{1000}, int64_t{100003}}) {
        // Whole segments; one element per message; 3 elements (uneven segments end in a short chunk); 4 KB.
        std::vector<int64_t> chunks{0, 4, 12, 4096};
        if (n > 1000) chunks = {0, 4096, 40000};
        for (int64_t chunk : chunks) {
          CheckRing<float>(c, ++t, n, chunk);
          CheckRing<double>(c, ++t, n, chunk);
        }
      }
    });
  });
}

// Each segment travels P-1 times in each phase: 2(P-1)·n elements in all, about 2(P-1)/P·n per rank.
TEST(RingElementsSent, TotalIsTwoTimesPMinusOneTimesN) {
  for (int p = 1; p <= 9; ++p) {
    for (int64_t n : {0, 1, 2, 7, 8, 9, 1000, 100003}) {
      int64_t total = 0;
      for (int r = 0; r < p; ++r) {
        const int64_t mine = RingElementsSent(n, p, r);
        EXPECT_LE(mine, 2 * ((n + p - 1) / p) * (p - 1));
        EXPECT_GE(mine, 2 * (n / p) * (p - 1));
        total += mine;
      }
      EXPECT_EQ(total, 2 * static_cast<int64_t>(p - 1) * n) << "p " << p << " n " << n;
    }
  }
}

// A rank that fails before the ring: its neighbours get the failed Status instead of waiting, Run throws it.
TEST_P(Ring, FailingRankEndsTheRing) {
  const int p = GetParam();
  if (p == 1) GTEST_SKIP() << "no peer to wait for";
  std::atomic<int> failed{0};
  const std::string message = RunExpectingFailure(p, [&](Communicator& c) {
    std::vector<float> data(1000, 1.0f);
    RingAllreduce(c, data, "ring").ThrowIfError();
    ASSERT_EQ(data[999], static_cast<float>(p));
    c.Barrier().ThrowIfError();  // every rank is done with the first ring (a failed group fails pending receives)
    if (c.Rank() == 1) throw Error("lost the gradients");
    Status s = RingAllreduce(c, data, "ring", {.chunk_bytes = 64});
    if (!s.ok()) failed++;
    s.ThrowIfError();
  });
  EXPECT_EQ(message, "rank 1 failed: lost the gradients");
  EXPECT_EQ(failed.load(), p - 1);
}

auto RankName = [](const ::testing::TestParamInfo<int>& param) { return std::to_string(param.param); };
INSTANTIATE_TEST_SUITE_P(Ranks, P2P, ::testing::Range(1, 9), RankName);
INSTANTIATE_TEST_SUITE_P(Ranks, P2PFailure, ::testing::Range(1, 9), RankName);
INSTANTIATE_TEST_SUITE_P(Ranks, Ring, ::testing::Range(1, 9), RankName);

}  // namespace
}  // namespace tessel::comm
