// `tessel info PATH`: what a native dataset holds (kind, counts, degrees, features, classes, split) and whether
// every array still matches its checksum; human-readable, or one JSON object with --json.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/log.h"
#include "datasets/native_format.h"
#include "datasets/stats.h"
#include "partition/partition_format.h"
#include "tools/cli_params.h"
#include "tools/commands.h"

namespace tessel::tools {

// tools/cmd_partition.cc: `tessel info` on a partition folder.
void PrintPartitionInfo(const std::string& path, bool json, bool verify);

namespace {

namespace ds = datasets;
using OrderedJson = nlohmann::ordered_json;

struct InfoArgs {
  std::string path;
  bool json = false;
  bool verify = true;
};

std::string Percent(double x) { return fmt::format("{:.3g}%", 100 * x); }

void PrintNode(const ds::NodeDatasetStats& s) {
  std::printf("nodes      %lld\n", static_cast<long long>(s.num_nodes));
  std::printf("edges      %lld %s (%lld adjacency entries, %lld self-loops), ids %s, %s\n",
              static_cast<long long>(s.num_edges), s.symmetric ? "undirected" : "directed",
              static_cast<long long>(s.num_entries), static_cast<long long>(s.self_loops), s.id_dtype.c_str(),
              s.weighted ? "weighted" : "unweighted");
  std::printf("degree     min %lld, max %lld, mean %.2f, median %g, isolated %lld\n",
              static_cast<long long>(s.degree.min), static_cast<long long>(s.degree.max), s.degree.mean,
              s.degree.median, static_cast<long long>(s.degree.isolated));
  if (s.feature_dim == 0) {
    std::printf("features   none\n");
  } else {
    std::printf("features   %lld %s, %lld non-zeros (density %s)\n", static_cast<long long>(s.feature_dim),
                s.features_sparse ? "sparse" : "dense", static_cast<long long>(s.feature_nnz),
                Percent(s.feature_density).c_str());
  }
  if (s.num_classes == 0) {
    std::printf("classes    none (no labels)\n");
  } else {
    std::string counts;
    for (size_t c = 0; c < s.class_counts.size(); ++c) {
      counts += fmt::format("{}{}: {}", c == 0 ? "" : ", ", c, s.class_counts[c]);
    }
    std::printf("classes    %d (%s); unlabelled %lld\n", s.num_classes, counts.c_str(),
                static_cast<long long>(s.unlabelled));
  }
  if (s.train + s.val + s.test == 0) {
    std::printf("split      none\n");
  } else {
    std::printf("split      train %lld, val %lld, test %lld\n", static_cast<long long>(s.train),
                static_cast<long long>(s.val), static_cast<long long>(s.test));
  }
}

void PrintRows(const ds::SparseRowStats& s) {
  std::printf("rows       %lld\n", static_cast<long long>(s.num_rows));
  std::printf("features   %lld\n", static_cast<long long>(s.num_features));
  std::printf("non-zeros  %lld (density %s, per row %lld..%lld)\n", static_cast<long long>(s.nnz),
              Percent(s.density).c_str(), static_cast<long long>(s.min_row_nnz), static_cast<long long>(s.max_row_nnz));
  std::string labels;
  for (const auto& [value, count] : s.label_counts) {
    labels += fmt::format("{}{:g}: {}", labels.empty() ? "" : ", ", value, count);
  }
  std::printf("labels     %zu distinct (%s)\n", s.label_counts.size(), labels.c_str());
}

void RunInfo(const InfoArgs& a) {
  const std::filesystem::path dir = a.path;
  if (partition::IsPartitionFolder(dir)) {  // a partition folder (tessel partition), not a dataset
    PrintPartitionInfo(a.path, a.json, a.verify);
    return;
  }
  const nlohmann::json manifest = ds::ReadManifest(dir);  // "not a tessel dataset" for anything else
  const std::string kind = manifest["kind"].get<std::string>();
  OrderedJson out;
  out["path"] = a.path;
  out["kind"] = kind;
  out["name"] = manifest.value("name", "");
  out["format_version"] = manifest["version"];
  out["created_by"] = manifest.value("created_by", "");

  std::vector<ds::ArrayCheck> checks;
  size_t failed = 0;
  if (a.verify) {
    log::Info("{}: verifying {} arrays", a.path, manifest["arrays"].size());
    checks = ds::VerifyChecksums(dir);
    for (const auto& c : checks) failed += c.ok ? 0 : 1;
  }
  OrderedJson cj;
  cj["verified"] = a.verify;
  cj["ok"] = a.verify ? OrderedJson(failed == 0) : OrderedJson(nullptr);
  cj["arrays"] = OrderedJson::array();
  for (const auto& c : checks) cj["arrays"].push_back({{"name", c.name}, {"ok", c.ok}, {"detail", c.detail}});

  if (!a.json) {
    std::printf("path       %s\n", a.path.c_str());
    std::printf("kind       %s (tessel-dataset version %s, %s)\n", kind.c_str(), manifest["version"].dump().c_str(),
                out["created_by"].get<std::string>().c_str());
    std::printf("name       %s\n", PrintableText(out["name"].get<std::string>()).c_str());
  }
  if (failed == 0) {  // statistics only for arrays known to be intact (or when verification was skipped)
    const ds::LoadOptions load{.verify_checksums = false, .validate = true};
    if (kind == "node") {
      const ds::NodeDatasetStats s = ds::ComputeStats(ds::LoadNodeDataset(dir, load));
      out.update(ds::ToJson(s));
      if (!a.json) PrintNode(s);
    } else {
      const ds::SparseRowStats s = ds::ComputeStats(ds::LoadSparseRowDataset(dir, load));
      out.update(ds::ToJson(s));
      if (!a.json) PrintRows(s);
    }
  }
  out["checksums"] = cj;
  if (a.json) {
    std::printf("%s\n", out.dump(2).c_str());
  } else if (!a.verify) {
    std::printf("checksums  not verified (--no-verify)\n");
  } else if (failed == 0) {
    std::printf("checksums  ok (%zu arrays verified)\n", checks.size());
  } else {
    std::printf("checksums  FAILED for %zu of %zu arrays:\n", failed, checks.size());
    for (const auto& c : checks) {
      if (!c.ok) std::printf("  %s: %s\n", PrintableText(c.name).c_str(), PrintableText(c.detail).c_str());
    }
  }
  if (failed > 0) {  // the message names the damaged arrays' files, not only their count
    std::string which;
    for (const auto& c : checks) {
      if (!c.ok) which += fmt::format("{}{} ({})", which.empty() ? "" : ", ", c.name, c.detail);
    }
    throw Error(fmt::format("{}: {} of {} arrays failed checksum verification: {}; re-run tessel convert", a.path,
                            failed, checks.size(), which));
  }
}

}  // namespace

void RegisterInfo(CLI::App& app) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* sub = app.add_subcommand("info", "Describe a native dataset and verify its checksums");
  AddOption(sub, "path", &args->path, "Dataset folder (made by tessel convert or tessel generate)")->required();
  sub->add_flag("--json", args->json, "Print one JSON object instead of text");
  sub->add_flag("--verify,!--no-verify", args->verify, "Verify every array's XXH3 checksum")->capture_default_str();
  SetAction(sub, [args] { RunInfo(*args); });
}

}  // namespace tessel::tools
