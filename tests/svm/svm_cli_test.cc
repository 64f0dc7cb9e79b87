// `tessel train svm` / `tessel predict svm` end to end: svm-train style flags (-c -g -t -w1 2 -h 0), the model and
// sidecar, --json, and the bad-input errors (malformed line, single class, C <= 0, gamma < 0, feature mismatch).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/file_io.h"
#include "svm/svm_model.h"

namespace tessel::svm {
namespace {
namespace fs = std::filesystem;

const fs::path kData = fs::path(TESSEL_TEST_DATA) / "svm";

class SvmCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(TESSEL_BINARY)) GTEST_SKIP() << "the tessel binary is not built";
    dir_ = fs::temp_directory_path() /
           ("tessel_svm_cli_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return dir_ / name;
  }
  // Runs tessel with `args`; returns stdout + stderr and sets *status to the exit status.
  std::string Tessel(const std::string& args, int* status) {
    const std::string cmd = std::string(TESSEL_BINARY) + " --log-level warn " + args + " 2>&1";
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    char buf[4096];
    size_t n = 0;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    *status = pclose(p);
    return out;
  }
  std::string Fails(const std::string& args) {
    int status = 0;
    const std::string out = Tessel(args, &status);
    EXPECT_NE(status, 0) << args << "\n" << out;
    return out;
  }
  fs::path dir_;
};

TEST_F(SvmCliTest, TrainsWithSvmTrainFlagsAndPredicts) {
  int status = 0;
  const std::string model = (dir_ / "hs.model").string();
  std::string out = Tessel("train svm -c 4 -g 0.25 -t 2 -w1 2 -h 0 --threads 2 --json --data " +
                               (kData / "heart_scale").string() + " --model " + model,
                           &status);
  ASSERT_EQ(status, 0) << out;
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j.at("pairs").size(), 1u);
  EXPECT_EQ(j.at("pairs")[0].at("shrink_checks"), 0);  // -h 0
  EXPECT_EQ(j.at("gamma"), 0.25);
  const SvmModel m = LoadSvmModel(model);
  EXPECT_TRUE(fs::exists(SidecarPath(model)));
  EXPECT_EQ(m.kernel.gamma, 0.25);
  out = Tessel("predict svm --json --model " + model + " --data " + (kData / "heart_scale").string() + " --output " +
                   (dir_ / "pred.txt").string(),
               &status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_GT(nlohmann::json::parse(out).at("accuracy").get<double>(), 90.0);
  EXPECT_EQ(fs::file_size(dir_ / "pred.txt") > 0, true);
  // An existing --output is replaced only with --force; an input never.
  const std::string predict = "predict svm --model " + model + " --data " + (kData / "heart_scale").string();
  EXPECT_NE(Tessel(predict + " --output " + (dir_ / "pred.txt").string(), &status).find("already exists"),
            std::string::npos);
  EXPECT_NE(status, 0);
  EXPECT_NE(Tessel(predict + " --force --output " + model, &status).find("is an input of this command"),
            std::string::npos);
  EXPECT_NE(status, 0);
  Tessel(predict + " --force --output " + (dir_ / "pred.txt").string(), &status);
  EXPECT_EQ(status, 0);
}

