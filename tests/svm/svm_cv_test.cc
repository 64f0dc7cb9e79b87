// svm-train -v K and -b 1 reproduced: glibc's rand() (LIBSVM shuffles with it, unseeded), LIBSVM's stratified and
// plain folds, svm-train's summary lines, and svm-predict -b 1's probabilities, against recorded values and, when
// LIBSVM's tools are installed, live runs; the folds' predictions do not depend on the thread count.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/parallel.h"
#include "datasets/readers.h"
#include "svm/cross_validation.h"
#include "svm/svm_model.h"
#include "tests/svm/svm_test_util.h"

namespace tessel::svm {
namespace {
namespace fs = std::filesystem;

const fs::path kData = fs::path(TESSEL_TEST_DATA) / "svm";

#ifdef __GLIBC__
TEST(GlibcRandTest, IsTheCLibrarysRand) {
  for (const unsigned seed : {1u, 7u, 123456789u}) {
    std::srand(seed);
    GlibcRand ours(seed);
    for (int k = 0; k < 1000; ++k) ASSERT_EQ(ours.Next(), std::rand()) << "seed " << seed << " draw " << k;
  }
}
#endif

// Recorded from Debian's svm-train 3.24 (`svm-train ARGS -v K heart_scale`).
struct CvCase {
  const char* args;
  int folds;
  const char* summary;
};

void PrintTo(const CvCase& c, std::ostream* os) { *os << "'" << c.args << "' -v " << c.folds; }

class SvmCvTest : public ::testing::TestWithParam<CvCase> {};

TEST_P(SvmCvTest, PrintsWhatSvmTrainPrints) {
  const CvCase& c = GetParam();
  const auto data = datasets::ReadLibsvm(kData / "heart_scale");
  const SvmParams p = testing::ParseLibsvmArgs(c.args);
  const CrossValidationResult cv = CrossValidate(data, p, c.folds);
  EXPECT_EQ(cv.Summary(p.type), c.summary);
  EXPECT_EQ(cv.target.size(), static_cast<size_t>(data.num_rows));
  if (std::system("command -v svm-train >/dev/null 2>&1") != 0) GTEST_SKIP() << "svm-train not on PATH";
  const std::string cmd =
      "svm-train " + std::string(c.args) + " -v " + std::to_string(c.folds) + " " + (kData / "heart_scale").string();
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  ASSERT_EQ(pclose(pipe), 0);
  const size_t at = out.find("Cross Validation");
  ASSERT_NE(at, std::string::npos) << out;
  EXPECT_EQ(out.substr(at), cv.Summary(p.type));
}

INSTANTIATE_TEST_SUITE_P(
    Recorded, SvmCvTest,
    ::testing::Values(CvCase{"", 5, "Cross Validation Accuracy = 82.963%\n"},
                      CvCase{"-c 4 -g 0.25", 5, "Cross Validation Accuracy = 77.037%\n"},
                      CvCase{"-s 1", 5, "Cross Validation Accuracy = 84.0741%\n"},
                      CvCase{"-s 2", 5, "Cross Validation Accuracy = 46.6667%\n"},
                      CvCase{"-s 3", 5,
                             "Cross Validation Mean squared error = 0.544248\nCross Validation Squared correlation "
                             "coefficient = 0.46728\n"},
                      CvCase{"-s 3", 7,
                             "Cross Validation Mean squared error = 0.531248\nCross Validation Squared correlation "
                             "coefficient = 0.478808\n"},
                      CvCase{"-s 4 -t 0", 5,
                             "Cross Validation Mean squared error = 0.529783\nCross Validation Squared correlation "
                             "coefficient = 0.475315\n"},
                      CvCase{"", 300, "Cross Validation Accuracy = 81.8519%\n"},    // more folds than rows: LOO
                      CvCase{"-b 1", 5, "Cross Validation Accuracy = 83.3333%\n"},  // folds predict by probability
                      CvCase{"-s 3 -b 1", 5,
                             "Cross Validation Mean squared error = 0.544248\nCross Validation Squared correlation "
                             "coefficient = 0.46728\n"}));

std::string FormatG(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// -b 1 on a classification model: probabilities in [0, 1] summing to 1 whose most probable class is the label
// returned, and, when svm-predict is installed, its `-b 1` lines from our model file equal ours.
TEST(SvmProbability, PredictsWhatSvmPredictPredicts) {
  for (const char* file : {"heart_scale", "letter_300"}) {
    const auto data = datasets::ReadLibsvm(kData / file);
    SvmParams p;
    p.probability = 1;
    if (std::string_view(file) == "letter_300") {
      p.C = 16;
      p.kernel.gamma = 4;
    }
    const SvmModel model = TrainSvm(data, p);
    ASSERT_TRUE(model.HasProbability());
    const auto indptr = data.indptr.Host();
    std::vector<std::string> ours;
    std::vector<double> probs;
    for (int64_t r = 0; r < data.num_rows; ++r) {
      const auto b = static_cast<size_t>(indptr[r]);
      const auto n = static_cast<size_t>(indptr[r + 1] - indptr[r]);
      const double label =
          PredictRowProbability(model, data.indices.Host().subspan(b, n), data.values.Host().subspan(b, n), &probs);
      ASSERT_EQ(probs.size(), static_cast<size_t>(model.nr_class));
      double sum = 0;
      size_t best = 0;
      for (size_t c = 0; c < probs.size(); ++c) {
        EXPECT_GE(probs[c], 0);
        EXPECT_LE(probs[c], 1);
        sum += probs[c];
        if (probs[c] > probs[best]) best = c;
      }
      EXPECT_NEAR(sum, 1, 1e-6) << file << " row " << r;
      EXPECT_EQ(label, model.labels[best]);
      std::string line = FormatG(label);
      for (const double q : probs) {
        line += ' ';
        line += FormatG(q);
      }
      ours.push_back(line);
    }
    if (std::system("command -v svm-predict >/dev/null 2>&1") != 0) GTEST_SKIP() << "svm-predict not on PATH";
    const fs::path dir = fs::temp_directory_path() / "tessel_svm_prob" / file;
    fs::create_directories(dir);
    SaveSvmModel(model, dir / "m.model");
    std::string cmd = "svm-predict -b 1 ";
    for (const fs::path& arg : {kData / file, dir / "m.model", dir / "out.txt"}) {
      cmd += arg.string();
      cmd += ' ';
    }
    cmd += ">/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    std::ifstream in(dir / "out.txt");
    std::string line;
    ASSERT_TRUE(std::getline(in, line));
    EXPECT_EQ(line.rfind("labels ", 0), 0u) << line;
    for (size_t r = 0; r < ours.size(); ++r) {
      ASSERT_TRUE(std::getline(in, line)) << file << " row " << r;
      EXPECT_EQ(line, ours[r]) << file << " row " << r;
    }
    fs::remove_all(dir);
  }
}

TEST(SvmCvFolds, DoNotDependOnTheThreadCount) {
  const auto data = datasets::ReadLibsvm(kData / "heart_scale");
  SvmParams p;
  p.type = SvmType::kNuSvc;
  std::vector<double> one;
  {
    ThreadLimit limit(1);
    one = CrossValidate(data, p, 4).target;
  }
  ThreadLimit limit(2);
  EXPECT_EQ(CrossValidate(data, p, 4).target, one);
}

// A fold whose training rows hold one class (the only -1 row is held out): LIBSVM's one-class model predicts that
// class there; svm-train 3.24 `-v 3` on these ten rows prints "Cross Validation Accuracy = 90%" (recorded).
TEST(SvmCvFolds, AFoldTrainedOnOneClassPredictsIt) {
  const fs::path file = fs::temp_directory_path() / "tessel_cv_rare_class.svm";
  {
    std::ofstream out(file);
    out << "1 1:1\n1 1:0.9\n1 1:0.8\n1 1:0.85\n1 1:0.95\n1 1:0.7\n-1 1:-1\n1 1:0.75\n1 1:0.65\n1 1:0.6\n";
  }
  const auto data = datasets::ReadLibsvm(file);
  fs::remove(file);
  for (const SvmType type : {SvmType::kCSvc, SvmType::kNuSvc}) {
    SvmParams p;
    p.type = type;
    p.nu = 0.1;
    const CrossValidationResult r = CrossValidate(data, p, 3);
    EXPECT_EQ(r.Summary(SvmType::kCSvc), "Cross Validation Accuracy = 90%\n");
    EXPECT_EQ(r.target[6], 1);  // the -1 row, held out of the only fold that saw it, is predicted +1
  }
}

TEST(SvmCvFolds, RefuseFewerThanTwo) {
  const auto data = datasets::ReadLibsvm(kData / "heart_scale");
  EXPECT_THROW(CrossValidate(data, SvmParams{}, 1), Error);
}

}  // namespace
}  // namespace tessel::svm
