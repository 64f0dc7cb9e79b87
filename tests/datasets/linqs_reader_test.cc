// ReadLinqs: a hand-checked tiny .content/.cites pair, every malformed case (with file:line), and the real
// LINQS Cora checked against its README and against the bundled Planetoid conversion (same graph, permuted).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "core/error.h"
#include "datasets/readers.h"
#include "tests/datasets/test_util.h"

namespace tessel::datasets {
namespace {
namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

using testing_util::Adjacency;

std::vector<int32_t> Columns(const Features& f, int64_t row) {
  auto p = f.indptr.Host();
  auto c = f.indices.Host();
  return {c.begin() + p[row], c.begin() + p[row + 1]};
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

class LinqsReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_linqs_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return dir_ / name;
  }
  // Reads `content` with a valid .cites, or `cites` with a valid .content, and returns the error.
  std::string ContentError(const std::string& content) {
    const fs::path c = Write("bad.content", content);
    const fs::path e = Write("ok.cites", "a b\n");
    return ErrorOf([&] { ReadLinqs(c, e); });
  }
  std::string CitesError(const std::string& cites) {
    const fs::path c = Write("ok.content", "a 1 0 X\nb 0 1 Y\n");
    const fs::path e = Write("bad.cites", cites);
    return ErrorOf([&] { ReadLinqs(c, e); });
  }
  fs::path dir_;
};

TEST_F(LinqsReaderTest, TinyFileByHand) {
  const fs::path data = fs::path(TESSEL_TEST_DATA) / "linqs";
  const NodeDataset ds = ReadLinqs(data / "tiny.content", data / "tiny.cites");
  EXPECT_EQ(ds.name, "tiny");
  ASSERT_EQ(ds.num_nodes(), 4);
  // p1 x-7 (twice, both directions), p3 p1, p4 p4 (self-loop, dropped): edges {0,1} and {0,2}.
  EXPECT_THAT(Adjacency(ds.graph), ElementsAre(ElementsAre(1, 2), ElementsAre(0), ElementsAre(0), ElementsAre()));
  // Classes by sorted name: A 0, B 1, C 2.
  EXPECT_EQ(ds.num_classes, 3);
  EXPECT_THAT(ds.labels.ToVector(), ElementsAre(1, 0, 1, 2));
  ASSERT_TRUE(ds.features.sparse);
  EXPECT_EQ(ds.features.num_rows, 4);
  EXPECT_EQ(ds.features.dim, 3);
  EXPECT_THAT(Columns(ds.features, 0), ElementsAre(1));
  EXPECT_THAT(Columns(ds.features, 1), ElementsAre(0, 2));
  EXPECT_THAT(Columns(ds.features, 2), ElementsAre());
  EXPECT_THAT(Columns(ds.features, 3), ElementsAre(0, 1, 2));
  EXPECT_THAT(ds.features.values.ToVector(), ::testing::Each(1.0F));
  EXPECT_FALSE(ds.has_split());
}

TEST_F(LinqsReaderTest, NonBinaryValuesAreKeptAndZerosDropped) {
  const NodeDataset ds = ReadLinqs(Write("v.content", "a 0.5 0 -2 X\nb 0.0 3 0 X\n"), Write("v.cites", "a b\n"));
  EXPECT_THAT(ds.features.indices.ToVector(), ElementsAre(0, 2, 1));
  EXPECT_THAT(ds.features.values.ToVector(), ElementsAre(0.5F, -2.0F, 3.0F));
  EXPECT_EQ(ds.num_classes, 1);
}

TEST_F(LinqsReaderTest, RaggedRowIsAnErrorWithTheLine) {
  const std::string msg = ContentError("a 1 0 X\nb 1 Y\n");
  EXPECT_THAT(msg, HasSubstr((dir_ / "bad.content").string() + ":2:"));
  EXPECT_THAT(msg, HasSubstr("1 feature values, but line 1 has 2"));
}

TEST_F(LinqsReaderTest, TooFewFieldsIsAnError) {
  EXPECT_THAT(ContentError("a 1 0 X\nlonely\n"), HasSubstr("bad.content:2: expected '<paper id>"));
}

TEST_F(LinqsReaderTest, DuplicatePaperIdIsAnError) {
  const std::string msg = ContentError("a 1 0 X\nb 0 1 X\na 1 1 Y\n");
  EXPECT_THAT(msg, HasSubstr("bad.content:3:"));
  EXPECT_THAT(msg, HasSubstr("'a' appears twice (first on line 1)"));
}

TEST_F(LinqsReaderTest, NonNumericFeatureValueIsAnError) {
  EXPECT_THAT(ContentError("a 1 0 X\nb 0 yes X\n"), HasSubstr("bad.content:2: feature value 'yes' is not a number"));
}

TEST_F(LinqsReaderTest, EmptyContentIsAnError) { EXPECT_THAT(ContentError("\n\n"), HasSubstr("no papers")); }

TEST_F(LinqsReaderTest, UnknownPaperInCitesIsAnError) {
  const std::string msg = CitesError("a b\nb zz\n");
  EXPECT_THAT(msg, HasSubstr((dir_ / "bad.cites").string() + ":2:"));
  EXPECT_THAT(msg, HasSubstr("paper id 'zz' is not in"));
}

TEST_F(LinqsReaderTest, CitesLineWithWrongFieldCountIsAnError) {
  EXPECT_THAT(CitesError("a b\nb a a\n"), HasSubstr("bad.cites:2: expected '<cited paper id> <citing paper id>'"));
  EXPECT_THAT(CitesError("a\n"), HasSubstr("bad.cites:1:"));
}

TEST_F(LinqsReaderTest, MissingFileIsAnError) {
  EXPECT_THAT(ErrorOf([&] { ReadLinqs(dir_ / "none.content", dir_ / "none.cites"); }),
              HasSubstr("none.content: no such file"));
}

// The real LINQS Cora: README counts, then the same graph as the bundled Planetoid conversion up to a node
// permutation (matched by feature rows; the README finds 2,681 unique matches and no disagreeing edge).
TEST(LinqsRealData, Cora) {
  const fs::path dir = fs::path(TESSEL_SHARED_DATA) / "graphs/cora";
  if (!fs::exists(dir / "cora.content")) GTEST_SKIP() << "no " << dir;
  const NodeDataset ds = ReadLinqs(dir / "cora.content", dir / "cora.cites");
  ASSERT_EQ(ds.num_nodes(), 2708);
  EXPECT_EQ(NumEntries(ds.graph), 2 * 5278);
  EXPECT_EQ(ds.features.dim, 1433);
  EXPECT_EQ(ds.features.NonZeros(), 49216);
  ASSERT_EQ(ds.num_classes, 7);
  // Case_Based, Genetic_Algorithms, Neural_Networks, Probabilistic_Methods, Reinforcement_Learning,
  // Rule_Learning, Theory.
  std::vector<int> sizes(7, 0);
  for (int32_t l : ds.labels.Host()) ++sizes[l];
  EXPECT_THAT(sizes, ElementsAre(298, 418, 818, 426, 217, 180, 351));
  std::visit(
      [](const auto& g) {
        EXPECT_TRUE(g.IsSymmetric());
        EXPECT_TRUE(g.RowsSortedUnique());
        EXPECT_EQ(g.CountSelfLoops(), 0);
      },
      ds.graph);

  const NodeDataset planetoid = ReadNodeTable(NodeTableFromPrefix(fs::path(TESSEL_TEST_DATA) / "cora/cora"));
  std::map<std::vector<int32_t>, std::vector<int64_t>> rows_p;
  for (int64_t v = 0; v < planetoid.num_nodes(); ++v) rows_p[Columns(planetoid.features, v)].push_back(v);
  std::map<std::vector<int32_t>, int> count_l;
  for (int64_t u = 0; u < ds.num_nodes(); ++u) ++count_l[Columns(ds.features, u)];
  std::vector<int64_t> to_p(2708, -1);
  std::vector<bool> is_image(2708, false);
  int matched = 0;
  for (int64_t u = 0; u < ds.num_nodes(); ++u) {
    const auto cols = Columns(ds.features, u);
    const auto it = rows_p.find(cols);
    if (count_l[cols] == 1 && it != rows_p.end() && it->second.size() == 1) {
      to_p[u] = it->second[0];
      is_image[to_p[u]] = true;
      ++matched;
    }
  }
  EXPECT_EQ(matched, 2681);
  // LINQS class (sorted name) -> Planetoid id: CB 5, GA 2, NN 3, PM 4, RL 1, RuleL 6, Theory 0.
  const int32_t class_to_p[7] = {5, 2, 3, 4, 1, 6, 0};
  const auto adj_l = Adjacency(ds.graph);
  const auto adj_p = Adjacency(planetoid.graph);
  int64_t checked_edges = 0;
  for (int64_t u = 0; u < ds.num_nodes(); ++u) {
    if (to_p[u] < 0) continue;
    EXPECT_EQ(planetoid.labels[to_p[u]], class_to_p[ds.labels[u]]) << "node " << u;
    // Every edge between matched nodes is an edge of the Planetoid graph and vice versa.
    std::vector<int64_t> mapped;
    for (int64_t v : adj_l[u]) {
      if (to_p[v] >= 0) mapped.push_back(to_p[v]);
    }
    std::sort(mapped.begin(), mapped.end());
    std::vector<int64_t> expect;
    for (int64_t w : adj_p[to_p[u]]) {
      if (is_image[w]) expect.push_back(w);
    }
    EXPECT_THAT(mapped, ElementsAreArray(expect)) << "node " << u;
    checked_edges += static_cast<int64_t>(mapped.size());
  }
  EXPECT_GT(checked_edges, 2 * 5000);
  // Sorted degree sequences agree over all nodes.
  std::vector<size_t> deg_l, deg_p;
  for (const auto& a : adj_l) deg_l.push_back(a.size());
  for (const auto& a : adj_p) deg_p.push_back(a.size());
  std::sort(deg_l.begin(), deg_l.end());
  std::sort(deg_p.begin(), deg_p.end());
  EXPECT_EQ(deg_l, deg_p);
}

}  // namespace
}  // namespace tessel::datasets
