// What the ranks compare before they start (app/rank_settings.h): parameters under their flags with exact
// values, and content fingerprints that follow the bytes, never the path.
#include "app/rank_settings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "svm/svm_params.h"
#include "train/gcn/trainer.h"

namespace tessel::app {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Find(const comm::Settings& s, const std::string& name) {
  for (const auto& [n, v] : s) {
    if (n == name) return v;
  }
  ADD_FAILURE() << "no setting " << name;
  return {};
}

void Write(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

class Fingerprint : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_rank_settings_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST(RankSettings, FlagLabels) {
  EXPECT_EQ(FlagLabel(ParamInfo{"hidden", ""}), "--hidden");
  EXPECT_EQ(FlagLabel(ParamInfo{"weight_decay", ""}), "--weight-decay");
  EXPECT_EQ(FlagLabel(ParamInfo{"cost", "", "-c,--cost"}), "-c/--cost");
  EXPECT_EQ(FlagLabel(ParamInfo{"overlap", "", "--overlap,!--no-overlap"}), "--overlap");
}

TEST(RankSettings, ParametersAreNamedByFlagWithExactValues) {
  svm::SvmParams p;
  p.C = 0.1;
  comm::Settings s;
  AddParamSettings(p, &s);
  EXPECT_EQ(Find(s, "-c/--cost"), "0.1");
  EXPECT_EQ(Find(s, "-t/--kernel"), "rbf");
  comm::Settings t;
  p.C = std::nextafter(0.1, 1.0);  // the next double: a different value, a different setting
  AddParamSettings(p, &t);
  EXPECT_NE(Find(t, "-c/--cost"), Find(s, "-c/--cost"));

  train::gcn::TrainConfig c = train::gcn::TrainConfig::UserDefaults();
  c.model.hidden = 32;
  c.dist.grad_compress = comm::CompressOption::FromText("topk:0.1", "--grad-compress");
  comm::Settings g;
  AddParamSettings(c, &g);
  AddParamSettings(c.dist, &g);
  EXPECT_EQ(Find(g, "--hidden"), "32");
  EXPECT_EQ(Find(g, "--lr"), "0.01");  // a float in its shortest form
  EXPECT_EQ(Find(g, "--fanouts"), "10,10");
  EXPECT_EQ(Find(g, "--grad-compress"), "topk:0.1");
  EXPECT_EQ(Find(g, "--overlap"), "true");
  for (const auto& [name, value] : g) EXPECT_NE(name, "--in-dim") << "values taken from the data are not options";
}

TEST_F(Fingerprint, FollowsContentNotPath) {
  Write(dir_ / "a.svm", "1 1:0.5\n");
  Write(dir_ / "b.svm", "1 1:0.5\n");
  Write(dir_ / "c.svm", "1 1:0.6\n");
  const std::string a = ContentFingerprint(dir_ / "a.svm");
  EXPECT_THAT(a, StartsWith("8 bytes, XXH3 "));
  EXPECT_EQ(ContentFingerprint(dir_ / "b.svm"), a);
  EXPECT_NE(ContentFingerprint(dir_ / "c.svm"), a);
  Write(dir_ / "empty", "");
  EXPECT_EQ(ContentFingerprint(dir_ / "empty"), "0 bytes");
  EXPECT_EQ(ContentFingerprint(dir_ / "none"), "missing");
}

TEST_F(Fingerprint, FoldersByTheirMetadataAndPrefixesByTheirFiles) {
  fs::create_directories(dir_ / "p1");
  fs::create_directories(dir_ / "p2");
  Write(dir_ / "p1" / "partitions.json", R"({"num_parts": 2})");
  Write(dir_ / "p2" / "partitions.json", R"({"num_parts": 4})");
  EXPECT_THAT(ContentFingerprint(dir_ / "p1"), StartsWith("partitions.json of 16 bytes, XXH3 "));
  EXPECT_NE(ContentFingerprint(dir_ / "p1"), ContentFingerprint(dir_ / "p2"));
  fs::create_directories(dir_ / "ds");
  Write(dir_ / "ds" / "manifest.json", "{}");
  EXPECT_THAT(ContentFingerprint(dir_ / "ds"), StartsWith("manifest.json of 2 bytes"));
  fs::create_directories(dir_ / "other");
  EXPECT_THAT(ContentFingerprint(dir_ / "other"), HasSubstr("without manifest.json"));
  // A node-table prefix: its PREFIX.* files, whatever the prefix is called.
  Write(dir_ / "cora.edges.txt", "0 1\n");
  Write(dir_ / "cora.labels.txt", "0\n1\n");
  Write(dir_ / "copy.edges.txt", "0 1\n");
  Write(dir_ / "copy.labels.txt", "0\n1\n");
  const std::string cora = ContentFingerprint(dir_ / "cora");
  EXPECT_THAT(cora, StartsWith("2 files PREFIX.*, XXH3 "));
  EXPECT_EQ(ContentFingerprint(dir_ / "copy"), cora);
  Write(dir_ / "copy.labels.txt", "1\n0\n");
  EXPECT_NE(ContentFingerprint(dir_ / "copy"), cora);
}

TEST_F(Fingerprint, NeverReadsAPipe) {
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(ContentFingerprint(fifo), HasSubstr("not a regular file"));  // returns at once, reads nothing
}

}  // namespace
}  // namespace tessel::app
