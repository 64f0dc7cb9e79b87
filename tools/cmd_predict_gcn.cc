// `tessel predict gcn`: class predictions from a GCN checkpoint for the nodes asked for (a split, all nodes, or a
// file of node ids), written as "node class [probabilities...]" lines; the accuracy when the nodes are labelled.
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "core/parallel.h"
#include "datasets/open_node_dataset.h"
#include "datasets/text_input.h"
#include "kernels/matrix.h"
#include "tools/cli_params.h"
#include "tools/commands.h"
#include "train/gcn/trainer.h"

namespace tessel::tools {
namespace {

struct PredictGcnArgs {
  std::string dataset;
  std::string checkpoint;
  std::string nodes = "test";
  std::string output;
  bool force = false;  // replace an existing --output
  bool probabilities = false;
  int threads = 0;
  std::string device = "cpu";
  int device_id = -1;
  std::string math = "fp32";
  bool json = false;
};

std::vector<int64_t> SelectNodes(const datasets::NodeDataset& d, const std::string& which) {
  if (which == "train") return d.train.ToVector();
  if (which == "val") return d.val.ToVector();
  if (which == "test") return d.test.ToVector();
  std::vector<int64_t> out;
  if (which == "all") {
    for (int64_t u = 0; u < d.num_nodes(); ++u) out.push_back(u);
    return out;
  }
  std::error_code ec;  // not a split's name, so a file: say which option named it when there is none
  TESSEL_CHECK(std::filesystem::exists(which, ec),
               "--nodes {}: no such file; give train, val, test, all, or a file with one node id per line", which);
  const auto file = datasets::TextFile::Open(which);
  datasets::LineCursor cur(file);
  std::string_view line;
  while (cur.NextContent(&line)) {
    const int64_t u = cur.ParseInt(line, "node id");
    if (u < 0 || u >= d.num_nodes()) cur.Fail("node id {} outside [0, {})", u, d.num_nodes());
    out.push_back(u);
  }
  return out;
}

void RunPredictGcn(const PredictGcnArgs& a) {
  TESSEL_CHECK(a.threads >= 0, "--threads {} must be 0 (all cores) or positive", a.threads);
  const bool nodes_file = a.nodes != "train" && a.nodes != "val" && a.nodes != "test" && a.nodes != "all";
  CheckOutputFile(a.output, a.force, "--output", {a.dataset, a.checkpoint, nodes_file ? a.nodes : std::string()});
  ThreadLimit limit(a.threads);
  const datasets::NodeDataset data = datasets::OpenNodeDataset(a.dataset);
  const std::vector<int64_t> nodes = SelectNodes(data, a.nodes);
  TESSEL_CHECK(!nodes.empty(), "--nodes {}: no nodes to predict (the dataset has no such split?)", a.nodes);
  Context ctx;
  ctx.device = ParseDevice(a.device);
  ctx.gemm_math = ParseGemmMath(a.math);
  ctx.device_id = ChooseCudaDevice(a.device_id);
  ctx.threads = a.threads;
  if (ctx.IsCuda()) ctx.RequireCuda();
  const kernels::Matrix probs = train::gcn::PredictFromCheckpoint(ctx, data, a.checkpoint);
  const int64_t c = probs.cols;
  auto pv = probs.View();
  auto labels = data.labels.Host();
  fmt::memory_buffer out;
  int64_t labelled = 0;
  int64_t correct = 0;
  for (int64_t u : nodes) {
    const float* row = pv.data() + u * c;
    int64_t best = 0;
    for (int64_t j = 1; j < c; ++j) best = row[j] > row[best] ? j : best;
    fmt::format_to(std::back_inserter(out), "{}\t{}", u, best);
    if (a.probabilities) {
      for (int64_t j = 0; j < c; ++j) fmt::format_to(std::back_inserter(out), "\t{:.6g}", row[j]);
    }
    out.push_back('\n');
    if (!labels.empty() && labels[u] >= 0) {
      ++labelled;
      correct += labels[u] == best ? 1 : 0;
    }
  }
  if (!a.output.empty()) {
    WriteFileAtomic(a.output, std::string_view(out.data(), out.size()));
  } else {
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  const double acc = labelled > 0 ? static_cast<double>(correct) / static_cast<double>(labelled) : 0.0;
  if (a.json) {
    std::puts(nlohmann::json{{"nodes", nodes.size()}, {"labelled", labelled}, {"accuracy", acc}}.dump().c_str());
  } else if (labelled > 0) {
    log::Info("accuracy {:.4f} on {} labelled nodes of {}", acc, labelled, nodes.size());
  }
}

}  // namespace

void RegisterPredictGcn(CLI::App& app) {
  CLI::App* group = GroupCommand(app, "predict", "Predict with a trained model (gcn, svm)");
  auto args = std::make_shared<PredictGcnArgs>();
  CLI::App* sub = group->add_subcommand("gcn", "Predict node classes with a GCN checkpoint");
  AddOption(sub, "--dataset", &args->dataset, "Native dataset folder or node-table prefix (same features as training)")
      ->required();
  AddOption(sub, "--checkpoint", &args->checkpoint, "Checkpoint folder written by `tessel train gcn --checkpoint`")
      ->required()
      ->check(CLI::ExistingDirectory);
  AddOption(sub, "--nodes", &args->nodes, "train, val, test, all, or a file with one node id per line")
      ->capture_default_str();
  AddOption(sub, "--output", &args->output, "Output file (\"node<TAB>class\" lines); default stdout");
  sub->add_flag(
      "--force", args->force,
      "Replace an existing --output file (a regular file only; never a folder, a device or an input of the run)");
  sub->add_flag("--probabilities", args->probabilities, "Append the class probabilities to each line");
  AddOption(sub, "--threads", &args->threads, "Worker threads; 0 = all cores", {0, kMaxThreads})->capture_default_str();
  AddOption(sub, "--device", &args->device, "cpu or cuda (full-graph inference on one GPU)")->capture_default_str();
  AddOption(sub, "--math", &args->math, "Dense products on CUDA: fp32 (exact float32) or tf32 (tensor cores)")
      ->capture_default_str()
      ->check(CLI::IsMember({"fp32", "tf32"}));
  AddOption(sub, "--device-id", &args->device_id, "CUDA device ordinal; -1 = local rank modulo the visible GPUs",
            {-1, 1 << 20})
      ->capture_default_str();
  sub->add_flag("--json", args->json, "Print a JSON summary (nodes, accuracy) after the predictions");
  SetAction(sub, [args] { RunPredictGcn(*args); });
}

}  // namespace tessel::tools
