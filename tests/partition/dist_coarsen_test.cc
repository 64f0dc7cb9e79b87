// The coarsening route of distributed partitioning (partition/dist_coarsen.cc, --dist-partitioner coarsen) on the
// thread communicator, 1-4 ranks, against serial METIS on the same graph: every node in exactly one part, parts within
// the requested imbalance, the edge cut within kCutSlack of serial METIS's on meshes (a grid, and the same grid with
// its node ids scrambled so no rank's block has locality) and on a random graph with local structure, and the same
// folder from two runs (deterministic). Under mpirun: tests/tools/dist_partition.cmake.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "comm/thread_comm.h"
#include "core/rng.h"
#include "datasets/graph_builder.h"
#include "datasets/native_format.h"
#include "partition/dist_partition.h"
#include "partition/partition_stats.h"
#include "tests/partition/scratch_test.h"
#include "tests/partition/test_graphs.h"

namespace tessel::partition {
namespace {

namespace fs = std::filesystem;

// The cut the coarsening route may reach above serial METIS's (issue 51: within 10%), plus a few edges for tiny
// parts.
constexpr double kCutSlack = 1.10;
constexpr int64_t kCutEdges = 4;

// A rows x cols grid whose node ids are a random permutation of the grid order.
datasets::NodeDataset ScrambledGrid(int64_t rows, int64_t cols, uint64_t seed) {
  const int64_t n = rows * cols;
  std::vector<int64_t> id(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) id[static_cast<size_t>(i)] = i;
  Rng rng(seed);
  for (int64_t i = n - 1; i > 0; --i) {
    std::swap(id[static_cast<size_t>(i)], id[rng.UniformInt(static_cast<uint64_t>(i + 1))]);
  }
  datasets::EdgeList edges;
  edges.num_nodes = n;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t u = id[static_cast<size_t>(r * cols + c)];
      if (c + 1 < cols) edges.Add(u, id[static_cast<size_t>(r * cols + c + 1)]);
      if (r + 1 < rows) edges.Add(u, id[static_cast<size_t>((r + 1) * cols + c)]);
    }
  }
  datasets::NodeDataset d;
  d.name = "scrambled_grid";
  d.graph = datasets::GraphBuilder().Build<int32_t>(edges);
  return d;
}

// Every part of the folder valid and used, every node owned by exactly one part.
void ExpectEveryNodeOnceInUsedParts(const fs::path& out, int32_t parts, int64_t nodes) {
  std::vector<int> owned(static_cast<size_t>(nodes), 0);
  for (int32_t p = 0; p < parts; ++p) {
    const LocalPart lp = LoadPart(out, p);
    lp.Validate();
    EXPECT_GT(lp.num_owned, 0) << "part " << p;
    for (int64_t i = 0; i < lp.num_owned; ++i) ++owned[static_cast<size_t>(lp.owned_ids[static_cast<size_t>(i)])];
  }
  for (size_t u = 0; u < owned.size(); ++u) ASSERT_EQ(owned[u], 1) << "node " << u;
}

class DistCoarsenTest : public fixtures::ScratchTest {
 protected:
  static DistPartitionResult RunDist(int ranks, const fs::path& dataset, const PartitionOptions& o,
                                     const fs::path& out) {
    std::vector<DistPartitionResult> results(static_cast<size_t>(ranks));
    comm::ThreadGroup::Run(ranks, [&](comm::Communicator& c) {
      results[static_cast<size_t>(c.Rank())] = DistPartitionToFolder(c, dataset, o, out, false);
    });
    return results[0];
  }
};

