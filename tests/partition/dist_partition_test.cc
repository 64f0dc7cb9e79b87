// Distributed partitioning on the thread communicator (1-4 ranks): with the hash method the folder must be byte for
// byte the serial one (same parts, same halos, same statistics, same partitions.json) for every kind of dataset
// (directed, self-loops, weights, sparse features, 64-bit ids, no split) and any number of parts, more or fewer than
// ranks; every part must load and validate; the refusals (random method, ParMETIS without MPI, several balance
// constraints, an existing output) fail every rank with the message and leave nothing behind. The METIS path's
// ParMETIS route needs MPI and is tested under mpirun (tests/CMakeLists.txt: dist_partition_mpi_*); its default
// coarsening route runs on any communicator (dist_coarsen_test.cc).
#include "partition/dist_partition.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "comm/thread_comm.h"
#include "core/error.h"
#include "datasets/native_format.h"
#include "tests/partition/scratch_test.h"
#include "tests/partition/test_graphs.h"

namespace tessel::partition {
namespace {

namespace fs = std::filesystem;

class DistPartitionTest : public fixtures::ScratchTest {
 protected:
  fs::path WriteDataset(const fixtures::GraphSpec& spec, const std::string& name) {
    const fs::path dir = root_ / name;
    datasets::WriteNodeDataset(fixtures::RandomDataset(spec), dir);
    return dir;
  }

