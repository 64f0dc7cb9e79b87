// Dataset statistics against brute-force counts on small hand-made and random datasets.
#include "datasets/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "core/rng.h"
#include "datasets/graph_builder.h"

namespace tessel::datasets {
namespace {

TEST(DegreeStats, HandComputed) {
  // Degrees 2, 0, 3, 1: min 0, max 3, mean 1.5, median (1 + 2) / 2, one isolated node.
  const std::vector<int64_t> indptr = {0, 2, 2, 5, 6};
  const DegreeStats s = ComputeDegreeStats(indptr);
  EXPECT_EQ(s.min, 0);
  EXPECT_EQ(s.max, 3);
  EXPECT_DOUBLE_EQ(s.mean, 1.5);
  EXPECT_DOUBLE_EQ(s.median, 1.5);
  EXPECT_EQ(s.isolated, 1);
  EXPECT_DOUBLE_EQ(ComputeDegreeStats(std::vector<int64_t>{0, 4, 5, 5}).median, 1.0);
  EXPECT_EQ(ComputeDegreeStats(std::vector<int64_t>{0}).max, 0);
}

TEST(NodeStats, MatchBruteForceOnARandomGraph) {
  Rng rng(3);
  EdgeList e;
  e.num_nodes = 300;
  for (int i = 0; i < 900; ++i) {
    e.Add(static_cast<int64_t>(rng.UniformInt(300)), static_cast<int64_t>(rng.UniformInt(300)));
  }
  NodeDataset d;
  d.graph = GraphBuilder({.symmetrize = true, .remove_self_loops = false}).Build<int32_t>(e);
  const auto& g = std::get<CsrGraph32>(d.graph);
  d.num_classes = 3;
  std::vector<int32_t> labels(300);
  std::vector<int64_t> want_counts(3, 0);
  int64_t want_unlabelled = 0;
  for (auto& l : labels) {
    l = rng.Uniform() < 0.2 ? kNoLabel : static_cast<int32_t>(rng.UniformInt(3));
    if (l == kNoLabel) {
      ++want_unlabelled;
    } else {
      ++want_counts[static_cast<size_t>(l)];
    }
  }
  d.labels = Buffer<int32_t>(std::move(labels));
  d.train = Buffer<int64_t>({1, 2, 3});
  d.test = Buffer<int64_t>({7});
  d.features.num_rows = 300;
  d.features.dim = 4;
  std::vector<float> dense(1200, 0.0F);
  for (size_t i = 0; i < dense.size(); i += 3) dense[i] = 1.0F;  // 400 non-zeros
  d.features.dense = Buffer<float>(std::move(dense));

  int64_t loops = 0;
  std::vector<int64_t> deg;
  for (int64_t u = 0; u < 300; ++u) {
    deg.push_back(g.Degree(u));
    for (int32_t v : g.Neighbors(u)) loops += v == u;
  }
  std::sort(deg.begin(), deg.end());
  const NodeDatasetStats s = ComputeStats(d);
  EXPECT_EQ(s.num_nodes, 300);
  EXPECT_EQ(s.self_loops, loops);
  EXPECT_GT(loops, 0);
  EXPECT_TRUE(s.symmetric);
  EXPECT_EQ(s.num_edges, (g.num_entries() - loops) / 2 + loops);
  EXPECT_EQ(s.degree.min, deg.front());
  EXPECT_EQ(s.degree.max, deg.back());
  EXPECT_DOUBLE_EQ(s.degree.median, static_cast<double>(deg[149] + deg[150]) / 2);
  EXPECT_EQ(s.degree.isolated, std::count(deg.begin(), deg.end(), 0));
  EXPECT_EQ(s.class_counts, want_counts);
  EXPECT_EQ(s.unlabelled, want_unlabelled);
  EXPECT_EQ(s.feature_nnz, 400);
  EXPECT_DOUBLE_EQ(s.feature_density, 400.0 / 1200.0);
  EXPECT_EQ(s.train, 3);
  EXPECT_EQ(s.val, 0);
  EXPECT_EQ(s.test, 1);
  EXPECT_EQ(s.id_dtype, "int32");
  const auto j = ToJson(s);
  EXPECT_EQ(j["degree"]["max"], deg.back());
  EXPECT_EQ(j["split"]["test"], 1);

  // A directed graph is not symmetric and counts its entries as edges.
  NodeDataset directed;
  directed.graph = GraphBuilder({.symmetrize = false}).Build<int64_t>(e);
  const NodeDatasetStats ds = ComputeStats(directed);
  EXPECT_FALSE(ds.symmetric);
  EXPECT_EQ(ds.num_edges, ds.num_entries);
  EXPECT_EQ(ds.unlabelled, 300);
}

TEST(SparseRowStats, ShapeDensityAndLabelCounts) {
  SparseRowDataset d;
  d.num_rows = 4;
  d.num_features = 5;
  d.indptr = Buffer<int64_t>({0, 2, 2, 5, 6});
  d.indices = Buffer<int32_t>({0, 3, 1, 2, 4, 0});
  d.values = Buffer<double>({1, 2, 3, 4, 5, 6});
  d.labels = Buffer<double>({1, -1, 1, 3.5});
  const SparseRowStats s = ComputeStats(d);
  EXPECT_EQ(s.nnz, 6);
  EXPECT_DOUBLE_EQ(s.density, 6.0 / 20.0);
  EXPECT_EQ(s.min_row_nnz, 0);
  EXPECT_EQ(s.max_row_nnz, 3);
  const std::vector<std::pair<double, int64_t>> want = {{-1.0, 1}, {1.0, 2}, {3.5, 1}};
  EXPECT_EQ(s.label_counts, want);
  EXPECT_EQ(ToJson(s)["num_classes"], 3);
}

}  // namespace
}  // namespace tessel::datasets
