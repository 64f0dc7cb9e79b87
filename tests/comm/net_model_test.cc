// The time model: NetworkModel parsing and arithmetic, and the latency and volume terms every communicator call
// records (the standard algorithms' costs) on 1 to 5 thread ranks.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "comm/auto_compress.h"
#include "comm/communicator.h"
#include "comm/net_model.h"
#include "comm/thread_comm.h"
#include "core/error.h"

namespace tessel::comm {
namespace {

TEST(NetworkModel, ParsesUnitsAndPredicts) {
  const NetworkModel m = NetworkModel::Parse("10Gbit,5us", "--network");
  EXPECT_DOUBLE_EQ(m.bytes_per_second, 1.25e9);
  EXPECT_DOUBLE_EQ(m.latency_seconds, 5e-6);
  EXPECT_DOUBLE_EQ(m.Seconds(CallCost{.seconds = 9, .latency = 4, .volume = 2.5e9}), 4 * 5e-6 + 2.0);
  EXPECT_DOUBLE_EQ(NetworkModel::Parse("25GB,1.5us", "--network").bytes_per_second, 25e9);
  EXPECT_DOUBLE_EQ(NetworkModel::Parse("100Mbit,2ms", "--network").latency_seconds, 2e-3);
  EXPECT_DOUBLE_EQ(NetworkModel::Parse("1B,1s", "--network").bytes_per_second, 1.0);
  EXPECT_EQ(m.ToString(), "10 Gbit/s, 5 us");
  for (std::string bad : {"", "10Gbit", "10,5us", "10Gb,5us", "10Gbit,5", "10Gbit,5min", "-1Gbit,5us", "0GB,1us",
                          "Gbit,5us", "10Gbit,us"}) {
    try {
      (void)NetworkModel::Parse(bad, "--network");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--network"), std::string::npos) << e.what();
    }
  }
}

// --network as a typed option: parsed once where it is read, the text kept as given (the config echo), empty = none.
TEST(NetworkModel, OptionParsesOnceAndKeepsItsText) {
  const NetworkOption none = NetworkOption::FromText("", "--network");
  EXPECT_FALSE(none);
  EXPECT_EQ(none.Text(), "");
  const NetworkOption link = NetworkOption::FromText("100Mbit,20us,shared,burst=256KiB", "--network");
  ASSERT_TRUE(link);
  EXPECT_EQ(link.Text(), "100Mbit,20us,shared,burst=256KiB");
  EXPECT_DOUBLE_EQ(link->bytes_per_second, 12.5e6);
  EXPECT_TRUE(link->shared);
  EXPECT_EQ(link->ToString(), NetworkModel::Parse(link.Text(), "--network").ToString());
  EXPECT_EQ(link, NetworkOption::FromText(link.Text(), "network"));
  EXPECT_FALSE(link == none);
  try {
    (void)NetworkOption::FromText("fast", "--network");
    ADD_FAILURE() << "accepted 'fast'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--network"), std::string::npos) << e.what();
  }
}

// ",shared": one link that every rank's bytes take turns on (a hub, or one rate-limited loopback), so the volume
// term counts once per rank; latency is unchanged.
TEST(NetworkModel, SharedLinkCountsEveryRanksVolume) {
  const NetworkModel m = NetworkModel::Parse("100Mbit,10us,shared", "--network");
  EXPECT_TRUE(m.shared);
  EXPECT_FALSE(NetworkModel::Parse("100Mbit,10us", "--network").shared);
  const CallCost c{.seconds = 1, .latency = 2, .volume = 1.25e7};
  EXPECT_DOUBLE_EQ(m.Seconds(c, 1), 2 * 10e-6 + 1.0);
  EXPECT_DOUBLE_EQ(m.Seconds(c, 4), 2 * 10e-6 + 4.0);
  EXPECT_DOUBLE_EQ(NetworkModel::Parse("100Mbit,10us", "--network").Seconds(c, 4), 2 * 10e-6 + 1.0);
  EXPECT_EQ(m.ToString(), "0.1 Gbit/s, 10 us, shared");
  EXPECT_THROW(NetworkModel::Parse("100Mbit,10us,hub", "--network"), Error);
}

