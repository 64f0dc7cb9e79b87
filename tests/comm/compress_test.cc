// The compressors of comm/compress.h: 16-bit conversions against the compiler's _Float16 and a float64 reference,
// every codec's decode(encode(x)) within its stated bound, QSGD and random-k unbiased over many seeded draws, error
// feedback keeping the lost mass (exactly for top-k and CLT-k), every compressed allreduce against its serial
// reference on 1 to 8 thread ranks with bit-identical results on every rank, byte accounting, and a failing rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/compress.h"
#include "comm/half.h"
#include "comm/thread_comm.h"
#include "core/error.h"
#include "core/rng.h"
#include "tests/comm/comm_test_util.h"

namespace tessel::comm {
namespace {

using testing::WithWatchdog;

constexpr auto kLimit = std::chrono::seconds(120);

std::vector<float> Floats(uint64_t seed, int rank, int64_t n, double scale = 1.0) {
  Rng rng(StreamKey{.seed = seed, .rank = static_cast<uint64_t>(rank), .purpose = 77});
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>((rng.Uniform() * 2.0 - 1.0) * scale);
  return v;
}

std::vector<std::byte> Encode(const Codec& c, std::span<const float> x, uint64_t seed) {
  std::vector<std::byte> w(static_cast<size_t>(c.EncodedBytes(static_cast<int64_t>(x.size()))));
  c.Encode(x, seed, w);
  return w;
}

std::vector<float> RoundTrip(const Codec& c, std::span<const float> x, uint64_t seed = 1) {
  const std::vector<std::byte> w = Encode(c, x, seed);
  std::vector<float> out(x.size(), -7.0F);
  c.Decode(w, out, false);
  return out;
}

// ---- 16-bit conversions.

TEST(Half, EveryHalfRoundTripsExactly) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const auto h = static_cast<uint16_t>(b);
    const float f = HalfToFloat(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(f)))) << b;
      continue;
    }
    ASSERT_EQ(FloatToHalf(f), h) << "bits " << b << " value " << f;
  }
}

#if defined(__FLT16_MAX__)
TEST(Half, MatchesTheCompilersFloat16OnRandomFloats) {
  Rng rng(5);
  for (int i = 0; i < 2000000; ++i) {
    // Random bit patterns cover subnormals, overflow, infinities and NaN; the exponent is biased towards fp16's range.
    auto u = static_cast<uint32_t>(rng());
    if (i % 2 == 0) u = (u & 0x807fffffU) | ((100U + static_cast<uint32_t>(rng.UniformInt(50))) << 23);
    const float f = std::bit_cast<float>(u);
    const auto want = static_cast<_Float16>(f);
    uint16_t want_bits;
    std::memcpy(&want_bits, &want, 2);
    const uint16_t got = FloatToHalf(f);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(HalfToFloat(got)));
      continue;
    }
    ASSERT_EQ(got, want_bits) << "float bits " << std::hex << u;
    ASSERT_EQ(HalfToFloat(got), static_cast<float>(want));
  }
}
#endif

TEST(BFloat16, RoundsToNearestEvenAgainstFloat64) {
  Rng rng(6);
  for (int i = 0; i < 1000000; ++i) {
    const auto u = static_cast<uint32_t>(rng());
    const float f = std::bit_cast<float>(u);
    const uint16_t got = FloatToBFloat16(f);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(BFloat16ToFloat(got)));
      continue;
    }
    if (std::isinf(f)) {
      ASSERT_EQ(BFloat16ToFloat(got), f);
      continue;
    }
    // The two bfloat16 neighbours of f; the nearer one, the even one on a tie.
    const auto lo = static_cast<uint16_t>(u >> 16);
    const auto hi = static_cast<uint16_t>(lo + 1);
    const double dlo = std::fabs(static_cast<double>(BFloat16ToFloat(lo)) - f);
    // Past the largest finite bfloat16 the upper neighbour is infinity, which rounding treats as 2^128.
    const double hi_value = std::isinf(BFloat16ToFloat(hi)) ? std::copysign(0x1p128, f) : BFloat16ToFloat(hi);
    const double dhi = std::fabs(hi_value - f);
    const uint16_t want = dlo < dhi ? lo : dhi < dlo ? hi : ((lo & 1U) == 0 ? lo : hi);
    ASSERT_EQ(got, want) << std::hex << u;
  }
}