  // Runs DistPartitionToFolder on `ranks` thread ranks; returns rank 0's result.
  static DistPartitionResult RunDist(int ranks, const fs::path& dataset, const PartitionOptions& o, const fs::path& out,
                                     bool overwrite = false) {
    std::vector<DistPartitionResult> results(static_cast<size_t>(ranks));
    comm::ThreadGroup::Run(ranks, [&](comm::Communicator& c) {
      results[static_cast<size_t>(c.Rank())] = DistPartitionToFolder(c, dataset, o, out, overwrite);
    });
    return results[0];
  }
};

struct Case {
  std::string name;
  fixtures::GraphSpec spec;
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  cases.push_back({"symmetric", {}});
  fixtures::GraphSpec s;
  s.directed = true;
  s.self_loops = true;
  cases.push_back({"directed_loops", s});
  s = {};
  s.weighted = true;
  s.sparse_features = true;
  s.seed = 7;
  cases.push_back({"weighted_sparse", s});
  s = {};
  s.int64_ids = true;
  s.split = false;
  s.feature_dim = 0;
  s.seed = 3;
  cases.push_back({"int64_nosplit_nofeatures", s});
  return cases;
}

TEST_F(DistPartitionTest, HashFolderIsByteIdenticalToTheSerialOne) {
  for (const Case& c : Cases()) {
    const fs::path data = WriteDataset(c.spec, c.name);
    const datasets::NodeDataset loaded = datasets::LoadNodeDataset(data);
    for (int32_t parts : {1, 2, 4, 5}) {
      PartitionOptions o;
      o.method = Method::kHash;
      o.num_parts = parts;
      const fs::path serial = root_ / fmt::format("{}-serial-{}", c.name, parts);
      PartitionToFolder(loaded, o, serial, false);
      const auto expected = Files(serial);
      for (int ranks : {1, 2, 3, 4}) {
        SCOPED_TRACE(fmt::format("{}: {} parts on {} ranks", c.name, parts, ranks));
        const fs::path dist = root_ / fmt::format("{}-dist-{}-{}", c.name, parts, ranks);
        const DistPartitionResult r = RunDist(ranks, data, o, dist);
        EXPECT_EQ(Files(dist), expected);
        EXPECT_EQ(r.algorithm, parts == 1 ? "single" : "hash");
        for (int32_t p = 0; p < parts; ++p) LoadPart(dist, p).Validate();
        fs::remove_all(dist);
      }
    }
  }
}

TEST_F(DistPartitionTest, EveryNodeOwnedOnceAndHalosComplete) {
  fixtures::GraphSpec spec;
  spec.nodes = 500;
  spec.edges = 3000;
  spec.directed = true;
  const fs::path data = WriteDataset(spec, "g");
  const datasets::NodeDataset d = datasets::LoadNodeDataset(data);
  PartitionOptions o;
  o.method = Method::kHash;
  o.num_parts = 3;
  const fs::path out = root_ / "p";
  const DistPartitionResult r = RunDist(2, data, o, out);
  std::vector<int> owned(static_cast<size_t>(d.num_nodes()), 0);
  int64_t halo_total = 0;
  std::visit(
      [&](const auto& g) {
        for (int32_t p = 0; p < 3; ++p) {
          const LocalPart lp = LoadPart(out, p);
          for (int64_t i = 0; i < lp.num_owned; ++i) {
            const int64_t u = lp.owned_ids[static_cast<size_t>(i)];
            ++owned[static_cast<size_t>(u)];
            // The owned row holds exactly the dataset row's neighbours.
            std::vector<int64_t> expect(g.Neighbors(u).begin(), g.Neighbors(u).end());
            std::vector<int64_t> got;
            for (int32_t v : lp.graph.Neighbors(i)) got.push_back(lp.ToOriginal(v));
            std::sort(got.begin(), got.end());
            EXPECT_EQ(got, expect) << "part " << p << " node " << u;
          }
          halo_total += lp.num_halo;
        }
      },
      d.graph);
  for (int c : owned) ASSERT_EQ(c, 1);
  EXPECT_EQ(r.stats.total_halo, halo_total);
}

TEST_F(DistPartitionTest, RefusalsFailEveryRankAndLeaveNothing) {
  const fs::path data = WriteDataset({}, "g");
  PartitionOptions o;
  o.num_parts = 2;
  o.method = Method::kRandom;
  EXPECT_NE(ErrorOf([&] { RunDist(2, data, o, root_ / "a"); }).find("--method random is one process only"),
            std::string::npos);
  o.method = Method::kFile;
  o.assignment_file = (root_ / "g" / "manifest.json").string();  // a file: refused before it is read
  EXPECT_NE(ErrorOf([&] { RunDist(2, data, o, root_ / "a"); }).find("--method file is one process only"),
            std::string::npos);
  o.assignment_file.clear();
  o.method = Method::kMetis;
  o.dist_algorithm = DistAlgorithm::kParMetis;
  const std::string metis = ErrorOf([&] { RunDist(2, data, o, root_ / "a"); });
  EXPECT_TRUE(metis.find("needs MPI") != std::string::npos || metis.find("without ParMETIS") != std::string::npos)
      << metis;
  o.dist_algorithm = DistAlgorithm::kCoarsen;
  o.balance = {Constraint::kNodes, Constraint::kEdges};
  EXPECT_NE(ErrorOf([&] { RunDist(2, data, o, root_ / "a"); }).find("balances one constraint"), std::string::npos);
  o.balance = {};
  o.method = Method::kHash;
  o.num_parts = 0;
  EXPECT_NE(ErrorOf([&] { RunDist(2, data, o, root_ / "a"); }), "");
  EXPECT_FALSE(fs::exists(root_ / "a"));
  o.num_parts = 190;  // 200 nodes hashed into 190 parts: some get none, and every rank fails alike
  EXPECT_NE(ErrorOf([&] { RunDist(2, data, o, root_ / "a"); }).find("of the parts got no node (200 nodes"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(root_ / "a"));
  // An existing output without --force is refused; with it, a partition folder is replaced.
  o.num_parts = 2;
  RunDist(2, data, o, root_ / "b");
  EXPECT_NE(ErrorOf([&] { RunDist(2, data, o, root_ / "b"); }).find("exists"), std::string::npos);
  o.num_parts = 3;
  RunDist(2, data, o, root_ / "b", true);
  EXPECT_TRUE(fs::exists(root_ / "b" / "part-2"));
  // The dataset itself is never an output.
  EXPECT_NE(ErrorOf([&] { RunDist(2, data, o, data, true); }), "");
  EXPECT_TRUE(fs::exists(data / "manifest.json"));
  // More ranks than nodes.
  fixtures::GraphSpec tiny;
  tiny.nodes = 3;
  tiny.edges = 3;
  const fs::path small = WriteDataset(tiny, "tiny");
  o.num_parts = 2;
  EXPECT_NE(ErrorOf([&] { RunDist(4, small, o, root_ / "c"); }).find("at most one rank per node"), std::string::npos);
}

}  // namespace
}  // namespace tessel::partition
