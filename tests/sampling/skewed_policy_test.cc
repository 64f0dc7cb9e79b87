// Skewed local-preferring sampling: unbiased aggregates for s in {1, 2, 4, 8} and the variance budget, the remote
// share of draws against R/(s·L + R), s = 1 and single-owner rows drawing exactly what UniformPolicy draws, RowSkew
// against a brute-force search, option validation, and fewer remote source nodes in sampled blocks as s grows.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.h"
#include "datasets/graph_builder.h"
#include "sampling/neighbor_sampler.h"
#include "sampling/skewed_policy.h"

namespace tessel::sampling {
namespace {

// One row of 12 neighbours, 5 owned by part 0 and 7 by part 1, interleaved.
const std::vector<int32_t> kRowOwners{1, 0, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0};
constexpr int64_t kLocal = 5;
constexpr int64_t kRemote = 7;

SkewOptions Fixed(double s) { return SkewOptions{.skew = s}; }
SkewOptions Budget(double eps) { return SkewOptions{.variance_budget = eps}; }

struct EstimatorCase {
  SkewOptions options;
  bool replace;
  int64_t k;
};

std::string CaseName(const ::testing::TestParamInfo<EstimatorCase>& info) {
  const EstimatorCase& c = info.param;
  const std::string mode = c.options.variance_budget > 0
                               ? "budget" + std::to_string(static_cast<int>(c.options.variance_budget * 100))
                               : "s" + std::to_string(static_cast<int>(c.options.skew));
  return mode + (c.replace ? "_replace" : "_noreplace") + "_k" + std::to_string(c.k);
}

class SkewedEstimator : public ::testing::TestWithParam<EstimatorCase> {};

// The Monte-Carlo mean of sum(factor · x[pick]) converges to sum(x) within 5 standard errors of the mean.
TEST_P(SkewedEstimator, AggregateMeanConvergesToTheExactSum) {
  const EstimatorCase c = GetParam();
  const SkewedPolicy policy(kRowOwners, 0, c.options);
  const double s = RowSkew(kLocal, kRemote, c.options);
  const double z = s * static_cast<double>(kLocal) + static_cast<double>(kRemote);
  const auto deg = static_cast<int64_t>(kRowOwners.size());
  Rng value_rng(99);
  std::vector<double> x(kRowOwners.size());
  double exact = 0;
  for (double& v : x) {
    v = 1.0 + value_rng.Normal();  // mixed signs, so no factor error can cancel by positivity
    exact += v;
  }
  const int trials = 20000;
  double mean = 0;
  double mean_sq = 0;
  std::vector<double> scratch;
  std::vector<Pick> picks;
  for (int t = 0; t < trials; ++t) {
    Rng rng(StreamKey{.seed = 7, .batch = static_cast<uint64_t>(t)});
    picks.clear();
    PickRow(0, 0, deg, c.k, c.replace, policy, rng, &scratch, &picks);
    ASSERT_EQ(static_cast<int64_t>(picks.size()), c.k);
    double y = 0;
    for (const Pick& p : picks) {
      y += p.factor * x[static_cast<size_t>(p.offset)];
      if (c.replace) {  // Hansen-Hurwitz: factor = 1/(k·q) with q = w/Z, w = s (owned) or 1 (remote)
        const double w = kRowOwners[static_cast<size_t>(p.offset)] == 0 ? s : 1.0;
        ASSERT_NEAR(p.factor * static_cast<double>(c.k) * w / z, 1.0, 1e-12);
      }
    }
    mean += y / trials;
    mean_sq += y * y / trials;
  }
  const double se = std::sqrt((mean_sq - mean * mean) / trials);
  ASSERT_GT(se, 0.0);
  EXPECT_NEAR(mean, exact, 5 * se) << "s = " << s;
}

INSTANTIATE_TEST_SUITE_P(Skews, SkewedEstimator,
                         ::testing::Values(EstimatorCase{Fixed(1), true, 3}, EstimatorCase{Fixed(2), true, 3},
                                           EstimatorCase{Fixed(4), true, 3}, EstimatorCase{Fixed(8), true, 3},
                                           EstimatorCase{Fixed(1), false, 3}, EstimatorCase{Fixed(2), false, 3},
                                           EstimatorCase{Fixed(4), false, 3}, EstimatorCase{Fixed(8), false, 3},
                                           // k = 6, s = 8: owned inclusion probabilities 6·8/47 > 1 are capped at 1.
                                           EstimatorCase{Fixed(8), false, 6}, EstimatorCase{Budget(0.5), true, 3},
                                           EstimatorCase{Budget(0.5), false, 3}, EstimatorCase{Budget(0.05), false, 6}),
                         CaseName);

// The share of remote draws is R/(s·L + R): with replacement every draw is remote with that probability; without
// replacement (no inclusion probability capped) the expected remote count is k·R/(s·L + R) too.
TEST(SkewedPolicy, RemoteShareOfDrawsMatchesTheSkew) {
  const auto deg = static_cast<int64_t>(kRowOwners.size());
  const int64_t k = 3;
  for (const SkewOptions& options : {Fixed(1), Fixed(2), Fixed(4), Fixed(8), Budget(0.5)}) {
    const SkewedPolicy policy(kRowOwners, 0, options);
    const double s = RowSkew(kLocal, kRemote, options);
    const double z = s * static_cast<double>(kLocal) + static_cast<double>(kRemote);
    const double share = static_cast<double>(kRemote) / z;
    ASSERT_LT(static_cast<double>(k) * s / z, 1.0) << "no capped inclusion probability";
    for (bool replace : {true, false}) {
      const int trials = 10000;
      double count = 0;
      double count_sq = 0;
      std::vector<double> scratch;
      std::vector<Pick> picks;
      for (int t = 0; t < trials; ++t) {
        Rng rng(StreamKey{.seed = 11, .batch = static_cast<uint64_t>(t)});
        picks.clear();
        PickRow(0, 0, deg, k, replace, policy, rng, &scratch, &picks);
        double remote = 0;
        for (const Pick& p : picks) remote += kRowOwners[static_cast<size_t>(p.offset)] != 0 ? 1 : 0;
        count += remote;
        count_sq += remote * remote;
      }
      const double n = static_cast<double>(trials * k);
      // With replacement the draws are independent Bernoulli(share): the binomial standard deviation. Without,
      // the per-row counts are independent across trials: their measured spread.
      const double sd = replace ? std::sqrt(n * share * (1 - share))
                                : std::sqrt(trials * (count_sq / trials - (count / trials) * (count / trials)));
      const double zscore = (count - n * share) / sd;
      EXPECT_LT(std::abs(zscore), 4.5) << "s = " << s << " replace " << replace << " measured " << count / n
                                       << " expected " << share;
    }
  }
}

TEST(SkewedPolicy, RowSkewMatchesABruteForceSearch) {
  for (const auto& [l, r] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 10}, {10, 1}, {5, 7}, {50, 50}, {3, 200}}) {
    for (double eps : {0.01, 0.2, 1.0, 5.0}) {
      for (double cap : {4.0, 64.0}) {
        const SkewOptions options{.variance_budget = eps, .max_skew = cap};
        const auto ld = static_cast<double>(l);
        const auto rd = static_cast<double>(r);
        const double d2 = (ld + rd) * (ld + rd);
        auto fits = [&](double s) { return (s * ld + rd) * (ld / s + rd) <= (1 + eps) * d2 * (1 + 1e-12); };
        const double step = 1e-4;
        double brute = 1.0;
        for (double s = 1.0; s <= cap; s += step) {
          if (fits(s)) brute = s;
        }
        const double s = RowSkew(l, r, options);
        EXPECT_TRUE(fits(s)) << l << " " << r << " " << eps;
        EXPECT_LE(s, cap);
        EXPECT_NEAR(s, brute, 1.5 * step) << "L " << l << " R " << r << " eps " << eps << " cap " << cap;
      }
    }
  }
  EXPECT_EQ(RowSkew(0, 9, Budget(1.0)), 1.0);
  EXPECT_EQ(RowSkew(9, 0, Budget(1.0)), 1.0);
  EXPECT_EQ(RowSkew(0, 9, Fixed(4)), 1.0);
  EXPECT_EQ(RowSkew(3, 9, Fixed(4)), 4.0);
  EXPECT_THROW(RowSkew(-1, 3, Fixed(2)), Error);
}

