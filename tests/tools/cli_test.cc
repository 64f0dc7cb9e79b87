// The `tessel` binary end to end: `convert` from every input format on tiny files in tests/data/convert, then
// `info --json` counts checked by hand; option errors, corruption and failed conversions exit non-zero.
#include <gmock/gmock.h>
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

#include "tests/tools/cli_run.h"  // after the pragma: its RunTessel builds strings the same way

namespace tessel::tools {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::Result;
using testing::RunTessel;
using testing::Slurp;
using testing::UniqueTempDir;

const fs::path kData = fs::path(TESSEL_TEST_DATA) / "convert";

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = UniqueTempDir("tessel_cli_");
    fs::remove_all(root_);
    fs::create_directories(root_ / "out");
  }
  void TearDown() override { fs::remove_all(root_); }

  // Runs `tessel ARGS` (arguments are shell words) with stdout and stderr captured.
  Result Run(const std::string& args) const { return RunTessel("", args, root_); }
  // Converts and returns `info --json` of the result (failing the test when either step fails).
  nlohmann::json ConvertAndInfo(const std::string& convert_args, const std::string& name) const {
    const fs::path dir = Out(name);
    const Result c = Run("convert " + convert_args + " --output '" + dir.string() + "'");
    EXPECT_EQ(c.code, 0) << c.err;
    EXPECT_THAT(c.out, HasSubstr("converted"));
    const Result i = Run("info --json '" + dir.string() + "'");
    EXPECT_EQ(i.code, 0) << i.err;
    try {
      return nlohmann::json::parse(i.out);
    } catch (const nlohmann::json::exception& e) {
      ADD_FAILURE() << "info --json printed no JSON: " << i.out;
      return {};
    }
  }
  fs::path Out(const std::string& name) const { return root_ / "out" / name; }
  static std::string In(const std::string& file) { return "'" + (kData / file).string() + "'"; }
  // Anything in out/ besides the named datasets (temporary folders must not stay behind).
  size_t EntriesInOut() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(root_ / "out")) ++n;
    return n;
  }
  fs::path root_;
};

TEST_F(CliTest, HelpListsOptionsWithDefaults) {
  const Result r = Run("convert --help");
  EXPECT_EQ(r.code, 0);
  for (const char* s : {"--from", "--output", "--split", "--resplit", "--ogb-split", "--num-features", "edgelist"}) {
    EXPECT_THAT(r.out, HasSubstr(s));
  }
  EXPECT_THAT(r.out, HasSubstr("--seed UINT=1"));  // defaults are shown
  const Result i = Run("info --help");
  EXPECT_EQ(i.code, 0);
  EXPECT_THAT(i.out, HasSubstr("--no-verify"));
}

// --math picks the CUDA GEMM precision: fp32 and tf32 are accepted (the CPU computes float32 either way, so the
// results are identical), anything else is refused with the accepted values; --json reports the device counters.
TEST_F(CliTest, MathOptionAndDeviceCountersInTheResult) {
  const std::string cora = "'" + (fs::path(TESSEL_TEST_DATA) / "cora" / "cora").string() + "'";
  const Result bad = Run("train gcn --dataset " + cora + " --epochs 1 --math fp16");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("--math: fp16 not in {fp32,tf32}"), std::string::npos) << bad.err;
  const Result fp32 = Run("--log-level warn train gcn --dataset " + cora + " --epochs 3 --json --math fp32");
  const Result tf32 = Run("--log-level warn train gcn --dataset " + cora + " --epochs 3 --json --math tf32");
  ASSERT_EQ(fp32.code, 0) << fp32.err;
  ASSERT_EQ(tf32.code, 0) << tf32.err;
  const auto a = nlohmann::json::parse(fp32.out);
  const auto b = nlohmann::json::parse(tf32.out);
  EXPECT_EQ(a["test"]["accuracy"], b["test"]["accuracy"]);
  const auto& dev = a["device_last_epoch"];
  for (const char* key : {"allocations", "runtime_allocations", "h2d_copies", "h2d_bytes", "d2h_copies", "d2h_bytes",
                          "synchronizations"}) {
    ASSERT_TRUE(dev.contains(key)) << key;
    EXPECT_EQ(dev[key], 0) << key << ": a CPU run uses no device";
  }
}

