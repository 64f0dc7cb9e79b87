// `tessel train gcn --partitions DIR` through the binary without mpirun (one rank, a 1-part partition of the
// bundled Cora): the metrics file, option validation, rank-count and dataset mismatches. mpirun runs are ctest
// entries (label mpi) in tests/CMakeLists.txt.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

struct RunResult {
  int status = 0;
  std::string output;  // stdout and stderr
};

RunResult Tessel(const std::string& args) {
  const std::string cmd = std::string(TESSEL_BINARY) + " " + args + " 2>&1";
  RunResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) r.output.append(buf, n);
  r.status = pclose(pipe);
  return r;
}

class DistCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::path(::testing::TempDir()) / ("tessel_dist_cli_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    const std::string cora = std::string(TESSEL_TEST_DATA) + "/cora/cora";
    ASSERT_EQ(Tessel("convert --from nodetable " + cora + " -o " + (root_ / "cora").string() + " --name cora").status,
              0);
    ASSERT_EQ(
        Tessel("convert --from nodetable " + cora + " -o " + (root_ / "directed").string() + " --name cora --directed")
            .status,
        0);
    // Same counts, one label changed: only the fingerprint tells it apart.
    const std::string alt = (root_ / "alt").string();
    const std::string shell = "mkdir -p " + alt + " && cp " + cora + ".* " + alt + " && gunzip " + alt +
                              "/cora.labels.txt.gz && awk 'NR == 1 { $0 = ($0 == \"0\") ? \"1\" : \"0\" } 1' " + alt +
                              "/cora.labels.txt > " + alt + "/l && mv " + alt + "/l " + alt + "/cora.labels.txt";
    ASSERT_EQ(std::system(shell.c_str()), 0) << shell;
    ASSERT_EQ(Tessel("convert --from nodetable " + alt + "/cora -o " + (root_ / "relabelled").string() + " --name cora")
                  .status,
              0);
    ASSERT_EQ(Tessel("partition " + (root_ / "cora").string() + " -k 1 -o " + (root_ / "p1").string()).status, 0);
    ASSERT_EQ(Tessel("partition " + (root_ / "cora").string() + " -k 2 -o " + (root_ / "p2").string()).status, 0);
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }
  static std::string P(const char* name) { return (root_ / name).string(); }
  static fs::path root_;
};

fs::path DistCli::root_;

TEST_F(DistCli, OneRankWritesMetrics) {
  const std::string metrics = P("m.jsonl");
  const RunResult r =
      Tessel("train gcn --partitions " + P("p1") + " --dataset " + P("cora") +
             " --epochs 3 --batch-size 32 --fanouts 5,5 --lr 0.05 --skew 2 --threads 1 --metrics " + metrics);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("test accuracy"), std::string::npos) << r.output;
  std::ifstream in(metrics);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 4U);
  for (int e = 0; e < 3; ++e) {
    EXPECT_EQ(lines[e]["epoch"], e + 1);
    for (const char* key : {"loss", "sample_seconds", "fetch_seconds", "compute_seconds", "allreduce_seconds",
                            "feature_bytes", "gradient_bytes", "remote_share", "train_acc", "val_acc"}) {
      EXPECT_TRUE(lines[e].contains(key)) << key;
    }
  }
  const nlohmann::json& f = lines[3]["final"];
  EXPECT_EQ(f["ranks"], 1);
  EXPECT_EQ(f["test"]["count"], 1000);
  EXPECT_GT(f["test"]["accuracy"].get<double>(), 0.2);  // mechanics only: accuracy is tested in dist_trainer_test
  EXPECT_EQ(f["config"]["skew"], 2.0);
}

// Fewer ranks than parts: a rank holds several parts as one (partition/merge_parts.h); here one rank holds both.
TEST_F(DistCli, OneRankHoldsBothPartsOfATwoPartFolder) {
  const RunResult r = Tessel("train gcn --partitions " + P("p2") +
                             " --epochs 2 --batch-size 32 --fanouts 5,5 --lr 0.05 --threads 1 --log-level info");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("2 parts on 1 ranks: rank 0 holds parts 0 to 1 as one"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("test accuracy"), std::string::npos) << r.output;
}