void ExpectInvalid(const SkewOptions& options, const std::string& flag) {
  try {
    options.Validate();
    ADD_FAILURE() << "accepted skew " << options.skew << " budget " << options.variance_budget << " cap "
                  << options.max_skew;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(flag), std::string::npos) << e.what();
  }
}

TEST(SkewedPolicy, ValidateNamesTheFlagAndActiveReportsSkewing) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  ExpectInvalid(Fixed(0.5), "--skew:");
  ExpectInvalid(Fixed(nan), "--skew:");
  ExpectInvalid(Fixed(inf), "--skew:");
  ExpectInvalid(Budget(0.0), "--skew-variance");
  ExpectInvalid(Budget(nan), "--skew-variance");
  ExpectInvalid(Budget(inf), "--skew-variance");
  ExpectInvalid(SkewOptions{.variance_budget = 0.5, .max_skew = 0.5}, "--skew-max");
  ExpectInvalid(SkewOptions{.skew = 2, .variance_budget = 0.5}, "exclude each other");
  EXPECT_NO_THROW(SkewOptions{}.Validate());
  EXPECT_NO_THROW(Fixed(4).Validate());
  EXPECT_NO_THROW(Budget(0.5).Validate());
  EXPECT_FALSE(SkewOptions{}.Active());
  EXPECT_TRUE(Fixed(1.5).Active());
  EXPECT_TRUE(Budget(0.5).Active());
  EXPECT_THROW(SkewedPolicy(kRowOwners, 0, Fixed(0.5)), Error);

  const SkewedPolicy policy(kRowOwners, 0, Fixed(3));
  EXPECT_FALSE(policy.Uniform());
  EXPECT_TRUE(SkewedPolicy(kRowOwners, 0, Fixed(1)).Uniform());
  std::vector<double> q(6);
  policy.Probabilities(0, 6, q);  // owners of edges [6, 12): 0 1 1 0 1 0
  EXPECT_EQ(q, (std::vector<double>{3, 1, 1, 3, 1, 3}));
  policy.WithLocalPart(1).Probabilities(0, 6, q);
  EXPECT_EQ(q, (std::vector<double>{1, 3, 3, 1, 3, 1}));
  EXPECT_EQ(policy.WithLocalPart(1).local_part(), 1);
  EXPECT_THROW(policy.Probabilities(0, 7, q), Error);  // edges [7, 13) but only 12 owners
}

