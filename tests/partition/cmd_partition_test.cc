// `tessel partition` end to end through the binary: a run that succeeds and loads back, and bad input (K out of
// range, --balance train without a split, a corrupted dataset, an existing output) failing clearly with nothing
// written. Skips when the tessel binary has not been built.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "core/file_io.h"
#include "datasets/native_format.h"
#include "partition/partition_format.h"
#include "tests/partition/test_graphs.h"

namespace tessel::partition {
namespace {

namespace fs = std::filesystem;

class CmdPartitionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(TESSEL_BINARY)) GTEST_SKIP() << "tessel binary not built: " << TESSEL_BINARY;
    root_ = fs::temp_directory_path() / fmt::format("tessel-cmdpart-{}-{}", ::getpid(),
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    fixtures::GraphSpec spec;
    datasets::WriteNodeDataset(fixtures::RandomDataset(spec), root_ / "data");
    spec.split = false;
    datasets::WriteNodeDataset(fixtures::RandomDataset(spec), root_ / "nosplit");
  }
  void TearDown() override { fs::remove_all(root_); }

  // Runs `tessel --log-level warn ARGS`; returns the exit status and keeps stdout/stderr.
  int Run(const std::string& args) {
    const std::string cmd =
        fmt::format("cd '{}' && '{}' --log-level warn {} > out.txt 2> err.txt", root_.string(), TESSEL_BINARY, args);
    const int status = std::system(cmd.c_str());
    out_ = ReadFileToString(root_ / "out.txt");
    err_ = ReadFileToString(root_ / "err.txt");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  // Entries of root_ other than the inputs and the captured output.
  std::vector<std::string> Outputs() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(root_)) {
      const std::string n = e.path().filename().string();
      if (n != "data" && n != "nosplit" && n != "out.txt" && n != "err.txt") names.push_back(n);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path root_;
  std::string out_;
  std::string err_;
};

TEST_F(CmdPartitionTest, WritesAFolderThatLoadsBack) {
  ASSERT_EQ(Run("partition data -k 3 -o parts"), 0) << err_;
  EXPECT_NE(out_.find("edge cut"), std::string::npos) << out_;
  EXPECT_NE(out_.find("inside METIS"), std::string::npos) << out_;
  int64_t owned = 0;
  for (int32_t p = 0; p < 3; ++p) owned += LoadPart(root_ / "parts", p).num_owned;
  EXPECT_EQ(owned, 200);
  ASSERT_EQ(Run("partition data -k 2 --method random -o parts --force --json"), 0) << err_;
  const nlohmann::json j = nlohmann::json::parse(out_);
  EXPECT_EQ(j["num_parts"].get<int>(), 2);
  EXPECT_EQ(j["method"].get<std::string>(), "random");
  EXPECT_GT(j["peak_rss_bytes"].get<int64_t>(), 0);
}

// --method file --assignment: METIS's parts written out and given back give the same parts; a malformed file or a
// half of the option pair is refused naming the fix, with nothing written.
TEST_F(CmdPartitionTest, GivenAssignmentReproducesTheParts) {
  ASSERT_EQ(Run("partition data -k 3 -o metis"), 0) << err_;
  // METIS's assignment in node order, from the folder's owned ids.
  std::vector<int32_t> part_of(200, -1);
  for (int32_t p = 0; p < 3; ++p) {
    for (int64_t id : LoadPart(root_ / "metis", p).owned_ids.ToVector()) part_of[static_cast<size_t>(id)] = p;
  }
  std::string lines;
  for (int32_t p : part_of) lines += fmt::format("{}\n", p);
  WriteFileAtomic(root_ / "a.txt", lines);
  ASSERT_EQ(Run("partition data -k 3 --method file --assignment a.txt -o given --json"), 0) << err_;
  const nlohmann::json j = nlohmann::json::parse(out_);
  EXPECT_EQ(j["method"].get<std::string>(), "file");
  const nlohmann::json m = nlohmann::json::parse(ReadFileToString(root_ / "metis" / "partitions.json"));
  EXPECT_EQ(j["node_ranges"], m["node_ranges"]);
  EXPECT_EQ(j["edge_cut"], m["edge_cut"]);
  EXPECT_EQ(j["parts"], m["parts"]);
  const std::vector<std::string> before = Outputs();
  EXPECT_EQ(Run("partition data -k 3 --method file -o x"), 1);
  EXPECT_NE(err_.find("--method file needs --assignment FILE"), std::string::npos) << err_;
  EXPECT_EQ(Run("partition data -k 3 --assignment a.txt -o x"), 1);
  EXPECT_NE(err_.find("--assignment a.txt is read only with --method file"), std::string::npos) << err_;
  EXPECT_EQ(Run("partition data -k 2 --method file --assignment a.txt -o x"), 1);
  EXPECT_NE(err_.find("a.txt:"), std::string::npos) << err_;
  EXPECT_NE(err_.find("is outside [0, 2); pass --parts 3 or more"), std::string::npos) << err_;
  EXPECT_EQ(Run("partition data -k 3 --method file --assignment missing.txt -o x"), 1);
  EXPECT_NE(err_.find("--assignment"), std::string::npos) << err_;
  EXPECT_EQ(Outputs(), before);
}

TEST_F(CmdPartitionTest, BadInputFailsClearlyAndWritesNothing) {
  EXPECT_EQ(Run("partition data -k 0 -o a"), 105);  // refused by the parser: the declared range
  EXPECT_NE(err_.find("--parts 0: out of range; give an integer in [1,"), std::string::npos) << err_;
  EXPECT_EQ(Run("partition data -k 201 -o a"), 1);
  EXPECT_NE(err_.find("only 200 nodes"), std::string::npos) << err_;
  EXPECT_EQ(Run("partition nosplit -k 2 --balance nodes,train -o a"), 1);
  EXPECT_NE(err_.find("has no training split"), std::string::npos) << err_;
  EXPECT_EQ(Run("partition data -k 2 --method kmeans -o a"), 1);
  EXPECT_NE(err_.find("accepted: metis, random, hash"), std::string::npos) << err_;
  EXPECT_EQ(Run("partition data -k 2 --imbalance 0.9 -o a"), 1);
  EXPECT_NE(err_.find("--imbalance"), std::string::npos) << err_;
  EXPECT_EQ(Run("partition missing -k 2 -o a"), 1);
  EXPECT_TRUE(Outputs().empty());
  // A corrupted dataset: one flipped byte in the adjacency.
  {
    std::fstream f(root_ / "data" / "indices.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(3);
    f.put('\x55');
  }
  EXPECT_EQ(Run("partition data -k 2 -o a"), 1);
  EXPECT_NE(err_.find("checksum"), std::string::npos) << err_;
  EXPECT_TRUE(Outputs().empty());
  // An existing output without --force is left alone.
  ASSERT_EQ(Run("partition nosplit -k 2 -o b"), 0) << err_;
  const std::string before = ReadFileToString(root_ / "b" / "partitions.json");
  EXPECT_EQ(Run("partition nosplit -k 3 -o b"), 1);
  EXPECT_NE(err_.find("already exists; pass --force"), std::string::npos) << err_;
  EXPECT_EQ(ReadFileToString(root_ / "b" / "partitions.json"), before);
  EXPECT_EQ(Outputs(), std::vector<std::string>{"b"});
}

}  // namespace
}  // namespace tessel::partition
