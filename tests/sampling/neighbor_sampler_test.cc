// Neighbour sampler properties: block shapes and the destination-prefix convention, picks are real neighbours
// within the fanout, reproducibility from the stream key, and unbiasedness: the mean of many sampled blocks
// equals the full aggregation (Â or mean) for uniform and weighted picks, with and without replacement.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "core/rng.h"
#include "datasets/graph_builder.h"
#include "sampling/neighbor_sampler.h"

namespace tessel::sampling {
namespace {

datasets::AnyGraph RandomGraph(int64_t n, int64_t edges, uint64_t seed, bool weighted) {
  datasets::EdgeList el;
  el.num_nodes = n;
  Rng rng(seed);
  for (int64_t e = 0; e < edges; ++e) {
    el.Add(static_cast<int64_t>(rng.UniformInt(n)), static_cast<int64_t>(rng.UniformInt(n)));
    if (weighted) el.weights.push_back(static_cast<float>(0.2 + rng.Uniform()));
  }
  return datasets::AnyGraph(datasets::GraphBuilder().Build<int32_t>(el));
}

// Dense [num_dst x n] matrix of a block's weights in global node ids.
std::vector<double> GlobalDense(const Block& b, int64_t n) {
  std::vector<double> d(static_cast<size_t>(b.num_dst * n), 0.0);
  auto p = b.adj.indptr.Host();
  auto idx = b.adj.indices.Host();
  auto val = b.adj.values.Host();
  for (int64_t i = 0; i < b.num_dst; ++i)
    for (int64_t e = p[i]; e < p[i + 1]; ++e) d[i * n + b.src_nodes[idx[e]]] += val[e];
  return d;
}

// The full aggregation row of u over global ids.
std::vector<double> FullRow(const datasets::CsrGraph32& g, int64_t u, Aggregation agg) {
  std::vector<double> row(static_cast<size_t>(g.num_nodes()), 0.0);
  const double du = static_cast<double>(g.Degree(u)) + (agg == Aggregation::kGcn ? 1.0 : 0.0);
  if (agg == Aggregation::kGcn) row[u] = 1.0 / du;
  for (int32_t v : g.Neighbors(u)) {
    const double dv = static_cast<double>(g.Degree(v)) + 1.0;
    row[v] += agg == Aggregation::kGcn ? 1.0 / std::sqrt(du * dv) : 1.0 / du;
  }
  return row;
}

TEST(NeighborSampler, BlocksHaveDestinationPrefixAndRespectFanouts) {
  const auto graph = RandomGraph(200, 1500, 1, false);
  const auto& g = std::get<datasets::CsrGraph32>(graph);
  for (bool replace : {false, true}) {
    NeighborSampler sampler(graph, SamplerOptions{{4, 3}, replace, Aggregation::kMean});
    const std::vector<int64_t> seeds{5, 17, 3, 150};
    auto blocks = sampler.Sample(seeds, StreamKey{.seed = 1});
    ASSERT_EQ(blocks.size(), 2U);
    EXPECT_EQ(blocks[1].num_dst, 4);
    EXPECT_EQ(std::vector<int64_t>(blocks[1].src_nodes.begin(), blocks[1].src_nodes.begin() + 4), seeds);
    EXPECT_EQ(blocks[0].num_dst, blocks[1].num_src());
    for (int l = 0; l < 2; ++l) {
      const Block& b = blocks[static_cast<size_t>(l)];
      b.adj.Validate();
      EXPECT_EQ(std::set<int64_t>(b.src_nodes.begin(), b.src_nodes.end()).size(), b.src_nodes.size());
      const int k = l == 0 ? 4 : 3;
      auto p = b.adj.indptr.Host();
      for (int64_t i = 0; i < b.num_dst; ++i) {
        const int64_t u = b.src_nodes[i];
        const int64_t picks = p[i + 1] - p[i];
        if (replace) {
          EXPECT_EQ(picks, g.Degree(u) > 0 ? k : 0);
        } else {
          EXPECT_EQ(picks, std::min<int64_t>(k, g.Degree(u)));
        }
        auto nb = g.Neighbors(u);
        std::set<int64_t> seen;
        for (int64_t e = p[i]; e < p[i + 1]; ++e) {
          const int64_t v = b.src_nodes[b.adj.indices[e]];
          EXPECT_TRUE(std::binary_search(nb.begin(), nb.end(), static_cast<int32_t>(v))) << u << "->" << v;
          if (!replace) {
            EXPECT_TRUE(seen.insert(v).second) << "repeat without replacement";
          }
        }
      }
    }
  }
}

TEST(NeighborSampler, ReproducibleFromKeyAndChecksInput) {
  const auto graph = RandomGraph(300, 3000, 2, false);
  NeighborSampler sampler(graph, SamplerOptions{{5, 5}, false, Aggregation::kGcn});
  std::vector<int64_t> seeds{1, 2, 3, 4, 5, 6, 7, 8};
  auto a = sampler.Sample(seeds, StreamKey{.seed = 3, .epoch = 1});
  auto b = sampler.Sample(seeds, StreamKey{.seed = 3, .epoch = 1});
  auto c = sampler.Sample(seeds, StreamKey{.seed = 3, .epoch = 2});
  EXPECT_EQ(a[0].src_nodes, b[0].src_nodes);
  EXPECT_EQ(a[0].adj.values.ToVector(), b[0].adj.values.ToVector());
  EXPECT_NE(a[0].src_nodes, c[0].src_nodes);
  EXPECT_THROW(sampler.Sample(std::vector<int64_t>{300}, StreamKey{}), Error);
  EXPECT_THROW(sampler.Sample(std::vector<int64_t>{1, 1}, StreamKey{}), Error);
  EXPECT_THROW(NeighborSampler(graph, SamplerOptions{{5, 0}, false, Aggregation::kGcn}), Error);
  EXPECT_THROW(NeighborSampler(graph, SamplerOptions{{}, false, Aggregation::kGcn}), Error);
}

struct UnbiasedCase {
  Aggregation agg;
  bool replace;
  bool weighted_policy;
};

class Unbiased : public ::testing::TestWithParam<UnbiasedCase> {};

TEST_P(Unbiased, MeanOfSampledBlocksIsTheFullAggregation) {
  const auto c = GetParam();
  const int64_t n = 40;
  const auto graph = RandomGraph(n, 400, 4, true);
  const auto& g = std::get<datasets::CsrGraph32>(graph);
  std::shared_ptr<const PickPolicy> policy;
  if (c.weighted_policy) policy = std::make_shared<EdgeWeightPolicy>(g.weights().Host());
  NeighborSampler sampler(graph, SamplerOptions{{3}, c.replace, c.agg}, policy);
  const std::vector<int64_t> seeds{0, 7, 13, 21};
  const int draws = 20000;
  std::vector<double> mean(seeds.size() * n, 0.0);
  std::vector<double> mean_sq(mean.size(), 0.0);
  for (int t = 0; t < draws; ++t) {
    auto blocks = sampler.Sample(seeds, StreamKey{.seed = 5, .batch = static_cast<uint64_t>(t)});
    auto d = GlobalDense(blocks[0], n);
    for (size_t i = 0; i < d.size(); ++i) {
      mean[i] += d[i] / draws;
      mean_sq[i] += d[i] * d[i] / draws;
    }
  }
  for (size_t i = 0; i < seeds.size(); ++i) {
    ASSERT_GT(g.Degree(seeds[i]), 3) << "pick seeds with more neighbours than the fanout";
    auto full = FullRow(g, seeds[i], c.agg);
    double row_sum_full = 0;
    double row_sum_mean = 0;
    for (int64_t v = 0; v < n; ++v) {
      // Within 5 standard errors of the sample mean (the estimator's spread measured from the draws).
      const size_t k = i * n + v;
      const double se = std::sqrt(std::max(0.0, mean_sq[k] - mean[k] * mean[k]) / draws);
      EXPECT_NEAR(mean[k], full[v], 5 * se + 1e-6) << "seed " << seeds[i] << " node " << v;
      if (full[v] == 0) {
        EXPECT_EQ(mean[k], 0.0);
      }
      row_sum_full += full[v];
      row_sum_mean += mean[i * n + v];
    }
    EXPECT_NEAR(row_sum_mean, row_sum_full, 0.03 * row_sum_full);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Policies, Unbiased,
    ::testing::Values(UnbiasedCase{Aggregation::kGcn, false, false}, UnbiasedCase{Aggregation::kGcn, true, false},
                      UnbiasedCase{Aggregation::kMean, false, false}, UnbiasedCase{Aggregation::kMean, true, false},
                      UnbiasedCase{Aggregation::kGcn, true, true}, UnbiasedCase{Aggregation::kGcn, false, true}));

TEST(PickRow, WeightedWithoutReplacementHasExactInclusionProbabilities) {
  // q = (1, 2, 3, 4), k = 2: pi = min(1, c q) with sum 2 -> (0.2, 0.4, 0.6, 0.8).
  class Fixed final : public PickPolicy {
   public:
    bool Uniform() const override { return false; }
    void Probabilities(int64_t, int64_t, std::span<double> q) const override {
      for (size_t j = 0; j < q.size(); ++j) q[j] = static_cast<double>(j + 1);
    }
  } policy;
  std::vector<double> count(4, 0.0);
  std::vector<double> scratch;
  const int draws = 20000;
  for (int t = 0; t < draws; ++t) {
    Rng rng(static_cast<uint64_t>(t));
    std::vector<Pick> picks;
    PickRow(0, 0, 4, 2, false, policy, rng, &scratch, &picks);
    ASSERT_EQ(picks.size(), 2U);
    ASSERT_NE(picks[0].offset, picks[1].offset);
    for (const Pick& p : picks) count[p.offset] += 1.0 / draws;
  }
  const double pi[4] = {0.2, 0.4, 0.6, 0.8};
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(count[j], pi[j], 0.015) << j;
}

}  // namespace
}  // namespace tessel::sampling
