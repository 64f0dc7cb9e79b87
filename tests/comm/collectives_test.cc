// Every collective of the thread backend at 1, 2, 3 and 4 ranks against a serial reference over all ranks'
// inputs (random sizes including 0, uneven v-counts), and exact byte accounting per purpose.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <numeric>
#include <vector>

#include "comm/communicator.h"
#include "comm/thread_comm.h"
#include "tests/comm/comm_test_util.h"

namespace tessel::comm {
namespace {

using testing::Doubles;
using testing::Ints;
using testing::SharedSize;
using testing::WithWatchdog;

constexpr auto kLimit = std::chrono::seconds(60);
constexpr int kTrials = 12;

class Collectives : public ::testing::TestWithParam<int> {
 protected:
  // Runs fn on GetParam() thread ranks under the watchdog.
  void RunRanks(const std::function<void(Communicator&)>& fn) {
    WithWatchdog(kLimit, [&] { ThreadGroup::Run(GetParam(), fn); });
  }
};

TEST_P(Collectives, AllreduceIntegerOpsMatchSerial) {
  RunRanks([](Communicator& c) {
    const int p = c.Size();
    for (uint64_t t = 0; t < kTrials; ++t) {
      const int64_t n = SharedSize(t, 1, 300);
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax}) {
        std::vector<int64_t> mine = Ints(t, c.Rank(), 1, n, -1000000, 1000000);
        std::vector<int32_t> mine32(mine.begin(), mine.end());
        c.Allreduce<int64_t>(mine, op).ThrowIfError();
        c.Allreduce<int32_t>(mine32, op).ThrowIfError();
        std::vector<int64_t> want = Ints(t, 0, 1, n, -1000000, 1000000);  // serial reference, rank by rank
        for (int r = 1; r < p; ++r) {
          const std::vector<int64_t> x = Ints(t, r, 1, n, -1000000, 1000000);
          for (size_t i = 0; i < want.size(); ++i) {
            want[i] = op == ReduceOp::kSum   ? want[i] + x[i]
                      : op == ReduceOp::kMin ? std::min(want[i], x[i])
                                             : std::max(want[i], x[i]);
          }
        }
        ASSERT_EQ(mine, want) << "trial " << t << " op " << ReduceOpName(op);
        ASSERT_TRUE(std::equal(mine32.begin(), mine32.end(), want.begin())) << "trial " << t;
      }
    }
  });
}

TEST_P(Collectives, AllreduceFloatSumMatchesFloat64Reference) {
  RunRanks([](Communicator& c) {
    for (uint64_t t = 0; t < kTrials; ++t) {
      const int64_t n = SharedSize(t, 2, 500);
      std::vector<double> mine = Doubles(t, c.Rank(), 2, n);
      std::vector<float> mine32(mine.begin(), mine.end());
      c.Allreduce<double>(mine, ReduceOp::kSum, "gradients").ThrowIfError();
      c.Allreduce<float>(mine32, ReduceOp::kSum, "gradients").ThrowIfError();
      std::vector<double> want(static_cast<size_t>(n), 0.0);
      for (int r = 0; r < c.Size(); ++r) {
        std::vector<double> x = Doubles(t, r, 2, n);
        for (size_t i = 0; i < want.size(); ++i) want[i] += x[i];
      }
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(mine[i], want[i], 1e-12) << "trial " << t << " i " << i;
        ASSERT_NEAR(mine32[i], want[i], 1e-5 * (1 + std::abs(want[i]))) << "trial " << t << " i " << i;
      }
      // Every rank holds bit-identical sums (rank-order reduction), so replicated weights never drift.
      std::vector<double> all(mine.size() * static_cast<size_t>(c.Size()));
      c.Allgather<double>(mine, all).ThrowIfError();
      for (int r = 1; r < c.Size(); ++r) {
        ASSERT_TRUE(std::equal(mine.begin(), mine.end(), all.begin() + static_cast<ptrdiff_t>(mine.size()) * r));
      }
    }
  });
}

