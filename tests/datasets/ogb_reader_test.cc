// ReadOgbNodeFolder: the hand-made tests/data/ogb/ogbn-tiny folder (some files gzipped), folder and split
// selection, node counts from num-node-list or the feature rows, and every malformed case (with file:line).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "core/error.h"
#include "datasets/readers.h"
#include "tests/datasets/test_util.h"

namespace tessel::datasets {
namespace {
namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using testing_util::Adjacency;

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

const fs::path kTiny = fs::path(TESSEL_TEST_DATA) / "ogb/ogbn-tiny";

void ExpectTiny(const NodeDataset& ds) {
  EXPECT_EQ(ds.name, "ogbn-tiny");
  ASSERT_EQ(ds.num_nodes(), 6);  // num-node-list: node 5 has no edge
  // Directed 0>1, 1>2, 2>0, 3>4, 1>0, symmetrised and deduplicated.
  EXPECT_THAT(Adjacency(ds.graph), ElementsAre(ElementsAre(1, 2), ElementsAre(0, 2), ElementsAre(0, 1), ElementsAre(4),
                                               ElementsAre(3), ElementsAre()));
  ASSERT_FALSE(ds.features.sparse);
  EXPECT_EQ(ds.features.num_rows, 6);
  EXPECT_EQ(ds.features.dim, 3);
  EXPECT_THAT(ds.features.dense.ToVector(),
              ElementsAre(0.5F, -1.25F, 0.03F, 1, 2, 3, 0, 0, 1e-3F, 4.5F, 5.5F, 6.5F, 7, 8, 9, 0, 0, 0));
  EXPECT_EQ(ds.num_classes, 3);
  EXPECT_THAT(ds.labels.ToVector(), ElementsAre(2, 0, 1, 1, 0, 2));
  EXPECT_THAT(ds.train.ToVector(), ElementsAre(0, 1, 3));
  EXPECT_THAT(ds.val.ToVector(), ElementsAre(2));
  EXPECT_THAT(ds.test.ToVector(), ElementsAre(4, 5));
}

class OgbReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_ogb_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name())) / "ogbn-copy";
    fs::create_directories(dir_);
    fs::copy(kTiny, dir_, fs::copy_options::recursive);
  }
  void TearDown() override { fs::remove_all(dir_.parent_path()); }
  // Replaces `rel` (and any compressed twin) with plain text.
  fs::path Write(const std::string& rel, const std::string& text) {
    for (const char* ext : {"", ".gz", ".bz2"}) fs::remove(dir_ / (rel + ext));
    std::ofstream(dir_ / rel, std::ios::binary) << text;
    return dir_ / rel;
  }
  void Remove(const std::string& rel) {
    for (const char* ext : {"", ".gz", ".bz2"}) fs::remove(dir_ / (rel + ext));
  }
  std::string Path(const std::string& rel) const { return (dir_ / rel).string(); }
  fs::path dir_;
};

TEST(OgbReader, TinyFolderByHand) { ExpectTiny(ReadOgbNodeFolder(kTiny)); }

TEST(OgbReader, RawFolderAndNamedSplitGiveTheSame) {
  ExpectTiny(ReadOgbNodeFolder(kTiny / "raw"));
  ExpectTiny(ReadOgbNodeFolder(kTiny.string() + "/"));
  ExpectTiny(ReadOgbNodeFolder(kTiny.string() + "/raw/"));
  ExpectTiny(ReadOgbNodeFolder(kTiny, "time"));
  EXPECT_THAT(ErrorOf([] { ReadOgbNodeFolder(kTiny, "random"); }), HasSubstr("no split named 'random' (found: time)"));
}

TEST(OgbReader, NotAnOgbFolder) {
  EXPECT_THAT(ErrorOf([] { ReadOgbNodeFolder(fs::path(TESSEL_TEST_DATA) / "linqs"); }),
              HasSubstr("not an OGB node-property folder"));
}

