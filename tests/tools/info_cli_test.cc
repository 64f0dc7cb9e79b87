// `tessel info` on what training writes: an SVM model file (with and without its sidecar) and a GCN checkpoint
// folder, each counted against the file itself; damaged ones are refused as prediction refuses them, and anything
// else is named with the kinds `info` reads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/tools/cli_run.h"

namespace tessel::tools {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::Result;
using testing::RunTessel;
using testing::Slurp;

const fs::path kData = fs::path(TESSEL_TEST_DATA);

class InfoCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::UniqueTempDir("tessel_info_");
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  Result Run(const std::string& args) const { return RunTessel("", args, root_); }
  std::string At(const std::string& name) const { return "'" + (root_ / name).string() + "'"; }
  nlohmann::json InfoJson(const std::string& name) const {
    const Result r = Run("info --json " + At(name));
    EXPECT_EQ(r.code, 0) << r.err;
    return r.code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
  }
  fs::path root_;
};

// The value after `key` on the model file's header line "key v1 v2 ...", as words.
std::vector<std::string> HeaderWords(const std::string& model, const std::string& key) {
  std::istringstream in(model);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + " ", 0) != 0) continue;
    std::istringstream words(line.substr(key.size()));
    std::vector<std::string> out;
    for (std::string w; words >> w;) out.push_back(w);
    return out;
  }
  return {};
}

TEST_F(InfoCliTest, SvmModelsAreDescribedFromTheFileAndItsSidecar) {
  const std::string hs = "'" + (kData / "svm" / "heart_scale").string() + "'";
  ASSERT_EQ(Run("train svm -q -c 2 -g 0.1 " + hs + " " + At("c.model")).code, 0);
  ASSERT_EQ(Run("train svm -q -s 3 -b 1 " + hs + " " + At("r.model")).code, 0);
  const std::string model = Slurp(root_ / "c.model");
  const nlohmann::json c = InfoJson("c.model");
  EXPECT_EQ(c["kind"], "svm_model");
  EXPECT_EQ(c["svm_type"], "c_svc");
  EXPECT_EQ(c["kernel"]["type"], "rbf");
  EXPECT_DOUBLE_EQ(c["kernel"]["gamma"].get<double>(), 0.1);
  EXPECT_EQ(std::to_string(c["total_sv"].get<int64_t>()), HeaderWords(model, "total_sv").at(0));
  const std::vector<std::string> nr_sv = HeaderWords(model, "nr_sv");
  ASSERT_EQ(c["nr_sv"].size(), nr_sv.size());
  for (size_t i = 0; i < nr_sv.size(); ++i) EXPECT_EQ(std::to_string(c["nr_sv"][i].get<int>()), nr_sv[i]);
  EXPECT_EQ(c["num_features"], 13);  // heart_scale's, from the sidecar
  EXPECT_EQ(c["num_features_from"], "sidecar");
  EXPECT_FALSE(c["probability"].get<bool>());
  EXPECT_GT(c["training"]["iterations"].get<int64_t>(), 0);
  const nlohmann::json r = InfoJson("r.model");
  EXPECT_EQ(r["svm_type"], "epsilon_svr");
  EXPECT_TRUE(r["probability"].get<bool>());
  EXPECT_TRUE(r["labels"].empty());
  const Result text = Run("info " + At("c.model"));
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("type       c_svc, kernel rbf (gamma 0.1)"));
  EXPECT_THAT(text.out, HasSubstr("support    " + HeaderWords(model, "total_sv").at(0) + " vectors"));

  // Without its sidecar (svm-train's own model): the dimension is the support vectors' largest feature id.
  fs::copy_file(kData / "svm" / "heart_scale.libsvm.model", root_ / "libsvm.model");
  const nlohmann::json l = InfoJson("libsvm.model");
  EXPECT_EQ(l["num_features_from"], "support vectors");
  EXPECT_TRUE(l["sidecar"].is_null());

  // One class (svm-train writes it for data of one label): no pair, no rho.
  std::ofstream(root_ / "one.model") << "svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 1\ntotal_sv 0\nrho\n"
                                        "label 7\nnr_sv 0\nSV\n";
  const Result one = Run("info " + At("one.model"));
  EXPECT_EQ(one.code, 0) << one.err;
  EXPECT_THAT(one.out, HasSubstr("rho        none (one class: no pair)"));

  // A damaged model is refused as predict refuses it, naming the file and line.
  std::string bad = model;
  bad.replace(bad.find("total_sv"), 8, "total_xx");
  std::ofstream(root_ / "bad.model") << bad;
  const Result refused = Run("info " + At("bad.model"));
  EXPECT_NE(refused.code, 0);
  EXPECT_THAT(refused.err, HasSubstr("bad.model"));
}