TEST_P(Collectives, MaxLocMinLocPickBestValueThenSmallestIndex) {
  RunRanks([](Communicator& c) {
    for (uint64_t t = 0; t < kTrials; ++t) {
      const int64_t n = SharedSize(t, 3, 50);
      auto make = [&](int r) {  // values in a tiny range so ties across ranks are common
        std::vector<int64_t> v = Ints(t, r, 3, n, -2, 2);
        std::vector<int64_t> idx = Ints(t, r, 4, n, 0, 5);
        std::vector<ValueIndex<double>> out(static_cast<size_t>(n));
        for (size_t i = 0; i < out.size(); ++i) out[i] = {static_cast<double>(v[i]), idx[i]};
        return out;
      };
      for (ReduceOp op : {ReduceOp::kMaxLoc, ReduceOp::kMinLoc}) {
        std::vector<ValueIndex<double>> mine = make(c.Rank());
        c.Allreduce<ValueIndex<double>>(mine, op, "svm").ThrowIfError();
        std::vector<ValueIndex<float>> mine_f(mine.size());
        std::vector<ValueIndex<double>> orig = make(c.Rank());
        for (size_t i = 0; i < orig.size(); ++i) mine_f[i] = {static_cast<float>(orig[i].value), orig[i].index};
        c.Allreduce<ValueIndex<float>>(mine_f, op, "svm").ThrowIfError();
        for (size_t i = 0; i < mine.size(); ++i) {
          ValueIndex<double> best = make(0)[i];
          for (int r = 1; r < c.Size(); ++r) {  // brute force: the best value, then the smallest index among ties
            const ValueIndex<double> x = make(r)[i];
            const bool better = op == ReduceOp::kMaxLoc ? x.value > best.value : x.value < best.value;
            if (better || (x.value == best.value && x.index < best.index)) best = x;
          }
          ASSERT_EQ(mine[i], best) << "trial " << t << " i " << i;
          ASSERT_EQ(static_cast<double>(mine_f[i].value), best.value);
          ASSERT_EQ(mine_f[i].index, best.index);
        }
      }
      ValueIndex<double> one{static_cast<double>(c.Rank() % 2), 100 - c.Rank()};
      c.AllreduceMaxLoc(&one).ThrowIfError();
      EXPECT_EQ(one.value, c.Size() > 1 ? 1.0 : 0.0);
    }
  });
}

TEST_P(Collectives, BroadcastFromEveryRoot) {
  RunRanks([](Communicator& c) {
    for (uint64_t t = 0; t < kTrials; ++t) {
      const int64_t n = SharedSize(t, 5, 400);
      for (int root = 0; root < c.Size(); ++root) {
        std::vector<int64_t> data = Ints(t, c.Rank(), 5, n, 0, 1 << 30);
        c.Broadcast<int64_t>(data, root, "weights").ThrowIfError();
        ASSERT_EQ(data, Ints(t, root, 5, n, 0, 1 << 30)) << "trial " << t << " root " << root;
      }
    }
  });
}

TEST_P(Collectives, AllgatherAndUnevenAllgatherv) {
  RunRanks([](Communicator& c) {
    const int p = c.Size();
    for (uint64_t t = 0; t < kTrials; ++t) {
      const int64_t block = SharedSize(t, 6, 30);
      std::vector<int64_t> mine = Ints(t, c.Rank(), 6, block, -50, 50);
      std::vector<int64_t> all(static_cast<size_t>(block * p));
      c.Allgather<int64_t>(mine, all).ThrowIfError();
      std::vector<int64_t> want;
      for (int r = 0; r < p; ++r) {
        std::vector<int64_t> x = Ints(t, r, 6, block, -50, 50);
        want.insert(want.end(), x.begin(), x.end());
      }
      ASSERT_EQ(all, want);

      // Uneven counts (0 included): each rank's count is known to all from the shared trial seed.
      std::vector<int64_t> counts(static_cast<size_t>(p));
      for (int r = 0; r < p; ++r) counts[static_cast<size_t>(r)] = SharedSize(t * 31 + static_cast<uint64_t>(r), 7, 40);
      std::vector<double> v = Doubles(t, c.Rank(), 7, counts[static_cast<size_t>(c.Rank())]);
      std::vector<double> got(static_cast<size_t>(std::accumulate(counts.begin(), counts.end(), int64_t{0})));
      c.Allgatherv<double>(v, got, counts, "ids").ThrowIfError();
      std::vector<double> want_v;
      for (int r = 0; r < p; ++r) {
        std::vector<double> x = Doubles(t, r, 7, counts[static_cast<size_t>(r)]);
        want_v.insert(want_v.end(), x.begin(), x.end());
      }
      ASSERT_EQ(got, want_v);

      std::vector<double> auto_got;
      std::vector<int64_t> auto_counts;
      c.AllgathervWithCounts<double>(v, &auto_got, &auto_counts, "ids").ThrowIfError();
      ASSERT_EQ(auto_counts, counts);
      ASSERT_EQ(auto_got, want_v);
    }
  });
}

// send_counts of rank s to rank d in trial t, known to every rank.
int64_t PairCount(uint64_t t, int s, int d) { return SharedSize(t * 1009 + static_cast<uint64_t>(s * 17 + d), 8, 25); }

// The block rank s sends to rank d: values encode (s, d, position) so a misplaced block is caught.
std::vector<int64_t> PairBlock(uint64_t t, int s, int d) {
  std::vector<int64_t> b = Ints(t, s, 100 + static_cast<uint64_t>(d), PairCount(t, s, d), 0, 999);
  for (size_t k = 0; k < b.size(); ++k) b[k] += 1000 * (s * 100 + d) + 1000000 * static_cast<int64_t>(k);
  return b;
}

