// ReadEdgeList: SNAP text, CSV, compression, one-based and weighted files, every error with its line, a
// randomised oracle (files written in many layouts must give back the edges they were written from), real data.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "datasets/graph_builder.h"
#include "datasets/readers.h"

namespace tessel::datasets {
namespace {
namespace fs = std::filesystem;

const fs::path kData = fs::path(TESSEL_TEST_DATA) / "edgelist";
const fs::path kShared = fs::path(TESSEL_SHARED_DATA) / "graphs";

class EdgeListTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_edgelist_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Write(const std::string& text, const std::string& name = "g.txt") {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return dir_ / name;
  }
  // The message ReadEdgeList throws for `text`, or "no error".
  std::string ErrorFor(const std::string& text, const EdgeListOptions& options = {}) {
    const fs::path p = Write(text);
    try {
      ReadEdgeList(p, options);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
  // "PATH:LINE: what" for the file ErrorFor writes.
  std::string At(int line, const std::string& what) const {
    return (dir_ / "g.txt").string() + ":" + std::to_string(line) + ": " + what;
  }

  fs::path dir_;
};

void ExpectEdges(const EdgeList& e, const std::vector<int64_t>& src, const std::vector<int64_t>& dst) {
  EXPECT_EQ(e.src, src);
  EXPECT_EQ(e.dst, dst);
}

TEST_F(EdgeListTest, SnapTextWithCommentsBlanksAndTabs) {
  const EdgeList e = ReadEdgeList(kData / "snap_small.txt");
  ExpectEdges(e, {0, 0, 1, 2, 3, 4, 5}, {1, 2, 2, 3, 4, 5, 0});
  EXPECT_EQ(e.num_nodes, 6);
  EXPECT_TRUE(e.weights.empty());
}

TEST_F(EdgeListTest, CompressedFilesGiveTheSameEdges) {
  for (const char* name : {"snap_small.txt.gz", "snap_small.txt.bz2"}) {
    const EdgeList e = ReadEdgeList(kData / name);
    ExpectEdges(e, {0, 0, 1, 2, 3, 4, 5}, {1, 2, 2, 3, 4, 5, 0});
    EXPECT_EQ(e.num_nodes, 6) << name;
  }
}

TEST_F(EdgeListTest, CsvHeaderAndDelimiterAreDetected) {
  const EdgeList e = ReadEdgeList(kData / "small.csv");
  ExpectEdges(e, {0, 0, 1, 2, 3, 4, 5}, {1, 2, 2, 3, 4, 5, 0});
  EXPECT_EQ(e.num_nodes, 6);
  ExpectEdges(ReadEdgeList(Write("0,1\r\n2,3\r\n", "nohead.csv")), {0, 2}, {1, 3});
  EdgeListOptions no_header;
  no_header.header = false;
  EXPECT_EQ(ErrorFor("id_1,id_2\n0,1\n", no_header), At(1, "node id 'id_1' is not an integer"));
  EdgeListOptions header;
  header.header = true;  // an explicit header also applies to whitespace files
  ExpectEdges(ReadEdgeList(Write("source target\n4 5\n"), header), {4}, {5});
  EXPECT_EQ(ErrorFor("a,b\n0,\n"), At(2, "empty node id field"));
  EdgeListOptions semicolon;  // any other delimiter takes the careful path on every line
  semicolon.delimiter = ';';
  ExpectEdges(ReadEdgeList(Write("0;1\n2 ; 3\n"), semicolon), {0, 2}, {1, 3});
  EXPECT_EQ(ErrorFor("0;1\n2 3\n", semicolon), At(2, "expected 2 fields 'source target' but found 1"));
}

TEST_F(EdgeListTest, WeightedOneBased) {
  EdgeListOptions o;
  o.one_based = true;
  o.weighted = true;
  const EdgeList e = ReadEdgeList(kData / "weighted_one_based.txt", o);
  ExpectEdges(e, {0, 1, 2, 2}, {1, 2, 0, 2});
  EXPECT_EQ(e.weights, (std::vector<float>{0.5F, 1.5F, -2.25F, 4.0F}));
  EXPECT_EQ(e.num_nodes, 3);
}

TEST_F(EdgeListTest, CrlfSignsAndAMissingFinalNewline) {
  ExpectEdges(ReadEdgeList(Write("0 1\r\n1 2 \r\n\r\n+2\t0")), {0, 1, 2}, {1, 2, 0});
  ExpectEdges(ReadEdgeList(Write("7 8")), {7}, {8});
}

TEST_F(EdgeListTest, NodeCountFromOptionCommentOrLargestId) {
  EXPECT_EQ(ReadEdgeList(Write("0 1\n5 2\n")).num_nodes, 6);
  EXPECT_EQ(ReadEdgeList(Write("# nodes 10\n0 1\n")).num_nodes, 10);               // isolated nodes 2..9
  EXPECT_EQ(ReadEdgeList(Write("# Nodes: 4 Edges: 2\n0 1\n2 3\n")).num_nodes, 4);  // SNAP's spelling
  EdgeListOptions o;
  o.num_nodes = 12;
  EXPECT_EQ(ReadEdgeList(Write("# nodes 4\n0 1\n2 3\n"), o).num_nodes, 12);  // the option wins
  EXPECT_EQ(ErrorFor("0 1\n12 3\n", o), At(2, "node id 12 is outside [0, 12): num_nodes = 12 was given"));
}

TEST_F(EdgeListTest, IdsBeyondTheFastPathAreExact) {
  // 19 and 18 digits: the first is too long for the unchecked digit loop and takes the careful path.
  const EdgeList e = ReadEdgeList(Write("1000000000000000000 1\n999999999999999999 0\n"));
  ExpectEdges(e, {1000000000000000000, 999999999999999999}, {1, 0});
  EXPECT_EQ(e.num_nodes, 1000000000000000001);
  EXPECT_EQ(ErrorFor("0 99999999999999999999\n"), At(1, "node id '99999999999999999999' is too large for 64 bits"));
  EXPECT_EQ(ErrorFor("0 9223372036854775807\n"), At(1, "node id '9223372036854775807' is too large"));
  // A runaway token (a missing line end, a binary file) is quoted by its first 40 characters and its length, not
  // whole (found by probing: a 300 MB token made a 300 MB message).
  EXPECT_EQ(ErrorFor("0 1\n" + std::string(1000000, '7') + " 1\n"),
            At(2, "node id '" + std::string(40, '7') + "... (1000000 characters)' is too large for 64 bits"));
  EXPECT_EQ(ErrorFor("0 " + std::string(100000, 'x') + "\n"),
            At(1, "node id '" + std::string(40, 'x') + "... (100000 characters)' is not an integer"));
}

TEST_F(EdgeListTest, ErrorsNameTheFileAndLine) {
  EXPECT_EQ(ErrorFor("0 1\n2 x7\n"), At(2, "node id 'x7' is not an integer"));
  EXPECT_EQ(ErrorFor("0 1\n0 -3\n"), At(2, "node id '-3' is negative"));
  EXPECT_EQ(ErrorFor("# nodes 3\n0 1\n1 3\n"), At(3, "node id 3 is outside [0, 3): line 1 declares 3 nodes"));
  EXPECT_EQ(ErrorFor("0 1\n5\n"), At(2, "expected 2 fields 'source target' but found 1"));
  EXPECT_EQ(ErrorFor("0 1 0.5\n"), At(1,
                                      "expected 2 fields 'source target' but found 3 (if the third column is an "
                                      "edge weight, read the file as weighted)"));
  EXPECT_EQ(ErrorFor("0 1 2 3 4\n"), At(1, "expected 2 fields 'source target' but found 4 or more"));
  EXPECT_EQ(ErrorFor("0 1\n1 2\n3"), At(3, "expected 2 fields 'source target' but found 1"));  // truncated last line
  EXPECT_EQ(ErrorFor("# nodes 3\n# nodes 4\n0 1\n"), At(2, "declares 4 nodes but line 1 declared 3"));
  EXPECT_EQ(ErrorFor("0 5\n# nodes 3\n"), At(2, "declares 3 nodes but an earlier line has node id 5"));
  // A negative declared count is damage (it was skipped as comment text, and the file loaded).
  EXPECT_EQ(ErrorFor("# nodes -5 edges 2\n0 1\n1 2\n"),
            At(1, "the header declares -5 nodes; a count must be >= 0 (fix the header line or remove it)"));
  EXPECT_EQ(ErrorFor("# Nodes: 3 Edges: -1\n0 1\n"),
            At(1, "the header declares -1 edges; a count must be >= 0 (fix the header line or remove it)"));
}

TEST_F(EdgeListTest, OneBasedErrors) {
  EdgeListOptions o;
  o.one_based = true;
  EXPECT_EQ(ErrorFor("1 2\n0 1\n", o),
            At(2, "node id 0 in a one-based file (ids start at 1; read the file as zero-based if 0 is a real id)"));
  EXPECT_EQ(ErrorFor("# nodes 3\n1 3\n3 4\n", o), At(3, "node id 4 is outside [1, 3]: line 1 declares 3 nodes"));
  ExpectEdges(ReadEdgeList(Write("# nodes 3\n1 3\n3 2\n"), o), {0, 2}, {2, 1});
}

TEST_F(EdgeListTest, WeightErrors) {
  EdgeListOptions o;
  o.weighted = true;
  EXPECT_EQ(ErrorFor("0 1 1.0\n1 2\n", o),
            At(2,
               "expected 3 fields 'source target weight' but found 2 (every line of a weighted edge list needs a "
               "weight)"));
  EXPECT_EQ(ErrorFor("0 1 nan\n", o), At(1, "edge weight 'nan' is not finite"));
  EXPECT_EQ(ErrorFor("0 1 1\n1 2 -inf\n", o), At(2, "edge weight '-inf' is not finite"));
  EXPECT_EQ(ErrorFor("0 1 heavy\n", o), At(1, "edge weight 'heavy' is not a number"));
  EXPECT_EQ(ErrorFor("0 1 1e40\n", o), At(1, "edge weight '1e40' is outside the float32 range"));
}

TEST_F(EdgeListTest, EmptyFilesAndCountMismatches) {
  const std::string empty = (dir_ / "g.txt").string() +
                            ": no edges (the file is empty or holds only comments and "
                            "blank lines)";
  EXPECT_EQ(ErrorFor(""), empty);
  EXPECT_EQ(ErrorFor("# nodes 0 edges 0\n\n% nothing\n"), empty);
  EXPECT_EQ(ErrorFor("# x\n# nodes 3 edges 3\n0 1\n1 2\n"),
            At(2, "declares 3 edges but the file has 2 edge lines (truncated file?)"));
  EXPECT_EQ(ErrorFor("# nodes 3 edges 1\n0 1\n1 2\n"),
            At(1, "declares 1 edges but the file has 2 edge lines (edited or concatenated file?)"));
  EXPECT_THROW(ReadEdgeList(dir_ / "missing.txt"), Error);
}

// Writes random edges in a random layout (separators, padding, CRLF, comments, blank lines, long ids, CSV with
// a header, a final newline or not) and checks that the reader returns exactly those edges.
TEST_F(EdgeListTest, RandomLayoutsGiveBackTheWrittenEdges) {
  Rng rng(StreamKey{.seed = 20240611});
  const std::vector<std::string> spaces = {" ", "\t", "  ", " \t "};
  for (int trial = 0; trial < 60; ++trial) {
    const bool csv = trial % 4 == 3;
    const bool declare = rng.UniformInt(2) == 0;
    const bool huge = trial % 10 == 5;  // ids beyond 18 digits
    const auto n = static_cast<int64_t>(huge ? 2000000000000000000 : 1 + rng.UniformInt(5000));
    const auto m = static_cast<int64_t>(1 + rng.UniformInt(3000));
    std::vector<int64_t> src(static_cast<size_t>(m));
    std::vector<int64_t> dst(static_cast<size_t>(m));
    int64_t max_id = 0;
    std::string text = csv ? "from,to\n" : "";
    if (declare) text += "# nodes " + std::to_string(n) + " edges " + std::to_string(m) + "\n";
    for (int64_t i = 0; i < m; ++i) {
      src[i] = static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(n)));
      dst[i] = static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(n)));
      max_id = std::max({max_id, src[i], dst[i]});
      if (rng.UniformInt(20) == 0) text += rng.UniformInt(2) == 0 ? "\n" : "% comment 1 2\n";
      const bool odd = rng.UniformInt(8) == 0;  // an unusual line for the careful path
      if (odd) text += " ";
      text += std::to_string(src[i]);
      text += csv ? (odd ? " , " : ",") : spaces[odd ? rng.UniformInt(spaces.size()) : 0];
      text += std::to_string(dst[i]);
      if (odd && !csv) text += " ";
      const bool last = i + 1 == m;
      if (!last || rng.UniformInt(2) == 0) text += (trial % 3 == 1) ? "\r\n" : "\n";
    }
    const EdgeList e = ReadEdgeList(Write(text, csv ? "r.csv" : "r.txt"));
    ASSERT_EQ(e.src, src) << "trial " << trial;
    ASSERT_EQ(e.dst, dst) << "trial " << trial;
    EXPECT_EQ(e.num_nodes, declare ? n : max_id + 1) << "trial " << trial;
  }
}

