// Every streaming reader gives the same answer, or the same error at the same line, whether its input is plain,
// gzip or bzip2, and whatever the stream's window: tiny windows cut the inputs into hundreds of pieces, so lines,
// headers, comments, blank lines and errors land on every side of a piece boundary.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "datasets/readers.h"
#include "datasets/text_input.h"
#include "tests/datasets/test_util.h"

namespace tessel::datasets {
namespace {
namespace fs = std::filesystem;

using testing_util::Bzip2;
using testing_util::Gzip;

template <typename T>
std::string Of(const Buffer<T>& b) {
  return fmt::format("{}", fmt::join(b.Host(), ","));
}

template <typename IdT>
std::string Of(const CsrGraph<IdT>& g) {
  return fmt::format("[{}|{}|{}]", Of(g.indptr()), Of(g.indices()), Of(g.weights()));
}

std::string Of(const AnyGraph& any) {
  return std::visit([](const auto& g) { return Of(g); }, any);
}

std::string Of(const NodeDataset& d) {
  const Features& f = d.features;
  return fmt::format("graph {} features {}x{} {} {} {} {} {} labels {} classes {} split {} / {} / {}", Of(d.graph),
                     f.num_rows, f.dim, f.sparse, Of(f.dense), Of(f.indptr), Of(f.indices), Of(f.values), Of(d.labels),
                     d.num_classes, Of(d.train), Of(d.val), Of(d.test));
}

class StreamReadersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_stream_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    for (const char* v : {"plain", "gz", "bz2"}) fs::create_directories(dir_ / v);
  }
  void TearDown() override {
    SetDefaultStreamWindow(0);
    fs::remove_all(dir_);
  }

  // Writes `text` as `name` three times: plain, gzip and bzip2 (same name: readers go by the magic bytes).
  void Put(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / "plain" / name, std::ios::binary) << text;
    std::ofstream(dir_ / "gz" / name, std::ios::binary) << Gzip(text);
    std::ofstream(dir_ / "bz2" / name, std::ios::binary) << Bzip2(text);
  }

  // What `read` gives for the files in folder `variant`: its fingerprint, or its error with the folder elided.
  std::string Outcome(const std::function<std::string(const fs::path&)>& read, const std::string& variant) {
    const fs::path folder = dir_ / variant;
    try {
      return read(folder);
    } catch (const Error& e) {
      std::string msg = e.what();
      const std::string prefix = folder.string() + "/";
      for (size_t at = msg.find(prefix); at != std::string::npos; at = msg.find(prefix)) {
        msg.replace(at, prefix.size(), "");
      }
      return "error: " + msg;
    }
  }

  // The plain file with the default window is the reference; every variant and window must agree with it.
  // Returns the reference, so a test can also check what it is.
  std::string ExpectSameEverywhere(const std::function<std::string(const fs::path&)>& read) {
    SetDefaultStreamWindow(0);
    const std::string reference = Outcome(read, "plain");
    for (size_t window : {size_t{5}, size_t{200}, size_t{0}}) {
      SetDefaultStreamWindow(window);
      for (const char* variant : {"plain", "gz", "bz2"}) {
        EXPECT_EQ(Outcome(read, variant), reference) << variant << ", window " << window;
      }
    }
    SetDefaultStreamWindow(0);
    return reference;
  }

  fs::path dir_;
};

std::string EdgeText(int lines) {
  std::string t = "# Directed graph\n# Nodes: 500 Edges: " + std::to_string(lines) + "\n#\n";
  for (int i = 0; i < lines; ++i) {
    t += fmt::format("{}\t{}\n", i * 37 % 500, i * 101 % 499);
    if (i % 97 == 0) t += "# a comment between edges\n\n";
  }
  return t;
}