TEST_F(DistCoarsenTest, CutNearSerialMetisBalancedEveryNodeOnceAndRepeatable) {
  fixtures::GraphSpec random;
  random.nodes = 3000;
  random.edges = 15000;
  for (const std::string name : {"grid", "scrambled_grid", "random"}) {
    const datasets::NodeDataset d = name == "grid"             ? fixtures::GridDataset(48, 48)
                                    : name == "scrambled_grid" ? ScrambledGrid(48, 48, 5)
                                                               : fixtures::RandomDataset(random);
    const fs::path data = root_ / name;
    datasets::WriteNodeDataset(d, data);
    for (int32_t parts : {2, 4, 8}) {
      PartitionOptions o;
      o.num_parts = parts;
      o.balance = {Constraint::kNodes};
      o.dist_algorithm = DistAlgorithm::kCoarsen;
      const Assignment serial = ComputeAssignment(d, o);
      const PartitionStats s = ComputeStats(d, serial.part, parts);
      for (int ranks : {1, 2, 3, 4}) {
        SCOPED_TRACE(fmt::format("{}: {} parts on {} ranks (serial METIS cut {})", name, parts, ranks, s.edge_cut));
        const fs::path out = root_ / fmt::format("{}-{}-{}", name, parts, ranks);
        const DistPartitionResult r = RunDist(ranks, data, o, out);
        EXPECT_EQ(r.algorithm, "lp-coarsen-metis");
        EXPECT_LE(r.stats.imbalance_nodes, o.imbalance + 1e-9);
        EXPECT_LE(static_cast<double>(r.stats.edge_cut), kCutSlack * static_cast<double>(s.edge_cut) + kCutEdges);
        ExpectEveryNodeOnceInUsedParts(out, parts, d.num_nodes());
        if (ranks == 3) {  // the same inputs give the same folder
          const fs::path again = root_ / "again";
          RunDist(ranks, data, o, again);
          EXPECT_EQ(Files(again), Files(out));
          fs::remove_all(again);
        }
        fs::remove_all(out);
      }
    }
  }
}

// More than 256 parts: the refinement reads the parts as int32 instead of bytes (dist_refine.cc); the route still
// leaves every node in one part, every part used, the parts balanced and the cut near serial METIS's. (On this grid
// METIS's parts need no refinement, so this checks that the wide path runs and keeps them, and under ASan that it
// reads in bounds; a narrowed part id would not show here: the refinement keeps its best balanced round.)
TEST_F(DistCoarsenTest, MoreThan256PartsLeaveEveryNodeInABalancedPart) {
  const fs::path data = root_ / "grid";
  const datasets::NodeDataset d = fixtures::GridDataset(100, 100);
  datasets::WriteNodeDataset(d, data);
  PartitionOptions o;
  o.num_parts = 300;
  o.balance = {Constraint::kNodes};
  o.dist_algorithm = DistAlgorithm::kCoarsen;
  const PartitionStats s = ComputeStats(d, ComputeAssignment(d, o).part, o.num_parts);
  const fs::path out = root_ / "p";
  const DistPartitionResult r = RunDist(2, data, o, out);
  EXPECT_GE(r.refinement_rounds, 0);
  EXPECT_LE(r.stats.imbalance_nodes, o.imbalance + 1e-9);
  EXPECT_LE(static_cast<double>(r.stats.edge_cut), kCutSlack * static_cast<double>(s.edge_cut) + kCutEdges)
      << "serial METIS cut " << s.edge_cut;
  ExpectEveryNodeOnceInUsedParts(out, o.num_parts, d.num_nodes());
}

// The train constraint (zero weight for every other node) and the edges constraint are balanced too.
TEST_F(DistCoarsenTest, BalancesTheConstraintItIsGiven) {
  fixtures::GraphSpec spec;
  spec.nodes = 2000;
  spec.edges = 10000;
  const fs::path data = root_ / "g";
  const datasets::NodeDataset d = fixtures::RandomDataset(spec);
  datasets::WriteNodeDataset(d, data);
  for (const Constraint c : {Constraint::kEdges, Constraint::kTrain}) {
    PartitionOptions o;
    o.num_parts = 4;
    o.balance = {c};
    o.dist_algorithm = DistAlgorithm::kCoarsen;
    const fs::path out = root_ / fmt::format("p{}", static_cast<int>(c));
    const DistPartitionResult r = RunDist(3, data, o, out);
    const double imbalance = c == Constraint::kEdges ? r.stats.imbalance_edges : r.stats.imbalance_train;
    EXPECT_LE(imbalance, o.imbalance + 1e-9) << ConstraintName(c);
  }
}

}  // namespace
}  // namespace tessel::partition
