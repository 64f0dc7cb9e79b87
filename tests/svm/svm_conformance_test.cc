// Conformance with LIBSVM 3.24, every formulation (C-SVC, nu-SVC, one-class, epsilon-SVR, nu-SVR): objective and
// rho (1e-6 relative beyond svm-train's printed digits) and training accuracy (0.05 points) per case, against values
// recorded from Debian's svm-train (tests/data/svm/expected_libsvm.tsv) and, when svm-train is on PATH, against a
// live run, whose model file must be ours byte for byte (the cases' parameters are exact in float, which svm-train
// parses them to); svm-predict must give our predictions from our model files.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>

#include "datasets/readers.h"
#include "svm/svm_model.h"
#include "svm/svm_train.h"
#include "tests/svm/svm_test_util.h"

namespace tessel::svm {
namespace {
namespace fs = std::filesystem;

const fs::path kData = fs::path(TESSEL_TEST_DATA) / "svm";

struct Case {
  std::string name;
  std::string file;
  std::string args;
  int64_t nsv = 0;
  double accuracy = 0;
  std::vector<double> obj;
  std::vector<double> rho;
};

std::vector<Case> LoadCases() {
  std::ifstream in(kData / "expected_libsvm.tsv");
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string tok;
    while (std::getline(ss, tok, '\t')) f.push_back(tok);
    if (f.size() != 7) {
      ADD_FAILURE() << "bad line in expected_libsvm.tsv: " << line;
      continue;
    }
    cases.push_back({f[0], f[1], f[2], std::stoll(f[3]), std::stod(f[4]), testing::SplitDoubles(f[5]),
                     testing::SplitDoubles(f[6])});
  }
  return cases;
}

std::string RunCommand(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *status = pclose(p);
  return out;
}

bool HaveProgram(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

void ExpectClose(const Case& c, const std::vector<double>& obj, const std::vector<double>& rho,
                 const std::vector<PairReport>& pairs, const std::string& what) {
  ASSERT_EQ(pairs.size(), obj.size()) << c.name << " " << what;
  ASSERT_EQ(pairs.size(), rho.size()) << c.name << " " << what;
  for (size_t k = 0; k < pairs.size(); ++k) {
    // svm-train prints %f: allow its rounding (5e-7) on top of 1e-6 relative.
    EXPECT_NEAR(pairs[k].result.obj, obj[k], 1e-6 * std::fabs(obj[k]) + 5e-7) << c.name << " pair " << k << " " << what;
    EXPECT_NEAR(pairs[k].result.rho, rho[k], 1e-6 * std::fabs(rho[k]) + 5e-7) << c.name << " pair " << k << " " << what;
  }
}

class SvmConformanceTest : public ::testing::TestWithParam<Case> {};

TEST_P(SvmConformanceTest, MatchesLibsvm) {
  const Case& c = GetParam();
  const auto data = datasets::ReadLibsvm(kData / c.file);
  TrainReport report;
  const SvmModel model = TrainSvm(data, testing::ParseLibsvmArgs(c.args), &report);
  ExpectClose(c, c.obj, c.rho, report.pairs, "recorded");
  const double nsv = static_cast<double>(model.total_sv());
  EXPECT_NEAR(nsv, static_cast<double>(c.nsv), 2 + 0.02 * static_cast<double>(c.nsv)) << c.name;
  const auto pred = PredictSvm(model, data);
  int64_t correct = 0;
  for (int64_t r = 0; r < data.num_rows; ++r) correct += pred[r] == data.labels.Host()[r];
  const double accuracy = 100.0 * static_cast<double>(correct) / static_cast<double>(data.num_rows);
  EXPECT_NEAR(accuracy, c.accuracy, 0.05 + 1e-4) << c.name;

  if (!HaveProgram("svm-train") || !HaveProgram("svm-predict")) GTEST_SKIP() << "svm-train not on PATH";
  const fs::path dir = fs::temp_directory_path() / ("tessel_svm_conf_" + c.name);
  fs::create_directories(dir);
  int status = 0;
  const std::string log = RunCommand(
      "svm-train " + c.args + " " + (kData / c.file).string() + " " + (dir / "libsvm.model").string(), &status);
  ASSERT_EQ(status, 0) << log;
  std::vector<double> obj;
  std::vector<double> rho;
  const std::regex re("obj = ([-0-9.e+]+), rho = ([-0-9.e+]+)");
  // With -b 1 svm-train also prints the objectives of its 5 internal folds before each pair's (or, for a
  // regression, before the model's): every sixth line is the model's.
  const int every = c.args.find("-b 1") != std::string::npos ? 6 : 1;
  int line = 0;
  for (std::sregex_iterator it(log.begin(), log.end(), re), end; it != end; ++it) {
    if (++line % every != 0) continue;
    obj.push_back(std::stod((*it)[1]));
    rho.push_back(std::stod((*it)[2]));
  }
  ExpectClose(c, obj, rho, report.pairs, "live svm-train");
  // The same model file as svm-train's, byte for byte; svm-predict reads it and predicts exactly what we predict.
  SaveSvmModel(model, dir / "ours.model");
  const auto slurp = [](const fs::path& f) {
    std::ifstream in(f, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(slurp(dir / "ours.model"), slurp(dir / "libsvm.model")) << c.name << ": the model files differ";
  RunCommand("svm-predict " + (kData / c.file).string() + " " + (dir / "ours.model").string() + " " +
                 (dir / "out.txt").string(),
             &status);
  ASSERT_EQ(status, 0);
  std::ifstream in(dir / "out.txt");
  double label = 0;
  size_t r = 0;
  while (in >> label) {
    ASSERT_LT(r, pred.size());
    EXPECT_EQ(label, pred[r]) << c.name << " row " << r + 1;
    ++r;
  }
  EXPECT_EQ(r, pred.size());
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Recorded, SvmConformanceTest, ::testing::ValuesIn(LoadCases()), [](const auto& param_info) {
  std::string n = param_info.param.name;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

}  // namespace
}  // namespace tessel::svm