TEST_F(CliTest, EdgeListDefaultsSymmetriseAndDropSelfLoops) {
  const auto j = ConvertAndInfo("--from edgelist " + In("tiny.edges"), "tiny");
  EXPECT_EQ(j["kind"].get<std::string>(), "node");
  EXPECT_EQ(j["name"].get<std::string>(), "tiny");
  EXPECT_EQ(j["num_nodes"], 6);
  EXPECT_EQ(j["num_edges"], 4);
  EXPECT_EQ(j["num_entries"], 8);
  EXPECT_EQ(j["self_loops"], 0);
  EXPECT_EQ(j["symmetric"], true);
  EXPECT_EQ(j["id_dtype"].get<std::string>(), "int32");
  EXPECT_EQ(j["degree"]["min"], 0);
  EXPECT_EQ(j["degree"]["max"], 2);
  EXPECT_EQ(j["degree"]["median"], 1.5);
  EXPECT_EQ(j["degree"]["isolated"], 1);
  EXPECT_EQ(j["features"]["dim"], 0);
  EXPECT_EQ(j["num_classes"], 0);
  EXPECT_EQ(j["checksums"]["ok"], true);
  EXPECT_EQ(j["checksums"]["arrays"].size(), 2U);  // indptr, indices
}

TEST_F(CliTest, EdgeListGraphOptions) {
  const auto loops = ConvertAndInfo("--from edgelist --keep-self-loops " + In("tiny.edges"), "loops");
  EXPECT_EQ(loops["num_entries"], 9);
  EXPECT_EQ(loops["self_loops"], 1);
  EXPECT_EQ(loops["num_edges"], 5);
  const auto directed = ConvertAndInfo("--from edgelist --directed " + In("tiny.edges"), "directed");
  EXPECT_EQ(directed["num_entries"], 5);
  EXPECT_EQ(directed["symmetric"], false);
  const auto w = ConvertAndInfo("--from edgelist --one-based --weighted --delimiter ';' " + In("weighted.csv"), "w");
  EXPECT_EQ(w["num_nodes"], 3);
  EXPECT_EQ(w["num_edges"], 3);
  EXPECT_EQ(w["weighted"], true);
  EXPECT_EQ(w["checksums"]["arrays"].size(), 3U);  // + weights
}

TEST_F(CliTest, MetisLinqsNodeTableAndLibsvm) {
  const auto m = ConvertAndInfo("--from metis " + In("square.graph"), "square");
  EXPECT_EQ(m["name"].get<std::string>(), "square");
  EXPECT_EQ(m["num_nodes"], 4);
  EXPECT_EQ(m["num_edges"], 4);
  EXPECT_EQ(m["id_dtype"].get<std::string>(), "int32");
  EXPECT_EQ(m["degree"]["min"], 2);

  for (const std::string& input : {In("papers"), "'" + kData.string() + "'"}) {  // prefix, then folder
    const auto l = ConvertAndInfo("--from linqs --force " + input, "papers");
    EXPECT_EQ(l["num_nodes"], 4);
    EXPECT_EQ(l["num_edges"], 3);
    EXPECT_EQ(l["features"]["dim"], 5);
    EXPECT_EQ(l["features"]["nnz"], 7);
    EXPECT_EQ(l["features"]["sparse"], true);
    EXPECT_EQ(l["num_classes"], 2);
    EXPECT_EQ(l["class_counts"], nlohmann::json({2, 2}));
  }

  const auto t = ConvertAndInfo("--from nodetable --name mytable " + In("table"), "table");
  EXPECT_EQ(t["name"].get<std::string>(), "mytable");
  EXPECT_EQ(t["num_nodes"], 4);
  EXPECT_EQ(t["num_edges"], 3);
  EXPECT_EQ(t["features"]["dim"], 3);
  EXPECT_EQ(t["features"]["nnz"], 4);
  EXPECT_EQ(t["class_counts"], nlohmann::json({1, 2}));
  EXPECT_EQ(t["unlabelled"], 1);
  EXPECT_EQ(t["split"], nlohmann::json({{"train", 1}, {"val", 1}, {"test", 1}}));

  const auto r = ConvertAndInfo("--from libsvm " + In("rows.libsvm"), "rows");
  EXPECT_EQ(r["kind"].get<std::string>(), "sparse_rows");
  EXPECT_EQ(r["num_rows"], 3);
  EXPECT_EQ(r["num_features"], 3);
  EXPECT_EQ(r["nnz"], 6);
  EXPECT_EQ(r["labels"], nlohmann::json::parse(R"([{"label":-1.0,"count":1},{"label":1.0,"count":2}])"));
  const auto wide = ConvertAndInfo("--from libsvm --num-features 10 " + In("rows.libsvm"), "wide");
  EXPECT_EQ(wide["num_features"], 10);
}

