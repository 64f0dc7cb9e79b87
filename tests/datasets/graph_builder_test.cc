// GraphBuilder against a serial std::set reference on random edge lists: symmetrise, self-loops, dedupe.
#include "datasets/graph_builder.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/error.h"
#include "core/rng.h"

namespace tessel::datasets {
namespace {

template <typename IdT>
void ExpectMatchesReference(const EdgeList& edges, const BuildOptions& opt, int64_t n) {
  std::vector<std::map<int64_t, float>> ref(static_cast<size_t>(n));
  std::vector<std::multiset<int64_t>> ref_multi(static_cast<size_t>(n));
  for (size_t i = 0; i < edges.size(); ++i) {
    const int64_t u = edges.src[i];
    const int64_t v = edges.dst[i];
    const float w = edges.weights.empty() ? 0.0F : edges.weights[i];
    if (opt.remove_self_loops && u == v) continue;
    auto put = [&](int64_t a, int64_t b) {
      auto [it, inserted] = ref[a].emplace(b, w);
      if (!inserted) it->second = std::max(it->second, w);
      ref_multi[a].insert(b);
    };
    put(u, v);
    if (opt.symmetrize && u != v) put(v, u);
  }
  BuildStats stats;
  const CsrGraph<IdT> g = GraphBuilder(opt).Build<IdT>(edges, &stats);
  g.Validate();
  ASSERT_EQ(g.num_nodes(), n);
  int64_t total = 0;
  for (int64_t u = 0; u < n; ++u) {
    auto nb = g.Neighbors(u);
    if (opt.dedupe) {
      ASSERT_EQ(nb.size(), ref[u].size()) << "row " << u;
      size_t k = 0;
      for (const auto& [v, w] : ref[u]) {
        EXPECT_EQ(nb[k], v);
        if (g.has_weights()) {
          EXPECT_EQ(g.NeighborWeights(u)[k], w);
        }
        ++k;
      }
    } else {
      ASSERT_EQ(nb.size(), ref_multi[u].size());
      EXPECT_TRUE(std::equal(nb.begin(), nb.end(), ref_multi[u].begin()));
    }
    total += static_cast<int64_t>(nb.size());
  }
  EXPECT_EQ(stats.entries, total);
  EXPECT_EQ(stats.input_edges, static_cast<int64_t>(edges.size()));
  if (opt.symmetrize) {
    EXPECT_TRUE(g.IsSymmetric());
  }
  if (opt.remove_self_loops) {
    EXPECT_EQ(g.CountSelfLoops(), 0);
  }
  if (opt.dedupe) {
    EXPECT_TRUE(g.RowsSortedUnique());
  }
}

EdgeList RandomEdges(uint64_t seed, int64_t n, int64_t m, bool weighted) {
  Rng r(seed);
  EdgeList e;
  e.num_nodes = n;
  for (int64_t i = 0; i < m; ++i) {
    e.Add(static_cast<int64_t>(r.UniformInt(n)), static_cast<int64_t>(r.UniformInt(n)));
    if (weighted) e.weights.push_back(static_cast<float>(r.UniformInt(5)));
  }
  return e;
}

TEST(GraphBuilder, MatchesReferenceAcrossOptions) {
  for (bool sym : {true, false}) {
    for (bool loops : {true, false}) {
      for (bool dedupe : {true, false}) {
        for (bool weighted : {false, true}) {
          if (weighted && !dedupe) continue;
          SCOPED_TRACE(testing::Message()
                       << "sym=" << sym << " loops=" << loops << " dedupe=" << dedupe << " weighted=" << weighted);
          const BuildOptions opt{.symmetrize = sym, .remove_self_loops = loops, .dedupe = dedupe};
          const EdgeList e = RandomEdges(11, 200, 3000, weighted);
          ExpectMatchesReference<int32_t>(e, opt, 200);
          ExpectMatchesReference<int64_t>(e, opt, 200);
        }
      }
    }
  }
}

TEST(GraphBuilder, LargeRandomGraphIsClean) {
  const EdgeList e = RandomEdges(5, 50000, 400000, false);
  ExpectMatchesReference<int32_t>(e, BuildOptions{}, 50000);
}

TEST(GraphBuilder, CountsSelfLoopsAndDuplicates) {
  EdgeList e;
  e.Add(0, 1);
  e.Add(1, 0);
  e.Add(2, 2);
  e.Add(0, 1);
  BuildStats s;
  const auto g = GraphBuilder().Build<int32_t>(e, &s);
  EXPECT_EQ(g.num_nodes(), 3);
  EXPECT_EQ(s.self_loops_removed, 1);
  EXPECT_EQ(s.entries, 2);
  EXPECT_EQ(s.duplicates_removed, 4);
}

TEST(GraphBuilder, IsolatedTrailingNodesKept) {
  EdgeList e;
  e.num_nodes = 10;
  e.Add(0, 1);
  const auto g = GraphBuilder().Build<int64_t>(e);
  EXPECT_EQ(g.num_nodes(), 10);
  EXPECT_EQ(g.Degree(9), 0);
}

TEST(GraphBuilder, RejectsBadIds) {
  EdgeList neg;
  neg.Add(0, -3);
  EXPECT_THROW(GraphBuilder().Build<int32_t>(neg), Error);
  EdgeList big;
  big.num_nodes = 4;
  big.Add(0, 4);
  EXPECT_THROW(GraphBuilder().Build<int32_t>(big), Error);
  EdgeList mismatch;
  mismatch.src = {0, 1};
  mismatch.dst = {1};
  EXPECT_THROW(GraphBuilder().Build<int32_t>(mismatch), Error);
}

TEST(CsrGraph, ValidateCatchesCorruption) {
  EXPECT_THROW(CsrGraph32(Buffer<int64_t>{0, 2, 1}, Buffer<int32_t>{1}).Validate(), Error);
  EXPECT_THROW(CsrGraph32(Buffer<int64_t>{0, 1, 2}, Buffer<int32_t>{1, 5}).Validate(), Error);
  EXPECT_THROW(CsrGraph32(Buffer<int64_t>{0, 1, 3}, Buffer<int32_t>{1, 0}).Validate(), Error);
  EXPECT_NO_THROW(CsrGraph32(Buffer<int64_t>{0, 1, 2}, Buffer<int32_t>{1, 0}).Validate());
}

}  // namespace
}  // namespace tessel::datasets
