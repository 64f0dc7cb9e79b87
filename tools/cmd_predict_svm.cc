// `tessel predict svm`: predicts LIBSVM text data with a LIBSVM model of any type (ours or svm-train's), writes one
// prediction per line like svm-predict and reports the accuracy, or for a regression model the mean squared error
// and the squared correlation coefficient (text or --json).
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/context.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/parallel.h"
#include "datasets/native_format.h"
#include "datasets/readers.h"
#include "svm/svm_model.h"
#include "svm/svm_ops.h"
#include "tools/cli_params.h"
#include "tools/commands.h"

namespace tessel::tools {
namespace {

struct PredictSvmArgs {
  std::string model;
  std::string data;
  std::string output;
  bool force = false;  // replace an existing --output
  int threads = 0;
  std::string device = "cpu";
  int device_id = 0;
  bool json = false;
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
  const std::vector<double> pred = svm::PredictSvm(ctx, model, data);
  const auto labels = data.labels.Host();
  int64_t correct = 0;
  // svm-predict's regression sums, in row order: squared error, and the sums of the squared correlation.
  double error = 0;
  double sum_p = 0;
  double sum_t = 0;
  double sum_pp = 0;
  double sum_tt = 0;
  double sum_pt = 0;
  fmt::memory_buffer out;
  for (int64_t r = 0; r < data.num_rows; ++r) {
    const double pv = pred[r];
    const double tv = labels[r];
    correct += pv == tv;
    error += (pv - tv) * (pv - tv);
    sum_p += pv;
    sum_t += tv;
    sum_pp += pv * pv;
    sum_tt += tv * tv;
    sum_pt += pv * tv;
    fmt::format_to(std::back_inserter(out), "{:.17g}\n", pred[r]);
  }
  if (!a.output.empty()) WriteFileAtomic(a.output, std::string_view(out.data(), out.size()));
  const auto total = static_cast<double>(data.num_rows);
  if (svm::IsRegression(model.type)) {
    const double mse = error / total;
    const double num = total * sum_pt - sum_p * sum_t;
    const double r2 = num * num / ((total * sum_pp - sum_p * sum_p) * (total * sum_tt - sum_t * sum_t));
    if (a.json) {
      std::puts(nlohmann::json{{"mean_squared_error", mse}, {"squared_correlation", r2}, {"total", data.num_rows}}
                    .dump()
                    .c_str());
    } else {
      std::printf("Mean squared error = %g (regression)\nSquared correlation coefficient = %g (regression)\n", mse, r2);
    }
    return;
  }
  const double accuracy = 100.0 * static_cast<double>(correct) / total;
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
  sub->add_flag("--json", args->json,
                "Print the accuracy (regression: mean squared error and squared correlation) as JSON");
  SetAction(sub, [args] { RunPredictSvm(*args); });
}

}  // namespace tessel::tools