// ---- Codecs.

// The one table of methods (compress.cc kMethods): every name parses to its method and prints back, its parameter is
// the one its form names, and the lists in messages come from it.
TEST(Codecs, OneTableOfMethods) {
  EXPECT_EQ(
      CompressForms(),
      "none, fp16, bf16, int8[:BLOCK], qsgd[:LEVELS], topk[:RATIO], randk[:RATIO], cltk[:RATIO], powersgd[:RANK]");
  EXPECT_EQ(RowCodecForms(), "none, fp16, bf16, int8 or qsgd[:LEVELS]");
  EXPECT_EQ(RowCodecForms(true), "none, fp16, bf16, int8 or qsgd");
  for (int m = 0; m <= static_cast<int>(CompressMethod::kPowerSgd); ++m) {
    const auto method = static_cast<CompressMethod>(m);
    const CompressMethodInfo& info = MethodInfo(method);
    EXPECT_EQ(info.method, method);
    EXPECT_EQ(CompressMethodName(method), info.name);
    EXPECT_EQ(CompressSpec::Parse(info.name, "--grad-compress").method, method);
    const CompressSpec parsed = CompressSpec::Parse(CompressSpec{.method = method}.ToString(), "--grad-compress");
    EXPECT_EQ(parsed.method, method);
    // Feature rows take exactly the elementwise codecs with one scale per row (MakeCodec builds them).
    EXPECT_EQ(TakesRows(method), m <= static_cast<int>(CompressMethod::kQsgd)) << info.name;
    if (info.param == CompressParam::kNone) {
      EXPECT_THROW((void)CompressSpec::Parse(std::string(info.name) + ":2", "--grad-compress"), Error);
    } else {
      EXPECT_NO_THROW((void)CompressSpec::Parse(std::string(info.name) + ":1", "--grad-compress")) << info.name;
    }
  }
  try {
    (void)MakeCodec(CompressSpec{.method = CompressMethod::kRandK}, 8);
    ADD_FAILURE() << "randk made a codec";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(use none, fp16, bf16, int8 or qsgd)"), std::string::npos) << e.what();
  }
}

TEST(Codecs, DecodeOfEncodeWithinTheStatedBound) {
  for (int64_t n : {0, 1, 7, 255, 256, 257, 5000}) {
    const std::vector<float> x = Floats(static_cast<uint64_t>(n), 0, n, 3.0);
    {
      auto c = MakeCodec(CompressSpec{}, 256);
      EXPECT_EQ(RoundTrip(*c, x), x);
      EXPECT_EQ(c->EncodedBytes(n), 4 * n);
    }
    {
      auto c = MakeCodec(CompressSpec::Parse("fp16", "--x"), 256);
      const std::vector<float> d = RoundTrip(*c, x);
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_LE(std::fabs(d[i] - x[i]), std::max(std::fabs(x[i]) * 0x1p-11F, 0x1p-25F)) << i;
      }
      EXPECT_EQ(c->EncodedBytes(n), 2 * n);
    }
    {
      auto c = MakeCodec(CompressSpec::Parse("bf16", "--x"), 256);
      const std::vector<float> d = RoundTrip(*c, x);
      for (size_t i = 0; i < x.size(); ++i) ASSERT_LE(std::fabs(d[i] - x[i]), std::fabs(x[i]) * 0x1p-8F) << i;
    }
    for (int64_t block : {1, 16, 256}) {
      CompressSpec s = CompressSpec::Parse("int8", "--x");
      auto c = MakeCodec(s, block);
      const std::vector<float> d = RoundTrip(*c, x);
      EXPECT_EQ(c->EncodedBytes(n), n + 4 * ((n + block - 1) / block));
      for (int64_t b = 0; b * block < n; ++b) {
        float amax = 0;
        for (int64_t i = b * block; i < std::min(n, (b + 1) * block); ++i) amax = std::max(amax, std::fabs(x[i]));
        const float bound = amax / 127.0F * 0.5F * (1 + 1e-5F);
        for (int64_t i = b * block; i < std::min(n, (b + 1) * block); ++i) {
          ASSERT_LE(std::fabs(d[i] - x[i]), bound) << "n " << n << " block " << block << " i " << i;
        }
      }
    }
    for (int levels : {1, 4, 15, 127}) {
      CompressSpec s;
      s.method = CompressMethod::kQsgd;
      s.levels = levels;
      auto c = MakeCodec(s, 64);
      const std::vector<float> d = RoundTrip(*c, x, 99);
      for (int64_t b = 0; b * 64 < n; ++b) {
        double sq = 0;
        for (int64_t i = b * 64; i < std::min(n, (b + 1) * 64); ++i) sq += static_cast<double>(x[i]) * x[i];
        const double step = std::sqrt(sq) / levels;  // one quantisation level
        for (int64_t i = b * 64; i < std::min(n, (b + 1) * 64); ++i) {
          ASSERT_LE(std::fabs(d[i] - x[i]), step * (1 + 1e-5)) << "levels " << levels << " i " << i;
          ASSERT_TRUE(d[i] == 0 || std::signbit(d[i]) == std::signbit(x[i])) << i;
        }
      }
    }
  }
}

