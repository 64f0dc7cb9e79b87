// `tessel info` on what training writes: a GCN checkpoint folder (train gcn --checkpoint) and an SVM model file
// (train svm --model, LIBSVM's text format, with tessel's sidecar MODEL.json when there is one). Each is read by the
// reader that training and prediction use, so everything they check is checked here too.
#include "app/info_models.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "svm/dist_checkpoint.h"
#include "svm/svm_model.h"
#include "train/gcn/checkpoint.h"
#include "train/gcn/train_common.h"
#include "train/gcn/train_config.h"

namespace tessel::app {
namespace {

namespace fs = std::filesystem;
using OrderedJson = nlohmann::ordered_json;

// A regular file whose first 4 KiB, after blank space, start with LIBSVM's model keyword "svm_type" (read no further:
// the file may be anything, of any size).
bool LooksLikeSvmModel(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  TESSEL_CHECK(in.is_open(), "{}: cannot be read ({}); give a readable file", path.string(), std::strerror(errno));
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  const auto first = head.find_first_not_of(" \t\r\n");
  return first != std::string::npos &&
         (head.compare(first, 9, "svm_type ") == 0 || head.compare(first, 9, "svm_type\t") == 0);
}

std::string KernelText(const svm::SvmModel& m) {
  const auto& k = m.kernel;
  switch (k.type) {
    case kernels::SvmKernelType::kLinear:
      return "linear";
    case kernels::SvmKernelType::kPolynomial:
      return fmt::format("polynomial (degree {}, gamma {:g}, coef0 {:g})", k.degree, k.gamma, k.coef0);
    case kernels::SvmKernelType::kRbf:
      return fmt::format("rbf (gamma {:g})", k.gamma);
    case kernels::SvmKernelType::kSigmoid:
      return fmt::format("sigmoid (gamma {:g}, coef0 {:g})", k.gamma, k.coef0);
  }
  return "?";
}

void SvmModelInfo(const InfoOptions& a, const Printer& say) {
  const svm::SvmModel m = svm::LoadSvmModel(a.path);
  const bool classification = !svm::IsRegression(m.type) && m.type != svm::SvmType::kOneClass;
  const auto nnz = static_cast<int64_t>(m.sv_indices.size());
  const fs::path sidecar = svm::SidecarPath(a.path);
  OrderedJson training;  // the sidecar's training statistics, when the model has one
  std::error_code ec;
  if (fs::is_regular_file(sidecar, ec) && fs::file_size(sidecar, ec) <= (64U << 20) && !ec) {
    try {
      const nlohmann::json j = nlohmann::json::parse(ReadFileToString(sidecar));
      if (j.is_object() && j.contains("training") && j.at("training").is_object()) training = j.at("training");
    } catch (const nlohmann::json::exception&) {
      // LoadSvmModel has read the sidecar's dimension and refused a damaged one; other keys are informational
    }
  }
  OrderedJson out;
  out["path"] = a.path;
  out["kind"] = "svm_model";
  out["svm_type"] = std::string(svm::SvmTypeName(m.type));
  out["kernel"] = {{"type", std::string(EnumName(m.kernel.type))},
                   {"degree", m.kernel.degree},
                   {"gamma", m.kernel.gamma},
                   {"coef0", m.kernel.coef0}};
  out["nr_class"] = m.nr_class;
  out["labels"] = m.labels;
  out["total_sv"] = m.total_sv();
  out["nr_sv"] = m.nr_sv;
  out["rho"] = m.rho;
  out["probability"] = m.HasProbability();
  out["num_features"] = m.num_features;
  out["num_features_from"] = m.num_features_known ? "sidecar" : "support vectors";
  out["sv_nonzeros"] = nnz;
  out["sidecar"] = training.is_null() ? OrderedJson(nullptr) : OrderedJson(sidecar.string());
  if (!training.is_null()) out["training"] = training;
  if (a.json) {
    say("{}\n", out.dump(2));
    return;
  }
  say("path       {}\n", a.path);
  say("kind       SVM model (LIBSVM text{})\n",
      training.is_null() ? "" : fmt::format("; sidecar {}", sidecar.string()));
  say("type       {}, kernel {}\n", svm::SvmTypeName(m.type), KernelText(m));
  if (classification) {
    std::vector<std::string> per_class;
    for (size_t c = 0; c < m.labels.size(); ++c) {
      per_class.push_back(fmt::format("{}: {}", m.labels[c], c < m.nr_sv.size() ? m.nr_sv[c] : 0));
    }
    say("classes    {} (support vectors per label: {}); {} one-vs-one pair(s)\n", m.nr_class,
        fmt::join(per_class, ", "), m.rho.size());
  }
  say("support    {} vectors, {} non-zeros ({:.1f} a vector)\n", static_cast<long long>(m.total_sv()),
      static_cast<long long>(nnz),
      m.total_sv() > 0 ? static_cast<double>(nnz) / static_cast<double>(m.total_sv()) : 0.0);
  say("features   {} ({})\n", static_cast<long long>(m.num_features),
      m.num_features_known ? "the training data's, from the sidecar" : "the largest support vector id: no sidecar");
  std::string rho = "none (one class: no pair)";
  if (m.rho.size() == 1) {
    rho = fmt::format("{:.10g}", m.rho[0]);
  } else if (m.rho.size() > 1) {
    const auto [lo, hi] = std::minmax_element(m.rho.begin(), m.rho.end());
    rho = fmt::format("{} values, {:.6g} .. {:.6g}", m.rho.size(), *lo, *hi);
  }
  say("rho        {}\n", rho);
  say("probability {}\n", m.HasProbability() ? "yes (-b 1)" : "no");
  if (!training.is_null()) {
    const auto num = [&](const char* key) { return training.contains(key) ? training.at(key).dump() : "-"; };
    say("training   {} iterations, {} kernel evaluations, {} s{}\n", num("iterations"), num("kernel_evaluations"),
        num("seconds"),
        training.contains("pairs_total") && training.at("pairs_total").is_number_integer()
            ? fmt::format(", {} binary problem(s)", training.at("pairs_total").get<int64_t>())
        : training.contains("pairs") && training.at("pairs").is_array()
            ? fmt::format(", {} binary problem(s)", training.at("pairs").size())
            : "");
  }
}

void CheckpointInfo(const InfoOptions& a, const Printer& say) {
  // Read and checked as prediction reads it: the counters, the tensors' checksum and values, the configuration and
  // the tensors' shapes against its model.
  const train::gcn::TrainState s = train::gcn::LoadCheckpoint(a.path);
  const train::gcn::TrainConfig c = train::gcn::CheckedCheckpointConfig(a.path, s);
  int64_t parameters = 0;
  OrderedJson shapes = OrderedJson::array();
  for (const kernels::Matrix& p : s.params) {
    parameters += p.rows * p.cols;
    shapes.push_back({p.rows, p.cols});
  }
  OrderedJson out;
  out["path"] = a.path;
  out["kind"] = "gcn_checkpoint";
  out["parameters"] = parameters;
  out["parameter_shapes"] = shapes;
  out["epochs_done"] = s.epochs_done;
  out["adam_steps"] = s.adam_steps;
  out["best_epoch"] = s.best_epoch;
  out["best_val_acc"] = s.best_val_acc < 0 ? OrderedJson(nullptr) : OrderedJson(s.best_val_acc);
  out["epochs_since_best"] = s.epochs_since_best;
  out["epoch_steps_done"] = s.epoch_steps_done;
  out["epoch_steps"] = s.epoch_steps;
  out["ranks"] = s.ranks;
  out["just_in_time"] = s.just_in_time;
  out["has_best_params"] = !s.best_params.empty();
  out["config"] = s.config;
  if (a.json) {
    say("{}\n", out.dump(2));
    return;
  }
  say("path       {}\n", a.path);
  say("kind       GCN checkpoint (tessel train gcn --checkpoint)\n");
  say("model      {}, {} layers, hidden {}, {} input features, {} classes; {} parameters in {} tensors\n",
      train::gcn::ModelKindName(c.model.kind), c.model.layers, c.model.hidden, c.model.in_dim, c.model.num_classes,
      static_cast<long long>(parameters), s.params.size());
  std::string where =
      fmt::format("{} of {} epochs done, {} Adam steps", s.epochs_done, c.epochs, static_cast<long long>(s.adam_steps));
  if (s.epoch_steps > 0)
    where += fmt::format("; {} of epoch {}'s {} steps", s.epoch_steps_done, s.epochs_done + 1,
                         static_cast<long long>(s.epoch_steps));
  if (s.ranks > 0) where += fmt::format("; written by {} rank(s)", s.ranks);
  if (s.just_in_time) where += " when a rank failed (just in time)";
  say("state      {}\n", where);
  say("best       {}\n", s.best_val_acc < 0 ? std::string("not evaluated yet")
                                            : fmt::format("validation accuracy {:.4f} at epoch {} ({} epoch(s) since)",
                                                          s.best_val_acc, s.best_epoch, s.epochs_since_best));
  say("training   lr {:g}, dropout {:g}, weight decay {:g}, batch size {}, fanouts [{}]\n", c.adam.lr, c.model.dropout,
      c.adam.weight_decay, c.batch_size, fmt::join(c.fanouts, ","));
}

void SvmCheckpointInfo(const InfoOptions& a, const Printer& say) {
  const svm::SvmCheckpoint s = svm::LoadSvmCheckpoint(a.path);  // format, version, checksum, sizes, every alpha
  const auto [solved, steps] = s.Progress();
  OrderedJson problems = OrderedJson::array();
  for (const svm::SvmCheckpointProblem& p : s.problems) {
    int64_t nonzero = 0;
    for (const double v : p.alpha) nonzero += v != 0.0 ? 1 : 0;
    problems.push_back(
        {{"samples", p.samples}, {"iterations", p.iterations}, {"done", p.done}, {"nonzero_alpha", nonzero}});
  }
  OrderedJson out;
  out["path"] = a.path;
  out["kind"] = "svm_checkpoint";
  out["ranks"] = s.ranks;
  out["just_in_time"] = s.just_in_time;
  out["problems_solved"] = solved;
  out["total_steps"] = s.TotalSteps();
  out["problems"] = problems;
  // The settings alpha depends on, compared on resume: an object of option: value (kept as text if not one).
  OrderedJson settings = s.settings;
  std::string settings_text = s.settings;
  try {
    const nlohmann::json j = nlohmann::json::parse(s.settings);
    if (j.is_object()) {
      settings = j;
      std::vector<std::string> items;
      for (auto it = j.begin(); it != j.end(); ++it) {
        items.push_back(fmt::format("{} {}", it.key(), it->is_string() ? it->get<std::string>() : it->dump()));
      }
      settings_text = fmt::format("{}", fmt::join(items, ", "));
    }
  } catch (const nlohmann::json::exception&) {
  }
  out["settings"] = settings;
  if (a.json) {
    say("{}\n", out.dump(2));
    return;
  }
  say("path       {}\n", a.path);
  say("kind       SVM checkpoint (tessel train svm --checkpoint; resumable on any number of ranks)\n");
  say("state      {} of {} binary problem(s) solved{}; {} SMO steps in all; written by {} rank(s){}\n", solved,
      s.problems.size(),
      solved < s.problems.size() ? fmt::format(", problem {} {} steps in", solved + 1, static_cast<long long>(steps))
                                 : "",
      static_cast<long long>(s.TotalSteps()), s.ranks, s.just_in_time ? " when a rank failed (just in time)" : "");
  say("settings   {}\n", PrintableText(settings_text));
}

}  // namespace

bool InfoOfModel(const InfoOptions& a, const Printer& say) {
  const fs::path path = a.path;
  std::error_code ec;
  if (fs::is_directory(path, ec) && fs::exists(path / "checkpoint.json", ec)) {
    CheckpointInfo(a, say);
    return true;
  }
  if (fs::is_directory(path, ec) && svm::HasSvmCheckpoint(path)) {
    SvmCheckpointInfo(a, say);
    return true;
  }
  if (LooksLikeSvmModel(path)) {
    SvmModelInfo(a, say);
    return true;
  }
  return false;
}

}  // namespace tessel::app