TEST_F(StreamReadersTest, EdgeLists) {
  const auto read = [](const EdgeListOptions& o) {
    return [o](const fs::path& d) {
      const EdgeList e = ReadEdgeList(d / "g.txt", o);
      return fmt::format("{} {} {} {}", e.num_nodes, fmt::join(e.src, ","), fmt::join(e.dst, ","),
                         fmt::join(e.weights, ","));
    };
  };
  Put("g.txt", EdgeText(3000));
  EXPECT_EQ(ExpectSameEverywhere(read({})).rfind("500 ", 0), 0u);
  // Errors late in the file: a bad id, a third field, an id beyond the declared nodes, a short edge count.
  std::string bad = EdgeText(3000);
  bad.insert(bad.rfind("# a comment"), "12 x9\n");
  Put("g.txt", bad);
  EXPECT_NE(ExpectSameEverywhere(read({})).find("node id 'x9' is not an integer"), std::string::npos);
  bad = EdgeText(3000) + "7 8 9\n";
  Put("g.txt", bad);
  EXPECT_NE(ExpectSameEverywhere(read({})).find("expected 2 fields"), std::string::npos);
  Put("g.txt", EdgeText(3000) + "1 500\n");
  EXPECT_NE(ExpectSameEverywhere(read({})).find("node id 500 is outside [0, 500)"), std::string::npos);
  std::string shorter = EdgeText(3000);
  shorter.resize(shorter.rfind('\n', shorter.size() - 2) + 1);  // one edge line fewer than declared
  Put("g.txt", shorter);
  EXPECT_NE(ExpectSameEverywhere(read({})).find("declares 3000 edges but the file has 2999"), std::string::npos);

  // CSV with a header and weights, comments only, and a last line without a newline.
  std::string csv = "# exported\nsrc,dst,w\n";
  for (int i = 0; i < 2000; ++i) csv += fmt::format("{},{},{}\n", i % 300, (i * 7) % 301, 0.5 * (i % 9));
  csv += "3,4,1.25";
  Put("g.txt", csv);
  EdgeListOptions weighted;
  weighted.weighted = true;
  const std::string csv_result = ExpectSameEverywhere(read(weighted));
  EXPECT_EQ(csv_result.rfind("300 ", 0), 0u) << csv_result.substr(0, 200);
  Put("g.txt", "# only\n# comments\n\n");
  EXPECT_NE(ExpectSameEverywhere(read({})).find("no edges"), std::string::npos);
}

TEST_F(StreamReadersTest, LibsvmRows) {
  const auto read = [](const fs::path& d) {
    const SparseRowDataset s = ReadLibsvm(d / "data.svm");
    return fmt::format("{} {} {} {} {} {}", s.num_rows, s.num_features, Of(s.indptr), Of(s.indices), Of(s.values),
                       Of(s.labels));
  };
  std::string text;
  for (int i = 0; i < 2500; ++i) {
    text += i % 3 == 0 ? "+1" : "-1";
    for (int j = 1 + i % 5; j < 60; j += 1 + (i + j) % 7) text += fmt::format(" {}:{}", j, 0.25 * ((i * j) % 13));
    text += i % 50 == 0 ? " # a comment\n\n" : "\n";
  }
  Put("data.svm", text);
  EXPECT_EQ(ExpectSameEverywhere(read).rfind("2500 ", 0), 0u);
  // The first error in file order is the one reported, wherever the pieces fall.
  std::string bad = text;
  size_t at = 0;
  for (int line = 0; line < 2000; ++line) at = bad.find('\n', at) + 1;
  bad.insert(at, "+1 4:1 3:2\n");
  bad += "-1 x:1\n";
  Put("data.svm", bad);
  EXPECT_NE(ExpectSameEverywhere(read).find("feature index 3 comes after index 4"), std::string::npos);
  Put("data.svm", text + "-1 2:1 3:nan");
  EXPECT_NE(ExpectSameEverywhere(read).find("is not finite"), std::string::npos);
}

TEST_F(StreamReadersTest, MetisGraphs) {
  const auto read = [](const fs::path& d) {
    const MetisGraph m = ReadMetisGraph(d / "m.graph");
    return fmt::format("{} {} {} {}", Of(m.graph), m.ncon, fmt::join(m.vertex_weights, ","),
                       fmt::join(m.vertex_sizes, ","));
  };
  // A ring of 2000 vertices with edge weights and a vertex weight each, comments in between.
  const int n = 2000;
  std::string text = fmt::format("% ring\n{} {} 011\n", n, n);
  for (int v = 1; v <= n; ++v) {
    const int prev = v == 1 ? n : v - 1;
    const int next = v == n ? 1 : v + 1;
    text += fmt::format("{} {} 3 {} 3\n", v % 4 + 1, std::min(prev, next), std::max(prev, next));
    if (v % 300 == 0) text += "% comment\n";
  }
  Put("m.graph", text);
  EXPECT_EQ(ExpectSameEverywhere(read).find("error"), std::string::npos);
  std::string bad = text;
  bad.replace(bad.rfind(" 3\n"), 3, " 4\n");  // one direction of an edge weighs differently
  Put("m.graph", bad);
  EXPECT_NE(ExpectSameEverywhere(read).find("error"), std::string::npos);
  // A header promising more vertices than the text can hold is refused before sizing anything; a compressed file
  // is bounded by what it may inflate to.
  Put("m.graph", "100000 1\n2\n1\n");
  EXPECT_EQ(Outcome(read, "plain"),
            "error: m.graph:1: the header declares 100000 vertices, more than the file's 13 bytes can hold");
  for (const char* variant : {"gz", "bz2"}) {
    const std::string got = Outcome(read, variant);
    EXPECT_NE(got.find("error: m.graph:1: the header declares 100000 vertices, more than the "), std::string::npos);
    EXPECT_NE(got.find("bytes the file may inflate to (--max-inflate-ratio) can hold"), std::string::npos) << got;
  }
}

