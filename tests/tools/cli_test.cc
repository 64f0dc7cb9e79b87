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
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/tools/cli_run.h"

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

// Global options are taken after the subcommand too, and a misspelt option is answered with the one meant.
TEST_F(CliTest, GlobalOptionsAfterTheSubcommandAndSuggestions) {
  const std::string cora = "'" + (fs::path(TESSEL_TEST_DATA) / "cora" / "cora").string() + "'";
  const Result loud = Run("train gcn --dataset " + cora + " --epochs 1");
  EXPECT_EQ(loud.code, 0) << loud.err;
  EXPECT_THAT(loud.err, HasSubstr("] info "));
  const Result quiet = Run("train gcn --dataset " + cora + " --epochs 1 --log-level warn");
  EXPECT_EQ(quiet.code, 0) << quiet.err;
  EXPECT_THAT(quiet.err, ::testing::Not(HasSubstr("] info ")));  // info lines silenced from after the subcommand
  const Result misspelt = Run("train gcn --dataset " + cora + " --learning-rate 0.1");
  EXPECT_NE(misspelt.code, 0);
  EXPECT_THAT(misspelt.err, HasSubstr("--learning-rate: did you mean --lr?"));
  const Result nothing_close = Run("train gcn --dataset " + cora + " --frobnicate 1");
  EXPECT_NE(nothing_close.code, 0);
  EXPECT_THAT(nothing_close.err, ::testing::Not(HasSubstr("did you mean")));
}

// --math picks the CUDA GEMM precision: fp32 and tf32 are accepted (the CPU computes float32 either way, so the
// results are identical), anything else is refused with the accepted values; --json reports the device counters.
TEST_F(CliTest, MathOptionAndDeviceCountersInTheResult) {
  const std::string cora = "'" + (fs::path(TESSEL_TEST_DATA) / "cora" / "cora").string() + "'";
  const Result bad = Run("train gcn --dataset " + cora + " --epochs 1 --math fp16");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("--math: unknown math 'fp16': use fp32"), std::string::npos) << bad.err;
  const Result fp32 = Run("--log-level warn train gcn --dataset " + cora + " --epochs 3 --json --math fp32");
  const Result tf32 = Run("--log-level warn train gcn --dataset " + cora + " --epochs 3 --json --math tf32");
  ASSERT_EQ(fp32.code, 0) << fp32.err;
  ASSERT_EQ(tf32.code, 0) << tf32.err;
  const auto a = nlohmann::json::parse(fp32.out);
  const auto b = nlohmann::json::parse(tf32.out);
  EXPECT_EQ(a["test"]["accuracy"], b["test"]["accuracy"]);
  const auto& dev = a["device_last_epoch"];
  for (const char* key : {"allocations", "runtime_allocations", "h2d_copies", "h2d_bytes", "d2h_copies", "d2h_bytes",
                          "synchronizations", "launches"}) {
    ASSERT_TRUE(dev.contains(key)) << key;
    EXPECT_EQ(dev[key], 0) << key << ": a CPU run uses no device";
  }
}

