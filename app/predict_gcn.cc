#include "app/predict_gcn.h"

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "core/output_guard.h"
#include "core/parallel.h"
#include "datasets/open_node_dataset.h"
#include "datasets/text_input.h"
#include "kernels/matrix.h"
#include "train/gcn/trainer.h"

namespace tessel::app {
namespace {

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

// The probabilities, with --checkpoint checked and the thread limit set by the caller.
kernels::Matrix Probabilities(const PredictGcnOptions& a, const datasets::NodeDataset& data) {
  return train::gcn::PredictFromCheckpoint(MakeContext(a.device, 0, a.threads.threads), data, a.checkpoint);
}

}  // namespace

kernels::Matrix PredictGcnProbabilities(const PredictGcnOptions& a, const datasets::NodeDataset& data) {
  CheckInput(a.checkpoint, "--checkpoint");
  ThreadLimit limit(a.threads.threads);
  return Probabilities(a, data);
}

std::string PredictGcn(const PredictGcnOptions& a) {
  CheckInput(a.checkpoint, "--checkpoint");
  const bool nodes_file = a.nodes != "train" && a.nodes != "val" && a.nodes != "test" && a.nodes != "all";
  CheckOutputPath(a.output, OutputKind::kFile, a.force, "--output",
                  PathList({a.dataset, a.checkpoint, nodes_file ? a.nodes : std::string()}));
  ThreadLimit limit(a.threads.threads);
  const datasets::NodeDataset data = datasets::OpenNodeDataset(a.dataset);
  const std::vector<int64_t> nodes = SelectNodes(data, a.nodes);
  TESSEL_CHECK(!nodes.empty(), "--nodes {}: no nodes to predict (the dataset has no such split?)", a.nodes);
  const kernels::Matrix probs = Probabilities(a, data);
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
  std::string text;  // what the command prints: the predictions without --output, the --json summary
  if (!a.output.empty()) {
    WriteFileAtomic(a.output, std::string_view(out.data(), out.size()));
  } else {
    text.assign(out.data(), out.size());
  }
  const double acc = labelled > 0 ? static_cast<double>(correct) / static_cast<double>(labelled) : 0.0;
  if (a.json) {
    text += nlohmann::json{{"nodes", nodes.size()}, {"labelled", labelled}, {"accuracy", acc}}.dump() + "\n";
  } else if (labelled > 0) {
    log::Info("accuracy {:.4f} on {} labelled nodes of {}", acc, labelled, nodes.size());
  }
  return text;
}

}  // namespace tessel::app
