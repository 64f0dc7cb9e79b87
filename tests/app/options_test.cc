// The application layer's declarations (app/*.h): every job's options have unique names and flags, Python's
// keywords are read through the same declaration (unknown and command-line-only names refused, ranges checked,
// `given` filled), typed values parse once, and MakeContext carries the run control into the Context.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "app/convert.h"
#include "app/generate.h"
#include "app/info.h"
#include "app/options_json.h"
#include "app/partition.h"
#include "app/predict_gcn.h"
#include "app/predict_svm.h"
#include "app/train_gcn.h"
#include "app/train_svm.h"
#include "comm/compress.h"
#include "core/error.h"

namespace tessel::app {
namespace {

// Every declared name and every command-line spelling of a job appear once.
template <typename Options>
void ExpectUniqueNamesAndFlags(const char* job) {
  std::set<std::string> names;
  std::set<std::string> flags;
  int count = 0;
  const Options defaults;
  Options::Params(defaults, [&](const ParamInfo& p, const auto&) {
    ++count;
    EXPECT_TRUE(names.emplace(p.name).second) << job << ": " << p.name << " declared twice";
    EXPECT_FALSE(p.help.empty()) << job << ": " << p.name << " has no help";
    if (!p.OnCli()) return;
    std::string all = p.Flag();
    size_t start = 0;
    while (start <= all.size()) {
      const size_t comma = all.find(',', start);
      std::string f = all.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!f.empty() && f.front() == '!') f.erase(0, 1);
      EXPECT_TRUE(flags.emplace(f).second) << job << ": flag " << f << " declared twice";
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  });
  EXPECT_GT(count, 2) << job;
}

TEST(AppOptions, EveryJobDeclaresEachOptionOnce) {
  ExpectUniqueNamesAndFlags<ConvertOptions>("convert");
  ExpectUniqueNamesAndFlags<GenerateCsbmOptions>("generate csbm");
  ExpectUniqueNamesAndFlags<GenerateRmatOptions>("generate rmat");
  ExpectUniqueNamesAndFlags<PartitionOptions>("partition");
  ExpectUniqueNamesAndFlags<InfoOptions>("info");
  ExpectUniqueNamesAndFlags<TrainGcnOptions>("train gcn");
  ExpectUniqueNamesAndFlags<TrainSvmOptions>("train svm");
  ExpectUniqueNamesAndFlags<PredictGcnOptions>("predict gcn");
  ExpectUniqueNamesAndFlags<PredictSvmOptions>("predict svm");
}

TEST(AppOptions, PythonKeywordsGoThroughTheDeclaration) {
  TrainGcnOptions o;
  OptionsFromJson(nlohmann::json{{"epochs", 7}, {"threads", 2}, {"device", "cpu"}, {"grad_compress", "topk:0.1"}}, &o);
  EXPECT_EQ(o.config.epochs, 7);
  EXPECT_EQ(o.threads.threads, 2);
  EXPECT_EQ(o.config.dist.grad_compress.Text(), "topk:0.1");
  EXPECT_TRUE(o.given("epochs") && o.given("threads") && !o.given("lr"));

  const auto refused = [](const nlohmann::json& j, const std::string& words) {
    TrainGcnOptions x;
    try {
      OptionsFromJson(j, &x);
      ADD_FAILURE() << "accepted " << j.dump();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused({{"learning_rate", 0.1}}, "unknown option 'learning_rate'");
  refused({{"json", true}}, "unknown option 'json'");  // the command line's alone
  refused({{"threads", -1}}, "out of range");          // the declared range, as the CLI's parser checks it
  refused({{"grad_compress", "topk:2"}}, "grad_compress");
  refused({{"device", "gpu"}}, "gpu");
}

TEST(AppOptions, DescribeOptionsListsWhatPythonTakes) {
  const nlohmann::json d = DescribeOptions(PartitionOptions{});
  std::set<std::string> names;
  for (const auto& p : d) names.insert(p.at("name").get<std::string>());
  EXPECT_TRUE(names.contains("parts") && names.contains("metis_algorithm") && names.contains("threads"));
  EXPECT_FALSE(names.contains("dataset") || names.contains("json")) << "command-line-only options stay out";
}

TEST(AppOptions, CompressOptionParsesOnceAndWritesBack) {
  EXPECT_TRUE(comm::CompressOption::FromText("auto", "--grad-compress").automatic);
  const comm::CompressOption o = comm::CompressOption::FromText("int8:128", "--grad-compress");
  EXPECT_FALSE(o.automatic);
  EXPECT_EQ(comm::CompressOption::FromText(o.Text(), "--grad-compress"), o);
  try {
    (void)comm::CompressOption::FromText("zip", "--feature-compress");
    ADD_FAILURE() << "accepted zip";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--feature-compress"), std::string::npos) << e.what();
  }
}

TEST(AppOptions, MakeContextCarriesTheRunControl) {
  DeviceOptions d;
  d.math = GemmMath::kTf32;
  const Context ctx = MakeContext(d, 42, 3);
  EXPECT_FALSE(ctx.IsCuda());
  EXPECT_EQ(ctx.seed, 42U);
  EXPECT_EQ(ctx.threads, 3);
  EXPECT_EQ(ctx.gemm_math, GemmMath::kTf32);
}

}  // namespace
}  // namespace tessel::app