// --device sim runs the device code paths on the simulated device and --json reports what a GPU would do: a sampled
// SAGE step's launches and waits (once: the sampler's sizes, with Cora's sparse features the input rows' ids in the
// same read, their gather sizing its output on the host), and an SVM round's one download with
// no allocation after the first round. The results are the CPU's.
TEST_F(CliTest, SimulatedDeviceReportsPerStepAndPerRoundCounts) {
  const std::string cora = "'" + (fs::path(TESSEL_TEST_DATA) / "cora" / "cora").string() + "'";
  const std::string gcn = "--log-level warn train gcn --dataset " + cora +
                          " --model sage --batch-size 512 --fanouts 5,5 --epochs 2 --json --device ";
  const Result sim = Run(gcn + "sim");
  const Result cpu = Run(gcn + "cpu");
  ASSERT_EQ(sim.code, 0) << sim.err;
  ASSERT_EQ(cpu.code, 0) << cpu.err;
  const auto a = nlohmann::json::parse(sim.out);
  EXPECT_EQ(a["test"]["accuracy"], nlohmann::json::parse(cpu.out)["test"]["accuracy"]);
  const auto& step = a["device_last_epoch"]["per_step"];
  EXPECT_EQ(step["synchronizations"], 1.0);
  EXPECT_EQ(step["max_synchronizations"], 1);
  EXPECT_EQ(step["downloads"], 1.0);
  EXPECT_GT(step["launches"].get<double>(), 9.0);  // the sampler's 1 + 4 a layer, and the model's
  EXPECT_EQ(step["launches"].get<double>(), step["max_launches"].get<double>()) << "every step alike";

  const std::string svm = "--log-level warn train svm --data '" +
                          (fs::path(TESSEL_TEST_DATA) / "svm" / "heart_scale").string() + "' --model '" +
                          (root_ / "out" / "heart.model").string() + "' --device sim --json";
  const Result s = Run(svm);
  ASSERT_EQ(s.code, 0) << s.err;
  const auto report = nlohmann::json::parse(s.out);
  const auto& d = report["pairs"][0]["device"];
  EXPECT_GE(d["rounds"], 1);
  EXPECT_EQ(d["max_round"]["downloads"], 1);
  EXPECT_EQ(d["allocations_after_first_round"], 0);
  EXPECT_EQ(d["synchronizations"], d["downloads"]);
  EXPECT_GT(d["launches"], 0);
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

// A given split that lists a node without a label (-1) is converted with a warning naming the list, the node and
// --resplit (training refuses such a split; it used to say so only then).
TEST_F(CliTest, AGivenSplitNodeWithoutALabelIsWarnedAbout) {
  for (const char* part : {"edges", "features", "labels", "train", "test"})
    fs::copy_file(kData / (std::string("table.") + part + ".txt"), root_ / (std::string("t.") + part + ".txt"));
  std::ofstream(root_ / "t.val.txt") << "2\n";  // node 2's label is -1
  const Result r =
      Run("convert --from nodetable '" + (root_ / "t").string() + "' --output '" + Out("a").string() + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("the val split lists 1 node(s) without a label (-1; node 2 first)"));
  EXPECT_THAT(r.err, HasSubstr("--resplit"));
  const Result t = Run("train gcn --dataset '" + Out("a").string() + "' --epochs 1");
  EXPECT_EQ(t.code, 1);
  EXPECT_THAT(t.err, HasSubstr("val split node 2 has label -1"));
}

TEST_F(CliTest, AStrayLargeEdgeListIdIsWarnedAbout) {
  std::ofstream(root_ / "stray.txt") << "0 1\n1 2\n3000000 2\n";
  const Result r =
      Run("convert --from edgelist '" + (root_ / "stray.txt").string() + "' --output '" + Out("s").string() + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("the largest node id, 3000000, makes 3000001 nodes for 3 edges"));
  EXPECT_THAT(r.err, HasSubstr("renumber them densely"));
  const Result quiet = Run("convert --from edgelist " + In("tiny.edges") + " --output '" + Out("t").string() + "'");
  EXPECT_THAT(quiet.err, ::testing::Not(HasSubstr("renumber them densely")));
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
      {"convert --from libsvm --num-features 0 " + In("rows.libsvm") + out, "--num-features 0: out of range"},
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

// Issue 33, options: every integer option of every subcommand is range-checked (no wrap, no 1e8 or 2.5 for an
// integer), floats are finite, empty values are refused, and memory failures driven by an option name the activity
// and the option. Each case must fail (exit 1 for our checks, 105 or 106 for CLI11's), naming the option.
TEST_F(CliTest, OptionValuesAreCheckedAndRefusalsNameTheOption) {
  const std::string cora = "'" + (fs::path(TESSEL_TEST_DATA) / "cora" / "cora").string() + "'";
  const std::string svm = "'" + (fs::path(TESSEL_TEST_DATA) / "libsvm" / "tiny.svm").string() + "'";
  const std::string metis = "convert --from metis " + In("square.graph") + " --output '" + Out("m").string() + "'";
  const std::string csbm = "generate csbm --output '" + Out("g").string() + "'";
  const std::string gcn = "train gcn --dataset " + cora + " --epochs 1";
  const std::string train_svm = "train svm --data " + svm + " --model '" + Out("model").string() + "'";
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      // Integers that would wrap or truncate.
      {metis + " --split 0.5,0.25,0.25 --seed -1", {"--seed -1: out of range", "[0, 18446744073709551615]"}},
      {metis + " --split 0.5,0.25,0.25 --seed 1e23", {"--seed 1e23: not an integer", "plain digits"}},
      {csbm + " --seed 18446744073709551616", {"--seed 18446744073709551616: out of range"}},
      {csbm + " --nodes 1e12", {"--nodes 1e12: not an integer"}},
      {csbm + " --classes 2.5", {"--classes 2.5: not an integer"}},
      {gcn + " --hidden 1e8", {"--hidden 1e8: not an integer"}},
      {gcn + " --patience 2147483648", {"--patience 2147483648: out of range", "[-2147483648, 2147483647]"}},
      {"partition " + cora + " --parts 4294967297 -o '" + Out("p").string() + "'",
       {"--parts 4294967297: out of range"}},
      {"convert --from libsvm " + svm + " -o '" + Out("l").string() + "' --num-features 99999999999",
       {"--num-features 99999999999: out of range", "[1, 2147483647]"}},
      // Ranges the meaning requires.
      {csbm + " --threads 2147483647", {"--threads 2147483647: out of range", "[0, 4096]"}},
      {gcn + " --threads 5000", {"--threads 5000: out of range", "[0, 4096]"}},
      {train_svm + " --max-iter -5", {"--max-iter -5", "-1"}},
      {gcn + " --batch-size 8 --fanouts 2147483647,1", {"--fanouts 2147483647", "-1 for all neighbours"}},
      {gcn + " --batch-size 8 --fanouts 2147483648,1", {"--fanouts: 2147483648 is out of range"}},
      // Floats must be finite.
      {train_svm + " --rebalance nan", {"--rebalance nan: not finite"}},
      {train_svm + " -c inf", {"--cost inf: not finite"}},
      {train_svm + " -g nan", {"--gamma nan: not finite"}},
      {gcn + " --lr nan", {"--lr nan: not finite"}},
      {gcn + " --dropout 1e300", {"--dropout 1e300: out of range"}},  // beyond float
      {csbm + " --homophily nan", {"--homophily nan: not finite"}},
      {"--max-inflate-ratio nan info '" + Out("x").string() + "'", {"--max-inflate-ratio nan: not finite"}},
      {"--max-inflate-ratio -1 info '" + Out("x").string() + "'", {"--max-inflate-ratio -1: out of range"}},
      {gcn + " --timeout inf", {"--timeout inf: not finite"}},
      // Empty values are refused, never taken as unset.
      {metis + " --split ''", {"--split: the value is empty"}},
      {gcn + " --metrics ''", {"--metrics: the value is empty"}},
      {gcn + " --checkpoint ''", {"--checkpoint: the value is empty"}},
      {"info ''", {"path: the value is empty"}},
      {"--log-level '' info '" + Out("x").string() + "'", {"--log-level: the value is empty"}},
      {gcn + " --grad-compress ''", {"--grad-compress: the value is empty"}},
  };
  for (const auto& [args, expected] : cases) {
    const Result r = Run(args);
    EXPECT_NE(r.code, 0) << args;
    for (const std::string& e : expected) EXPECT_THAT(r.err, HasSubstr(e)) << args;
  }
  EXPECT_FALSE(fs::exists(Out("m")));
  EXPECT_FALSE(fs::exists(Out("g")));
  EXPECT_FALSE(fs::exists(Out("model")));
  // The largest values still in range are taken.
  const Result ok = Run(metis + " --split 0.5,0.25,0.25 --seed 18446744073709551615");
  EXPECT_EQ(ok.code, 0) << ok.err;
}

TEST_F(CliTest, SizesBeyondTheMemoryBudgetNameTheActivityAndTheOption) {
  const std::string cora = "'" + (fs::path(TESSEL_TEST_DATA) / "cora" / "cora").string() + "'";
  const Result nodes =
      Run("--max-memory 256M generate csbm --nodes 1000000000000 --output '" + Out("g").string() + "'");
  EXPECT_EQ(nodes.code, 1);
  EXPECT_THAT(nodes.err, HasSubstr("generating a CSBM graph (--nodes 1000000000000"));
  EXPECT_THAT(nodes.err, HasSubstr("lower these options"));
  const Result edges =
      Run("--max-memory 256M generate rmat --nodes 1000 --edges 100000000000 --output '" + Out("r").string() + "'");
  EXPECT_EQ(edges.code, 1);
  EXPECT_THAT(edges.err, HasSubstr("generating an R-MAT graph (--nodes 1000, --edges 100000000000"));
  // The options the user gave are named, not the counts derived from them (it said --nodes for --scale).
  const Result scale = Run("--max-memory 256M generate rmat --scale 40 --output '" + Out("s").string() + "'");
  EXPECT_EQ(scale.code, 1);
  EXPECT_THAT(scale.err, HasSubstr("(--scale 40 = 1099511627776 nodes, --edge-factor 16 = 17592186044416 edges"));
  EXPECT_THAT(scale.err, ::testing::Not(HasSubstr("--nodes")));
  const Result features =
      Run("--max-memory 256M generate csbm --nodes 100000 --features 100000 --output '" + Out("f").string() + "'");
  EXPECT_EQ(features.code, 1);
  EXPECT_THAT(features.err, HasSubstr("--features 100000"));
  const Result hidden = Run("--max-memory 256M train gcn --dataset " + cora + " --epochs 1 --hidden 100000000");
  EXPECT_EQ(hidden.code, 1);
  EXPECT_THAT(hidden.err, HasSubstr("--hidden 100000000"));
  // Full-graph training checks its activations (nodes x hidden per layer) first, the parameters after.
  EXPECT_THAT(hidden.err,
              ::testing::AnyOf(HasSubstr("lower --hidden or --layers"), HasSubstr("lower --layers or --hidden")));
  const Result layers =
      Run("--max-memory 256M train gcn --dataset " + cora + " --epochs 1 --hidden 4096 --layers 100000");
  EXPECT_EQ(layers.code, 1);
  EXPECT_THAT(layers.err, HasSubstr("--layers 100000"));
  for (const Result* r : {&nodes, &edges, &features, &hidden, &layers}) {
    EXPECT_THAT(r->err, ::testing::Not(HasSubstr("out of memory (an allocation failed"))) << r->err;
  }
  EXPECT_FALSE(fs::exists(Out("g")));
}

TEST_F(CliTest, NulBytesInInputsAreShownNotCutOff) {
  const fs::path edges = root_ / "nul.edges";
  {
    std::ofstream f(edges, std::ios::binary);
    f << "0 1\n" << std::string("1\0x 2\n", 6);
  }
  const Result r = Run("convert --from edgelist '" + edges.string() + "' --output '" + Out("n").string() + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("nul.edges:2: "));
  EXPECT_THAT(r.err, HasSubstr("1\\x00x"));  // the NUL as an escape, and the message goes on after it
  EXPECT_EQ(r.err.find('\0'), std::string::npos);
  const fs::path rows = root_ / "nul.svm";
  {
    std::ofstream f(rows, std::ios::binary);
    f << "+1 1:0.5\n" << std::string("-1 1:0\0.2 2:1\n", 14);
  }
  const Result s = Run("train svm --data '" + rows.string() + "' --model '" + Out("nul.model").string() + "'");
  EXPECT_EQ(s.code, 1);
  EXPECT_THAT(s.err, HasSubstr("nul.svm:2: "));
  EXPECT_THAT(s.err, HasSubstr("0\\x00.2"));
  // Control bytes in a refused option value or an unknown option are escaped too (the parser's own messages).
  const Result value = Run("generate csbm --output '" + Out("c").string() + "' --seed \"$(printf '\\033[31m')\"");
  EXPECT_NE(value.code, 0);
  EXPECT_THAT(value.err, HasSubstr("--seed \\x1b[31m: not an integer"));
  const Result option = Run("info --bad\"$(printf '\\033[31m')\" '" + Out("c").string() + "'");
  EXPECT_NE(option.code, 0);
  EXPECT_THAT(option.err, HasSubstr("--bad\\x1b[31m"));
  for (const Result* each : {&value, &option}) EXPECT_EQ(each->err.find('\x1b'), std::string::npos) << each->err;
}

// Issue 33, data loss: an output never replaces an input of the run (or another output), a device, or a file or
// folder of another kind, even with --force; --resume never takes over a folder that is not a checkpoint. Every
// input is byte-identical after each refused run.
TEST_F(CliTest, OutputsNeverDestroyInputs) {
  ConvertAndInfo("--from nodetable " + In("table"), "t");
  const auto q = [](const fs::path& p) { return "'" + p.string() + "'"; };
  const fs::path t = Out("t");
  const fs::path ck = Out("ck");
  const fs::path parts = Out("p");
  const fs::path notes = Out("notes");
  const fs::path rows = root_ / "h.json";  // SVM data named like the sidecar of a model "h"
  fs::copy_file(kData / "rows.libsvm", rows);
  fs::create_directories(root_ / "tab");  // a node-table prefix root_/tab/table
  for (const char* f : {"edges", "features", "labels", "train", "val", "test"}) {
    const std::string name = std::string("table.") + f + ".txt";
    fs::copy_file(kData / name, root_ / "tab" / name);
  }
  fs::create_directories(notes);
  std::ofstream(notes / "keep.txt") << "mine";
  fs::create_directory_symlink(t, root_ / "link");
  const std::string gcn = "train gcn --dataset " + q(t) + " --epochs 1";
  ASSERT_EQ(Run(gcn + " --checkpoint " + q(ck)).code, 0);
  ASSERT_EQ(Run("partition " + q(t) + " --parts 2 --method hash --output " + q(parts)).code, 0);
  ASSERT_EQ(Run("train svm --data " + q(rows) + " --model " + q(Out("model"))).code, 0);

  const auto snapshot = [&] {
    std::vector<std::pair<std::string, std::string>> files;
    for (const auto& e : fs::recursive_directory_iterator(root_)) {
      const std::string name = e.path().filename().string();
      if (name == "stdout.txt" || name == "stderr.txt") continue;
      files.emplace_back(e.path().string(), e.is_regular_file() && !e.is_symlink() ? Slurp(e.path()) : "(folder)");
    }
    std::sort(files.begin(), files.end());
    return files;
  };
  const auto before = snapshot();
  const std::string predict = "predict gcn --dataset " + q(t) + " --checkpoint " + q(ck) + " --force --output ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {gcn + " --checkpoint " + q(t) + " --force", "is an input of this command"},
      {gcn + " --checkpoint " + q(t / "ck") + " --force", "lies inside"},
      {gcn + " --checkpoint " + q(root_ / "link") + " --force", "is an input of this command"},
      {gcn + " --checkpoint " + q(root_) + " --force", "contains"},
      {gcn + " --checkpoint " + q(notes) + " --resume", "is not a tessel checkpoint (it is a folder of other files)"},
      {gcn + " --checkpoint " + q(notes) + " --force", "so it is not replaced even with --force"},
      {gcn + " --checkpoint " + q(parts) + " --force", "(it is a tessel partition folder)"},
      {gcn + " --checkpoint " + q(Out("model")) + " --force", "(it is a regular file)"},
      {gcn + " --metrics " + q(t / "manifest.json") + " --force", "lies inside"},
      {gcn + " --checkpoint " + q(Out("ck2")) + " --metrics " + q(Out("ck2") / "m.json"),
       "another output of this command"},
      {"train gcn --partitions " + q(parts) + " --epochs 1 --checkpoint " + q(parts / "x"), "lies inside"},
      {predict + q(t / "manifest.json"), "lies inside"},
      {predict + q(ck / "checkpoint.json"), "lies inside"},
      {predict + q(root_ / "link" / "labels.new"), "lies inside"},
      {predict + "/dev/null", "/dev/null: is a device, not a file; omit the option to write nothing"},
      {predict + q(notes), "is a folder of other files, not a file"},
      {"predict gcn --dataset " + q(root_ / "tab" / "table") + " --checkpoint " + q(ck) + " --force --output " +
           q(root_ / "tab" / "table.labels.txt"),
       "is an input of this command"},
      {"train svm --data " + q(rows) + " --model " + q(root_ / "h") + " --force", "--model's sidecar"},
      {"train svm --data " + q(rows) + " --model " + q(rows) + " --force", "is an input of this command"},
      {"predict svm --data " + q(rows) + " --model " + q(Out("model")) + " --force --output " + q(Out("model.json")),
       "is an input of this command"},
      {"partition " + q(t) + " --parts 2 --output " + q(t) + " --force", "is an input of this command"},
      {"partition " + q(t) + " --parts 2 --output " + q(ck) + " --force", "(it is a tessel checkpoint)"},
      {"convert --from nodetable " + In("table") + " --output " + q(notes) + " --force", "is not a tessel dataset"},
      {"convert --from nodetable " + In("table") + " --output " + q(parts) + " --force", "is not a tessel dataset"},
      {"convert --from libsvm " + q(rows) + " --output " + q(root_) + " --force", "contains"},
      {"generate csbm --nodes 100 --output " + q(ck) + " --force", "is not a tessel dataset"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = Run(args);
    EXPECT_EQ(r.code, 1) << args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(message)) << args;
    EXPECT_EQ(snapshot(), before) << "changed files: " << args;
  }
  if (fs::exists("/dev/null")) {
    EXPECT_TRUE(fs::is_character_file("/dev/null"));
  }
  // What may be replaced still is: an empty folder as a new checkpoint, a checkpoint with --force.
  fs::create_directories(Out("empty"));
  EXPECT_EQ(Run(gcn + " --checkpoint " + q(Out("empty"))).code, 0);
  EXPECT_TRUE(fs::exists(Out("empty") / "checkpoint.json"));
  EXPECT_EQ(Run(gcn + " --checkpoint " + q(ck) + " --force").code, 0);
}