TEST_F(CliTest, OgbFolderWithDenseFeaturesAndItsSplit) {
  const auto j = ConvertAndInfo("--from ogb --ogb-split random " + In("ogb-mini"), "ogb");
  EXPECT_EQ(j["name"].get<std::string>(), "ogb-mini");
  EXPECT_EQ(j["num_nodes"], 5);
  EXPECT_EQ(j["num_edges"], 4);
  EXPECT_EQ(j["degree"]["isolated"], 1);
  EXPECT_EQ(j["features"], nlohmann::json({{"dim", 2}, {"sparse", false}, {"nnz", 5}, {"density", 0.5}}));
  EXPECT_EQ(j["class_counts"], nlohmann::json({2, 3}));
  EXPECT_EQ(j["split"], nlohmann::json({{"train", 2}, {"val", 1}, {"test", 2}}));
  const Result r = Run("convert --from ogb --ogb-split nosuch " + In("ogb-mini") + " -o '" + Out("x").string() + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("nosuch"));
}

TEST_F(CliTest, RandomSplitNeedsResplitWhenTheInputHasOneAndIsSeeded) {
  const Result refused =
      Run("convert --from nodetable " + In("table") + " --split 0.6,0.2,0.2 --output '" + Out("a").string() + "'");
  EXPECT_EQ(refused.code, 1);
  EXPECT_THAT(refused.err, HasSubstr("already has a split (1 train / 1 val / 1 test); pass --resplit"));
  EXPECT_FALSE(fs::exists(Out("a")));
  const std::string args = "--from nodetable " + In("table") + " --split 0.6,0.2,0.2 --resplit --seed 7";
  const auto a = ConvertAndInfo(args, "a");
  EXPECT_EQ(a["split"], nlohmann::json({{"train", 2}, {"val", 1}, {"test", 0}}));  // 3 labelled nodes
  ConvertAndInfo(args, "b");
  const auto ma = nlohmann::json::parse(Slurp(Out("a") / "manifest.json"));
  const auto mb = nlohmann::json::parse(Slurp(Out("b") / "manifest.json"));
  EXPECT_EQ(ma["arrays"]["train"]["xxh3"], mb["arrays"]["train"]["xxh3"]);  // same seed, same split
  const auto g = ConvertAndInfo("--from edgelist " + In("tiny.edges") + " --split 0.5,0.5,0", "g");
  EXPECT_EQ(g["split"], nlohmann::json({{"train", 3}, {"val", 3}, {"test", 0}}));  // all 6 nodes: no labels
}