TEST_F(OgbReaderTest, SplitFolderChoice) {
  fs::create_directories(dir_ / "split/species");
  EXPECT_THAT(ErrorOf([&] { ReadOgbNodeFolder(dir_); }), HasSubstr("2 split folders (species, time); name the one"));
  EXPECT_EQ(ReadOgbNodeFolder(dir_, "time").test.size(), 2u);
  fs::remove_all(dir_ / "split");
  const NodeDataset ds = ReadOgbNodeFolder(dir_);
  EXPECT_FALSE(ds.has_split());
  EXPECT_EQ(ds.name, "ogbn-copy");
}

TEST_F(OgbReaderTest, NodeCountWithoutNumNodeListComesFromTheFeatureRows) {
  Remove("raw/num-node-list.csv");
  Remove("raw/node-label.csv");
  const NodeDataset ds = ReadOgbNodeFolder(dir_);
  EXPECT_EQ(ds.num_nodes(), 6);  // the edges reach node 4 only
  EXPECT_TRUE(Adjacency(ds.graph)[5].empty());
  EXPECT_FALSE(ds.has_labels());
  EXPECT_THAT(ds.test.ToVector(), ElementsAre(4, 5));
  // Without features the edges decide, and the test list's node 5 is then out of range.
  Remove("raw/node-feat.csv");
  EXPECT_THAT(ErrorOf([&] { ReadOgbNodeFolder(dir_); }),
              HasSubstr(Path("split/time/test.csv") + ":1: node id 5 is outside [0, 5)"));
  fs::remove_all(dir_ / "split");
  EXPECT_EQ(ReadOgbNodeFolder(dir_).num_nodes(), 5);
}

TEST_F(OgbReaderTest, NumNodeListErrors) {
  Write("raw/num-node-list.csv", "4\n");
  EXPECT_THAT(ErrorOf([&] { ReadOgbNodeFolder(dir_); }), HasSubstr(Path("raw/num-node-list.csv") + ": 4 nodes, but"));
  Write("raw/num-node-list.csv", "6\n7\n");
  EXPECT_THAT(ErrorOf([&] { ReadOgbNodeFolder(dir_); }),
              HasSubstr(Path("raw/num-node-list.csv") + ":2: more than one node count"));
  Write("raw/num-node-list.csv", "six\n");
  EXPECT_THAT(ErrorOf([&] { ReadOgbNodeFolder(dir_); }),
              HasSubstr(Path("raw/num-node-list.csv") + ":1: node count 'six' is not an integer"));
  // A count far beyond memory (isolated nodes take no bytes in the files) is refused before the row index is
  // allocated, naming the file (found by tests/fuzz/fuzz_ogb.cc).
  Remove("raw/node-feat.csv");
  Remove("raw/node-label.csv");
  Write("raw/num-node-list.csv", "999999999999999\n");
  const std::string huge = ErrorOf([&] { ReadOgbNodeFolder(dir_); });
  EXPECT_THAT(huge, HasSubstr("the row index of a 999999999999999-node graph needs"));
  EXPECT_THAT(huge, HasSubstr("check the node count in " + Path("raw/num-node-list.csv")));
}

TEST_F(OgbReaderTest, FeatureErrorsNameTheLine) {
  const std::string f = Path("raw/node-feat.csv");
  auto err = [&](const std::string& text) {
    Write("raw/node-feat.csv", text);
    return ErrorOf([&] { ReadOgbNodeFolder(dir_); });
  };
  EXPECT_THAT(err("1,2,3\n1,2,3\n1,2\n1,2,3\n1,2,3\n1,2,3\n"), HasSubstr(f + ":3: 2 values, but the first row has 3"));
  EXPECT_THAT(err("1,2,3\n1,2,3,4\n"), HasSubstr(f + ":2: more than 3 values"));
  EXPECT_THAT(err("1,2,3\n1,2,3\n1,2,3\n1,x,3\n1,2,3\n1,2,3\n"), HasSubstr(f + ":4: value 2 'x' is not a number"));
  EXPECT_THAT(err("1,2,3\n1,,3\n"), HasSubstr(f + ":2: value 2 '' is not a number"));
  EXPECT_THAT(err("1,2,3\n1,2,inf\n"), HasSubstr(f + ":2: value 3 'inf' is not finite"));
  EXPECT_THAT(err("1,2,3\n\n1,2,3\n"), HasSubstr(f + ":2:"));
  EXPECT_THAT(err("1,2,3\n1,2,3\n1,2,3\n1,2,3\n1,2,3\n"), HasSubstr(f + ": 5 feature rows for 6 nodes"));
  EXPECT_THAT(err("\n"), HasSubstr(f + ": no rows"));
  // Trailing blank lines and spaces around values are fine.
  const NodeDataset ds = [&] {
    Write("raw/node-feat.csv", "1, 2 ,3\n1,2,3\n1,2,3\n1,2,3\n1,2,3\n1,2,3\n\n");
    return ReadOgbNodeFolder(dir_);
  }();
  EXPECT_EQ(ds.features.num_rows, 6);
  EXPECT_EQ(ds.features.dense[1], 2.0F);
}