// A tampered checkpoint is refused by `train gcn --resume` and `predict gcn --checkpoint` before it is used, naming
// the checkpoint, the field or tensor, and the fix; a resume past the run's --epochs says how to continue.
TEST_F(CliTest, TamperedCheckpointsAreRefusedByResumeAndPredict) {
  ConvertAndInfo("--from nodetable " + In("table"), "t");
  const auto q = [](const fs::path& p) { return "'" + p.string() + "'"; };
  const std::string gcn = "train gcn --dataset " + q(Out("t")) + " --epochs 3";
  ASSERT_EQ(Run(gcn + " --checkpoint " + q(Out("ck"))).code, 0);
  ASSERT_EQ(Run(gcn + " --normalize-features standard --checkpoint " + q(Out("cks"))).code, 0);
  const std::string good = Slurp(Out("ck") / "checkpoint.json");
  const std::string good_s = Slurp(Out("cks") / "checkpoint.json");
  const auto tamper = [&](const fs::path& dir, const std::string& text,
                          const std::function<void(nlohmann::json&)>& fn) {
    nlohmann::json j = nlohmann::json::parse(text);
    fn(j);
    std::ofstream(dir / "checkpoint.json", std::ios::trunc) << j.dump(2);
  };
  const std::string resume = gcn + " --checkpoint " + q(Out("ck")) + " --resume";
  const std::string predict = "predict gcn --dataset " + q(Out("t")) + " --checkpoint ";
  struct Case {
    std::string args;
    bool standard;  // the standard-scaling checkpoint
    std::function<void(nlohmann::json&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {resume, false, [](nlohmann::json& j) { j["epochs_done"] = 2147483647; }, "\"epochs_done\" is 2147483647"},
      {resume, false, [](nlohmann::json& j) { j["epochs_done"] = int64_t{1} << 40; },
       "\"epochs_done\" is 1099511627776"},
      {resume, false, [](nlohmann::json& j) { j["epochs_done"] = -5; }, "\"epochs_done\" is -5"},
      {resume, false, [](nlohmann::json& j) { j["adam_steps"] = -7; }, "\"adam_steps\" is -7"},
      {resume, false, [](nlohmann::json& j) { j["num_moments"] = 3; }, "\"num_moments\" is 3"},
      {predict + q(Out("ck")), false, [](nlohmann::json& j) { j["config"]["hidden"] = 1000000000; },
       "(layer0.weight) is 3x16 but the model of its configuration needs 3x1000000000"},
      {predict + q(Out("ck")), false, [](nlohmann::json& j) { j["config"] = 5; }, "\"config\" is 5"},
      {predict + q(Out("cks")), true, [](nlohmann::json& j) { j["config"].erase("feature_scaling"); },
       "\"config.feature_scaling\" is missing"},
  };
  for (const Case& c : cases) {
    const fs::path dir = Out(c.standard ? "cks" : "ck");
    tamper(dir, c.standard ? good_s : good, c.edit);
    const Result r = Run(c.args);
    EXPECT_EQ(r.code, 1) << c.args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << c.args;
    EXPECT_THAT(r.err, HasSubstr(dir.string())) << c.args;
    EXPECT_THAT(r.err, HasSubstr("delete it to start over")) << c.args;
  }
  std::ofstream(Out("ck") / "checkpoint.json", std::ios::trunc) << good;
  std::ofstream(Out("cks") / "checkpoint.json", std::ios::trunc) << good_s;
  // Past --epochs: the fix is named; with more epochs, or untampered, it continues.
  const Result past =
      Run("train gcn --dataset " + q(Out("t")) + " --epochs 2 --checkpoint " + q(Out("ck")) + " --resume");
  EXPECT_EQ(past.code, 1);
  EXPECT_THAT(past.err, HasSubstr("has 3 epochs done, more than --epochs 2; pass --epochs 3 or more"));
  EXPECT_EQ(Run("train gcn --dataset " + q(Out("t")) + " --epochs 5 --checkpoint " + q(Out("ck")) + " --resume").code,
            0);
  EXPECT_EQ(Run(predict + q(Out("cks")) + " --output " + q(Out("p.json"))).code, 0);
}

}  // namespace
}  // namespace tessel::tools