// A non-uniform policy whose row probabilities are all equal draws exactly what UniformPolicy draws.
TEST(PickRow, EqualProbabilitiesTakeTheUniformDraws) {
  class Flat final : public PickPolicy {
   public:
    bool Uniform() const override { return false; }
    void Probabilities(int64_t, int64_t, std::span<double> q) const override {
      for (double& x : q) x = 2.5;
    }
  } flat;
  const UniformPolicy uniform;
  std::vector<double> scratch;
  for (int64_t deg : {1, 3, 8, 40}) {
    for (bool replace : {true, false}) {
      for (int t = 0; t < 50; ++t) {
        Rng a(static_cast<uint64_t>(t));
        Rng b(static_cast<uint64_t>(t));
        std::vector<Pick> pa;
        std::vector<Pick> pb;
        PickRow(0, 0, deg, 5, replace, uniform, a, &scratch, &pa);
        PickRow(0, 0, deg, 5, replace, flat, b, &scratch, &pb);
        ASSERT_EQ(pa.size(), pb.size());
        for (size_t i = 0; i < pa.size(); ++i) {
          EXPECT_EQ(pa[i].offset, pb[i].offset);
          EXPECT_EQ(pa[i].factor, pb[i].factor);
        }
        EXPECT_EQ(a(), b()) << "both consumed the same random draws";
      }
    }
  }
}

datasets::AnyGraph RandomGraph(int64_t n, int64_t edges, uint64_t seed) {
  datasets::EdgeList el;
  el.num_nodes = n;
  Rng rng(seed);
  for (int64_t e = 0; e < edges; ++e) {
    el.Add(static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(n))),
           static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(n))));
  }
  return datasets::AnyGraph(datasets::GraphBuilder().Build<int32_t>(el));
}

// Part of node v: the first half of the ids is part 0, the rest part 1 (or everything in `only` when >= 0).
std::vector<int32_t> EdgeOwners(const datasets::CsrGraph32& g, int32_t only = -1) {
  const auto idx = g.indices().Host();
  std::vector<int32_t> owner(idx.size());
  for (size_t e = 0; e < idx.size(); ++e) {
    owner[e] = only >= 0 ? only : (idx[e] < g.num_nodes() / 2 ? 0 : 1);
  }
  return owner;
}