// The first megabyte (long comment lines) makes the size estimate far too small; the arrays must still grow.
TEST_F(EdgeListTest, GrowsPastTheSizeEstimate) {
  std::string text;
  const std::string comment = "#" + std::string(999, 'x') + "\n";
  for (int i = 0; i < 1100; ++i) text += comment;
  const int m = 300000;
  for (int i = 0; i < m; ++i) text += std::to_string(i % 97) + " " + std::to_string(i % 89) + "\n";
  const EdgeList e = ReadEdgeList(Write(text));
  ASSERT_EQ(e.size(), static_cast<size_t>(m));
  for (int i = 0; i < m; i += 7919) {
    EXPECT_EQ(e.src[i], i % 97);
    EXPECT_EQ(e.dst[i], i % 89);
  }
  EXPECT_EQ(e.num_nodes, 97);
}

// ---- Real data: counts from ../shared/data/graphs/*/README.md after symmetrising, de-duplicating and dropping
// self-loops (undirected edges = adjacency entries / 2).
struct RealCase {
  const char* file;
  int64_t nodes;
  int64_t lines;
  int64_t undirected_edges;
  int64_t self_loops;
};

class RealEdgeListTest : public ::testing::TestWithParam<RealCase> {};

TEST_P(RealEdgeListTest, CountsMatchTheReadme) {
  const RealCase& c = GetParam();
  const fs::path path = kShared / c.file;
  if (!fs::exists(path)) GTEST_SKIP() << path << " is absent";
  const EdgeList e = ReadEdgeList(path);
  EXPECT_EQ(static_cast<int64_t>(e.size()), c.lines);
  EXPECT_EQ(e.num_nodes, c.nodes);
  BuildStats stats;
  const CsrGraph32 g = GraphBuilder().Build<int32_t>(e, &stats);
  EXPECT_EQ(g.num_nodes(), c.nodes);
  EXPECT_EQ(g.num_entries(), 2 * c.undirected_edges);
  EXPECT_EQ(stats.self_loops_removed, c.self_loops);
}

INSTANTIATE_TEST_SUITE_P(
    Shared, RealEdgeListTest,
    ::testing::Values(RealCase{"snap_soc_slashdot0902/soc-slashdot0902.edges.txt", 82168, 504230, 504230, 0},
                      RealCase{"snap_ego_twitter/ego-twitter.edges.txt", 81306, 1342296, 1342296, 0},
                      RealCase{"facebook_page_page/facebook_edges.csv", 22470, 171002, 170823, 179},
                      RealCase{"cora/cora.edges.txt", 2708, 5278, 5278, 0}),
    [](const ::testing::TestParamInfo<RealCase>& param_info) {
      std::string name = fs::path(param_info.param.file).stem().stem().string();
      for (char& ch : name) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return name;
    });

}  // namespace
}  // namespace tessel::datasets