// ",burst=SIZE": a token bucket in front of the link (tbf, a cloud instance's burst allowance). A call's volume passes
// at once up to the bucket's bytes, the rest at the rate; the bucket refills at the rate while the link is idle.
TEST(NetworkModel, BurstIsATokenBucket) {
  const NetworkModel m = NetworkModel::Parse("100Mbit,10us,shared,burst=256KiB", "--network");
  EXPECT_TRUE(m.shared);
  EXPECT_DOUBLE_EQ(m.burst_bytes, 256.0 * 1024);
  EXPECT_DOUBLE_EQ(NetworkModel::Parse("1Gbit,1us,burst=64KB,shared", "--network").burst_bytes, 64e3);
  EXPECT_DOUBLE_EQ(NetworkModel::Parse("1Gbit,1us,burst=2MiB", "--network").burst_bytes, 2.0 * 1024 * 1024);
  EXPECT_EQ(m.ToString(), "0.1 Gbit/s, 10 us, shared, burst 256 KiB");
  for (std::string bad : {"1Gbit,1us,burst=", "1Gbit,1us,burst=0KB", "1Gbit,1us,burst=5GB", "1Gbit,1us,burst=KB",
                          "1Gbit,1us,shared,shared", "1Gbit,1us,burst=1KB,burst=2KB", "1Gbit,1us,burst"}) {
    try {
      (void)NetworkModel::Parse(bad, "--network");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--network"), std::string::npos) << e.what();
    }
  }
  const NetworkModel b = NetworkModel::Parse("8Mbit,1ms,burst=1MB", "--network");  // 1e6 bytes per second
  double tokens = b.burst_bytes;
  const CallCost c{.seconds = 0, .latency = 1, .volume = 6e5};
  EXPECT_DOUBLE_EQ(b.CallSeconds(c, 1, 0.0, &tokens), 1e-3) << "a full bucket passes 0.6 MB at once";
  EXPECT_DOUBLE_EQ(tokens, 4e5);
  EXPECT_DOUBLE_EQ(b.CallSeconds(c, 1, 0.0, &tokens), 1e-3 + 0.2) << "0.4 MB at once, 0.2 MB at the rate";
  EXPECT_DOUBLE_EQ(tokens, 0.0);
  EXPECT_DOUBLE_EQ(b.CallSeconds(c, 1, 0.5, &tokens), 1e-3 + 0.1) << "half a second idle refills 0.5 MB";
  EXPECT_DOUBLE_EQ(b.CallSeconds(c, 1, 100.0, &tokens), 1e-3) << "refilled up to the bucket";
  EXPECT_DOUBLE_EQ(tokens, 4e5);
  // Without a bucket a call costs what Seconds says, whatever the idle time.
  const NetworkModel plain = NetworkModel::Parse("8Mbit,1ms,shared", "--network");
  double unused = 0;
  EXPECT_DOUBLE_EQ(plain.CallSeconds(c, 3, 10.0, &unused), plain.Seconds(c, 3));
}

// Attach: every call the counter records is timed on the model as it happens. Without a bucket the calls' modelled
// seconds add up to Seconds of their summed terms; with one larger than every call, only latencies remain. Every call
// also records the calling thread's CPU seconds.
TEST(NetworkModel, AttachedCounterTimesEveryCall) {
  ThreadGroup::Run(3, [&](Communicator& c) {
    EXPECT_EQ(c.LocalSize(), 3) << "thread ranks share one machine";
    for (const bool bucket : {false, true}) {
      const NetworkModel m =
          NetworkModel::Parse(bucket ? "1Mbit,1ms,shared,burst=1MB" : "1Mbit,1ms,shared", "--network");
      c.Bytes().Reset();
      m.Attach(c.Bytes(), c.Size());
      std::vector<float> v(1000, 1.0F);
      for (int k = 0; k < 3; ++k) c.Allreduce<float>(v, ReduceOp::kSum, "a").ThrowIfError();
      std::vector<double> all(30);
      c.Allgather<double>(std::vector<double>(10, 1.0), all, "b").ThrowIfError();
      const CallCost& t = c.Bytes().TotalCost();
      EXPECT_GT(t.cpu, 0.0) << "recorded with a call model";
      EXPECT_LE(t.cpu, t.seconds + 1e-3) << "one thread's CPU within its calls' wall time";
      if (bucket) {
        EXPECT_NEAR(t.modeled, t.latency * 1e-3, 1e-12);
      } else {
        EXPECT_NEAR(t.modeled, m.Seconds(t, c.Size()), 1e-9);
        EXPECT_GT(t.modeled, t.latency * 1e-3);
      }
    }
    c.Bytes().SetCallModel({});
  });
}

// Synchronous steps: each takes the longer of its slowest rank's time and the ranks' mean CPU need over the cores
// each can use; what lies outside the steps (entries beyond the needs) has no CPU bound.
TEST(NetworkModel, SynchronousStepsTakeTheSlowestRankOrTheCpuBound) {
  const std::vector<double> slowest{1.0, 2.0, 0.5};
  const std::vector<double> need{2.0, 2.0};  // summed over 2 ranks: a mean of 1 s each step
  EXPECT_DOUBLE_EQ(SynchronousSeconds(slowest, need, 2, 1.0), 1.0 + 2.0 + 0.5) << "a core each: the slowest ranks";
  EXPECT_DOUBLE_EQ(SynchronousSeconds(slowest, need, 2, 0.5), 2.0 + 2.0 + 0.5) << "half a core each: the CPU";
  EXPECT_DOUBLE_EQ(SynchronousSeconds(slowest, {}, 2, 0.5), 3.5) << "no needs recorded";
  EXPECT_THROW((void)SynchronousSeconds(slowest, need, 0, 1.0), Error);
  EXPECT_THROW((void)SynchronousSeconds(slowest, need, 2, 0.0), Error);
}

class CallCosts : public ::testing::TestWithParam<int> {};