// svm-train's own command line: positional TRAINING_FILE [MODEL_FILE] (the model named after the training file in
// the working folder when left out), -s/-n/-p/-b/-v/-q; what is given twice or makes no sense together is refused.
TEST_F(SvmCliTest, TakesSvmTrainsCommandLine) {
  const std::string hs = (kData / "heart_scale").string();
  int status = 0;
  std::string out = Tessel("train svm -q -s 3 -p 0.25 " + hs + " " + (dir_ / "r.model").string(), &status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_EQ(out, "");  // -q: nothing on stdout, as svm-train -q
  EXPECT_EQ(LoadSvmModel(dir_ / "r.model").type, SvmType::kEpsilonSvr);
  const std::string in_dir = "cd " + dir_.string() + " && " + std::string(TESSEL_BINARY) + " --log-level warn ";
  EXPECT_EQ(std::system((in_dir + "train svm -q -s nu_svc -b 1 " + hs + " > /dev/null").c_str()), 0);
  const SvmModel nu = LoadSvmModel(dir_ / "heart_scale.model");  // svm-train's default model name
  EXPECT_EQ(nu.type, SvmType::kNuSvc);
  EXPECT_TRUE(nu.HasProbability());
  out = Tessel("train svm -v 5 " + hs, &status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("Cross Validation Accuracy = 82.963%"), std::string::npos) << out;
  out = Tessel("predict svm -b 1 --model " + (dir_ / "heart_scale.model").string() + " --data " + hs + " --output " +
                   (dir_ / "p.txt").string(),
               &status);
  ASSERT_EQ(status, 0) << out;
  std::ifstream pred(dir_ / "p.txt");
  std::string first;
  std::getline(pred, first);
  EXPECT_EQ(first, "labels 1 -1");
  EXPECT_NE(Fails("train svm --data " + hs + " " + hs).find("given twice"), std::string::npos);
  EXPECT_NE(Fails("train svm -v 5 --data " + hs + " --model " + (dir_ / "x.model").string()).find("writes no model"),
            std::string::npos);
  EXPECT_NE(Fails("train svm -v 1 " + hs).find("at least 2 folds"), std::string::npos);
  EXPECT_NE(Fails("train svm -s 2 -b 1 " + hs + " " + (dir_ / "y.model").string()).find("one-class"),
            std::string::npos);
  EXPECT_NE(Fails("predict svm -b 1 --model " + (dir_ / "r.model").string() + " --data " + hs).find("no probability"),
            std::string::npos);
  // --solver batch takes every formulation: nu-SVC's objective as the SMO solver's within the tolerance.
  const std::string smo = Tessel("train svm -s 1 -e 0.00001 " + hs + " " + (dir_ / "s.model").string(), &status);
  ASSERT_EQ(status, 0) << smo;
  const std::string batched =
      Tessel("train svm -s 1 -e 0.00001 --solver batch " + hs + " " + (dir_ / "z.model").string(), &status);
  ASSERT_EQ(status, 0) << batched;
  EXPECT_NEAR(std::stod(batched.substr(batched.find("obj = ") + 6)), std::stod(smo.substr(smo.find("obj = ") + 6)),
              1e-5);
}

// svm-predict's own command line, [-b 1] [-q] TEST_FILE MODEL_FILE OUTPUT_FILE: the same output file byte for byte
// and the same stdout as svm-predict, on svm-train's models of a classification (with and without -b 1) and a
// regression; the three files are all needed and given once.
TEST_F(SvmCliTest, TakesSvmPredictsCommandLine) {
  const std::string hs = (kData / "heart_scale").string();
  if (std::system("command -v svm-train >/dev/null 2>&1 && command -v svm-predict >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "svm-train and svm-predict are not on PATH (apt-get install libsvm-tools)";
  const std::string c_model = (dir_ / "c.model").string();
  const std::string r_model = (dir_ / "r.model").string();
  ASSERT_EQ(std::system(("svm-train -q -b 1 " + hs + " " + c_model).c_str()), 0);
  ASSERT_EQ(std::system(("svm-train -q -s 3 -b 1 " + hs + " " + r_model).c_str()), 0);
  for (const std::string& flags :
       {std::string(""), std::string("-b 1 "), std::string("-q "), std::string("-b 1 -q ")}) {
    for (const std::string& model : {c_model, r_model}) {
      const std::string theirs = (dir_ / "theirs.txt").string();
      const std::string ours = (dir_ / "ours.txt").string();
      fs::remove(theirs);
      fs::remove(ours);
      int status = 0;
      std::string want;
      {
        FILE* p = popen(("svm-predict " + flags + hs + " " + model + " " + theirs).c_str(), "r");
        char buf[4096];
        size_t n = 0;
        while ((n = fread(buf, 1, sizeof buf, p)) > 0) want.append(buf, n);
        ASSERT_EQ(pclose(p), 0);
      }
      const std::string got = Tessel("predict svm " + flags + hs + " " + model + " " + ours, &status);
      ASSERT_EQ(status, 0) << got;
      EXPECT_EQ(got, want) << flags << model;
      EXPECT_EQ(ReadFileToString(ours), ReadFileToString(theirs)) << flags << model;
    }
  }
  EXPECT_NE(Fails("predict svm " + hs + " " + c_model).find("three files"), std::string::npos);
  EXPECT_NE(Fails("predict svm --model " + c_model + " " + hs + " " + c_model + " " + (dir_ / "o.txt").string())
                .find("given twice"),
            std::string::npos);
  EXPECT_NE(Fails("predict svm --data " + hs).find("--model is required"), std::string::npos);
  EXPECT_NE(Fails("predict svm " + hs + " " + (dir_ / "missing.model").string() + " " + (dir_ / "o.txt").string())
                .find("MODEL_FILE"),
            std::string::npos);
  // An existing OUTPUT_FILE is replaced only with the command line's --force (not Python's force=True).
  const std::string out = Write("exists.txt", "keep\n").string();
  const std::string refused = Fails("predict svm " + hs + " " + c_model + " " + out);
  EXPECT_NE(refused.find("OUTPUT_FILE " + out + ": already exists; pass --force"), std::string::npos) << refused;
  EXPECT_EQ(ReadFileToString(out), "keep\n");
}

TEST_F(SvmCliTest, BadInputGivesClearErrors) {
  const std::string hs = (kData / "heart_scale").string();
  const std::string model = " --model " + (dir_ / "m.model").string();
  const auto bad_line = Write("bad.txt", "1 1:0.5 2:1\n-1 1:0.25\n+1 3:abc\n");
  EXPECT_NE(Fails("train svm --data " + bad_line.string() + model).find("bad.txt:3:"), std::string::npos);
  const auto one_class = Write("one.txt", "2 1:0.5\n2 1:0.25\n2 2:1\n");
  EXPECT_NE(Fails("train svm --data " + one_class.string() + model).find("single class (label 2)"), std::string::npos);
  EXPECT_NE(Fails("train svm -c 0 --data " + hs + model).find("C = 0 must be positive"), std::string::npos);
  EXPECT_NE(Fails("train svm -c -1 --data " + hs + model).find("must be positive"), std::string::npos);
  EXPECT_NE(Fails("train svm -g -0.5 --data " + hs + model).find("gamma = -0.5 must not be negative"),
            std::string::npos);
  EXPECT_NE(Fails("train svm -t 7 --data " + hs + model).find("unknown SVM kernel '7'"), std::string::npos);
  EXPECT_NE(Fails("train svm --shrinking sometimes --data " + hs + model).find("off, eager, periodic or lazy"),
            std::string::npos);
  EXPECT_NE(Fails("train svm -w1 --data " + hs + model).find("-w"), std::string::npos);
  EXPECT_NE(Fails("train svm -w3 2 --data " + hs + model).find("class label 3 does not occur"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "m.model"));  // no partial output

  int status = 0;
  const std::string ok = Tessel("train svm --data " + hs + model, &status);
  ASSERT_EQ(status, 0) << ok;
  // An existing model is replaced only with --force; the training data never.
  const std::string before = ReadFileToString(dir_ / "m.model");
  EXPECT_NE(Fails("train svm -c 2 --data " + hs + model).find("already exists; pass --force"), std::string::npos);
  EXPECT_EQ(ReadFileToString(dir_ / "m.model"), before);
  EXPECT_NE(Fails("train svm --force --data " + hs + " --model " + hs).find("is an input of this command"),
            std::string::npos);
  const std::string replaced = Tessel("train svm -c 2 --force --data " + hs + model, &status);
  ASSERT_EQ(status, 0) << replaced;
  EXPECT_NE(ReadFileToString(dir_ / "m.model"), before);
  // Features the model never saw are used as svm-predict uses them, with a warning.
  const auto wide = Write("wide.txt", "1 1:0.5 20:1\n");
  const std::string warned = Tessel("predict svm --data " + wide.string() + model, &status);
  EXPECT_EQ(status, 0) << warned;
  EXPECT_NE(warned.find("1 of 1 rows use features beyond the model's 13"), std::string::npos) << warned;
}

}  // namespace
}  // namespace tessel::svm
