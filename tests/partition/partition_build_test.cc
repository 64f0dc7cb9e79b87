// Partition invariants on random, directed, weighted and grid graphs for METIS, random and hash at several K,
// checked against brute-force oracles: ownership, edges, halos, id maps, node data, statistics.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <variant>

#include "core/error.h"
#include "partition/partition_build.h"
#include "partition/partition_stats.h"
#include "partition/partitioner.h"
#include "tests/partition/invariants.h"
#include "tests/partition/test_graphs.h"

namespace tessel::partition {
namespace {

using fixtures::BuildAll;
using fixtures::CheckParts;
using fixtures::GraphSpec;
using fixtures::RandomDataset;

class InvariantTest : public ::testing::TestWithParam<std::tuple<Method, int32_t, int>> {};

GraphSpec SpecNumber(int which) {
  GraphSpec s;
  switch (which) {
    case 0:  // symmetric, dense features
      break;
    case 1:  // directed with self-loops and weights, sparse features, 64-bit ids
      s.directed = true;
      s.self_loops = true;
      s.weighted = true;
      s.sparse_features = true;
      s.int64_ids = true;
      s.seed = 2;
      break;
    case 2:  // larger and sparser, no split, no features
      s.nodes = 600;
      s.edges = 1500;
      s.split = false;
      s.feature_dim = 0;
      s.seed = 3;
      break;
    default:  // symmetric with self-loops and isolated nodes
      s.nodes = 150;
      s.edges = 100;
      s.self_loops = true;
      s.seed = 4;
      break;
  }
  return s;
}

TEST_P(InvariantTest, PartsMatchTheOriginalGraph) {
  const auto [method, k, which] = GetParam();
  const datasets::NodeDataset d = RandomDataset(SpecNumber(which));
  PartitionOptions opt;
  opt.method = method;
  opt.num_parts = k;
  opt.seed = 7;
  const Assignment a = ComputeAssignment(d, opt);
  ASSERT_EQ(static_cast<int64_t>(a.part.size()), d.num_nodes());
  CheckParts(d, a.part, k, BuildAll(d, a.part, k));
}

INSTANTIATE_TEST_SUITE_P(Graphs, InvariantTest,
                         ::testing::Combine(::testing::Values(Method::kMetis, Method::kRandom, Method::kHash),
                                            ::testing::Values(1, 2, 3, 8), ::testing::Values(0, 1, 2, 3)));

// A hand-made graph with a fixed assignment: the exact local arrays.
TEST(PartitionBuild, PathGraphByHand) {
  // 0 - 1 - 2 - 3 - 4 plus 4 - 0; parts {0, 2, 4} and {1, 3}.
  datasets::EdgeList e;
  for (auto [u, v] : {std::pair{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 0}}) e.Add(u, v);
  datasets::NodeDataset d;
  d.graph = datasets::GraphBuilder().Build<int32_t>(e);
  const std::vector<int32_t> assignment{0, 1, 0, 1, 0};
  const PartitionPlan plan = MakePlan(assignment, 2);
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{0, 3, 5}));
  EXPECT_EQ(plan.members, (std::vector<int64_t>{0, 2, 4, 1, 3}));
  PartBuilder b(d, plan);
  const LocalPart p0 = b.Build(0);
  EXPECT_EQ(p0.owned_ids.ToVector(), (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(p0.halo_ids.ToVector(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(p0.halo_owner.ToVector(), (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(p0.halo_remote.ToVector(), (std::vector<int64_t>{0, 1}));
  // Local ids: 0->0, 2->1, 4->2, 1->3, 3->4. Rows: 0:{1,4}->{3,2}, 2:{1,3}->{3,4}, 4:{0,3}->{0,4}.
  EXPECT_EQ(p0.graph.indptr().ToVector(), (std::vector<int64_t>{0, 2, 4, 6, 6, 6}));
  EXPECT_EQ(p0.graph.indices().ToVector(), (std::vector<int32_t>{2, 3, 3, 4, 0, 4}));
  const LocalPart p1 = b.Build(1);
  EXPECT_EQ(p1.global_offset, 3);
  EXPECT_EQ(p1.halo_ids.ToVector(), (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(p1.halo_remote.ToVector(), (std::vector<int64_t>{0, 1, 2}));
  PartitionStats s = ComputeStats(d, assignment, 2);
  EXPECT_EQ(s.edge_cut, 4);  // 0-1, 1-2, 2-3, 3-4 cross; 4-0 does not
  EXPECT_EQ(s.cut_entries, 8);
  EXPECT_TRUE(s.symmetric);
}

TEST(PartitionBuild, PlanRejectsOutOfRangeParts) {
  EXPECT_THROW(MakePlan({0, 2}, 2), Error);
  EXPECT_THROW(MakePlan({0, -1}, 2), Error);
}

}  // namespace
}  // namespace tessel::partition
