// The cheap real datasets (Cora via LINQS and via the node table, Facebook with a random split, heart_scale, a9a)
// through `tessel convert` and `tessel info --json`, against the counts of their READMEs. Skips without the data.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

// GCC 12 at -O3 reports a false -Wrestrict inside std::string's "literal" + rvalue (GCC bug 105329).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace tessel::tools {
namespace {
namespace fs = std::filesystem;

// A folder name per test and process (parameterised test names hold '/'; builds may run the tests at once).
fs::path UniqueTempDir(const std::string& prefix) {
  std::string name = prefix + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(name.begin(), name.end(), '/', '_');
  return fs::temp_directory_path() / (name + "." + std::to_string(::getpid()));
}

const fs::path kShared = TESSEL_SHARED_DATA;

class RealDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::is_directory(kShared / "graphs") || !fs::is_directory(kShared / "svm")) {
      GTEST_SKIP() << "no shared data at " << kShared;
    }
    root_ = UniqueTempDir("tessel_real_");
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // `tessel convert ARGS --output DIR` then `tessel info --json DIR`, parsed.
  nlohmann::json Convert(const std::string& args) const {
    const fs::path dir = root_ / "ds";
    const fs::path out = root_ / "info.json";
    const std::string bin = std::string("'") + TESSEL_BINARY + "'";
    const std::string convert = bin + " --log-level warn convert --force " + args + " --output '" + dir.string() + "'";
    EXPECT_EQ(std::system((convert + " >/dev/null").c_str()), 0) << convert;
    const std::string info = bin + " info --json '" + dir.string() + "' >'" + out.string() + "'";
    EXPECT_EQ(std::system(info.c_str()), 0) << info;
    std::ifstream in(out);
    std::stringstream ss;
    ss << in.rdbuf();
    nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(j.is_discarded()) << ss.str();
    EXPECT_EQ(j["checksums"]["ok"], true);
    return j;
  }
  static std::string Graph(const std::string& rel) { return "'" + (kShared / "graphs" / rel).string() + "'"; }
  static std::string Svm(const std::string& rel) { return "'" + (kShared / "svm" / rel).string() + "'"; }
  fs::path root_;
};

TEST_F(RealDataTest, CoraFromLinqs) {
  const auto j = Convert("--from linqs " + Graph("cora/cora"));
  EXPECT_EQ(j["num_nodes"], 2708);
  EXPECT_EQ(j["num_edges"], 5278);
  EXPECT_EQ(j["num_entries"], 10556);
  EXPECT_EQ(j["self_loops"], 0);
  EXPECT_EQ(j["features"]["dim"], 1433);
  EXPECT_EQ(j["features"]["nnz"], 49216);
  // LINQS classes numbered by sorted name: Case_Based .. Theory.
  EXPECT_EQ(j["class_counts"], nlohmann::json({298, 418, 818, 426, 217, 180, 351}));
}

TEST_F(RealDataTest, CoraFromNodeTableKeepsThePlanetoidSplit) {
  const auto j = Convert("--from nodetable " + Graph("cora/cora"));
  EXPECT_EQ(j["num_nodes"], 2708);
  EXPECT_EQ(j["num_edges"], 5278);
  EXPECT_EQ(j["features"]["dim"], 1433);
  EXPECT_EQ(j["features"]["nnz"], 49216);
  EXPECT_EQ(j["num_classes"], 7);
  EXPECT_EQ(j["split"], nlohmann::json({{"train", 140}, {"val", 500}, {"test", 1000}}));
}

TEST_F(RealDataTest, FacebookWithARandomSplit) {
  const std::string base = "--from nodetable " + Graph("facebook_page_page/facebook") + " --edges " +
                           Graph("facebook_page_page/facebook_edges.csv");
  const auto j = Convert(base + " --split 0.6,0.2,0.2 --seed 1");
  EXPECT_EQ(j["num_nodes"], 22470);
  EXPECT_EQ(j["num_edges"], 170823);  // 171,002 minus the 179 self-loops
  EXPECT_EQ(j["degree"]["isolated"], 0);
  EXPECT_EQ(j["features"]["dim"], 4714);
  EXPECT_EQ(j["features"]["nnz"], 314583);
  EXPECT_EQ(j["class_counts"], nlohmann::json({6495, 6880, 5768, 3327}));
  EXPECT_EQ(j["split"], nlohmann::json({{"train", 13482}, {"val", 4494}, {"test", 4494}}));
  const auto loops = Convert(base + " --keep-self-loops");
  EXPECT_EQ(loops["num_edges"], 171002);
  EXPECT_EQ(loops["self_loops"], 179);
  EXPECT_EQ(loops["degree"]["max"], 709);
}

TEST_F(RealDataTest, HeartScale) {
  const auto j = Convert("--from libsvm " + Svm("heart_scale/heart_scale"));
  EXPECT_EQ(j["num_rows"], 270);
  EXPECT_EQ(j["num_features"], 13);
  EXPECT_EQ(j["labels"], nlohmann::json::parse(R"([{"label":-1.0,"count":150},{"label":1.0,"count":120}])"));
}

TEST_F(RealDataTest, A9a) {
  const auto j = Convert("--from libsvm " + Svm("a9a/a9a"));
  EXPECT_EQ(j["num_rows"], 32561);
  EXPECT_EQ(j["num_features"], 123);
  EXPECT_EQ(j["labels"], nlohmann::json::parse(R"([{"label":-1.0,"count":24720},{"label":1.0,"count":7841}])"));
  const auto t = Convert("--from libsvm --num-features 123 " + Svm("a9a/a9a.t"));  // the test file lacks 123
  EXPECT_EQ(t["num_rows"], 16281);
  EXPECT_EQ(t["num_features"], 123);
}

}  // namespace
}  // namespace tessel::tools
