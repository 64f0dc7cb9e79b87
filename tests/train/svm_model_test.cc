// LIBSVM model files: a model written by svm-train 3.24 is read and predicts exactly svm-predict's labels;
// our files round-trip (binary and multiclass); malformed files fail with file:line (also when a non-linear
// kernel has no gamma or total_sv disagrees with the rows); features beyond the training dimension enter the
// kernel as svm-predict uses them.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/file_io.h"
#include "core/parallel.h"
#include "datasets/readers.h"
#include "tests/train/svm_test_util.h"
#include "train/svm/svm_model.h"
#include "train/svm/svm_train.h"

namespace tessel::train::svm {
namespace {
namespace fs = std::filesystem;

const fs::path kData = fs::path(TESSEL_TEST_DATA) / "svm";

class SvmModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_svm_model_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return dir_ / name;
  }
  std::string LoadError(const std::string& text) {
    try {
      LoadSvmModel(Write("bad.model", text));
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected an error for:\n" << text;
    return "";
  }
  fs::path dir_;
};

TEST_F(SvmModelTest, ReadsSvmTrainModelAndPredictsLikeSvmPredict) {
  const SvmModel m = LoadSvmModel(kData / "heart_scale.libsvm.model");
  EXPECT_EQ(m.nr_class, 2);
  EXPECT_EQ(m.labels, (std::vector<int32_t>{1, -1}));
  EXPECT_EQ(m.total_sv(), 132);
  EXPECT_FALSE(m.num_features_known);
  const auto data = datasets::ReadLibsvm(kData / "heart_scale");
  const auto pred = PredictSvm(m, data);
  std::ifstream in(kData / "heart_scale.libsvm.predictions");
  double want = 0;
  size_t r = 0;
  while (in >> want) {
    ASSERT_LT(r, pred.size());
    EXPECT_EQ(pred[r], want) << "row " << r + 1;
    ++r;
  }
  EXPECT_EQ(r, pred.size());
}

TEST_F(SvmModelTest, RoundTripsBinaryAndMulticlassModels) {
  for (const auto& [file, args] :
       {std::pair{"heart_scale", "-t 1 -d 2 -g 0.125 -r 1 -c 2"}, std::pair{"letter_300", "-c 16 -g 4"}}) {
    const auto data = datasets::ReadLibsvm(kData / file);
    const SvmModel m = TrainSvm(data, testing::ParseLibsvmArgs(args));
    SaveSvmModel(m, dir_ / "m.model");
    const SvmModel back = LoadSvmModel(dir_ / "m.model");
    EXPECT_TRUE(back.num_features_known);
    EXPECT_EQ(back.num_features, m.num_features);
    EXPECT_EQ(back.kernel.type, m.kernel.type);
    EXPECT_EQ(back.kernel.gamma, m.kernel.gamma);  // %.17g is exact for doubles
    EXPECT_EQ(back.rho, m.rho);
    EXPECT_EQ(back.labels, m.labels);
    EXPECT_EQ(back.nr_sv, m.nr_sv);
    EXPECT_EQ(back.sv_coef, m.sv_coef);
    EXPECT_EQ(back.sv_indptr, m.sv_indptr);
    EXPECT_EQ(back.sv_indices, m.sv_indices);
    // Feature values are written with %.8g (as LIBSVM): equal to 8 significant digits.
    for (size_t e = 0; e < m.sv_values.size(); ++e) EXPECT_NEAR(back.sv_values[e], m.sv_values[e], 1e-7);
    EXPECT_EQ(PredictSvm(back, data), PredictSvm(m, data));
  }
}

TEST_F(SvmModelTest, MulticlassTrainingDoesNotDependOnThreads) {
  // Pairs run concurrently with all threads and one after another with one: the same model either way.
  const auto data = datasets::ReadLibsvm(kData / "letter_300");
  const SvmParams p = testing::ParseLibsvmArgs("-c 16 -g 4");
  const SvmModel all = TrainSvm(data, p);
  const SvmModel one = [&] {
    ThreadLimit limit(1);
    return TrainSvm(data, p);
  }();
  EXPECT_EQ(all.nr_class, 26);
  EXPECT_EQ(all.rho, one.rho);
  EXPECT_EQ(all.sv_coef, one.sv_coef);
  EXPECT_EQ(all.sv_indptr, one.sv_indptr);
}

TEST_F(SvmModelTest, MalformedFilesNameTheLine) {
  const std::string head = "svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 2\nrho 0.1\n";
  EXPECT_NE(LoadError("svm_type nu_svc\n").find("bad.model:1: svm_type 'nu_svc' is not supported"), std::string::npos);
  EXPECT_NE(LoadError(head + "label 1 -1\nnr_sv 1 1\nbogus 3\nSV\n").find("bad.model:9: unknown key 'bogus'"),
            std::string::npos);
  EXPECT_NE(LoadError(head + "label 1\n").find("bad.model:7: 'label' has 1 values but nr_class needs 2"),
            std::string::npos);
  EXPECT_NE(LoadError(head + "label 1 -1\nnr_sv 1 1\nSV\n0.5 1:1\n-0.5 3:x\n").find("bad.model:11: feature value 'x'"),
            std::string::npos);
  EXPECT_NE(LoadError(head + "label 1 -1\nnr_sv 1 1\nSV\n0.5 2:1 1:1\n").find("bad.model:10: feature index 1"),
            std::string::npos);
  EXPECT_NE(LoadError(head + "label 1 -1\nnr_sv 1 1\nSV\n0.5 1:1\n").find("1 support vectors, 2 expected"),
            std::string::npos);
  EXPECT_NE(LoadError(head + "label 1 -1\nnr_sv 1 1\n").find("no 'SV' line"), std::string::npos);
}

// A feature the model never saw meets zeros in every support vector: for RBF, K(x + v e, sv) = K(x, sv) exp(-gamma
// v^2), so every decision value plus rho scales by exp(-gamma v^2), as svm-predict computes it.
TEST_F(SvmModelTest, FeaturesBeyondTheTrainingDimensionEnterTheKernelAsSvmPredictUsesThem) {
  const auto data = datasets::ReadLibsvm(kData / "heart_scale");
  SaveSvmModel(TrainSvm(data, SvmParams{}), dir_ / "m.model");
  const SvmModel m = LoadSvmModel(dir_ / "m.model");
  EXPECT_EQ(m.num_features, 13);
  ASSERT_EQ(m.kernel.type, kernels::SvmKernelType::kRbf);
  const std::vector<int32_t> idx = {0, 3};
  const std::vector<double> val = {0.5, -0.25};
  std::vector<double> base;
  PredictRow(m, idx, val, &base);
  const double v = 1.5;
  std::vector<double> wide;
  PredictRow(m, std::vector<int32_t>{0, 3, 13}, std::vector<double>{0.5, -0.25, v}, &wide);
  ASSERT_EQ(base.size(), 1u);
  ASSERT_EQ(wide.size(), 1u);
  const double scale = std::exp(-m.kernel.gamma * v * v);
  EXPECT_NEAR(wide[0] + m.rho[0], scale * (base[0] + m.rho[0]), 1e-12 * (1 + std::abs(base[0])));
  EXPECT_NE(wide[0], base[0]);  // the extra feature does count
  const auto file = datasets::ReadLibsvm(Write("wide.txt", "1 1:0.5 14:1\n-1 2:0.25\n"));
  EXPECT_EQ(RowsBeyondModelFeatures(m, file), 1);
  EXPECT_EQ(PredictSvm(m, file).size(), 2u);
}

TEST_F(SvmModelTest, HeaderAndRowsMustAgree) {
  const std::string header =
      "svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 2\nrho 0.1\nlabel 1 -1\nnr_sv 1 1\nSV\n";
  const std::string rows = "1 1:0.5\n-1 2:0.25\n";
  EXPECT_NO_THROW(LoadSvmModel(Write("ok.model", header + rows)));
  std::string no_gamma = header;
  no_gamma.replace(no_gamma.find("gamma 0.5\n"), 10, "");
  EXPECT_NE(LoadError(no_gamma + rows).find("kernel_type rbf needs a 'gamma' line"), std::string::npos);
  EXPECT_NE(LoadError(header + rows + "1 3:1\n").find("more support vectors than total_sv = 2"), std::string::npos);
  EXPECT_NE(LoadError(header + rows + "1 3:1\n").find("bad.model:12"), std::string::npos);
  // A file cut inside its last support vector (after a complete index:value) has every row but lacks the newline.
  EXPECT_NE(LoadError(header + "1 1:0.5\n-1 2:0.25 3:1").find("looks truncated"), std::string::npos);
  EXPECT_NE(LoadError(header + "1 1:0.5\n-1 2:0.25").find("looks truncated"), std::string::npos);
  // A linear model has no gamma, as svm-train writes it.
  std::string linear = no_gamma;
  linear.replace(linear.find("rbf"), 3, "linear");
  EXPECT_NO_THROW(LoadSvmModel(Write("linear.model", linear + rows)));
}

}  // namespace
}  // namespace tessel::train::svm
