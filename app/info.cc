#include "app/info.h"

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/info_models.h"
#include "app/partition.h"
#include "core/error.h"
#include "core/log.h"
#include "datasets/native_format.h"
#include "datasets/stats.h"
#include "partition/partition_format.h"

namespace tessel::app {
namespace {

namespace ds = datasets;
using OrderedJson = nlohmann::ordered_json;

std::string Percent(double x) { return fmt::format("{:.3g}%", 100 * x); }

void PrintNode(const ds::NodeDatasetStats& s, const Printer& say) {
  say("nodes      {}\n", static_cast<long long>(s.num_nodes));
  say("edges      {} {} ({} adjacency entries, {} self-loops), ids {}, {}\n", static_cast<long long>(s.num_edges),
      s.symmetric ? "undirected" : "directed", static_cast<long long>(s.num_entries),
      static_cast<long long>(s.self_loops), s.id_dtype, s.weighted ? "weighted" : "unweighted");
  say("degree     min {}, max {}, mean {:.2f}, median {:g}, isolated {}\n", static_cast<long long>(s.degree.min),
      static_cast<long long>(s.degree.max), s.degree.mean, s.degree.median, static_cast<long long>(s.degree.isolated));
  if (s.feature_dim == 0) {
    say("features   none\n");
  } else {
    say("features   {} {}, {} non-zeros (density {})\n", static_cast<long long>(s.feature_dim),
        s.features_sparse ? "sparse" : "dense", static_cast<long long>(s.feature_nnz), Percent(s.feature_density));
  }
  if (s.num_classes == 0) {
    say("classes    none (no labels)\n");
  } else {
    std::string counts;
    for (size_t c = 0; c < s.class_counts.size(); ++c) {
      counts += fmt::format("{}{}: {}", c == 0 ? "" : ", ", c, s.class_counts[c]);
    }
    say("classes    {} ({}); unlabelled {}\n", s.num_classes, counts, static_cast<long long>(s.unlabelled));
  }
  if (s.train + s.val + s.test == 0) {
    say("split      none\n");
  } else {
    say("split      train {}, val {}, test {}\n", static_cast<long long>(s.train), static_cast<long long>(s.val),
        static_cast<long long>(s.test));
  }
}

void PrintRows(const ds::SparseRowStats& s, const Printer& say) {
  say("rows       {}\n", static_cast<long long>(s.num_rows));
  say("features   {}\n", static_cast<long long>(s.num_features));
  say("non-zeros  {} (density {}, per row {}..{})\n", static_cast<long long>(s.nnz), Percent(s.density),
      static_cast<long long>(s.min_row_nnz), static_cast<long long>(s.max_row_nnz));
  std::string labels;
  for (const auto& [value, count] : s.label_counts) {
    labels += fmt::format("{}{:g}: {}", labels.empty() ? "" : ", ", value, count);
  }
  say("labels     {} distinct ({})\n", s.label_counts.size(), labels);
}

}  // namespace

void ReportChecks(const Printer& say, bool print, bool verify, const std::vector<ItemCheck>& items,
                  const CheckReport& r) {
  size_t failed = 0;
  std::string which;  // the message names every damaged item, not only their count
  for (const ItemCheck& c : items) {
    if (c.ok) continue;
    ++failed;
    which += fmt::format("{}{} ({})", which.empty() ? "" : ", ", c.name, c.detail);
  }
  if (print) {
    if (!verify) {
      say("{}not verified (--no-verify)\n", r.label);
    } else if (failed == 0) {
      say("{}ok ({} {} verified)\n", r.label, items.size(), r.unit);
    } else {
      say("{}FAILED for {} of {} {}:\n", r.label, failed, items.size(), r.unit);
      for (const ItemCheck& c : items) {
        if (!c.ok) say("  {}: {}\n", c.name, c.detail);
      }
    }
  }
  TESSEL_CHECK(failed == 0, "{}: {} of {} {} {}: {}; re-run {}", r.path, failed, items.size(), r.unit, r.failure, which,
               r.fix);
}

void Info(const InfoOptions& a, const Printer& say) {
  const std::filesystem::path dir = a.path;
  if (partition::IsPartitionFolder(dir)) {  // a partition folder (tessel partition), not a dataset
    PartitionInfo(a.path, a.json, a.verify, say);
    return;
  }
  if (InfoOfModel(a, say)) return;  // a GCN checkpoint or an SVM model
  std::error_code ec;
  TESSEL_CHECK(
      std::filesystem::is_directory(dir, ec) || !std::filesystem::exists(dir, ec),
      "{}: not a tessel dataset, partition folder or GCN or SVM checkpoint (those are folders), nor an SVM model "
      "file "
      "(its first line is \"svm_type ...\"); give one of them (raw data: tessel convert it first)",
      a.path);
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
    say("path       {}\n", a.path);
    say("kind       {} (tessel-dataset version {}, {})\n", kind, manifest["version"].dump(),
        out["created_by"].get<std::string>());
    say("name       {}\n", PrintableText(out["name"].get<std::string>()));
  }
  if (failed == 0) {  // statistics only for arrays known to be intact (or when verification was skipped)
    const ds::LoadOptions load{.verify_checksums = false, .validate = true};
    if (kind == "node") {
      const ds::NodeDatasetStats s = ds::ComputeStats(ds::LoadNodeDataset(dir, load));
      out.update(ds::ToJson(s));
      if (!a.json) PrintNode(s, say);
    } else {
      const ds::SparseRowStats s = ds::ComputeStats(ds::LoadSparseRowDataset(dir, load));
      out.update(ds::ToJson(s));
      if (!a.json) PrintRows(s, say);
    }
  }
  out["checksums"] = cj;
  if (a.json) say("{}\n", out.dump(2));
  std::vector<ItemCheck> items;
  for (const auto& c : checks) items.push_back({PrintableText(c.name), c.ok, PrintableText(c.detail)});
  ReportChecks(say, !a.json, a.verify, items,
               {.path = a.path,
                .label = "checksums  ",
                .unit = "arrays",
                .failure = "failed checksum verification",
                .fix = "tessel convert"});
}

}  // namespace tessel::app