TEST(Codecs, TopKKeepsExactlyTheLargestMagnitudes) {
  for (int64_t n : {1, 10, 1000, 4099}) {
    const std::vector<float> x = Floats(3, 1, n);
    for (double ratio : {0.001, 0.01, 0.3, 1.0}) {
      CompressSpec s;
      s.method = CompressMethod::kTopK;
      s.ratio = ratio;
      auto c = MakeCodec(s, 0);
      const int64_t k = KeepCount(n, ratio);
      EXPECT_EQ(c->EncodedBytes(n), 8 * k);
      const std::vector<float> d = RoundTrip(*c, x);
      float smallest_kept = INFINITY;
      float largest_dropped = 0;
      int64_t kept = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (d[i] != 0) {
          ASSERT_EQ(d[i], x[i]);  // copied, not rounded
          smallest_kept = std::min(smallest_kept, std::fabs(x[i]));
          ++kept;
        } else {
          largest_dropped = std::max(largest_dropped, std::fabs(x[i]));
        }
      }
      EXPECT_EQ(kept, k);
      EXPECT_LE(largest_dropped, smallest_kept);
    }
  }
}

TEST(Codecs, TopKIndicesBreakTiesTowardsTheSmallerIndexAndRankNaNFirst) {
  const std::vector<float> x = {1, -3, 3, 0, NAN, 2};
  EXPECT_EQ(TopKIndices(x, 2), (std::vector<uint32_t>{1, 4}));
  EXPECT_EQ(TopKIndices(x, 3), (std::vector<uint32_t>{1, 2, 4}));
  EXPECT_EQ(TopKIndices(x, 0), std::vector<uint32_t>{});
}

TEST(Codecs, QsgdIsUnbiased) {
  const int64_t n = 200;
  const std::vector<float> x = Floats(8, 0, n);
  CompressSpec s = CompressSpec::Parse("qsgd:4", "--x");
  auto c = MakeCodec(s, 50);
  const int trials = 4000;
  std::vector<double> mean(static_cast<size_t>(n), 0.0);
  for (int t = 0; t < trials; ++t) {
    const std::vector<float> d = RoundTrip(*c, x, static_cast<uint64_t>(t) + 1000);
    for (int64_t i = 0; i < n; ++i) mean[i] += d[i] / trials;
  }
  // Each draw is within one level (norm / s) of x, so its standard deviation is at most half a level; the mean of
  // `trials` draws is within 6 of its standard deviations. Deterministic rounding would miss by up to half a level.
  for (int64_t b = 0; b < n / 50; ++b) {
    double sq = 0;
    for (int64_t i = b * 50; i < (b + 1) * 50; ++i) sq += static_cast<double>(x[i]) * x[i];
    const double level = std::sqrt(sq) / 4;
    for (int64_t i = b * 50; i < (b + 1) * 50; ++i) {
      ASSERT_NEAR(mean[i], x[i], 6 * 0.5 * level / std::sqrt(trials)) << i;
    }
  }
}