TEST_P(Collectives, AlltoallAndUnevenAlltoallv) {
  RunRanks([](Communicator& c) {
    const int p = c.Size();
    const int me = c.Rank();
    for (uint64_t t = 0; t < kTrials; ++t) {
      const int64_t block = SharedSize(t, 9, 20);
      std::vector<int32_t> send(static_cast<size_t>(block * p));
      for (size_t k = 0; k < send.size(); ++k) send[k] = me * 100000 + static_cast<int32_t>(k);
      std::vector<int32_t> recv(send.size());
      c.Alltoall<int32_t>(send, recv).ThrowIfError();
      for (int s = 0; s < p; ++s) {
        for (int64_t k = 0; k < block; ++k) {
          ASSERT_EQ(recv[static_cast<size_t>(s * block + k)], s * 100000 + me * block + k);
        }
      }

      std::vector<int64_t> send_counts(static_cast<size_t>(p));
      std::vector<int64_t> recv_counts(static_cast<size_t>(p));
      std::vector<int64_t> sendv;
      std::vector<int64_t> want;
      for (int d = 0; d < p; ++d) {
        send_counts[static_cast<size_t>(d)] = PairCount(t, me, d);
        recv_counts[static_cast<size_t>(d)] = PairCount(t, d, me);
        std::vector<int64_t> b = PairBlock(t, me, d);
        sendv.insert(sendv.end(), b.begin(), b.end());
        std::vector<int64_t> w = PairBlock(t, d, me);
        want.insert(want.end(), w.begin(), w.end());
      }
      std::vector<int64_t> recvv(want.size());
      c.Alltoallv<int64_t>(sendv, send_counts, recvv, recv_counts, "features").ThrowIfError();
      ASSERT_EQ(recvv, want) << "trial " << t;

      std::vector<int64_t> auto_recv;
      std::vector<int64_t> auto_counts;
      c.AlltoallvWithCounts<int64_t>(sendv, send_counts, &auto_recv, &auto_counts, "features").ThrowIfError();
      ASSERT_EQ(auto_counts, recv_counts);
      ASSERT_EQ(auto_recv, want);
    }
  });
}

TEST_P(Collectives, BarrierSeparatesPhases) {
  std::vector<std::atomic<int>> arrived(200);
  RunRanks([&](Communicator& c) {
    for (size_t phase = 0; phase < arrived.size(); ++phase) {
      arrived[phase]++;
      c.Barrier().ThrowIfError();
      ASSERT_EQ(arrived[phase].load(), c.Size()) << "a rank left the barrier of phase " << phase << " early";
    }
  });
}

// Byte accounting (docs/comm.md): payload this rank contributes for other ranks, nothing on one rank.
TEST_P(Collectives, ByteCountsAreExactPerPurpose) {
  RunRanks([](Communicator& c) {
    const int p = c.Size();
    const uint64_t many = p > 1 ? 1 : 0;
    std::vector<float> grad(37);
    c.Allreduce<float>(grad, ReduceOp::kSum, "gradients").ThrowIfError();
    std::vector<double> w(11);
    c.Broadcast<double>(w, p - 1, "weights").ThrowIfError();
    std::vector<int32_t> ids(static_cast<size_t>(c.Rank() + 1));
    std::vector<int64_t> counts(static_cast<size_t>(p));
    std::iota(counts.begin(), counts.end(), 1);
    std::vector<int32_t> all(static_cast<size_t>(p * (p + 1) / 2));
    c.Allgatherv<int32_t>(ids, all, counts, "ids").ThrowIfError();
    // Alltoallv: 2 * (d + 1) floats to rank d.
    std::vector<int64_t> sc(static_cast<size_t>(p));
    std::vector<int64_t> rc(static_cast<size_t>(p), 2 * (c.Rank() + 1));
    for (int d = 0; d < p; ++d) sc[static_cast<size_t>(d)] = 2 * (d + 1);
    std::vector<float> fs(static_cast<size_t>(p * (p + 1))), fr(static_cast<size_t>(2 * (c.Rank() + 1) * p));
    c.Alltoallv<float>(fs, sc, fr, rc, "features").ThrowIfError();
    c.Alltoallv<float>(fs, sc, fr, rc, "features").ThrowIfError();
    c.Barrier().ThrowIfError();

    const ByteCounter& b = c.Bytes();
    EXPECT_EQ(b.Bytes("gradients"), many * 37 * 4);
    EXPECT_EQ(b.Bytes("weights"), c.Rank() == p - 1 ? many * 11 * 8 : 0);
    EXPECT_EQ(b.Bytes("ids"), many * static_cast<uint64_t>(c.Rank() + 1) * 4);
    const uint64_t to_others = static_cast<uint64_t>(p * (p + 1) - 2 * (c.Rank() + 1)) * 4;
    EXPECT_EQ(b.Bytes("features"), 2 * to_others);
    EXPECT_EQ(b.ByPurpose().at("features").calls, 2u);
    EXPECT_EQ(b.Total(), b.Bytes("gradients") + b.Bytes("weights") + b.Bytes("ids") + b.Bytes("features"));
    EXPECT_EQ(b.TotalCalls(), 5u);  // the barrier sends no payload and is not counted
    EXPECT_EQ(b.Bytes("never used"), 0u);
    c.Bytes().Reset();
    EXPECT_EQ(c.Bytes().Total(), 0u);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, Collectives, ::testing::Values(1, 2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& param) { return std::to_string(param.param); });

}  // namespace
}  // namespace tessel::comm
