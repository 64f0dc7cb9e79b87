// ReadMetisGraph: the METIS manual's example graphs (with and without weights), sizes and multi-constraint
// weights, malformed files with their lines, random graphs against GraphBuilder, and the METIS example meshes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "datasets/graph_builder.h"
#include "datasets/readers.h"

namespace tessel::datasets {
namespace {
namespace fs = std::filesystem;

const fs::path kData = fs::path(TESSEL_TEST_DATA) / "metis";
const fs::path kShared = fs::path(TESSEL_SHARED_DATA) / "graphs" / "metis_examples";

class MetisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_metis_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path Write(const std::string& text) {
    std::ofstream(dir_ / "g.graph", std::ios::binary) << text;
    return dir_ / "g.graph";
  }
  std::string ErrorFor(const std::string& text) {
    const fs::path p = Write(text);
    try {
      ReadMetisGraph(p);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
  std::string At(int line, const std::string& what) const {
    return (dir_ / "g.graph").string() + ":" + std::to_string(line) + ": " + what;
  }
  fs::path dir_;
};

std::vector<std::vector<int64_t>> Rows(const CsrGraph64& g) {
  std::vector<std::vector<int64_t>> rows;
  for (int64_t u = 0; u < g.num_nodes(); ++u) rows.emplace_back(g.Neighbors(u).begin(), g.Neighbors(u).end());
  return rows;
}
std::vector<std::vector<float>> WeightRows(const CsrGraph64& g) {
  std::vector<std::vector<float>> rows;
  if (!g.has_weights()) return rows;
  for (int64_t u = 0; u < g.num_nodes(); ++u) {
    rows.emplace_back(g.NeighborWeights(u).begin(), g.NeighborWeights(u).end());
  }
  return rows;
}

const std::vector<std::vector<int64_t>> kManualRows = {{1, 2, 4}, {0, 2, 3}, {0, 1, 3, 4}, {1, 2, 5, 6},
                                                       {0, 2, 5}, {3, 4, 6}, {3, 5}};

TEST_F(MetisTest, ManualGraphWithoutWeights) {
  const MetisGraph m = ReadMetisGraph(kData / "manual_unweighted.graph");
  EXPECT_EQ(Rows(m.graph), kManualRows);
  EXPECT_FALSE(m.graph.has_weights());
  EXPECT_EQ(m.ncon, 0);
  EXPECT_TRUE(m.vertex_weights.empty());
  EXPECT_TRUE(m.vertex_sizes.empty());
  m.graph.Validate();
}

TEST_F(MetisTest, ManualGraphWithEdgeWeights) {
  const MetisGraph m = ReadMetisGraph(kData / "manual_edge_weights.graph");
  EXPECT_EQ(Rows(m.graph), kManualRows);
  const std::vector<std::vector<float>> w = {{1, 2, 1}, {1, 2, 1}, {2, 2, 2, 3}, {1, 2, 2, 5},
                                             {1, 3, 2}, {2, 2, 6}, {5, 6}};
  EXPECT_EQ(WeightRows(m.graph), w);
  EXPECT_TRUE(m.graph.IsSymmetric());
}

TEST_F(MetisTest, SizesMultiConstraintWeightsCommentsAndIsolatedVertices) {
  const MetisGraph m = ReadMetisGraph(kData / "sizes_weights.graph");
  EXPECT_EQ(Rows(m.graph), (std::vector<std::vector<int64_t>>{{1, 2}, {0, 2}, {0, 1, 4}, {}, {2}}));
  EXPECT_EQ(WeightRows(m.graph), (std::vector<std::vector<float>>{{7, 2}, {7, 9}, {2, 9, 1}, {}, {1}}));
  EXPECT_EQ(m.ncon, 2);
  EXPECT_EQ(m.vertex_sizes, (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(m.vertex_weights, (std::vector<int64_t>{3, 0, 1, 1, 0, 4, 2, 2, 5, 5}));

  const MetisGraph iso = ReadMetisGraph(kData / "isolated.graph");  // an empty line is an isolated vertex
  EXPECT_EQ(Rows(iso.graph), (std::vector<std::vector<int64_t>>{{2}, {}, {0}}));
  const MetisGraph vw = ReadMetisGraph(Write("3 1 10\n5 2\n0 1\n7\n"));  // fmt 10: one weight per vertex
  EXPECT_EQ(vw.ncon, 1);
  EXPECT_EQ(vw.vertex_weights, (std::vector<int64_t>{5, 0, 7}));
  EXPECT_EQ(Rows(vw.graph), (std::vector<std::vector<int64_t>>{{1}, {0}, {}}));
}

TEST_F(MetisTest, HeaderErrors) {
  EXPECT_EQ(
      ErrorFor("% only a comment\n"),
      (dir_ / "g.graph").string() + ": no header line 'n m [fmt [ncon]]' (the file is empty or holds only comments)");
  EXPECT_EQ(ErrorFor("7\n"),
            At(1, "the header must be 'n m [fmt [ncon]]' (vertices, edges, format, constraints), found 1 fields"));
  EXPECT_EQ(ErrorFor("3 x\n"), At(1, "edge count 'x' is not an integer"));
  EXPECT_EQ(ErrorFor("0 0\n"), At(1, "vertex count 0 must be at least 1"));
  EXPECT_EQ(
      ErrorFor("% c\n3 1 2\n"),
      At(2, "fmt '2' must be up to three 0/1 digits: vertex sizes, vertex weights, edge weights (e.g. 1, 10, 11)"));
  EXPECT_EQ(ErrorFor("3 1 1 2\n"), At(1, "ncon 2 is given but fmt '1' has no vertex weights (use fmt 10 or 11)"));
  EXPECT_EQ(ErrorFor("100 1\n2\n1\n"),
            At(1, "the header declares 100 vertices, more than the file's 10 bytes can hold"));
  // Counts that would overflow or size arrays beyond what the file holds are refused before any allocation (found
  // by tests/fuzz/fuzz_metis.cc).
  EXPECT_EQ(ErrorFor("3 6666666666666666660\n2\n1\n\n"),
            At(1,
               "edge count 6666666666666666660 is too large (the header is 'n m [fmt [ncon]]' with m the number of "
               "undirected edges; fix the header)"));
  const std::string weights = "6 0 10 8\n1 1 1 1 1 1 1 1\n\n\n\n\n\n";
  EXPECT_EQ(ErrorFor(weights), At(1,
                                  "the header declares 6 vertices with 8 size/weight value(s) each, more than the "
                                  "file's " +
                                      std::to_string(weights.size()) +
                                      " bytes can hold; the file is truncated or the header's n, fmt or ncon is "
                                      "wrong"));
}

TEST_F(MetisTest, CountErrors) {
  EXPECT_EQ(ErrorFor("3 2\n2\n1 3\n"),
            At(3, "the file ends after 2 of the 3 vertex lines the header (line 1) declares"));
  EXPECT_EQ(ErrorFor("2 1\n2\n1\n3\n"), At(4, "extra line after the 2 vertex lines that the header (line 1) declares"));
  EXPECT_EQ(ErrorFor("3 2\n2\n1\n\n"),
            At(1,
               "declares 2 edges but the vertex lines hold 2 adjacency entries, i.e. 1 edges (m counts each "
               "undirected edge once, not twice)"));
  EXPECT_NO_THROW(ReadMetisGraph(Write("3 2\n2 3\n1\n1\n\n% trailing blank lines and comments are fine\n\n")));
  EXPECT_EQ(ErrorFor("2 1\n2 2 2\n1\n"),
            At(2, "more adjacency entries than the 2 * 1 = 2 that the header (line 1) declares"));
}

TEST_F(MetisTest, NeighbourErrors) {
  EXPECT_EQ(ErrorFor("2 1\n3\n1\n"), At(2, "neighbour 3 of vertex 1 is outside [1, 2]"));
  EXPECT_EQ(ErrorFor("2 1\n2\n0\n"), At(3, "neighbour 0 of vertex 2 is outside [1, 2]"));
  EXPECT_EQ(ErrorFor("2 1\n2\n1.5\n"), At(3, "neighbour '1.5' is not an integer"));
  EXPECT_EQ(ErrorFor("2 1\n1\n\n"), At(2, "vertex 1 lists itself as a neighbour (METIS graphs have no self-loops)"));
  EXPECT_EQ(ErrorFor("% dup\n2 2\n2 2\n1 1\n"), At(3, "vertex 1 lists neighbour 2 twice"));
  EXPECT_EQ(ErrorFor("3 1\n\n3\n1\n"), At(3, "vertex 2 lists neighbour 3, but vertex 3 (line 4) does not list 2"));
}

TEST_F(MetisTest, WeightErrors) {
  EXPECT_EQ(ErrorFor("2 1 1\n2 5\n1 6\n"), At(2, "edge (1, 2) has weight 5 here but weight 6 on line 3 (vertex 2)"));
  EXPECT_EQ(ErrorFor("2 1 1\n2 0\n1 0\n"), At(2, "edge (1, 2) has weight 0; edge weights must be positive"));
  EXPECT_EQ(ErrorFor("2 1 1\n2\n1 1\n"), At(2, "neighbour 2 of vertex 1 has no edge weight (fmt says it has)"));
  EXPECT_EQ(ErrorFor("2 1 1\n2 16777217\n1 16777217\n"),
            At(2, "edge (1, 2) has weight 16777217, above 2^24 = 16777216, the largest integer float32 holds exactly"));
  EXPECT_EQ(ErrorFor("2 1 10\n-1 2\n1 1\n"), At(2, "vertex 1 has weight -1 for constraint 0; weights must be >= 0"));
  EXPECT_EQ(ErrorFor("2 1 10 2\n5\n1 1 1\n"), At(2, "vertex 1 has 1 of its 2 vertex weights"));
  EXPECT_EQ(ErrorFor("2 1 100\n-1 2\n1 1\n"), At(2, "vertex 1 has size -1; sizes must be >= 0"));
  EXPECT_EQ(ErrorFor("2 1 100\n\n1 1\n"), At(2, "vertex 1 has no vertex size (fmt says sizes come first)"));
}

// Random simple graphs written as METIS text (neighbours in random order, optional symmetric weights, gzip or
// not) must read back as the graph GraphBuilder makes from the same edges.
TEST_F(MetisTest, RandomGraphsMatchGraphBuilder) {
  Rng rng(StreamKey{.seed = 77});
  for (int trial = 0; trial < 20; ++trial) {
    const auto n = static_cast<int64_t>(1 + rng.UniformInt(300));
    const bool weighted = trial % 2 == 1;
    std::set<std::pair<int64_t, int64_t>> edges;
    const auto tries = rng.UniformInt(static_cast<uint64_t>(4 * n));
    for (uint64_t t = 0; t < tries; ++t) {
      const auto u = static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(n)));
      const auto v = static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(n)));
      if (u != v) edges.insert({std::min(u, v), std::max(u, v)});
    }
    EdgeList list;
    std::vector<std::vector<std::pair<int64_t, int>>> adj(static_cast<size_t>(n));
    for (const auto& [u, v] : edges) {
      const int w = 1 + static_cast<int>(rng.UniformInt(1000));
      list.Add(u, v);
      if (weighted) list.weights.push_back(static_cast<float>(w));
      adj[u].push_back({v, w});
      adj[v].push_back({u, w});
    }
    list.num_nodes = n;
    std::string text = fmt::format("% random graph\n{} {}{}\n", n, edges.size(), weighted ? " 1" : "");
    for (auto& row : adj) {
      for (size_t i = row.size(); i > 1; --i) std::swap(row[i - 1], row[rng.UniformInt(i)]);  // shuffle
      for (const auto& [v, w] : row) text += weighted ? fmt::format(" {} {}", v + 1, w) : fmt::format(" {}", v + 1);
      text += "\n";
    }
    const MetisGraph m = ReadMetisGraph(Write(text));
    const CsrGraph64 expected = GraphBuilder().Build<int64_t>(list);
    ASSERT_EQ(Rows(m.graph), Rows(expected)) << "trial " << trial;
    ASSERT_EQ(m.graph.has_weights(), weighted);
    ASSERT_EQ(WeightRows(m.graph), WeightRows(expected)) << "trial " << trial;
    EXPECT_TRUE(m.graph.RowsSortedUnique());
  }
}

// ---- The METIS 5.1.0 example meshes (../shared/data/graphs/metis_examples/README.md).
struct MeshCase {
  const char* file;
  int64_t vertices;
  int64_t edges;
};
class MetisExampleTest : public ::testing::TestWithParam<MeshCase> {};

TEST_P(MetisExampleTest, CountsMatchTheReadme) {
  const fs::path path = kShared / GetParam().file;
  if (!fs::exists(path)) GTEST_SKIP() << path << " is absent";
  const MetisGraph m = ReadMetisGraph(path);
  EXPECT_EQ(m.graph.num_nodes(), GetParam().vertices);
  EXPECT_EQ(m.graph.num_entries(), 2 * GetParam().edges);
  EXPECT_FALSE(m.graph.has_weights());
  m.graph.Validate();
  EXPECT_TRUE(m.graph.RowsSortedUnique());
  EXPECT_TRUE(m.graph.IsSymmetric());
  EXPECT_EQ(m.graph.CountSelfLoops(), 0);
}

INSTANTIATE_TEST_SUITE_P(Shared, MetisExampleTest,
                         ::testing::Values(MeshCase{"4elt.graph", 7434, 43031},
                                           MeshCase{"copter2.graph", 55476, 352238},
                                           MeshCase{"mdual.graph", 258569, 513132}),
                         [](const ::testing::TestParamInfo<MeshCase>& param_info) {
                           return fs::path(param_info.param.file).stem().string();
                         });

}  // namespace
}  // namespace tessel::datasets
