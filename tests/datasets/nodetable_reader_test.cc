// ReadNodeTable / NodeTableFromPrefix: a hand-checked tiny table (plain, .gz and .bz2 parts), every malformed
// case (with file:line), the bundled Cora (always) and the shared Cora, Pubmed and Facebook (when present).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "core/error.h"
#include "core/memory_budget.h"
#include "datasets/readers.h"
#include "tests/datasets/test_util.h"

namespace tessel::datasets {
namespace {
namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using testing_util::Adjacency;

void ExpectCleanGraph(const AnyGraph& graph) {
  std::visit(
      [](const auto& g) {
        EXPECT_TRUE(g.IsSymmetric());
        EXPECT_TRUE(g.RowsSortedUnique());
        EXPECT_EQ(g.CountSelfLoops(), 0);
      },
      graph);
}

std::vector<int> ClassSizes(const NodeDataset& ds) {
  std::vector<int> sizes(static_cast<size_t>(ds.num_classes), 0);
  for (int32_t l : ds.labels.Host()) {
    if (l >= 0) ++sizes[l];
  }
  return sizes;
}

template <typename Fn>
std::string ErrorOf(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a tessel::Error";
  return "";
}

// The Cora checks of the shared README (Planetoid node order and class ids).
void ExpectPlanetoidCora(const NodeDataset& ds) {
  ASSERT_EQ(ds.num_nodes(), 2708);
  EXPECT_EQ(NumEntries(ds.graph), 2 * 5278);
  ExpectCleanGraph(ds.graph);
  EXPECT_TRUE(ds.features.sparse);
  EXPECT_EQ(ds.features.num_rows, 2708);
  EXPECT_EQ(ds.features.dim, 1433);
  EXPECT_EQ(ds.features.NonZeros(), 49216);
  EXPECT_THAT(ds.features.values.ToVector(), ::testing::Each(1.0F));
  ASSERT_EQ(ds.num_classes, 7);
  // 0 Theory, 1 Reinforcement_Learning, 2 Genetic_Algorithms, 3 Neural_Networks, 4 Probabilistic_Methods,
  // 5 Case_Based, 6 Rule_Learning.
  EXPECT_THAT(ClassSizes(ds), ElementsAre(351, 217, 418, 818, 426, 298, 180));
  ASSERT_EQ(ds.train.size(), 140u);
  ASSERT_EQ(ds.val.size(), 500u);
  ASSERT_EQ(ds.test.size(), 1000u);
  // Public split: train 0-139, val 140-639, test 1708-2707; 20 training nodes per class.
  EXPECT_EQ(ds.train[0], 0);
  EXPECT_EQ(ds.train[139], 139);
  EXPECT_EQ(ds.val[0], 140);
  EXPECT_EQ(ds.val[499], 639);
  EXPECT_EQ(ds.test[0], 1708);
  EXPECT_EQ(ds.test[999], 2707);
  std::vector<int> per_class(7, 0);
  for (int64_t v : ds.train.Host()) ++per_class[ds.labels[v]];
  EXPECT_THAT(per_class, ::testing::Each(20));
}

class NodeTableReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_nodetable_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return dir_ / name;
  }
  // A valid 4-node table (edges 0-1, 1-2, 2-3) with the given parts replaced where non-empty.
  NodeTablePaths Table(const std::string& features, const std::string& labels, const std::string& train = "",
                       const std::string& val = "", const std::string& test = "") {
    NodeTablePaths p;
    p.edges = Write("t.edges.txt", "0 1\n1 2\n2 3\n");
    if (!features.empty()) p.features = Write("t.features.txt", features);
    if (!labels.empty()) p.labels = Write("t.labels.txt", labels);
    if (!train.empty()) p.train = Write("t.train.txt", train);
    if (!val.empty()) p.val = Write("t.val.txt", val);
    if (!test.empty()) p.test = Write("t.test.txt", test);
    return p;
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(NodeTableReaderTest, TinyTableByHand) {
  const NodeTablePaths paths = NodeTableFromPrefix(fs::path(TESSEL_TEST_DATA) / "nodetable/tiny");
  EXPECT_EQ(paths.features.filename(), "tiny.features.txt.gz");
  EXPECT_EQ(paths.labels.filename(), "tiny.labels.txt.bz2");
  const NodeDataset ds = ReadNodeTable(paths);
  EXPECT_EQ(ds.name, "tiny");
  ASSERT_EQ(ds.num_nodes(), 5);  // "# nodes 5": node 4 has no edge
  EXPECT_THAT(Adjacency(ds.graph),
              ElementsAre(ElementsAre(1, 2), ElementsAre(0, 2), ElementsAre(0, 1), ElementsAre(), ElementsAre()));
  EXPECT_EQ(ds.features.dim, 4);
  EXPECT_THAT(ds.features.indptr.ToVector(), ElementsAre(0, 2, 2, 2, 2, 3));
  EXPECT_THAT(ds.features.indices.ToVector(), ElementsAre(1, 3, 0));
  EXPECT_THAT(ds.features.values.ToVector(), ElementsAre(0.5F, 2.0F, -1.0F));
  EXPECT_EQ(ds.num_classes, 3);
  EXPECT_THAT(ds.labels.ToVector(), ElementsAre(0, 2, -1, 1, 2));
  EXPECT_THAT(ds.train.ToVector(), ElementsAre(0, 1));  // file order 1 0: stored sorted
  EXPECT_THAT(ds.val.ToVector(), ElementsAre(2));
  EXPECT_THAT(ds.test.ToVector(), ElementsAre(4));
}

TEST_F(NodeTableReaderTest, FromPrefixLeavesMissingPartsEmptyAndNeedsEdges) {
  Write("p.edges.txt.bz2", "");
  Write("p.labels.txt", "0\n");
  const NodeTablePaths paths = NodeTableFromPrefix(dir_ / "p");
  EXPECT_EQ(paths.edges, dir_ / "p.edges.txt.bz2");
  EXPECT_EQ(paths.labels, dir_ / "p.labels.txt");
  EXPECT_TRUE(paths.features.empty());
  EXPECT_TRUE(paths.train.empty() && paths.val.empty() && paths.test.empty());
  EXPECT_THAT(ErrorOf([&] { NodeTableFromPrefix(dir_ / "q"); }), HasSubstr("q.edges.txt: no such file"));
}

TEST_F(NodeTableReaderTest, NodeCountIsTheLargestOfEdgesFeaturesAndLabels) {
  // Labels give 6 nodes; the edges reach node 3 only.
  NodeDataset ds = ReadNodeTable(Table("", "0\n1\n0\n1\n-1\n0\n"));
  EXPECT_EQ(ds.num_nodes(), 6);
  EXPECT_EQ(ds.num_classes, 2);
  EXPECT_FALSE(ds.has_split());
  EXPECT_TRUE(ds.features.empty());
  // Features give 7 nodes.
  ds = ReadNodeTable(Table("7 2 1\n6 1 3.5\n", ""));
  EXPECT_EQ(ds.num_nodes(), 7);
  EXPECT_EQ(ds.features.NonZeros(), 1);
  EXPECT_FALSE(ds.has_labels());
}

TEST_F(NodeTableReaderTest, FeatureAndLabelCountsMustMatchTheNodeCount) {
  EXPECT_THAT(ErrorOf([&] { ReadNodeTable(Table("3 2 0\n", "")); }),
              HasSubstr(Path("t.features.txt") + ": the header declares 3 nodes but the dataset has 4"));
  EXPECT_THAT(ErrorOf([&] { ReadNodeTable(Table("", "0\n1\n0\n")); }),
              HasSubstr(Path("t.labels.txt") + ": 3 labels but the dataset has 4 nodes"));
  EXPECT_THAT(ErrorOf([&] { ReadNodeTable(Table("5 2 0\n", "0\n1\n0\n1\n")); }),
              HasSubstr("t.labels.txt: 4 labels but the dataset has 5 nodes"));
}

TEST_F(NodeTableReaderTest, FeatureFileErrorsNameTheLine) {
  const std::string f = Path("t.features.txt");
  auto err = [&](const std::string& text) { return ErrorOf([&] { ReadNodeTable(Table(text, "")); }); };
  EXPECT_THAT(err("# c\n4 3 2\n1 0 1\n0 2 1\n"), HasSubstr(f + ":4: entries must be sorted by node, then feature"));
  EXPECT_THAT(err("4 3 2\n1 2 1\n1 0 1\n"), HasSubstr(f + ":3: entries must be sorted"));
  EXPECT_THAT(err("4 3 2\n1 2 1\n1 2 5\n"), HasSubstr(f + ":3: duplicate entry for node 1 feature 2 (also on line 2)"));
  EXPECT_THAT(err("# c\n# d\n4 3 3\n0 0 1\n"), HasSubstr(f + ":3: the header declares 3 entries but the file has 1"));
  EXPECT_THAT(err("4 3 1\n0 0 1\n0 1 1\n"),
              HasSubstr(f + ":3: more entries than the 1 that the header on line 1 declares"));
  EXPECT_THAT(err("4 3 1\n4 0 1\n"), HasSubstr(f + ":2: node id 4 is outside [0, 4)"));
  EXPECT_THAT(err("4 3 1\n0 3 1\n"), HasSubstr(f + ":2: feature id 3 is outside [0, 3)"));
  EXPECT_THAT(err("4 3 1\n0 -1 1\n"), HasSubstr(f + ":2: feature id -1 is outside"));
  EXPECT_THAT(err("4 3 1\n0 1 x\n"), HasSubstr(f + ":2: feature value 'x' is not a number"));
  EXPECT_THAT(err("4 3 1\n0 1 nan\n"), HasSubstr(f + ":2: feature value 'nan' is not finite"));
  EXPECT_THAT(err("4 3 1\n0 1\n"), HasSubstr(f + ":2: expected 'node feature value'"));
  EXPECT_THAT(err("4 3\n"), HasSubstr(f + ":1: expected the header"));
  EXPECT_THAT(err("4 3 1 9\n"), HasSubstr(f + ":1: expected the header"));
  EXPECT_THAT(err("4 -3 1\n"), HasSubstr(f + ":1: feature count -3 is negative"));
  EXPECT_THAT(err("# only a comment\n"), HasSubstr(f + ": no 'num_nodes num_features nnz' header"));
}

// A features header may declare any node count (rows may be empty, so the file's size bounds nothing): 3e9 nodes
// are read as a 64-bit count and their row index is compared with the memory budget before it is allocated.
TEST_F(NodeTableReaderTest, AHugeDeclaredNodeCountIsCheckedBeforeAllocating) {
  memory::SetLimit(int64_t{1} << 30);
  const std::string e = ErrorOf([&] { ReadNodeTable(Table("3000000000 4 0\n", "")); });
  memory::SetLimit(0);
  EXPECT_THAT(e, HasSubstr("the feature row index of 3000000000 nodes needs 22.4 GiB"));
  EXPECT_THAT(e, HasSubstr("check the node count in the header of"));
  EXPECT_THAT(ErrorOf([&] { ReadNodeTable(Table("9223372036854775807 4 0\n", "")); }),
              HasSubstr("node count 9223372036854775807 is beyond any machine's memory"));
  EXPECT_THAT(ErrorOf([&] { ReadNodeTable(Table("4 2147483648 0\n", "")); }),
              HasSubstr("feature count 2147483648 does not fit 32-bit column ids"));
}

TEST_F(NodeTableReaderTest, LabelFileErrorsNameTheLine) {
  const std::string f = Path("t.labels.txt");
  auto err = [&](const std::string& text) { return ErrorOf([&] { ReadNodeTable(Table("", text)); }); };
  EXPECT_THAT(err("0\n1\n-2\n1\n"), HasSubstr(f + ":3: label -2 is negative"));
  EXPECT_THAT(err("0\ncat\n1\n1\n"), HasSubstr(f + ":2: label 'cat' is not an integer"));
  EXPECT_THAT(err("0\n\n1\n1\n"), HasSubstr(f + ":2: blank line"));
  EXPECT_THAT(err("0\n1 2\n1\n1\n"), HasSubstr(f + ":2: expected one class id per line"));
  EXPECT_THAT(err("-1\n-1\n-1\n-1\n"), HasSubstr(f + ": every label is -1"));
  // One stray huge class id would size per-class tables by it (2e9 classes: 16 GB of counters).
  EXPECT_THAT(err("0\n2000000000\n1\n1\n"), HasSubstr(f + ":2: label 2000000000 is beyond the 65536 classes"));
  EXPECT_EQ(ReadNodeTable(Table("", "0\n65535\n1\n1\n")).num_classes, 65536);  // any small dataset may use 64 Ki
  // Comment lines and trailing blank lines are fine.
  const NodeDataset ds = ReadNodeTable(Table("", "# classes\n0\n1\n0\n1\n\n\n"));
  EXPECT_THAT(ds.labels.ToVector(), ElementsAre(0, 1, 0, 1));
}

TEST_F(NodeTableReaderTest, SplitFileErrorsNameTheLine) {
  auto err = [&](const std::string& train, const std::string& val, const std::string& test) {
    return ErrorOf([&] { ReadNodeTable(Table("", "", train, val, test)); });
  };
  EXPECT_THAT(err("0\n4\n", "", ""), HasSubstr(Path("t.train.txt") + ":2: node id 4 is outside [0, 4)"));
  EXPECT_THAT(err("0\n-1\n", "", ""), HasSubstr(Path("t.train.txt") + ":2: node id -1 is outside"));
  EXPECT_THAT(err("0\nx\n", "", ""), HasSubstr(Path("t.train.txt") + ":2: node id 'x' is not an integer"));
  EXPECT_THAT(err("0\n1 2\n", "", ""), HasSubstr(Path("t.train.txt") + ":2: expected one node id per line"));
  EXPECT_THAT(err("", "2\n# c\n3\n2\n", ""),
              HasSubstr(Path("t.val.txt") + ":4: node id 2 appears twice (also on line 1)"));
  EXPECT_THAT(err("0\n1\n", "", "3\n1\n"),
              HasSubstr(Path("t.test.txt") + ":2: node id 1 is also in " + Path("t.train.txt") + ":2"));
  // Only some lists present; ids are sorted.
  const NodeDataset ds = ReadNodeTable(Table("", "", "", "3\n0\n", "2\n"));
  EXPECT_TRUE(ds.train.empty());
  EXPECT_THAT(ds.val.ToVector(), ElementsAre(0, 3));
  EXPECT_THAT(ds.test.ToVector(), ElementsAre(2));
}

TEST_F(NodeTableReaderTest, EdgeFileErrorsComeFromTheEdgeReader) {
  NodeTablePaths p = Table("", "");
  p.edges = Write("bad.edges.txt", "0 1\n1 x\n");
  EXPECT_THAT(ErrorOf([&] { ReadNodeTable(p); }), HasSubstr(Path("bad.edges.txt") + ":2:"));
  p.edges.clear();
  EXPECT_THAT(ErrorOf([&] { ReadNodeTable(p); }), HasSubstr("no edges file"));
}

TEST(NodeTableBundled, CoraLoadsAndMatchesTheReadme) {
  ExpectPlanetoidCora(ReadNodeTable(NodeTableFromPrefix(fs::path(TESSEL_TEST_DATA) / "cora/cora")));
}

TEST(NodeTableRealData, CoraSharedIsTheBundledCopy) {
  const fs::path prefix = fs::path(TESSEL_SHARED_DATA) / "graphs/cora/cora";
  if (!fs::exists(prefix.string() + ".edges.txt")) GTEST_SKIP() << "no " << prefix;
  const NodeDataset shared = ReadNodeTable(NodeTableFromPrefix(prefix));
  ExpectPlanetoidCora(shared);
  const NodeDataset bundled = ReadNodeTable(NodeTableFromPrefix(fs::path(TESSEL_TEST_DATA) / "cora/cora"));
  EXPECT_EQ(Adjacency(shared.graph), Adjacency(bundled.graph));
  EXPECT_EQ(shared.features.indices.ToVector(), bundled.features.indices.ToVector());
  EXPECT_EQ(shared.labels.ToVector(), bundled.labels.ToVector());
}

TEST(NodeTableRealData, Pubmed) {
  const fs::path prefix = fs::path(TESSEL_SHARED_DATA) / "graphs/pubmed/pubmed";
  if (!fs::exists(prefix.string() + ".edges.txt")) GTEST_SKIP() << "no " << prefix;
  const NodeDataset ds = ReadNodeTable(NodeTableFromPrefix(prefix));
  ASSERT_EQ(ds.num_nodes(), 19717);
  EXPECT_EQ(NumEntries(ds.graph), 2 * 44324);
  ExpectCleanGraph(ds.graph);
  EXPECT_TRUE(ds.features.empty());
  EXPECT_EQ(ds.num_classes, 3);
  EXPECT_THAT(ClassSizes(ds), ElementsAre(4103, 7739, 7875));
  EXPECT_EQ(ds.train.size(), 60u);
  EXPECT_EQ(ds.val.size(), 500u);
  EXPECT_EQ(ds.test.size(), 1000u);
  EXPECT_EQ(ds.test[0], 18717);
  EXPECT_EQ(ds.test[999], 19716);
}

TEST(NodeTableRealData, Facebook) {
  const fs::path dir = fs::path(TESSEL_SHARED_DATA) / "graphs/facebook_page_page";
  if (!fs::exists(dir / "facebook_edges.csv")) GTEST_SKIP() << "no " << dir;
  NodeTablePaths paths;
  paths.edges = dir / "facebook_edges.csv";
  paths.features = dir / "facebook.features.txt";
  paths.labels = dir / "facebook.labels.txt";
  const NodeDataset ds = ReadNodeTable(paths);
  ASSERT_EQ(ds.num_nodes(), 22470);
  EXPECT_EQ(NumEntries(ds.graph), 2 * 170823);  // 171,002 lines less 179 self-loops
  ExpectCleanGraph(ds.graph);
  EXPECT_EQ(ds.features.dim, 4714);
  EXPECT_EQ(ds.features.NonZeros(), 314583);
  EXPECT_EQ(ds.num_classes, 4);
  EXPECT_THAT(ClassSizes(ds), ElementsAre(6495, 6880, 5768, 3327));
  EXPECT_FALSE(ds.has_split());
}

}  // namespace
}  // namespace tessel::datasets