TEST_F(OgbReaderTest, FirstBadRowIsReportedAmongManyRows) {
  // Enough rows for several parallel chunks; two bad rows, the earlier one is reported.
  Remove("raw/num-node-list.csv");
  Remove("raw/node-label.csv");
  fs::remove_all(dir_ / "split");
  std::string text;
  for (int i = 0; i < 50000; ++i) text += i == 31234 ? "1,2,?\n" : i == 40000 ? "1,2\n" : "0.25,1,2\n";
  Write("raw/node-feat.csv", text);
  EXPECT_THAT(ErrorOf([&] { ReadOgbNodeFolder(dir_); }),
              HasSubstr(Path("raw/node-feat.csv") + ":31235: value 3 '?' is not a number"));
}

TEST_F(OgbReaderTest, LabelAndSplitErrorsNameTheLine) {
  Write("raw/node-label.csv", "2\n0\n1\n1\n0\n");
  EXPECT_THAT(ErrorOf([&] { ReadOgbNodeFolder(dir_); }), HasSubstr(Path("raw/node-label.csv") + ": 5 labels for 6"));
  Write("raw/node-label.csv", "1,0,1\n0,1,1\n");
  EXPECT_THAT(ErrorOf([&] { ReadOgbNodeFolder(dir_); }),
              HasSubstr(Path("raw/node-label.csv") + ":1: several label columns"));
  Write("raw/node-label.csv", "2\n0\n1\nx\n0\n2\n");
  EXPECT_THAT(ErrorOf([&] { ReadOgbNodeFolder(dir_); }),
              HasSubstr(Path("raw/node-label.csv") + ":4: label 'x' is not an integer"));
  Write("raw/node-label.csv", "2\n0\n1\n1\n0\n2\n");
  Write("split/time/valid.csv", "2\n4\n");
  EXPECT_THAT(
      ErrorOf([&] { ReadOgbNodeFolder(dir_); }),
      HasSubstr(Path("split/time/test.csv") + ":2: node id 4 is also in " + Path("split/time/valid.csv") + ":2"));
  Write("split/time/valid.csv", "2\n");
  Write("split/time/train.csv", "3\n0\n# c\n3\n");
  EXPECT_THAT(ErrorOf([&] { ReadOgbNodeFolder(dir_); }),
              HasSubstr(Path("split/time/train.csv") + ":4: node id 3 appears twice (also on line 1)"));
  Write("split/time/train.csv", "3\n0,1\n");
  EXPECT_THAT(ErrorOf([&] { ReadOgbNodeFolder(dir_); }),
              HasSubstr(Path("split/time/train.csv") + ":2: expected one node id per line"));
  Remove("split/time/valid.csv");
  EXPECT_THAT(ErrorOf([&] { ReadOgbNodeFolder(dir_); }), HasSubstr("valid.csv: no such file"));
}

TEST_F(OgbReaderTest, EdgeErrorsComeFromTheEdgeReader) {
  Write("raw/edge.csv", "0,1\n1,two\n");
  EXPECT_THAT(ErrorOf([&] { ReadOgbNodeFolder(dir_); }), HasSubstr(Path("raw/edge.csv") + ":2:"));
  Remove("raw/edge.csv");
  EXPECT_THAT(ErrorOf([&] { ReadOgbNodeFolder(dir_); }), HasSubstr("edge.csv: no such file"));
}

}  // namespace
}  // namespace tessel::datasets
