// svm-train -v K reproduced: glibc's rand() (LIBSVM shuffles with it, unseeded), LIBSVM's stratified and plain folds,
// and svm-train's summary lines, against recorded values and, when svm-train is installed, a live run; the folds'
// predictions do not depend on the thread count.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/error.h"
#include "core/parallel.h"
#include "datasets/readers.h"
#include "svm/cross_validation.h"
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
                      CvCase{"", 300, "Cross Validation Accuracy = 81.8519%\n"}));  // more folds than rows: LOO

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

TEST(SvmCvFolds, RefuseFewerThanTwo) {
  const auto data = datasets::ReadLibsvm(kData / "heart_scale");
  EXPECT_THROW(CrossValidate(data, SvmParams{}, 1), Error);
}

}  // namespace
}  // namespace tessel::svm