TEST(Codecs, RandomKIndicesAreDistinctSortedAndUniform) {
  for (auto [n, k] : {std::pair<int64_t, int64_t>{10, 10}, {10, 3}, {1000, 10}, {1000, 900}, {5, 0}}) {
    const std::vector<uint32_t> idx = RandomKIndices(n, k, 42);
    ASSERT_EQ(static_cast<int64_t>(idx.size()), k);
    ASSERT_TRUE(std::is_sorted(idx.begin(), idx.end()));
    ASSERT_TRUE(std::adjacent_find(idx.begin(), idx.end()) == idx.end());
    if (k > 0) {
      ASSERT_LT(idx.back(), n);
    }
  }
  // Every index is drawn with probability k / n.
  std::vector<int> hits(50, 0);
  const int trials = 20000;
  for (int t = 0; t < trials; ++t) {
    for (uint32_t i : RandomKIndices(50, 5, static_cast<uint64_t>(t))) ++hits[i];
  }
  const double p = 5.0 / 50;
  for (int h : hits) EXPECT_NEAR(h, trials * p, 6 * std::sqrt(trials * p * (1 - p)));
}

TEST(CompressSpec, ParsesEveryFormAndRefusesBadOnes) {
  for (std::string text :
       {"none", "fp16", "bf16", "int8", "int8:64", "qsgd:7", "topk:0.01", "randk:0.5", "cltk:0.001", "powersgd:2"}) {
    const CompressSpec s = CompressSpec::Parse(text, "--grad-compress");
    EXPECT_EQ(CompressSpec::Parse(s.ToString(), "--grad-compress"), s) << text;
  }
  EXPECT_EQ(CompressSpec::Parse("qsgd", "--x").levels, 15);
  EXPECT_EQ(CompressSpec::Parse("topk", "--x").ratio, 0.01);
  for (std::string bad : {"", "zip", "topk:0", "topk:1.5", "topk:abc", "qsgd:0", "qsgd:200", "int8:0", "int8:2.5",
                          "fp16:3", "powersgd:0", "topk:", "none:1"}) {
    try {
      (void)CompressSpec::Parse(bad, "--grad-compress");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--grad-compress"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW((void)MakeCodec(CompressSpec::Parse("cltk", "--x"), 1), Error);
}

// ---- Compressed allreduces.

// Runs the allreduce of `spec` on `ranks` thread ranks for a few steps; returns every rank's output of every step.
std::vector<std::vector<std::vector<float>>> RunAllreduce(const std::string& spec, int ranks, int64_t n, int steps,
                                                          std::vector<MatrixShape> shapes = {},
                                                          CompressStats* rank0_stats = nullptr) {
  std::vector<std::vector<std::vector<float>>> out(static_cast<size_t>(ranks));
  WithWatchdog(kLimit, [&] {
    ThreadGroup::Run(ranks, [&](Communicator& c) {
      auto ar = MakeCompressedAllreduce(CompressSpec::Parse(spec, "--x"), shapes, 11);
      CompressStats st;
      for (int step = 0; step < steps; ++step) {
        std::vector<float> x = Floats(static_cast<uint64_t>(step), c.Rank(), n);
        ar->Allreduce(c, x, static_cast<uint64_t>(step), "gradients", &st).ThrowIfError();
        out[static_cast<size_t>(c.Rank())].push_back(std::move(x));
      }
      if (c.Rank() == 0 && rank0_stats != nullptr) *rank0_stats = st;
    });
  });
  return out;
}

void ExpectIdenticalOnEveryRank(const std::vector<std::vector<std::vector<float>>>& out, const std::string& what) {
  for (size_t r = 1; r < out.size(); ++r) {
    for (size_t s = 0; s < out[0].size(); ++s) {
      ASSERT_TRUE(out[0][s].empty() || std::memcmp(out[r][s].data(), out[0][s].data(), out[0][s].size() * 4) == 0)
          << what << ": rank " << r << " step " << s << " differs from rank 0";
    }
  }
}

class CompressedAllreduceRanks : public ::testing::TestWithParam<int> {};

TEST_P(CompressedAllreduceRanks, CodecMethodsEqualTheirSerialReference) {
  const int p = GetParam();
  for (const std::string spec : {"none", "fp16", "bf16", "int8", "qsgd", "topk:0.05"}) {
    for (int64_t n : {0, 1, 300, 1001}) {
      const auto out = RunAllreduce(spec, p, n, 1);
      ExpectIdenticalOnEveryRank(out, spec);
      auto codec = MakeCodec(CompressSpec::Parse(spec, "--x"), 256);
      std::vector<float> want(static_cast<size_t>(n), 0.0F);
      if (codec->SumType()) {
        // The network sums the wire elements in rank order, rounding to the wire type after each addition.
        std::vector<std::byte> acc = Encode(*codec, Floats(0, 0, n), 0);
        for (int r = 1; r < p; ++r) {
          const std::vector<std::byte> w = Encode(*codec, Floats(0, r, n), 0);
          ReduceInto(acc.data(), w.data(), n, *codec->SumType(), ReduceOp::kSum);
        }
        codec->Decode(acc, want, false);
      } else {
        // Every rank's block decoded and summed in rank order; the seeds are the allreduce's per-rank draws.
        for (int r = 0; r < p; ++r) {
          const uint64_t seed = Mix64(11 ^ Mix64(0 * 1000003ULL + static_cast<uint64_t>(r)));
          codec->Decode(Encode(*codec, Floats(0, r, n), seed), want, true);
        }
      }
      ASSERT_EQ(out[0][0], want) << spec << " n " << n << " ranks " << p;
    }
  }
}

TEST_P(CompressedAllreduceRanks, ApproximatesTheSumWithinTheCodecsBound) {
  const int p = GetParam();
  const int64_t n = 4096;
  std::vector<float> exact(n, 0.0F);
  for (int r = 0; r < p; ++r) {
    const std::vector<float> x = Floats(0, r, n);
    for (int64_t i = 0; i < n; ++i) exact[i] += x[i];
  }
  // Inputs are in [-1, 1]: int8 loses at most 1/254 per rank; fp16 (bf16) at most half an ulp, 2^-11 (2^-8)
  // relative, per rank's encoding and per addition of the network's sum, whose partial sums stay below p.
  for (auto [spec, tol] : {std::pair<std::string, double>{"fp16", p * (p + 1.0) * 0x1p-12},
                           {"bf16", p * (p + 1.0) * 0x1p-9},
                           {"int8", 1.01 * p / 254.0}}) {
    const auto out = RunAllreduce(spec, p, n, 1);
    for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(out[0][0][i], exact[i], tol + 1e-6) << spec << " i " << i;
  }
}

TEST_P(CompressedAllreduceRanks, SharedIndexMethodsEqualTheirSerialReference) {
  const int p = GetParam();
  const int64_t n = 2000;
  // random-k: the same indices on every rank, each rank's values scaled by n/k, summed in rank order.
  {
    const auto out = RunAllreduce("randk:0.05", p, n, 1);
    ExpectIdenticalOnEveryRank(out, "randk");
    std::vector<float> want(n, 0.0F);
    for (int r = 0; r < p; ++r) {
      std::vector<float> one;
      ThreadGroup::Run(1, [&](Communicator& c) {
        one = Floats(0, r, n);
        MakeCompressedAllreduce(CompressSpec::Parse("randk:0.05", "--x"), {}, 11)
            ->Allreduce(c, one, 0, "g", nullptr)
            .ThrowIfError();
      });
      for (int64_t i = 0; i < n; ++i) want[i] += one[i];
    }
    ASSERT_EQ(out[0][0], want);
    EXPECT_EQ(std::count_if(want.begin(), want.end(), [](float v) { return v != 0; }), KeepCount(n, 0.05));
  }
  // CLT-k, step 0: the leader is rank 0; its top-k indices carry every rank's values, summed in rank order.
  {
    const auto out = RunAllreduce("cltk:0.05", p, n, 2);
    ExpectIdenticalOnEveryRank(out, "cltk");
    const std::vector<uint32_t> idx = TopKIndices(Floats(0, 0, n), KeepCount(n, 0.05));
    std::vector<float> want(n, 0.0F);
    for (int r = 0; r < p; ++r) {
      const std::vector<float> x = Floats(0, r, n);
      for (uint32_t i : idx) want[i] += x[i];
    }
    ASSERT_EQ(out[0][0], want);
  }
}

TEST_P(CompressedAllreduceRanks, PowerSgdIsExactForLowRankSumsAndIdenticalOnEveryRank) {
  const int p = GetParam();
  // Each rank's gradient is U V_r^T with U (40 x 2) shared: the sum has rank 2, which rank-2 PowerSGD captures in
  // one step. The bias-like 1 x 40 row and the 3 x 3 matrix are sent uncompressed.
  const std::vector<MatrixShape> shapes = {{40, 30}, {1, 40}, {3, 3}};
  const int64_t n = 40 * 30 + 40 + 9;
  std::vector<std::vector<float>> outs(static_cast<size_t>(p));
  std::vector<float> exact(n, 0.0F);
  auto input = [&](int r) {
    std::vector<float> u = Floats(500, 0, 80);
    std::vector<float> v = Floats(501, r, 60);
    std::vector<float> x = Floats(502, r, n);
    for (int64_t i = 0; i < 40; ++i) {
      for (int64_t j = 0; j < 30; ++j) x[i * 30 + j] = u[i * 2] * v[j * 2] + u[i * 2 + 1] * v[j * 2 + 1];
    }
    return x;
  };
  for (int r = 0; r < p; ++r) {
    const std::vector<float> x = input(r);
    for (int64_t i = 0; i < n; ++i) exact[i] += x[i];
  }
  WithWatchdog(kLimit, [&] {
    ThreadGroup::Run(p, [&](Communicator& c) {
      auto ar = MakeCompressedAllreduce(CompressSpec::Parse("powersgd:2", "--x"), shapes, 3);
      std::vector<float> x = input(c.Rank());
      CompressStats st;
      ar->Allreduce(c, x, 0, "gradients", &st).ThrowIfError();
      outs[static_cast<size_t>(c.Rank())] = x;
      if (c.Size() > 1) {
        EXPECT_EQ(st.raw_bytes, static_cast<uint64_t>(n) * 4);
        EXPECT_EQ(st.wire_bytes, static_cast<uint64_t>((40 + 30) * 2 + 40 + 9) * 4);
      }
    });
  });
  for (int r = 1; r < p; ++r) ASSERT_EQ(outs[static_cast<size_t>(r)], outs[0]);
  for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(outs[0][i], exact[i], 1e-4 * p) << i;
  for (int64_t i = 40 * 30; i < n; ++i) {
    float want = 0;
    for (int r = 0; r < p; ++r) want += input(r)[i];
    ASSERT_EQ(outs[0][i], want) << "uncompressed element " << i;
  }
}

TEST_P(CompressedAllreduceRanks, WireBytesAreCountedAndSmaller) {
  const int p = GetParam();
  const int64_t n = 100000;
  for (auto [spec, max_share] : {std::pair<std::string, double>{"none", 1.0},
                                 {"fp16", 0.5},
                                 {"int8", 0.26},
                                 {"qsgd", 0.17},
                                 {"topk:0.01", 0.0201},
                                 {"randk:0.01", 0.0101},
                                 {"cltk:0.01", 0.0201}}) {
    CompressStats st;
    RunAllreduce(spec, p, n, 2, {}, &st);
    if (p == 1) {
      EXPECT_EQ(st.raw_bytes, 0U) << spec;
      EXPECT_EQ(st.wire_bytes, 0U) << spec;
      continue;
    }
    EXPECT_EQ(st.raw_bytes, 2U * n * 4) << spec;
    EXPECT_GT(st.wire_bytes, 0U) << spec;
    EXPECT_LE(static_cast<double>(st.wire_bytes), max_share * static_cast<double>(st.raw_bytes)) << spec;
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, CompressedAllreduceRanks, ::testing::Values(1, 2, 3, 4, 5, 8));

TEST(ErrorFeedback, TopKAndCltKTransmitEveryInputExactly) {
  // One step with g, then zero inputs: what is sent over the steps adds up to g exactly (nothing lost, nothing
  // rounded), after ceil(1 / ratio) steps.
  for (const std::string spec : {"topk:0.1", "cltk:0.1"}) {
    ThreadGroup::Run(1, [&](Communicator& c) {
      const int64_t n = 1000;
      const std::vector<float> g = Floats(4, 0, n);
      auto ar = MakeCompressedAllreduce(CompressSpec::Parse(spec, "--x"), {}, 1);
      std::vector<float> sent(n, 0.0F);
      for (int step = 0; step < 10; ++step) {
        std::vector<float> x = step == 0 ? g : std::vector<float>(n, 0.0F);
        ar->Allreduce(c, x, static_cast<uint64_t>(step), "g", nullptr).ThrowIfError();
        for (int64_t i = 0; i < n; ++i) {
          if (x[i] != 0) {
            ASSERT_EQ(sent[i], 0.0F) << spec << ": element " << i << " sent twice";
            sent[i] = x[i];
          }
        }
      }
      EXPECT_EQ(sent, g) << spec;
    });
  }
}

TEST(ErrorFeedback, PowerSgdResidualsCarryWhatRankOneMissed) {
  // A full-rank matrix through rank-1 PowerSGD: with error feedback the running sum of what was sent approaches
  // the input; without it (fresh state every step) it would stay at the rank-1 part.
  ThreadGroup::Run(1, [&](Communicator& c) {
    const int64_t rows = 12;
    const int64_t cols = 10;
    const std::vector<float> g = Floats(9, 0, rows * cols);
    auto ar = MakeCompressedAllreduce(CompressSpec::Parse("powersgd:1", "--x"), {{rows, cols}}, 1);
    std::vector<double> sent(rows * cols, 0.0);
    double first_error = 0;
    for (int step = 0; step < 400; ++step) {
      std::vector<float> x = step == 0 ? g : std::vector<float>(rows * cols, 0.0F);
      ar->Allreduce(c, x, static_cast<uint64_t>(step), "g", nullptr).ThrowIfError();
      double err = 0;
      for (int64_t i = 0; i < rows * cols; ++i) {
        sent[i] += x[i];
        err = std::max(err, std::fabs(sent[i] - g[i]));
      }
      if (step == 0) first_error = err;
    }
    for (int64_t i = 0; i < rows * cols; ++i) ASSERT_NEAR(sent[i], g[i], 1e-3) << i;
    EXPECT_GT(first_error, 0.05);  // one step alone is far off: the residual did the work
  });
}

TEST(CompressedAllreduce, RandomKIsUnbiased) {
  const int64_t n = 50;
  const std::vector<float> x = Floats(12, 0, n);
  const int trials = 20000;
  std::vector<double> mean(n, 0.0);
  ThreadGroup::Run(1, [&](Communicator& c) {
    auto ar = MakeCompressedAllreduce(CompressSpec::Parse("randk:0.1", "--x"), {}, 5);
    for (int t = 0; t < trials; ++t) {
      std::vector<float> y = x;
      ar->Allreduce(c, y, static_cast<uint64_t>(t), "g", nullptr).ThrowIfError();
      for (int64_t i = 0; i < n; ++i) mean[i] += y[i] / trials;
    }
  });
  // Each draw is x_i n/k with probability k/n, else 0: variance x_i^2 (n/k - 1).
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_NEAR(mean[i], x[i], 6 * std::fabs(x[i]) * std::sqrt((10.0 - 1) / trials) + 1e-9) << i;
  }
}

TEST(CompressedAllreduce, AFailingRankEndsTheCollectiveWithItsMessage) {
  for (const std::string spec : {"fp16", "topk:0.1", "cltk:0.1", "powersgd:1"}) {
    try {
      WithWatchdog(kLimit, [&] {
        ThreadGroup::Run(3, [&](Communicator& c) {
          auto ar = MakeCompressedAllreduce(CompressSpec::Parse(spec, "--x"), {{10, 10}}, 1);
          std::vector<float> x = Floats(1, c.Rank(), 100);
          if (c.Rank() == 1) throw Error("rank one ran out of disk");
          ar->Allreduce(c, x, 0, "g", nullptr).ThrowIfError();
        });
      });
      ADD_FAILURE() << spec << ": no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("rank 1 failed: rank one ran out of disk"), std::string::npos)
          << spec << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace tessel::comm