TEST_F(CliTest, BadOptionsExitNonZeroWithAClearMessage) {
  const std::string out = " --output '" + Out("x").string() + "'";
  const std::pair<std::string, std::string> cases[] = {
      {"convert --from metis --weighted " + In("square.graph") + out, "--weighted applies to --from edgelist only"},
      {"convert --from edgelist --features f " + In("tiny.edges") + out, "--features applies to --from nodetable"},
      {"convert --from edgelist --split 0.5,0.5,0.5 " + In("tiny.edges") + out, "sums to 1.5, not 1"},
      {"convert --from edgelist --split 0.5,0.5 " + In("tiny.edges") + out, "has 2 fractions"},
      {"convert --from edgelist --seed 3 " + In("tiny.edges") + out, "--seed only seeds the random split"},
      {"convert --from libsvm --split 0.6,0.2,0.2 " + In("rows.libsvm") + out,
       "LIBSVM and IDX rows have no node split"},
      {"convert --from libsvm --num-features 0 " + In("rows.libsvm") + out, "--num-features must be >= 1"},
      {"convert --from edgelist --delimiter ab " + In("tiny.edges") + out, "must be one character"},
      {"convert --from edgelist " + In("missing.edges") + out, "no such file"},
      {"convert --from libsvm '" + root_.string() + "'" + out, "is a folder; give the file inside it"},
      {"convert --from ogb " + In("rows.libsvm") + out, "no such folder"},
      {"convert --from linqs " + In("nothing") + out, "nothing.content"},
      {"convert --from bogus " + In("tiny.edges") + out, "--from"},
      {"convert --from edgelist " + In("tiny.edges"), "--output"},
      {"info '" + (root_ / "nowhere").string() + "'", "no such dataset folder"},
      {"info '" + kData.string() + "'", "not a tessel dataset"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = Run(args);
    EXPECT_NE(r.code, 0) << args;
    EXPECT_THAT(r.err + r.out, HasSubstr(message)) << args;
  }
  EXPECT_EQ(EntriesInOut(), 0U);
}

TEST_F(CliTest, ExistingOutputNeedsForce) {
  ConvertAndInfo("--from edgelist " + In("tiny.edges"), "g");
  const Result again = Run("convert --from metis " + In("square.graph") + " --output '" + Out("g").string() + "'");
  EXPECT_EQ(again.code, 1);
  EXPECT_THAT(again.err, HasSubstr("already exists; pass --force"));
  const auto forced = ConvertAndInfo("--from metis --force " + In("square.graph"), "g");
  EXPECT_EQ(forced["num_nodes"], 4);
  std::ofstream(Out("notes.txt")) << "mine";
  fs::create_directories(Out("mine"));
  std::ofstream(Out("mine") / "keep.txt") << "mine";
  const Result refused =
      Run("convert --from metis --force " + In("square.graph") + " --output '" + Out("mine").string() + "'");
  EXPECT_EQ(refused.code, 1);
  EXPECT_THAT(refused.err, HasSubstr("is not a tessel dataset"));
  EXPECT_TRUE(fs::exists(Out("mine") / "keep.txt"));
}

// Names read from files or given on the command line reach the terminal with their control bytes escaped (an ESC
// in a dataset name must not recolour or rewrite the user's terminal): `info`, the log and the error line.
TEST_F(CliTest, ControlCharactersInNamesArePrintedEscaped) {
  const std::string esc_name = "\"$(printf '\\033[31mred\\007')\"";
  const Result c = Run("convert --from metis " + In("square.graph") + " --name " + esc_name + " --output '" +
                       Out("esc").string() + "'");
  ASSERT_EQ(c.code, 0) << c.err;
  const Result i = Run("info '" + Out("esc").string() + "'");
  ASSERT_EQ(i.code, 0) << i.err;
  EXPECT_THAT(i.out, HasSubstr("\\x1b[31mred\\x07"));
  EXPECT_EQ(i.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(i.err.find('\x1b'), std::string::npos);
  const Result e = Run("convert --from metis " + esc_name + " --output '" + Out("never").string() + "'");
  EXPECT_EQ(e.code, 1);
  EXPECT_THAT(e.err, HasSubstr("\\x1b[31mred"));
  EXPECT_EQ(e.err.find('\x1b'), std::string::npos);
}

// Memory and decompression limits: a refusal names what needed the memory, how much, and the option; nothing is
// left behind; a size that is not one is refused as an option error.
TEST_F(CliTest, MemoryAndInflateLimitsRefuseWithAMessage) {
  // A declared node count far beyond the edges (a forged '# nodes' comment) is refused before the index is made.
  std::ofstream(root_ / "forged.edges") << "# nodes 300000000\n0 1\n1 2\n";
  const Result r = Run("--max-memory 1G convert --from edgelist '" + (root_ / "forged.edges").string() +
                       "' --output '" + Out("f").string() + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("the row index of a 300000000-node graph"));
  EXPECT_THAT(r.err, HasSubstr("needs 8.9 GiB, but --max-memory is 1.0 GiB"));
  EXPECT_THAT(r.err, HasSubstr("check the node count the input declares"));
  EXPECT_EQ(EntriesInOut(), 0U);
  // A gzip bomb (20 MB of one line repeated, about 1000:1) stops at the ratio limit.
  const fs::path bomb = root_ / "bomb.edges.gz";
  ASSERT_EQ(std::system(("yes '0 1' | head -c 20000000 | gzip -9 > '" + bomb.string() + "'").c_str()), 0);
  const Result b = Run("--max-inflate-ratio 50 convert --from edgelist '" + bomb.string() + "' --output '" +
                       Out("b").string() + "'");
  EXPECT_EQ(b.code, 1);
  EXPECT_THAT(b.err, HasSubstr("bomb.edges.gz: decompresses to more than 50 times"));
  EXPECT_EQ(EntriesInOut(), 0U);
  const Result ok =
      Run("--max-inflate-ratio 0 convert --from edgelist '" + bomb.string() + "' --output '" + Out("b").string() + "'");
  EXPECT_EQ(ok.code, 0) << ok.err;
  const Result junk = Run("--max-memory lots info '" + Out("b").string() + "'");
  EXPECT_EQ(junk.code, 1);
  EXPECT_THAT(junk.err, HasSubstr("--max-memory 'lots' is not a size"));
}

// A checkpoint folder is replaced only with --force (or continued with --resume), as every other output.
TEST_F(CliTest, AnExistingCheckpointNeedsResumeOrForce) {
  ConvertAndInfo("--from nodetable " + In("table"), "t");
  const std::string train = "train gcn --dataset '" + Out("t").string() + "' --epochs 2 --checkpoint-every 1 " +
                            "--checkpoint '" + Out("ck").string() + "'";
  const Result first = Run(train);
  ASSERT_EQ(first.code, 0) << first.err;
  ASSERT_TRUE(fs::exists(Out("ck") / "checkpoint.json"));
  const Result again = Run(train);
  EXPECT_EQ(again.code, 1);
  EXPECT_THAT(again.err, HasSubstr("already holds a checkpoint; pass --resume to continue it, --force to replace it"));
  EXPECT_EQ(Run(train + " --resume").code, 0);
  EXPECT_EQ(Run(train + " --force").code, 0);
}

TEST_F(CliTest, BadInputReportsFileAndLineAndLeavesNothing) {
  const Result r = Run("convert --from edgelist " + In("bad.edges") + " --output '" + Out("bad").string() + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("bad.edges:2:"));
  EXPECT_EQ(EntriesInOut(), 0U);
}

TEST_F(CliTest, InfoReportsCorruptionAndExitsNonZero) {
  ConvertAndInfo("--from nodetable " + In("table"), "t");
  const Result text = Run("info '" + Out("t").string() + "'");
  EXPECT_EQ(text.code, 0);
  EXPECT_THAT(text.out, HasSubstr("nodes      4"));
  EXPECT_THAT(text.out, HasSubstr("split      train 1, val 1, test 1"));
  EXPECT_THAT(text.out, HasSubstr("checksums  ok (9 arrays verified)"));
  {
    std::fstream f(Out("t") / "feat_values.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f.put('\x01');  // 1.0f's low mantissa byte 0x00 -> 0x01: still a finite value
  }
  const Result bad = Run("info '" + Out("t").string() + "'");
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.out, HasSubstr("checksums  FAILED for 1 of 9 arrays"));
  EXPECT_THAT(bad.out, HasSubstr("feat_values.bin: checksum mismatch for array 'feat_values'"));
  EXPECT_THAT(bad.err, HasSubstr("1 of 9 arrays failed checksum verification"));
  const Result json = Run("info --json '" + Out("t").string() + "'");
  EXPECT_EQ(json.code, 1);
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["checksums"]["ok"], false);
  const Result skipped = Run("info --no-verify '" + Out("t").string() + "'");
  EXPECT_EQ(skipped.code, 0);
  EXPECT_THAT(skipped.out, HasSubstr("checksums  not verified"));
  fs::resize_file(Out("t") / "labels.bin", 3);
  const Result truncated = Run("info --no-verify '" + Out("t").string() + "'");
  EXPECT_EQ(truncated.code, 1);
  EXPECT_THAT(truncated.err, HasSubstr("has 3 bytes but the manifest says 16"));
}

}  // namespace
}  // namespace tessel::tools