void ExpectSameBlocks(const std::vector<Block>& a, const std::vector<Block>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t l = 0; l < a.size(); ++l) {
    EXPECT_EQ(a[l].src_nodes, b[l].src_nodes);
    EXPECT_EQ(a[l].num_dst, b[l].num_dst);
    EXPECT_EQ(a[l].adj.indptr.ToVector(), b[l].adj.indptr.ToVector());
    EXPECT_EQ(a[l].adj.indices.ToVector(), b[l].adj.indices.ToVector());
    EXPECT_EQ(a[l].adj.values.ToVector(), b[l].adj.values.ToVector());  // bitwise: float operator==
  }
}

// s = 1, and any skew on rows whose neighbours all have one owner, give bitwise the uniform sampler's blocks.
TEST(SkewedPolicy, SkewOneAndSingleOwnerRowsReproduceTheUniformSampler) {
  const auto graph = RandomGraph(300, 2500, 21);
  const auto& g = std::get<datasets::CsrGraph32>(graph);
  const auto mixed = EdgeOwners(g);
  const auto all_zero = EdgeOwners(g, 0);
  std::vector<int64_t> seeds;
  for (int64_t v = 0; v < 300; v += 7) seeds.push_back(v);
  struct Variant {
    const std::vector<int32_t>* owners;
    int32_t local_part;
    SkewOptions options;
  };
  const std::vector<Variant> variants{{&mixed, 0, Fixed(1)},       {&mixed, 1, Fixed(1)},
                                      {&all_zero, 0, Fixed(4)},    {&all_zero, 1, Fixed(4)},
                                      {&all_zero, 0, Budget(0.5)}, {&all_zero, 1, Budget(0.5)}};
  for (bool replace : {false, true}) {
    for (Aggregation agg : {Aggregation::kGcn, Aggregation::kMean}) {
      const SamplerOptions options{{3, 5}, replace, agg};
      NeighborSampler base(graph, options);
      const StreamKey key{.seed = 4, .epoch = 2};
      const auto expected = base.Sample(seeds, key);
      for (const Variant& v : variants) {
        NeighborSampler skewed(graph, options, std::make_shared<SkewedPolicy>(*v.owners, v.local_part, v.options));
        ExpectSameBlocks(skewed.Sample(seeds, key), expected);
      }
      // A real skew on mixed rows does change the draws (the comparison above can fail).
      NeighborSampler skewed(graph, options, std::make_shared<SkewedPolicy>(mixed, 0, Fixed(4)));
      EXPECT_NE(skewed.Sample(seeds, key)[0].src_nodes, expected[0].src_nodes);
    }
  }
}

// Two parts; seeds owned by part 0: the share of remote nodes among the input layer's source nodes (the features
// a rank must fetch) drops as s grows.
TEST(SkewedPolicy, RemoteSourceNodesDropAsSkewGrows) {
  const int64_t n = 600;
  const auto graph = RandomGraph(n, 9000, 5);
  const auto& g = std::get<datasets::CsrGraph32>(graph);
  const auto owners = EdgeOwners(g);
  std::vector<int64_t> seeds;
  for (int64_t v = 0; v < n / 2; v += 5) seeds.push_back(v);
  for (bool replace : {false, true}) {
    double previous = 1.0;
    for (double s : {1.0, 2.0, 4.0, 8.0}) {
      NeighborSampler sampler(graph, SamplerOptions{{4, 4}, replace, Aggregation::kGcn},
                              std::make_shared<SkewedPolicy>(owners, 0, Fixed(s)));
      double remote = 0;
      double total = 0;
      for (uint64_t batch = 0; batch < 20; ++batch) {
        const auto blocks = sampler.Sample(seeds, StreamKey{.seed = 8, .batch = batch});
        for (int64_t v : blocks[0].src_nodes) remote += v >= n / 2 ? 1 : 0;
        total += static_cast<double>(blocks[0].num_src());
      }
      const double share = remote / total;
      EXPECT_LT(share, previous - 0.03) << "s = " << s << " replace " << replace;
      previous = share;
    }
  }
}

}  // namespace
}  // namespace tessel::sampling
