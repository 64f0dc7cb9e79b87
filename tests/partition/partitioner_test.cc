// Partitioners: METIS balance and cut quality against the random/hash baselines, determinism by seed, option
// parsing, and bad input (K out of range, train balance without a split, bad imbalance).
#include "partition/partitioner.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "partition/partition_stats.h"
#include "tests/partition/test_graphs.h"

namespace tessel::partition {
namespace {

using fixtures::GraphSpec;
using fixtures::GridDataset;
using fixtures::Options;
using fixtures::RandomDataset;

std::string ErrorOf(const datasets::NodeDataset& d, const PartitionOptions& o) {
  try {
    ComputeAssignment(d, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Partitioner, MetisBeatsBaselinesOnAGrid) {
  const datasets::NodeDataset d = GridDataset(40, 40);
  for (int32_t k : {2, 4, 8}) {
    const PartitionStats metis = ComputeStats(d, ComputeAssignment(d, Options(Method::kMetis, k)).part, k);
    const PartitionStats random = ComputeStats(d, ComputeAssignment(d, Options(Method::kRandom, k)).part, k);
    const PartitionStats hash = ComputeStats(d, ComputeAssignment(d, Options(Method::kHash, k)).part, k);
    // A 40x40 grid in k near-square blocks cuts about 40 * (sqrt(k) + ...) edges; random cuts (1 - 1/k) of 3120.
    EXPECT_LT(metis.edge_cut, 40 * 6) << "k=" << k;
    EXPECT_GT(random.edge_cut, 3120 * (k - 1) / k * 9 / 10) << "k=" << k;
    EXPECT_LT(metis.edge_cut * 5, random.edge_cut);
    EXPECT_LT(metis.edge_cut * 5, hash.edge_cut);
    EXPECT_LE(metis.imbalance_nodes, 1.05 + 1e-9);
  }
}

// auto with several constraints and K <= 8 runs recursive bisection and k-way and keeps k-way's parts where they cut
// 5% less: its parts are exactly those of the winner, and its cut is no larger than bisection's on its own.
TEST(Partitioner, MetisAutoKeepsTheSmallerCutOfBothAlgorithms) {
  GraphSpec spec;
  spec.nodes = 3000;
  spec.edges = 15000;
  const datasets::NodeDataset d = RandomDataset(spec);
  for (int32_t k : {2, 3, 4, 8}) {
    for (uint64_t seed : {0, 1, 2}) {
      PartitionOptions o = Options(Method::kMetis, k, seed);
      o.balance = {Constraint::kNodes, Constraint::kEdges, Constraint::kTrain};
      const Assignment a = ComputeAssignment(d, o);
      o.metis_algorithm = MetisAlgorithm::kRecursive;
      const Assignment recursive = ComputeAssignment(d, o);
      o.metis_algorithm = MetisAlgorithm::kKway;
      const Assignment kway = ComputeAssignment(d, o);
      EXPECT_LE(a.metis_objective, recursive.metis_objective) << k << " " << seed;
      const Assignment& winner = a.algorithm == "kway" ? kway : recursive;
      EXPECT_EQ(a.part, winner.part) << k << " " << seed;
      EXPECT_EQ(a.algorithm == "kway",
                static_cast<double>(kway.metis_objective) < 0.95 * static_cast<double>(recursive.metis_objective))
          << k << " " << seed;
    }
  }
  // One constraint keeps the old rule: recursive bisection alone.
  PartitionOptions o = Options(Method::kMetis, 4);
  o.balance = {Constraint::kNodes};
  EXPECT_EQ(ComputeAssignment(d, o).algorithm, "recursive");
}

TEST(Partitioner, MetisMeetsTheImbalanceOnEveryConstraint) {
  GraphSpec spec;
  spec.nodes = 3000;
  spec.edges = 15000;
  const datasets::NodeDataset d = RandomDataset(spec);
  for (int32_t k : {2, 4, 8}) {
    PartitionOptions o = Options(Method::kMetis, k, 3);
    o.balance = {Constraint::kNodes, Constraint::kEdges, Constraint::kTrain};
    const Assignment a = ComputeAssignment(d, o);
    EXPECT_EQ(a.balance, o.balance);
    EXPECT_TRUE(a.algorithm == "recursive" || a.algorithm == "kway") << a.algorithm;
    EXPECT_GE(a.metis_objective, 0);
    const PartitionStats s = ComputeStats(d, a.part, k);
    EXPECT_LE(s.imbalance_nodes, 1.05 + 1e-9) << "k=" << k;
    EXPECT_LE(s.imbalance_edges, 1.05 + 1e-9) << "k=" << k;
    EXPECT_LE(s.imbalance_train, 1.05 + 1e-9) << "k=" << k;
    // METIS's own objective is the undirected edge cut we compute.
    EXPECT_EQ(a.metis_objective, s.edge_cut);
  }
  PartitionOptions o = Options(Method::kMetis, 16, 3);
  o.metis_algorithm = MetisAlgorithm::kKway;
  const Assignment a = ComputeAssignment(d, o);
  EXPECT_EQ(a.algorithm, "kway");
  // Default balance: nodes, edges and (the dataset has a split) train.
  EXPECT_EQ(a.balance, (std::vector<Constraint>{Constraint::kNodes, Constraint::kEdges, Constraint::kTrain}));
  const PartitionStats s = ComputeStats(d, a.part, 16);
  EXPECT_LE(s.imbalance_nodes, 1.05 + 1e-9);
  EXPECT_LE(s.imbalance_edges, 1.05 + 1e-9);
}

TEST(Partitioner, VolumeObjectiveRunsKway) {
  const datasets::NodeDataset d = GridDataset(30, 30);
  PartitionOptions o = Options(Method::kMetis, 4);
  o.objective = Objective::kVolume;
  const Assignment a = ComputeAssignment(d, o);
  EXPECT_EQ(a.algorithm, "kway");
  EXPECT_LT(ComputeStats(d, a.part, 4).edge_cut, 30 * 4);
  o.metis_algorithm = MetisAlgorithm::kRecursive;
  EXPECT_NE(ErrorOf(d, o).find("needs METIS k-way"), std::string::npos);
}

TEST(Partitioner, SameSeedSameAssignmentOtherSeedDiffers) {
  GraphSpec spec;
  spec.nodes = 1000;
  spec.edges = 5000;
  const datasets::NodeDataset d = RandomDataset(spec);
  for (Method m : {Method::kMetis, Method::kRandom}) {
    const auto a = ComputeAssignment(d, Options(m, 4, 11)).part;
    EXPECT_EQ(a, ComputeAssignment(d, Options(m, 4, 11)).part) << MethodName(m);
    EXPECT_NE(a, ComputeAssignment(d, Options(m, 4, 12)).part) << MethodName(m);
  }
  // Hash ignores the seed.
  EXPECT_EQ(ComputeAssignment(d, Options(Method::kHash, 4, 1)).part,
            ComputeAssignment(d, Options(Method::kHash, 4, 2)).part);
}

TEST(Partitioner, RandomIsExactlyBalanced) {
  GraphSpec spec;
  spec.nodes = 1001;
  const datasets::NodeDataset d = RandomDataset(spec);
  const PartitionStats s = ComputeStats(d, ComputeAssignment(d, Options(Method::kRandom, 4)).part, 4);
  for (const PartCounts& p : s.parts) EXPECT_TRUE(p.nodes == 250 || p.nodes == 251) << p.nodes;
}

TEST(Partitioner, DirectedGraphIsSymmetrisedForMetis) {
  GraphSpec spec;
  spec.nodes = 500;
  spec.edges = 2000;
  spec.directed = true;
  spec.self_loops = true;
  const datasets::NodeDataset d = RandomDataset(spec);
  const Assignment a = ComputeAssignment(d, Options(Method::kMetis, 4));
  const PartitionStats s = ComputeStats(d, a.part, 4);
  EXPECT_FALSE(s.symmetric);
  EXPECT_LE(s.imbalance_nodes, 1.05 + 1e-9);
  EXPECT_LT(s.cut_entries, ComputeStats(d, ComputeAssignment(d, Options(Method::kRandom, 4)).part, 4).cut_entries);
}

TEST(Partitioner, BadOptionsFailClearly) {
  GraphSpec spec;
  spec.nodes = 50;
  datasets::NodeDataset d = RandomDataset(spec);
  EXPECT_NE(ErrorOf(d, Options(Method::kMetis, 0)).find("--parts is 0; it must be at least 1"), std::string::npos);
  EXPECT_NE(ErrorOf(d, Options(Method::kHash, 51)).find("only 50 nodes"), std::string::npos);
  PartitionOptions o = Options(Method::kMetis, 2);
  o.imbalance = 1.0;
  EXPECT_NE(ErrorOf(d, o).find("--imbalance"), std::string::npos);
  spec.split = false;
  d = RandomDataset(spec);
  o = Options(Method::kMetis, 2);
  o.balance = {Constraint::kNodes, Constraint::kTrain};
  EXPECT_NE(ErrorOf(d, o).find("has no training split"), std::string::npos);
  o.balance.clear();  // the default leaves train out
  EXPECT_EQ(ComputeAssignment(d, o).balance, (std::vector<Constraint>{Constraint::kNodes, Constraint::kEdges}));
}

TEST(Partitioner, SinglePartSkipsMetis) {
  const datasets::NodeDataset d = GridDataset(3, 3);
  const Assignment a = ComputeAssignment(d, Options(Method::kMetis, 1));
  EXPECT_EQ(a.algorithm, "single");
  EXPECT_EQ(a.metis_objective, -1);
  EXPECT_TRUE(std::all_of(a.part.begin(), a.part.end(), [](int32_t p) { return p == 0; }));
}

TEST(Partitioner, EdgelessGraphDropsTheEdgeConstraint) {
  datasets::NodeDataset d;
  datasets::EdgeList e;
  e.num_nodes = 20;
  d.graph = datasets::GraphBuilder().Build<int32_t>(e);
  const Assignment a = ComputeAssignment(d, Options(Method::kMetis, 4));
  EXPECT_EQ(a.balance, std::vector<Constraint>{Constraint::kNodes});
  EXPECT_LE(ComputeStats(d, a.part, 4).imbalance_nodes, 1.05 + 1e-9);
}

TEST(Partitioner, ParsesNamesAndRejectsUnknownOnes) {
  EXPECT_EQ(ParseMethod("random"), Method::kRandom);
  EXPECT_EQ(ParseObjective("vol"), Objective::kVolume);
  EXPECT_EQ(ParseMetisAlgorithm("kway"), MetisAlgorithm::kKway);
  EXPECT_EQ(ParseBalance("train,nodes"), (std::vector<Constraint>{Constraint::kTrain, Constraint::kNodes}));
  EXPECT_EQ(BalanceString({Constraint::kNodes, Constraint::kEdges}), "nodes,edges");
  try {
    ParseMethod("kmeans");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("accepted: metis, random, hash"), std::string::npos);
  }
  EXPECT_THROW(ParseBalance("nodes,,edges"), Error);
  EXPECT_THROW(ParseBalance("nodes,nodes"), Error);
  EXPECT_THROW(ParseBalance("degree"), Error);
  EXPECT_THROW(ParseBalance(""), Error);
}

}  // namespace
}  // namespace tessel::partition