// --metrics is written as epochs end, and a resumed run appends to it, marking where it resumed and on how many ranks.
TEST_F(DistCli, MetricsGrowByEpochAndAResumeAppendsARestartLine) {
  const std::string metrics = P("resumed.jsonl");
  const std::string ckpt = P("resumed_ck");
  const std::string train = "train gcn --partitions " + P("p2") +
                            " --batch-size 32 --fanouts 5,5 --lr 0.05 --threads 1 --checkpoint-every 1 --checkpoint " +
                            ckpt + " --metrics " + metrics;
  ASSERT_EQ(Tessel(train + " --epochs 2").status, 0);
  // A run that fails (a fault injected at its second epoch, epoch 4) leaves the line of the epoch it finished.
  ::setenv("TESSEL_FAULT", "fail@epoch,after=1", 1);
  const RunResult failed = Tessel(train + " --epochs 4 --resume");
  ::unsetenv("TESSEL_FAULT");
  EXPECT_NE(failed.status, 0);
  EXPECT_NE(failed.output.find("injected fault at epoch"), std::string::npos) << failed.output;
  const RunResult r = Tessel(train + " --epochs 4 --resume");
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream in(metrics);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  // Epochs 1, 2 and the final line; a restart after epoch 2 and epoch 3 (the failed run); a restart after epoch 3,
  // epoch 4 and the final line.
  ASSERT_EQ(lines.size(), 8U);
  EXPECT_EQ(lines[1]["epoch"], 2);
  EXPECT_TRUE(lines[2].contains("final"));
  EXPECT_EQ(lines[3]["restart"]["after_epoch"], 2);
  EXPECT_EQ(lines[3]["restart"]["ranks"], 1);
  EXPECT_EQ(lines[3]["restart"]["checkpoint_ranks"], 1);
  EXPECT_EQ(lines[4]["epoch"], 3);
  EXPECT_EQ(lines[5]["restart"]["after_epoch"], 3);
  EXPECT_EQ(lines[6]["epoch"], 4);
  EXPECT_EQ(lines[7]["final"]["ranks"], 1);
}

TEST_F(DistCli, DatasetFromAnotherPartitionIsRefused) {
  const RunResult r = Tessel("train gcn --partitions " + P("p1") + " --dataset " + P("directed") + " --epochs 1");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("is not the dataset the partition"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("num_entries"), std::string::npos) << r.output;
}

TEST_F(DistCli, DatasetWithTheSameCountsButOtherLabelsIsRefused) {
  const RunResult r = Tessel("train gcn --partitions " + P("p1") + " --dataset " + P("relabelled") + " --epochs 1");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("the fingerprint of graph, features and labels"), std::string::npos) << r.output;
}

TEST_F(DistCli, OptionsAreValidated) {
  const std::string p = " --partitions " + P("p1") + " --epochs 1";
  const std::string taken = P("taken.jsonl");
  std::ofstream(taken) << "{}\n";  // an earlier run's metrics: replaced only with --force
  struct Case {
    std::string args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {p + " --skew 0.5", "--skew"},
      {p + " --skew 2 --skew-variance 0.5", "exclude each other"},
      {p + " --skew-variance 0", "is not a variance budget"},
      {p + " --skew-max 0.5", "max"},
      {p + " --feature-cache -3", "--feature-cache"},
      {p + " --fanouts 5", "--fanouts gives 1 fanouts"},
      {p + " --random-split 0.6,0.2,0.2", "--random-split cannot be used with --partitions"},
      {" --dataset " + P("cora") + " --skew 2 --epochs 1", "to distributed training only"},
      {" --dataset " + P("cora") + " --fanouts 5,5 --epochs 1", "add --batch-size N"},
      {" --dataset " + P("cora") + " --replace --epochs 1", "--fanouts and --replace apply to sampled mini-batches"},
      {" --epochs 1", "give --dataset DIR"},
      {p + " --metrics " + taken, "--metrics " + taken + ": already exists; pass --force"},
  };
  for (const Case& c : cases) {
    const RunResult r = Tessel("train gcn" + c.args);
    EXPECT_NE(r.status, 0) << c.args;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
  }
}

TEST_F(DistCli, HelpShowsTheDistributedOptions) {
  const RunResult r = Tessel("train gcn --help");
  EXPECT_EQ(r.status, 0);
  for (const char* opt : {"--partitions", "--skew", "--skew-variance", "--skew-max", "--feature-cache"}) {
    EXPECT_NE(r.output.find(opt), std::string::npos) << opt;
  }
}

}  // namespace
