// Faults injected into the `tessel` binary through TESSEL_FAULT (core/fault_inject.h): a full disk (enospc@write)
// during `convert` and `train svm --model` is a clean error that leaves no output and no temporary behind; a file cut
// short before its rename (truncate@write) is refused by the next reader; fail@write names the point; a malformed
// TESSEL_FAULT is an error before any work. Also `--timeout` on the subcommands that communicate.
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

#include "tests/tools/cli_run.h"

namespace tessel::tools {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::Result;
using testing::RunTessel;
using testing::UniqueTempDir;

std::string Quote(const fs::path& p) { return "'" + p.string() + "'"; }

class FaultCli : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = UniqueTempDir("tessel_fault_");
    fs::remove_all(root_);
    fs::create_directories(root_ / "out");
  }
  void TearDown() override { fs::remove_all(root_); }

  // Runs `tessel ARGS` with TESSEL_FAULT=fault ("" = unset) in its environment only.
  Result Run(const std::string& fault, const std::string& args) const {
    return RunTessel(fault.empty() ? "env -u TESSEL_FAULT " : "env TESSEL_FAULT='" + fault + "' ", args, root_);
  }
  fs::path Out(const std::string& name) const { return root_ / "out" / name; }
  size_t EntriesInOut() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(root_ / "out")) ++n;
    return n;
  }
  static std::string Convert() {
    return "convert --from nodetable " + Quote(fs::path(TESSEL_TEST_DATA) / "convert" / "table") + " --output ";
  }
  static std::string TrainSvm() {
    return "train svm --threads 1 --data " + Quote(fs::path(TESSEL_TEST_DATA) / "svm" / "heart_scale") + " --model ";
  }
  fs::path root_;
};

// A full disk at the first and at a later file of a dataset: the error names the file and the cause, and the output
// folder (built under a temporary name) is gone, temporaries included.
TEST_F(FaultCli, DiskFullDuringConvertLeavesNothing) {
  for (const char* fault : {"enospc@write", "enospc@write,after=3"}) {
    const Result r = Run(fault, Convert() + Quote(Out("t")));
    EXPECT_EQ(r.code, 1) << fault;
    EXPECT_THAT(r.err, HasSubstr("write failed: No space left on device (the file system is full")) << fault;
    EXPECT_THAT(r.err, HasSubstr(".bin")) << fault;  // the file that could not be written
    EXPECT_EQ(EntriesInOut(), 0U) << fault;
  }
  const Result ok = Run("", Convert() + Quote(Out("t")));  // the same command without the fault works
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(EntriesInOut(), 1U);
}

// A file cut short before it is renamed into place (the write "succeeded"): the next reader refuses the dataset,
// whether the short file is an array (size and checksum checks) or the manifest (JSON).
TEST_F(FaultCli, TruncatedDatasetFileIsRefusedByTheReader) {
  for (const char* fault : {"truncate@write", "truncate@write,after=4"}) {
    fs::remove_all(Out("t"));
    const Result c = Run(fault, Convert() + Quote(Out("t")));
    ASSERT_EQ(c.code, 0) << fault << ": " << c.err;  // nothing noticed the short write
    const Result info = Run("", "info " + Quote(Out("t")));
    EXPECT_EQ(info.code, 1) << fault << ": " << info.out;
    EXPECT_THAT(info.err, HasSubstr("error:")) << fault;
    const Result train = Run("", "train gcn --epochs 1 --threads 1 --dataset " + Quote(Out("t")));
    EXPECT_EQ(train.code, 1) << fault << ": " << train.out;
    EXPECT_THAT(train.out, Not(HasSubstr("test accuracy")));
  }
  const Result c = Run("", Convert() + Quote(Out("t")) + " --force");
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(Run("", "info " + Quote(Out("t"))).code, 0);  // the reader accepts the whole files
}

// `train svm --model` on a full disk, at the model or at its sidecar: no model, no sidecar, no temporary; then a
// truncated model is refused by `predict svm`.
TEST_F(FaultCli, DiskFullOrTruncatedSvmModel) {
  const fs::path model = Out("m.model");
  Result r = Run("enospc@write", TrainSvm() + Quote(model));
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("m.model: write failed: No space left on device"));
  EXPECT_EQ(EntriesInOut(), 0U);
  r = Run("enospc@write,after=1", TrainSvm() + Quote(model));  // the sidecar, after the model was renamed in
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("m.model.json: write failed: No space left on device"));
  EXPECT_EQ(EntriesInOut(), 0U);  // the model written just before is removed again

  r = Run("truncate@write", TrainSvm() + Quote(model));
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(fs::exists(model));
  const Result p = Run("", "predict svm --model " + Quote(model) + " --data " +
                               Quote(fs::path(TESSEL_TEST_DATA) / "svm" / "heart_scale"));
  EXPECT_EQ(p.code, 1) << p.out;
  EXPECT_THAT(p.err, HasSubstr("m.model"));

  r = Run("fail@write", TrainSvm() + Quote(model) + " --force");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("injected fault at write on rank 0 (TESSEL_FAULT)"));
}

// A malformed TESSEL_FAULT ends any command before it does anything, with the form to use.
TEST_F(FaultCli, MalformedValueIsAnError) {
  const Result r = Run("stall@allredcue", Convert() + Quote(Out("t")));
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("error: TESSEL_FAULT='stall@allredcue': unknown point 'allredcue'"));
  EXPECT_EQ(EntriesInOut(), 0U);
}

// --timeout: shown with its default on both training commands, and refused when negative or not finite.
TEST_F(FaultCli, TimeoutOption) {
  for (const char* sub : {"train gcn", "train svm"}) {
    const Result help = Run("", std::string(sub) + " --help");
    EXPECT_EQ(help.code, 0);
    EXPECT_THAT(help.out, HasSubstr("--timeout FLOAT=600")) << sub;
  }
  for (const char* bad : {"-1", "nan", "inf"}) {
    // Refused while parsing (tools/cli_params.h): CLI11's exit status, the option, the value and the range.
    const Result r = Run("", TrainSvm() + Quote(Out("m")) + " --timeout " + bad);
    EXPECT_NE(r.code, 0) << bad << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("--timeout " + std::string(bad) + ": ")) << bad;
    EXPECT_THAT(r.err, HasSubstr("give a finite number >= 0")) << bad;
    const Result g =
        Run("", "train gcn --dataset " + Quote(fs::path(TESSEL_TEST_DATA) / "cora" / "cora") + " --timeout " + bad);
    EXPECT_NE(g.code, 0) << bad;
    EXPECT_THAT(g.err, HasSubstr("--timeout")) << bad;
  }
  const Result zero = Run("", TrainSvm() + Quote(Out("m")) + " --timeout 0");  // 0 = no limit: trains
  EXPECT_EQ(zero.code, 0) << zero.err;
}

}  // namespace
}  // namespace tessel::tools