TEST_F(InfoCliTest, GcnCheckpointsAreDescribedAndCheckedAsPredictionChecksThem) {
  const std::string table = "'" + (kData / "convert" / "table").string() + "'";
  ASSERT_EQ(Run("convert --from nodetable " + table + " --output " + At("t")).code, 0);
  ASSERT_EQ(Run("train gcn --dataset " + At("t") + " --epochs 3 --model sage --hidden 5 --checkpoint " + At("ck")).code,
            0);
  const nlohmann::json j = InfoJson("ck");
  const nlohmann::json saved = nlohmann::json::parse(Slurp(root_ / "ck" / "checkpoint.json"));
  EXPECT_EQ(j["kind"], "gcn_checkpoint");
  EXPECT_EQ(j["epochs_done"], 3);
  EXPECT_EQ(j["adam_steps"], saved["adam_steps"]);
  EXPECT_EQ(j["config"]["model"], "sage");
  // SAGE, 2 layers: W and W_self of in x 5 and 5 x classes, and two biases.
  const int64_t in = saved["config"]["in_dim"].get<int64_t>();
  const int64_t classes = saved["config"]["num_classes"].get<int64_t>();
  EXPECT_EQ(j["parameters"].get<int64_t>(), 2 * in * 5 + 5 + 2 * 5 * classes + classes);
  ASSERT_EQ(j["parameter_shapes"].size(), 6U);
  EXPECT_EQ(j["parameter_shapes"][0], nlohmann::json::array({in, 5}));
  const Result text = Run("info " + At("ck"));
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("model      sage, 2 layers, hidden 5"));
  EXPECT_THAT(text.out, HasSubstr("state      3 of 3 epochs done"));

  // Its configuration no longer matching its tensors: refused, naming the tensor, as `predict gcn` does.
  nlohmann::json forged = saved;
  forged["config"]["hidden"] = 6;
  std::ofstream(root_ / "ck" / "checkpoint.json", std::ios::trunc) << forged.dump(2);
  const Result refused = Run("info " + At("ck"));
  EXPECT_NE(refused.code, 0);
  EXPECT_THAT(refused.err, HasSubstr("layer0.weight"));
}

TEST_F(InfoCliTest, SvmCheckpointsShowTheProblemsAndTheirSteps) {
  const std::string hs = "'" + (kData / "svm" / "heart_scale").string() + "'";
  const std::string letter = "'" + (kData / "svm" / "letter_300").string() + "'";
  ASSERT_EQ(Run("train svm -q " + hs + " " + At("m") + " --checkpoint " + At("ck")).code, 0);
  ASSERT_EQ(Run("train svm -q " + letter + " " + At("l") + " --checkpoint " + At("lk")).code, 0);
  const nlohmann::json j = InfoJson("ck");
  EXPECT_EQ(j["kind"], "svm_checkpoint");
  ASSERT_EQ(j["problems"].size(), 1U);
  EXPECT_EQ(j["problems"][0]["samples"], 270);
  EXPECT_TRUE(j["problems"][0]["done"].get<bool>());
  // Every support vector has a non-zero alpha: the model's total_sv.
  EXPECT_EQ(std::to_string(j["problems"][0]["nonzero_alpha"].get<int64_t>()),
            HeaderWords(Slurp(root_ / "m"), "total_sv").at(0));
  EXPECT_EQ(j["settings"]["-s/--svm-type"], "c_svc");
  const nlohmann::json l = InfoJson("lk");
  const int64_t classes = nlohmann::json::parse(Slurp(root_ / "l.json"))["training"]["pairs"].size();
  EXPECT_EQ(static_cast<int64_t>(l["problems"].size()), classes);  // one per one-vs-one pair
  EXPECT_EQ(l["problems_solved"], l["problems"].size());
  const Result text = Run("info " + At("ck"));
  EXPECT_THAT(text.out, HasSubstr("state      1 of 1 binary problem(s) solved"));
}

TEST_F(InfoCliTest, AnythingElseIsNamedWithTheKindsInfoReads) {
  const Result r = Run("info '" + (kData / "svm" / "heart_scale").string() + "'");
  EXPECT_NE(r.code, 0);
  EXPECT_THAT(r.err, HasSubstr("not a tessel dataset, partition folder or GCN or SVM checkpoint"));
  EXPECT_THAT(r.err, HasSubstr("nor an SVM model file"));
}

}  // namespace
}  // namespace tessel::tools