TEST_P(CallCosts, EveryCallRecordsItsAlgorithmsTerms) {
  const int p = GetParam();
  ThreadGroup::Run(p, [&](Communicator& c) {
    const double lg = p > 1 ? std::ceil(std::log2(p)) : 0;
    std::vector<float> v(1000, 1.0F);
    c.Allreduce<float>(v, ReduceOp::kSum, "a").ThrowIfError();
    const CallCost& a = c.Bytes().ByPurpose().at("a").cost;
    EXPECT_DOUBLE_EQ(a.latency, 2 * lg);
    EXPECT_DOUBLE_EQ(a.volume, 2.0 * (p - 1) / p * 4000);
    // Alltoallv: rank r sends r + 1 ints to every other rank and receives j + 1 from rank j.
    std::vector<int64_t> send_counts(static_cast<size_t>(p), c.Rank() + 1);
    std::vector<int64_t> recv_counts(static_cast<size_t>(p));
    for (int j = 0; j < p; ++j) recv_counts[static_cast<size_t>(j)] = j + 1;
    recv_counts[static_cast<size_t>(c.Rank())] = c.Rank() + 1;
    std::vector<int32_t> send(static_cast<size_t>(p * (c.Rank() + 1)));
    int64_t total = 0;
    for (int64_t x : recv_counts) total += x;
    std::vector<int32_t> recv(static_cast<size_t>(total));
    c.Alltoallv<int32_t>(send, send_counts, recv, recv_counts, "b").ThrowIfError();
    const CallCost& b = c.Bytes().ByPurpose().at("b").cost;
    const double out = 4.0 * (p - 1) * (c.Rank() + 1);
    const double in = 4.0 * (static_cast<double>(total) - (c.Rank() + 1));
    EXPECT_DOUBLE_EQ(b.latency, p - 1.0);
    EXPECT_DOUBLE_EQ(b.volume, std::max(out, in));
    // Allgather of 10 doubles: P - 1 steps, every other block arrives.
    std::vector<double> mine(10, 1.0);
    std::vector<double> all(static_cast<size_t>(10 * p));
    c.Allgather<double>(mine, all, "c").ThrowIfError();
    EXPECT_DOUBLE_EQ(c.Bytes().ByPurpose().at("c").cost.volume, 80.0 * (p - 1));
    EXPECT_DOUBLE_EQ(c.Bytes().ByPurpose().at("c").cost.latency, p - 1.0);
    const CallCost& t = c.Bytes().TotalCost();
    EXPECT_DOUBLE_EQ(t.latency, 2 * lg + 2.0 * (p - 1));
    EXPECT_EQ(t.cpu, 0.0) << "no call model: the CPU clock is not read";
    EXPECT_EQ(t.modeled, 0.0);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, CallCosts, ::testing::Values(1, 2, 3, 4, 5));

}  // namespace
}  // namespace tessel::comm

namespace tessel::comm {
namespace {

// --grad-compress auto / --feature-compress auto (auto_compress.h): on a link where bytes are nearly free the
// uncompressed exchange wins (coding costs more than it saves); on a slow one a compressed codec wins; every rank
// of a group makes the same choice; the summary names the choice and the others.
TEST(AutoCompress, PicksByTheLinkAndEveryRankAgrees) {
  for (const int k : {2, 3}) {
    std::vector<std::string> fast_grad(static_cast<size_t>(k)), slow_grad(static_cast<size_t>(k));
    std::vector<std::string> fast_feat(static_cast<size_t>(k)), slow_feat(static_cast<size_t>(k));
    std::vector<std::string> summary(static_cast<size_t>(k));
    ThreadGroup::Run(k, [&](Communicator& c) {
      const auto r = static_cast<size_t>(c.Rank());
      const NetworkModel fast = NetworkModel::Parse("100000GB,1ns", "--network");
      const NetworkModel slow = NetworkModel::Parse("10Mbit,50us,shared", "--network");
      fast_grad[r] = ChooseGradientCompression(c, fast, 100000).spec.ToString();
      const CompressChoice s = ChooseGradientCompression(c, slow, 100000);
      slow_grad[r] = s.spec.ToString();
      summary[r] = s.Summary();
      fast_feat[r] = ChooseFeatureCompression(c, fast, 128).spec.ToString();
      slow_feat[r] = ChooseFeatureCompression(c, slow, 128).spec.ToString();
      EXPECT_EQ(s.candidates.size(), 4U);
    });
    for (int r = 0; r < k; ++r) {
      const auto i = static_cast<size_t>(r);
      EXPECT_EQ(fast_grad[i], "none") << "K " << k;
      EXPECT_EQ(fast_feat[i], "none") << "K " << k;
      EXPECT_NE(slow_grad[i], "none") << "K " << k << ": " << summary[i];
      EXPECT_EQ(slow_feat[i], "int8") << "K " << k;  // 132 bytes a row instead of 512 at 10 Mbit/s
      EXPECT_EQ(slow_grad[i], slow_grad[0]) << "rank " << r;
      EXPECT_NE(summary[i].find(slow_grad[i]), std::string::npos) << summary[i];
    }
  }
}

}  // namespace
}  // namespace tessel::comm
