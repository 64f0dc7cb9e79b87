#include "app/predict_svm.h"

#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/device.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "core/output_guard.h"
#include "core/parallel.h"
#include "datasets/native_format.h"
#include "datasets/readers.h"
#include "svm/svm_model.h"
#include "svm/svm_ops.h"

namespace tessel::app {
namespace {

// C's "%g" (svm-predict's format for probability output).
std::string CFormatG(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// svm-predict's positional form (`predict svm [options] TEST_FILE MODEL_FILE OUTPUT_FILE`) into --data, --model and
// --output; each is given once, and the model and the data are required either way.
PredictSvmOptions ResolveFiles(PredictSvmOptions a) {
  if (!a.files.empty()) {
    TESSEL_CHECK(a.files.size() == 3,
                 "svm-predict's form takes three files, TEST_FILE MODEL_FILE OUTPUT_FILE; {} given ({})",
                 a.files.size(), fmt::join(a.files, " "));
    TESSEL_CHECK(a.data.empty() && a.model.empty() && a.output.empty(),
                 "the files are given twice: drop --data, --model and --output when giving TEST_FILE MODEL_FILE "
                 "OUTPUT_FILE");
    a.data = a.files[0];
    a.model = a.files[1];
    a.output = a.files[2];
    CheckInput(a.data, "TEST_FILE", InputKind::kFileOrDatasetFolder);
    CheckInput(a.model, "MODEL_FILE", InputKind::kFile);
    return a;
  }
  TESSEL_CHECK(!a.model.empty(),
               "--model is required: the model file (or svm-predict's form: predict svm [options] TEST_FILE "
               "MODEL_FILE OUTPUT_FILE)");
  TESSEL_CHECK(!a.data.empty(),
               "--data is required: the data to predict (or svm-predict's form: predict svm [options] TEST_FILE "
               "MODEL_FILE OUTPUT_FILE)");
  CheckInput(a.model, "--model", InputKind::kFile);
  CheckInput(a.data, "--data", InputKind::kFileOrDatasetFolder);
  return a;
}

}  // namespace

std::string PredictSvm(const PredictSvmOptions& given) {
  const PredictSvmOptions a = ResolveFiles(given);
  if (a.quiet) log::SetLevel(log::Level::kWarn);  // svm-predict -q: no info lines either
  const std::string sidecar = svm::SidecarPath(a.model);
  CheckOutputPath(a.output, OutputKind::kFile, a.force, a.files.empty() ? "--output" : "OUTPUT_FILE",
                  PathList({a.model, sidecar, a.data}));
  const Context ctx = MakeContext(a.device, 0, a.threads.threads);
  ThreadLimit limit(a.threads.threads);
  std::string text;  // what svm-predict prints
  const svm::SvmModel model = svm::LoadSvmModel(a.model);
  const datasets::SparseRowDataset data = datasets::ReadSparseRows(a.data);
  svm::CheckModelMeetsData(model, data, a.model);
  TESSEL_CHECK(a.probability == 0 || a.probability == 1, "-b {}: probability estimates are 0 (off) or 1 (on)",
               a.probability);
  if (a.probability != 0 && !model.HasProbability()) {
    throw Error(
        fmt::format("{}: the model has no probability estimates (svm-predict: \"Model does not support "
                    "probabiliy estimates\"); train it with -b 1, or predict without -b",
                    a.model));
  }
  const bool class_probabilities = a.probability != 0 && svm::IsClassification(model.type);
  if (a.probability != 0 && svm::IsRegression(model.type)) {
    text += fmt::format(
        "Prob. model for test data: target value = predicted value + z,\nz: Laplace distribution "
        "e^(-|z|/sigma)/(2sigma),sigma={}\n",
        CFormatG(model.prob_a[0]));
  } else if (a.probability == 0 && model.HasProbability()) {
    if (a.json) {
      log::Info("the model supports probability estimates, but they are not asked for (-b 1)");
    } else {
      text += "Model supports probability estimates, but disabled in prediction.\n";  // svm-predict's line
    }
  }
  std::vector<double> pred;
  std::vector<std::vector<double>> probs;
  if (class_probabilities) {  // svm_predict_probability per row (on the host)
    pred = svm::PredictSvmProbability(model, data, &probs);
  } else {
    pred = svm::PredictSvm(ctx, model, data);
  }
  const auto labels = data.labels.Host();
  fmt::memory_buffer out;
  if (class_probabilities) fmt::format_to(std::back_inserter(out), "labels {}\n", fmt::join(model.labels, " "));
  for (int64_t r = 0; r < data.num_rows; ++r) {
    if (class_probabilities) {  // svm-predict's "%g" label and "%g" probabilities
      fmt::format_to(std::back_inserter(out), "{}", CFormatG(pred[r]));
      for (const double q : probs[r]) fmt::format_to(std::back_inserter(out), " {}", CFormatG(q));
      fmt::format_to(std::back_inserter(out), "\n");
    } else {
      fmt::format_to(std::back_inserter(out), "{:.17g}\n", pred[r]);
    }
  }
  if (!a.output.empty()) WriteFileAtomic(a.output, std::string_view(out.data(), out.size()));
  if (a.quiet) return {};  // svm-predict -q prints neither the accuracy nor the probability model's line
  const svm::PredictionScore score = svm::ScorePredictions(pred, labels);
  if (svm::IsRegression(model.type)) {
    if (a.json) {
      return text +
             nlohmann::json{{"mean_squared_error", score.mean_squared_error},
                            {"squared_correlation", score.squared_correlation},
                            {"total", data.num_rows}}
                 .dump() +
             "\n";
    }
    return text + fmt::format(
                      "Mean squared error = {} (regression)\nSquared correlation coefficient = {} "
                      "(regression)\n",
                      CFormatG(score.mean_squared_error), CFormatG(score.squared_correlation));
  }
  const double accuracy = score.accuracy;
  const int64_t correct = score.correct;
  if (a.json) {
    return text + nlohmann::json{{"accuracy", accuracy}, {"correct", correct}, {"total", data.num_rows}}.dump() + "\n";
  }
  return text + fmt::format("Accuracy = {}% ({}/{}) (classification)\n", CFormatG(accuracy), correct, data.num_rows);
}

}  // namespace tessel::app
