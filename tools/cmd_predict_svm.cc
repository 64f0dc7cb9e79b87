// `tessel predict svm`: predicts LIBSVM text data with a LIBSVM model of any type (ours or svm-train's), writes one
// prediction per line like svm-predict and reports the accuracy, or for a regression model the mean squared error
// and the squared correlation coefficient (text or --json).
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/context.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "core/parallel.h"
#include "datasets/native_format.h"
#include "datasets/readers.h"
#include "svm/svm_model.h"
#include "svm/svm_ops.h"
#include "tools/cli_params.h"
#include "tools/commands.h"

namespace tessel::tools {
namespace {

// C's "%g" (svm-predict's format for probability output).
std::string CFormatG(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

struct PredictSvmArgs {
  std::string model;
  std::string data;
  std::string output;
  bool force = false;  // replace an existing --output
  int threads = 0;
  std::string device = "cpu";
  int device_id = 0;
  bool json = false;
  int probability = 0;  // -b 1: probability estimates (classification) as svm-predict -b 1
};

void RunPredictSvm(const PredictSvmArgs& a) {
  TESSEL_CHECK(a.threads >= 0, "--threads {} must be 0 (all cores) or positive", a.threads);
  const std::string sidecar = a.model.empty() ? std::string() : svm::SidecarPath(a.model);
  CheckOutputFile(a.output, a.force, "--output", {a.model, sidecar, a.data});
  Context ctx;
  ctx.device = ParseDevice(a.device);
  ctx.device_id = a.device_id;
  if (ctx.IsCuda()) {
    ctx.RequireCuda();
    device::SetDevice(ctx.device_id);
  }
  ThreadLimit limit(a.threads);
  const svm::SvmModel model = svm::LoadSvmModel(a.model);
  const datasets::SparseRowDataset data = datasets::ReadSparseRows(a.data);
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
    std::printf(
        "Prob. model for test data: target value = predicted value + z,\nz: Laplace distribution "
        "e^(-|z|/sigma)/(2sigma),sigma=%g\n",
        model.prob_a[0]);
  } else if (a.probability == 0 && model.HasProbability()) {
    log::Info("the model supports probability estimates, but they are not asked for (-b 1)");
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
  const svm::PredictionScore score = svm::ScorePredictions(pred, labels);
  if (svm::IsRegression(model.type)) {
    if (a.json) {
      std::puts(nlohmann::json{{"mean_squared_error", score.mean_squared_error},
                               {"squared_correlation", score.squared_correlation},
                               {"total", data.num_rows}}
                    .dump()
                    .c_str());
    } else {
      std::printf("Mean squared error = %g (regression)\nSquared correlation coefficient = %g (regression)\n",
                  score.mean_squared_error, score.squared_correlation);
    }
    return;
  }
  const double accuracy = score.accuracy;
  const int64_t correct = score.correct;
  if (a.json) {
    nlohmann::json j{{"accuracy", accuracy}, {"correct", correct}, {"total", data.num_rows}};
    std::puts(j.dump().c_str());
  } else {
    std::printf("Accuracy = %g%% (%lld/%lld) (classification)\n", accuracy, static_cast<long long>(correct),
                static_cast<long long>(data.num_rows));
  }
}

}  // namespace

void RegisterPredictSvm(CLI::App& app) {
  CLI::App* group = GroupCommand(app, "predict", "Predict with a trained model (gcn, svm)");
  auto args = std::make_shared<PredictSvmArgs>();
  CLI::App* sub = group->add_subcommand("svm", "Predict LIBSVM text data with a LIBSVM model (any svm_type)");
  AddOption(sub, "--model", &args->model, "Model file (LIBSVM text format, from tessel or svm-train)")
      ->required()
      ->check(CLI::ExistingFile);
  AddOption(sub, "--data", &args->data,
            "Data: LIBSVM text or a native rows folder (tessel convert); labels are used for the accuracy")
      ->required()
      ->check(CLI::ExistingPath);
  AddOption(sub, "--output", &args->output,
            "Write one predicted label (regression: value) per line here (as svm-predict)");
  sub->add_flag(
      "--force", args->force,
      "Replace an existing --output file (a regular file only; never a folder, a device or an input of the run)");
  AddOption(sub, "--threads", &args->threads, "Worker threads (0 = all cores)", {0, kMaxThreads})
      ->capture_default_str();
  AddOption(sub, "--device", &args->device, "cpu, or cuda (kernel and decision values on the GPU)")
      ->capture_default_str();
  AddOption(sub, "--device-id", &args->device_id, "CUDA device ordinal with --device cuda", {-1, 1 << 20})
      ->capture_default_str();
  AddOption(sub, "-b,--probability", &args->probability,
            "1: probability estimates as svm-predict -b 1 (the model must be trained with -b 1); --output then "
            "starts with 'labels ...' and gives the label and each class's probability per row",
            {0, 1})
      ->capture_default_str();
  sub->add_flag("--json", args->json,
                "Print the accuracy (regression: mean squared error and squared correlation) as JSON");
  SetAction(sub, [args] { RunPredictSvm(*args); });
}

}  // namespace tessel::tools