TEST_F(StreamReadersTest, NodeTables) {
  const auto read = [](const fs::path& d) { return Of(ReadNodeTable(NodeTableFromPrefix(d / "t"))); };
  const int n = 1500;
  std::string edges;
  for (int i = 0; i < 4 * n; ++i) edges += fmt::format("{} {}\n", i % n, (i * 13 + 1) % n);
  std::string features = fmt::format("# sparse features\n{} 40 {}\n", n, 3 * n);
  for (int v = 0; v < n; ++v) {
    for (int j : {v % 10, 10 + v % 13, 30 + v % 7}) features += fmt::format("{} {} {}\n", v, j, 1 + v % 3);
  }
  std::string labels;
  for (int v = 0; v < n; ++v) labels += std::to_string(v % 6 == 5 ? -1 : v % 5) + "\n";
  labels += "\n\n";  // blank lines at the end are harmless
  std::string train;
  std::string val;
  std::string test;
  for (int v = 0; v < n; ++v) (v % 10 < 6 ? train : v % 10 < 8 ? val : test) += std::to_string(v) + "\n";
  Put("t.edges.txt", edges);
  Put("t.features.txt", features);
  Put("t.labels.txt", labels);
  Put("t.train.txt", train);
  Put("t.val.txt", val);
  Put("t.test.txt", test);
  EXPECT_EQ(ExpectSameEverywhere(read).find("error"), std::string::npos);
  // A blank line followed by more labels is an error at the blank line, however far ahead the next label is.
  std::string gap = labels;
  gap.insert(gap.find("\n", gap.size() / 2) + 1, "\n   \n");
  Put("t.labels.txt", gap);
  const std::string got = ExpectSameEverywhere(read);
  EXPECT_NE(got.find("blank line; every line holds the label of one node"), std::string::npos) << got;
  Put("t.labels.txt", labels);
  std::string unsorted = features;
  unsorted += fmt::format("{} 0 1\n", n - 2);
  Put("t.features.txt", unsorted);
  EXPECT_NE(ExpectSameEverywhere(read).find("more entries than"), std::string::npos);
}

TEST_F(StreamReadersTest, OgbDenseFeatures) {
  const auto read = [](const fs::path& d) { return Of(ReadOgbNodeFolder(d / "ogbn-s")); };
  const int n = 800;
  std::string edges;
  for (int i = 0; i < 3 * n; ++i) edges += fmt::format("{},{}\n", i % n, (i * 7 + 3) % n);
  std::string feat;
  for (int v = 0; v < n; ++v) feat += fmt::format("{},{},-{},{}e-3\n", v * 0.5, v % 7, v % 3, v);
  feat += "\n";
  std::string labels;
  for (int v = 0; v < n; ++v) labels += std::to_string(v % 4) + "\n";
  std::string train;
  std::string valid;
  std::string test;
  for (int v = 0; v < n; ++v) (v % 10 < 6 ? train : v % 10 < 8 ? valid : test) += std::to_string(v) + "\n";
  for (const char* v : {"plain", "gz", "bz2"}) {
    fs::create_directories(dir_ / v / "ogbn-s" / "raw");
    fs::create_directories(dir_ / v / "ogbn-s" / "split" / "random");
  }
  Put("ogbn-s/raw/edge.csv", edges);
  Put("ogbn-s/raw/node-feat.csv", feat);
  Put("ogbn-s/raw/node-label.csv", labels);
  Put("ogbn-s/raw/num-node-list.csv", std::to_string(n) + "\n");
  Put("ogbn-s/split/random/train.csv", train);
  Put("ogbn-s/split/random/valid.csv", valid);
  Put("ogbn-s/split/random/test.csv", test);
  EXPECT_EQ(ExpectSameEverywhere(read).find("error"), std::string::npos);
  // A blank row in the middle would shift every later node: an error at that line.
  std::string gap = feat;
  gap.insert(gap.find('\n', gap.size() / 2) + 1, "\n");
  Put("ogbn-s/raw/node-feat.csv", gap);
  EXPECT_NE(ExpectSameEverywhere(read).find("error: ogbn-s/raw/node-feat.csv:"), std::string::npos);
  std::string ragged = feat;
  ragged.insert(ragged.find('\n', ragged.size() * 3 / 4), ",9");
  Put("ogbn-s/raw/node-feat.csv", ragged);
  EXPECT_NE(ExpectSameEverywhere(read).find("more than 4 values"), std::string::npos);
}

}  // namespace
}  // namespace tessel::datasets
