// --method file: a given node -> part assignment (one part id per line) reproduces exactly the folder another method
// writes for the same parts, on the bundled Cora and a random graph; and every malformed file (line count, a
// non-integer, an id outside [0, K), an empty part) or option mix-up is refused naming the file, the line and the fix.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/file_io.h"
#include "datasets/readers.h"
#include "partition/partition_format.h"
#include "partition/partitioner.h"
#include "tests/partition/scratch_test.h"
#include "tests/partition/test_graphs.h"

namespace tessel::partition {
namespace {

namespace fs = std::filesystem;

using fixtures::Options;

PartitionOptions FileOptions(int32_t k, const fs::path& file) {
  PartitionOptions o = Options(Method::kFile, k);
  o.assignment_file = file.string();
  return o;
}

datasets::NodeDataset BundledCora() {
  datasets::NodeDataset d =
      datasets::ReadNodeTable(datasets::NodeTableFromPrefix(fs::path(TESSEL_TEST_DATA) / "cora" / "cora"));
  d.name = "cora";
  return d;
}

class AssignmentFileTest : public fixtures::ScratchTest {
 protected:
  fs::path Write(const std::string& name, const std::string& text) {
    const fs::path p = root_ / name;
    WriteFileAtomic(p, text);
    return p;
  }
  static std::string Lines(const std::vector<int32_t>& part) {
    std::string s;
    for (int32_t p : part) s += fmt::format("{}\n", p);
    return s;
  }
};

// The folder of --method file on another method's assignment equals that method's folder in every part file; in
// partitions.json only the method, algorithm, METIS objective and the file's name differ.
TEST_F(AssignmentFileTest, GivenAssignmentReproducesAnotherMethodsFolder) {
  fixtures::GraphSpec spec;
  spec.nodes = 500;
  spec.edges = 3000;
  const datasets::NodeDataset cora = BundledCora();
  const datasets::NodeDataset random = fixtures::RandomDataset(spec);
  for (const datasets::NodeDataset* d : {&cora, &random}) {
    for (Method m : {Method::kMetis, Method::kRandom}) {
      const int32_t k = 4;
      SCOPED_TRACE(::testing::Message() << d->name << " " << MethodName(m));
      const std::vector<int32_t> part = ComputeAssignment(*d, Options(m, k, 3)).part;
      const fs::path file = Write(fmt::format("{}-{}.txt", d->name, MethodName(m)), Lines(part));
      const fs::path a = root_ / fmt::format("{}-{}", d->name, MethodName(m));
      const fs::path b = a.string() + "-file";
      PartitionToFolder(*d, Options(m, k, 3), a, false);
      const PartitionResult r = PartitionToFolder(*d, FileOptions(k, file), b, false);
      EXPECT_EQ(r.algorithm, "file");
      std::map<std::string, std::string> fa = Files(a);
      std::map<std::string, std::string> fb = Files(b);
      ASSERT_GE(fa.size(), 1 + k * 12U);  // partitions.json + per part a manifest and 11 arrays or more
      nlohmann::json ja = nlohmann::json::parse(fa["partitions.json"]);
      nlohmann::json jb = nlohmann::json::parse(fb["partitions.json"]);
      fa.erase("partitions.json");
      fb.erase("partitions.json");
      EXPECT_TRUE(fa == fb);  // every part's arrays and manifest, byte for byte
      EXPECT_EQ(jb["method"], "file");
      EXPECT_EQ(jb["assignment_file"], file.string());
      for (const char* key : {"method", "algorithm", "metis_objective", "assignment_file", "seed"}) {
        ja.erase(key);
        jb.erase(key);
      }
      EXPECT_EQ(ja, jb);  // node ranges, cut, halos, balance and the parts' checksums
      EXPECT_EQ(ReadAssignmentFile(file.string(), d->num_nodes(), k), part);
    }
  }
}

TEST_F(AssignmentFileTest, AcceptsCrLfNoFinalNewlineAndOnePart) {
  EXPECT_EQ(ReadAssignmentFile(Write("a", "1\r\n0\r\n1\r\n").string(), 3, 2), (std::vector<int32_t>{1, 0, 1}));
  EXPECT_EQ(ReadAssignmentFile(Write("b", "0\n1").string(), 2, 2), (std::vector<int32_t>{0, 1}));
  // K = 1 still reads (and checks) the file.
  const datasets::NodeDataset d = fixtures::RandomDataset(fixtures::GraphSpec{});
  EXPECT_EQ(ComputeAssignment(d, FileOptions(1, Write("c", Lines(std::vector<int32_t>(200, 0))))).part,
            std::vector<int32_t>(200, 0));
  EXPECT_NE(ErrorOf([&] {
              ComputeAssignment(d, FileOptions(1, Write("d", Lines(std::vector<int32_t>(200, 1)))));
            }).find("d:1: part 1 of node 0 is outside [0, 1)"),
            std::string::npos);
}

TEST_F(AssignmentFileTest, MalformedFilesNameTheFileLineAndFix) {
  const auto error = [&](const std::string& text, int64_t n, int32_t k) {
    const fs::path p = Write("parts.txt", text);
    return ErrorOf([&] { ReadAssignmentFile(p.string(), n, k); });
  };
  const std::string file = (root_ / "parts.txt").string();
  struct Case {
    std::string text;
    int64_t n;
    int32_t k;
    std::string expect;
  };
  const std::vector<Case> cases{
      {"0\n1\n", 3, 2, file + ": 2 lines for the dataset's 3 nodes; write one part id per node, in node order"},
      {"", 2, 2, file + ": 0 lines for the dataset's 2 nodes"},
      {"0\n1\n0\n", 2, 2, file + ":3: more lines than the dataset's 2 nodes; write one part id per node"},
      {"0\n1\n\n", 2, 2, file + ":3: more lines than the dataset's 2 nodes"},
      {"0\nx\n", 2, 2, file + ":2: 'x' is not a part id (an integer in [0, 2)); write one part id per node"},
      {"0\n1.0\n", 2, 2, file + ":2: '1.0' is not a part id"},
      {"0\n 1\n", 2, 2, file + ":2: ' 1' is not a part id"},
      {"\n1\n", 2, 2, file + ":1: '' is not a part id"},
      {"0\n99999999999999999999\n", 2, 2, file + ":2: '99999999999999999999' is not a part id"},
      {"0\n2\n", 2, 2, file + ":2: part 2 of node 1 is outside [0, 2); pass --parts 3 or more, or number the parts"},
      {"-1\n1\n", 2, 2, file + ":1: part -1 of node 0 is negative; part ids are 0 .. 1 (--parts 2)"},
      {"0\n2\n0\n", 3, 3, file + ": part 1 of --parts 3 has no node; every part needs one"},
  };
  for (const Case& c : cases) {
    const std::string what = error(c.text, c.n, c.k);
    EXPECT_NE(what.find(c.expect), std::string::npos) << "file '" << c.text << "': " << what;
  }
}

// Every method refuses an assignment that leaves a part without a node, as the file method does (found by probing:
// METIS left 103 of 300 parts of cora empty, the hash 73 of 1000, and both exited 0); nothing is written.
TEST_F(AssignmentFileTest, EveryMethodRefusesEmptyParts) {
  const datasets::NodeDataset cora = BundledCora();
  for (const auto& [method, parts] : {std::pair{Method::kHash, 1000}, {Method::kMetis, 300}}) {
    const Method m = method;  // a structured binding: not captured by a lambda before Clang 16
    const int k = parts;
    SCOPED_TRACE(MethodName(m));
    const std::string e = ErrorOf([&] { PartitionToFolder(cora, Options(m, k, 3), root_ / "out", false); });
    EXPECT_NE(e.find(fmt::format("--parts {}: ", k)), std::string::npos) << e;
    EXPECT_NE(e.find("of the parts got no node (2708 nodes"), std::string::npos) << e;
    EXPECT_NE(e.find("use fewer parts"), std::string::npos) << e;
    EXPECT_FALSE(fs::exists(root_ / "out"));
  }
  EXPECT_NO_THROW(ComputeAssignment(cora, Options(Method::kHash, 8, 3)));
}

TEST_F(AssignmentFileTest, OptionsMustGoTogether) {
  const datasets::NodeDataset d = fixtures::RandomDataset(fixtures::GraphSpec{});
  EXPECT_NE(
      ErrorOf([&] { ComputeAssignment(d, Options(Method::kFile, 2)); }).find("--method file needs --assignment FILE"),
      std::string::npos);
  PartitionOptions o = Options(Method::kMetis, 2);
  o.assignment_file = Write("p", Lines(std::vector<int32_t>(200, 0))).string();
  EXPECT_NE(ErrorOf([&] { ComputeAssignment(d, o); }).find("is read only with --method file"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { CheckAssignmentOption(FileOptions(2, root_ / "missing")); }).find("--assignment"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { CheckAssignmentOption(FileOptions(2, root_)); }).find("--assignment"), std::string::npos);
  // Nothing is written when the file is refused.
  EXPECT_NE(ErrorOf([&] {
              PartitionToFolder(d, FileOptions(2, Write("q", "0\n")), root_ / "out", false);
            }).find("1 lines for the dataset's 200 nodes"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(root_ / "out"));
  EXPECT_EQ(ParseMethod("file"), Method::kFile);
}

}  // namespace
}  // namespace tessel::partition
