// LIBSVM model files: a model written by svm-train 3.24 is read and predicts exactly svm-predict's labels;
// our files round-trip (binary and multiclass); malformed files fail with file:line (also when a non-linear
// kernel has no gamma or total_sv disagrees with the rows); features beyond the training dimension enter the
// kernel as svm-predict uses them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "core/file_io.h"
#include "core/parallel.h"
#include "datasets/readers.h"
#include "svm/svm_model.h"
#include "svm/svm_train.h"
#include "tests/svm/svm_test_util.h"

namespace tessel::svm {
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

// Feature ids are int32 and LIBSVM's indices 1-based, so the largest id, 2^31 - 1, is written as index 2^31:
// computed in 32 bits it would wrap to -2^31 and the saved model could not be read back.
TEST_F(SvmModelTest, TheLargestFeatureIdIsWrittenIn64Bits) {
  const std::string head =
      "svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 2\nrho 0.1\nlabel 1 -1\nnr_sv 1 1\nSV\n";
  const SvmModel m = LoadSvmModel(Write("wide.model", head + "1 2147483648:1 \n-1 1:1 \n"));
  ASSERT_EQ(m.sv_indices, (std::vector<int32_t>{std::numeric_limits<int32_t>::max(), 0}));
  EXPECT_EQ(m.num_features, int64_t{1} << 31);
  SaveSvmModel(m, dir_ / "again.model");
  const std::string text = ReadFileToString(dir_ / "again.model");
  EXPECT_NE(text.find(" 2147483648:1 "), std::string::npos) << text;
  EXPECT_EQ(text.find("-2147483648:"), std::string::npos) << text;
  const SvmModel back = LoadSvmModel(dir_ / "again.model");
  EXPECT_EQ(back.sv_indices, m.sv_indices);
  EXPECT_EQ(back.num_features, int64_t{1} << 31);
}

// The sidecar and --json list at most kReportedPairs pairs' statistics, with the number of pairs in pairs_total
// (1,500 classes made 1,124,250 entries: a 541 MB sidecar, found by probing); a report asked for all keeps all.
TEST(TrainReportTest, ListsAtMostTheReportedPairs) {
  TrainReport r;
  r.pairs.resize(1225);  // 50 classes
  for (size_t k = 0; k < r.pairs.size(); ++k) r.pairs[k].label_i = static_cast<int32_t>(k);
  const nlohmann::json capped = r.ToJson(kReportedPairs);
  EXPECT_EQ(capped.at("pairs_total"), 1225);
  ASSERT_EQ(capped.at("pairs").size(), static_cast<size_t>(kReportedPairs));
  EXPECT_EQ(capped.at("pairs")[999].at("labels")[0], 999);  // the first pairs, in order
  EXPECT_EQ(r.ToJson().at("pairs").size(), 1225U);
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
  EXPECT_NE(LoadError("svm_type mu_svc\n").find("bad.model:1: unknown svm_type 'mu_svc'"), std::string::npos);
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

TEST_F(SvmModelTest, ModelsSharingNoFeatureWithTheDataAreRefused) {
  // Support vector ids billions beyond the data's (damaged ids, or a model of other data) loaded and predicted a
  // constant without a word.
  const std::string header =
      "svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 2\nrho 0.1\nlabel 1 -1\nnr_sv 1 1\nSV\n";
  const SvmModel far = LoadSvmModel(Write("far.model", header + "1 2000000001:0.5\n-1 2000000003:0.25\n"));
  EXPECT_EQ(far.num_features, 2000000003);
  const auto data = datasets::ReadLibsvm(Write("d.txt", "1 1:0.5 13:1\n-1 2:0.25\n"));
  EXPECT_THAT([&] { CheckModelMeetsData(far, data, "far.model"); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr(
                  "far.model: its support vectors use feature ids 2000000001 to 2000000003, all beyond the largest "
                  "feature id of")));
  // One shared feature is enough (svm-predict's semantics for the rest); rows without features pass too.
  const SvmModel near = LoadSvmModel(Write("near.model", header + "1 13:0.5\n-1 2000000003:0.25\n"));
  EXPECT_NO_THROW(CheckModelMeetsData(near, data, "near.model"));
  EXPECT_NO_THROW(CheckModelMeetsData(far, datasets::ReadLibsvm(Write("e.txt", "1\n-1\n")), "far.model"));
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

// A tampered header is refused with the line and the field: counts non-negative and consistent with nr_class and
// total_sv, labels distinct and 32-bit, nr_class before the lists, no key twice (negative nr_sv counts that still
// add up to total_sv used to send prediction outside its arrays).
TEST_F(SvmModelTest, HeaderCountsAreCheckedAgainstEachOther) {
  const std::string top = "svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 2\n";
  const std::string rows = "SV\n1 1:0.5\n-1 2:0.25\n";
  const auto load_error = [&](const std::string& header) { return LoadError(top + header + rows); };
  EXPECT_NO_THROW(LoadSvmModel(Write("ok.model", top + "rho 0.1\nlabel 1 -1\nnr_sv 1 1\n" + rows)));
  // Negative counts that add up to total_sv, and counts that do not.
  EXPECT_NE(load_error("rho 0.1\nlabel 1 -1\nnr_sv -1 3\n").find("bad.model:8: 'nr_sv' holds -1"), std::string::npos);
  EXPECT_NE(load_error("rho 0.1\nlabel 1 -1\nnr_sv 2 1\n").find("bad.model:8: nr_sv adds up to 3 but total_sv is 2"),
            std::string::npos);
  EXPECT_NE(load_error("rho 0.1\nlabel 1 -1\nnr_sv 2\n").find("bad.model:8: 'nr_sv' has 1 values but nr_class needs 2"),
            std::string::npos);
  EXPECT_NE(load_error("rho 0.1\nlabel 1 -1\nnr_sv 4294967297 -4294967295\n").find("'nr_sv' holds 4294967297"),
            std::string::npos);
  // rho, probA and probB: one per pair of classes; probA and probB together.
  EXPECT_NE(load_error("rho 0.1 0.2\nlabel 1 -1\nnr_sv 1 1\n").find("bad.model:6: 'rho' has 2 values"),
            std::string::npos);
  EXPECT_NE(load_error("rho\nlabel 1 -1\nnr_sv 1 1\n").find("'rho' has 0 values but nr_class needs 1"),
            std::string::npos);
  EXPECT_NE(load_error("rho 0.1\nlabel 1 -1\nprobA 1 2\nprobB 1\nnr_sv 1 1\n").find("bad.model:8: 'probA' has 2"),
            std::string::npos);
  EXPECT_NE(load_error("rho 0.1\nlabel 1 -1\nprobA 1\nnr_sv 1 1\n").find("probA without probB"), std::string::npos);
  EXPECT_NO_THROW(LoadSvmModel(Write("p.model", top + "rho 0.1\nlabel 1 -1\nprobA 1\nprobB 2\nnr_sv 1 1\n" + rows)));
  // Labels: one per class, distinct, 32-bit.
  EXPECT_NE(load_error("rho 0.1\nlabel 1 1\nnr_sv 1 1\n").find("bad.model:7: label 1 appears twice"),
            std::string::npos);
  EXPECT_NE(load_error("rho 0.1\nlabel 1 4294967297\nnr_sv 1 1\n").find("'label' holds 4294967297"), std::string::npos);
  // Order and repetition of the header keys; missing keys are named.
  EXPECT_NE(LoadError("svm_type c_svc\nkernel_type linear\nlabel 1 -1\nnr_class 2\n")
                .find("bad.model:3: 'label' comes "
                      "before nr_class"),
            std::string::npos);
  EXPECT_NE(load_error("rho 0.1\nlabel 1 -1\nnr_sv 1 1\nnr_sv 1 1\n").find("bad.model:9: 'nr_sv' appears twice"),
            std::string::npos);
  EXPECT_NE(LoadError(top + "rho 0.1\nlabel 1 -1\n" + rows).find("the header lacks nr_sv"), std::string::npos);
  EXPECT_NE(load_error("rho 0.1\nlabel 1 -1\nnr_sv 1 1\nnr_class 3\n").find("'nr_class' appears twice"),
            std::string::npos);
  EXPECT_NE(LoadError("svm_type c_svc\nkernel_type linear\nnr_class 0\n").find("nr_class 0 is out of range"),
            std::string::npos);
  // Every message says what to do.
  EXPECT_NE(load_error("rho 0.1\nlabel 1 1\nnr_sv 1 1\n").find("retrain, or restore the file"), std::string::npos);
}

// Support-vector lines carry exactly nr_class - 1 coefficients before their index:value pairs.
TEST_F(SvmModelTest, SupportVectorLinesHaveOneCoefficientPerOtherClass) {
  const std::string header =
      "svm_type c_svc\nkernel_type linear\nnr_class 3\ntotal_sv 3\nrho 0 0 0\nlabel 1 2 3\nnr_sv 1 1 1\nSV\n";
  EXPECT_NO_THROW(LoadSvmModel(Write("ok.model", header + "1 1 1:1\n-1 1 2:1\n-1 -1 3:1\n")));
  EXPECT_NE(LoadError(header + "1 1 1:1\n-1 2:1\n-1 -1 3:1\n")
                .find("bad.model:10: support vector has 1 coefficients, "
                      "2 expected"),
            std::string::npos);
  EXPECT_NE(LoadError(header + "1 1 1:1\n-1 1 0.5 2:1\n-1 -1 3:1\n").find("bad.model:10: '0.5' is not index:value"),
            std::string::npos);
  EXPECT_NE(LoadError(header + "1 1 0:1\n-1 1 2:1\n-1 -1 3:1\n").find("bad.model:9: feature index 0"),
            std::string::npos);
  EXPECT_NE(
      LoadError(header + "1 1 1:nan\n-1 1 2:1\n-1 -1 3:1\n").find("bad.model:9: feature value 'nan' is not finite"),
      std::string::npos);
  EXPECT_NE(LoadError(header + "inf 1 1:1\n-1 1 2:1\n-1 -1 3:1\n").find("bad.model:9: coefficient 'inf' is not"),
            std::string::npos);
}

// LIBSVM's svm_check_parameter for the model's kernel: gamma >= 0 (and > 0 when support vectors have features),
// degree >= 0, finite numbers, one value per parameter line.
TEST_F(SvmModelTest, KernelParametersMustBeInRange) {
  const auto model = [](const std::string& kernel_lines, const std::string& sv = "1 1:0.5\n-1 2:0.25\n") {
    return "svm_type c_svc\n" + kernel_lines + "nr_class 2\ntotal_sv 2\nrho 0.1\nlabel 1 -1\nnr_sv 1 1\nSV\n" + sv;
  };
  EXPECT_NE(LoadError(model("kernel_type rbf\ngamma -1\n")).find("bad.model:3: gamma -1 must not be negative"),
            std::string::npos);
  EXPECT_NE(LoadError(model("kernel_type rbf\ngamma nan\n")).find("bad.model:3: gamma 'nan' is not"),
            std::string::npos);
  EXPECT_NE(LoadError(model("kernel_type rbf\ngamma 0.5 2\n")).find("bad.model:3: gamma takes one value"),
            std::string::npos);
  EXPECT_NE(LoadError(model("kernel_type polynomial\ndegree -2\ngamma 1\ncoef0 0\n")).find("bad.model:3: degree -2"),
            std::string::npos);
  EXPECT_NE(LoadError(model("kernel_type polynomial\ndegree 3\ngamma 1\ncoef0 -inf\n")).find("bad.model:5: coef0"),
            std::string::npos);
  EXPECT_NE(LoadError(model("kernel_type sigmoid\ngamma 0\ncoef0 0\n")).find("gamma 0 with kernel_type sigmoid"),
            std::string::npos);
  EXPECT_NE(LoadError(model("kernel_type tree\n")).find("bad.model:2: unknown SVM kernel 'tree'"), std::string::npos);
  // svm-train keeps gamma 0 for data without features: then no support vector has one.
  EXPECT_NO_THROW(LoadSvmModel(Write("g0.model", model("kernel_type rbf\ngamma 0\n", "1\n-1\n"))));
  // A model of one class (svm-train on data with one label) predicts that label.
  const SvmModel one =
      LoadSvmModel(Write("one.model",
                         "svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 1\ntotal_sv 0\nrho\nlabel 7\n"
                         "nr_sv 0\nSV\n"));
  EXPECT_EQ(PredictRow(one, std::vector<int32_t>{0}, std::vector<double>{1.0}), 7);
}

// The sidecar (MODEL.json): every field checked, and its num_features must cover the support vectors.
TEST_F(SvmModelTest, SidecarFieldsAreChecked) {
  const std::string text =
      "svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 2\nrho 0.1\nlabel 1 -1\nnr_sv 1 1\nSV\n"
      "1 1:0.5\n-1 4:0.25\n";
  const fs::path model = Write("m.model", text);
  const auto with_sidecar = [&](const std::string& json) -> std::string {
    std::ofstream(SidecarPath(model), std::ios::binary | std::ios::trunc) << json;
    try {
      LoadSvmModel(model);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  const std::string ok = R"({"format": "tessel-svm-model-sidecar", "version": 1, "num_features": 9, "training": {}})";
  EXPECT_EQ(with_sidecar(ok), "");
  EXPECT_EQ(LoadSvmModel(model).num_features, 9);
  const auto expect_error = [&](const std::string& json, const std::string& want) {
    const std::string e = with_sidecar(json);
    EXPECT_NE(e.find(want), std::string::npos) << json << " -> " << e;
    EXPECT_NE(e.find("m.model.json"), std::string::npos) << e;
    EXPECT_NE(e.find("delete it"), std::string::npos) << e;
  };
  expect_error(R"({"format": "tessel-svm-model-sidecar", "version": 1, "num_features": -5})",
               "'num_features' is -5; it must be in [0, 2147483648]");
  expect_error(R"({"format": "tessel-svm-model-sidecar", "version": 1, "num_features": 2})",
               "'num_features' is 2 but the support vectors use feature index 4");
  expect_error(R"({"format": "tessel-svm-model-sidecar", "version": 1, "num_features": 9.5})",
               "'num_features' is 9.5; an integer is needed");
  expect_error(R"({"format": "tessel-svm-model-sidecar", "version": 1, "num_features": "9"})", "an integer is needed");
  expect_error(R"({"format": "tessel-svm-model-sidecar", "version": 1, "num_features": 18446744073709551615})",
               "must be in [0, 2147483648]");
  expect_error(R"({"format": "tessel-svm-model-sidecar", "version": 1})", "'num_features' is missing");
  expect_error(R"({"format": "tessel-svm-model-sidecar", "version": 2, "num_features": 9})", "'version' is 2");
  expect_error(R"({"version": 1, "num_features": 9})", "'format' is not");
  expect_error(R"({"format": "tessel-svm-model-sidecar", "version": 1, "num_features": 9, "training": 3})",
               "'training' is not a JSON object");
  expect_error("[1, 2]", "not a JSON object");
  expect_error("{\"num_features\": ", "not valid JSON");
  fs::remove(SidecarPath(model));
  fs::create_directory(SidecarPath(model));
  EXPECT_NE(with_sidecar("").find("not a regular file"), std::string::npos);
}

// A model built in memory (the Python binding's dict) passes the same checks as a file.
TEST_F(SvmModelTest, ValidateRefusesInconsistentModels) {
  const auto data = datasets::ReadLibsvm(kData / "heart_scale");
  const SvmModel good = TrainSvm(data, SvmParams{});
  EXPECT_NO_THROW(good.Validate());
  const auto error = [&](const std::function<void(SvmModel&)>& tamper) {
    SvmModel m = good;
    tamper(m);
    try {
      m.Validate();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error([](SvmModel& m) {
              m.nr_sv = {-1, static_cast<int32_t>(m.total_sv()) + 1};
            }).find("nr_sv holds -1"),
            std::string::npos);
  EXPECT_NE(error([](SvmModel& m) { m.labels = {1, 1}; }).find("label 1 appears twice"), std::string::npos);
  EXPECT_NE(error([](SvmModel& m) { m.rho[0] = std::nan(""); }).find("not finite"), std::string::npos);
  EXPECT_NE(error([](SvmModel& m) { m.sv_coef[0] = INFINITY; }).find("not finite"), std::string::npos);
  EXPECT_NE(error([](SvmModel& m) { m.kernel.gamma = -1; }).find("gamma -1"), std::string::npos);
  EXPECT_NE(error([](SvmModel& m) { m.kernel.gamma = 0; }).find("gamma 0"), std::string::npos);
  EXPECT_NE(error([](SvmModel& m) { m.num_features = 3; }).find("num_features is 3"), std::string::npos);
  EXPECT_NE(error([](SvmModel& m) { m.num_features = int64_t{1} << 40; }).find("num_features"), std::string::npos);
  EXPECT_NE(error([](SvmModel& m) { m.prob_a = {0.5}; }).find("probA and probB"), std::string::npos);
  EXPECT_NE(error([](SvmModel& m) { m.sv_indptr[1] = m.sv_indptr.back() + 5; }).find("support vector"),
            std::string::npos);
  EXPECT_NE(error([](SvmModel& m) { m.sv_rows[0] = -3; }).find("training row is -3"), std::string::npos);
}

// Kernel values beyond the float kernel cache (huge feature values, a huge degree) are refused before training:
// infinite values used to send the working-set selection outside its arrays.
TEST_F(SvmModelTest, TrainingRefusesKernelValuesBeyondTheCache) {
  const auto big = datasets::ReadLibsvm(Write("big.txt", "1 1:1e200 2:1e200\n-1 1:-1e200 2:3e200\n1 1:2e200\n"));
  const auto error = [&](const SvmParams& p) {
    try {
      TrainSvm(big, p);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  SvmParams linear;
  linear.kernel.type = kernels::SvmKernelType::kLinear;
  EXPECT_NE(error(linear).find("big.txt: row 1 has squared norm inf"), std::string::npos) << error(linear);
  EXPECT_NE(error(linear).find("scale the features"), std::string::npos);
  SvmParams rbf;  // exp(-gamma |x - z|^2) itself stays in [0, 1], but |x|^2 overflows
  EXPECT_NE(error(rbf).find("beyond the double range"), std::string::npos) << error(rbf);
  const auto data = datasets::ReadLibsvm(kData / "heart_scale");
  SvmParams poly;
  poly.kernel.type = kernels::SvmKernelType::kPolynomial;
  poly.kernel.degree = std::numeric_limits<int32_t>::max();
  poly.kernel.gamma = 1;
  EXPECT_THROW(TrainSvm(data, poly), Error);
  poly.kernel.degree = 3;  // an ordinary degree trains
  EXPECT_GT(TrainSvm(data, poly).total_sv(), 0);
}

}  // namespace
}  // namespace tessel::svm
