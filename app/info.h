// `tessel info PATH`: what a native dataset holds (kind, counts, degrees, features, classes, split), a partition
// folder's statistics, or what a model holds (a GCN checkpoint folder, an SVM model file: app/info_models.h), and
// whether every array still matches its checksum; human-readable, or one JSON object with --json. Every option
// declared once here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "app/given.h"
#include "app/run_options.h"

namespace tessel::app {

struct InfoOptions {
  std::string path;
  bool json = false;
  bool verify = true;
  Given given;

  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(
        ParamInfo{
            "path",
            "What to describe: a dataset folder (tessel convert or generate), a partition folder (tessel partition), a "
            "GCN or SVM checkpoint folder (train gcn/svm --checkpoint) or an SVM model file (train svm --model)"}
            .Flags("path")
            .Cli()
            .Required(),
        c.path);
    v(ParamInfo{"json", "Print one JSON object instead of text"}.Cli(), c.json);
    v(ParamInfo{"verify", "Verify every array's XXH3 checksum"}.Flags("--verify,!--no-verify").Cli(), c.verify);
  }
};

// One verified item (an array, a part) for ReportChecks.
struct ItemCheck {
  std::string name;
  bool ok = false;
  std::string detail;
};
struct CheckReport {
  std::string_view path;     // what was verified
  std::string_view label;    // the text line's label, padded to its table ("checksums  ")
  std::string_view unit;     // "arrays", "parts"
  std::string_view failure;  // "failed checksum verification"
  std::string_view fix;      // the command that rewrites it
};
// Prints the verification line (and each failed item) when `print`, then throws naming every failed item.
void ReportChecks(const Printer& say, bool print, bool verify, const std::vector<ItemCheck>& items,
                  const CheckReport& report);

// Describes the dataset, partition folder, checkpoint or model to `say`; throws naming the damaged arrays when a
// checksum fails.
void Info(const InfoOptions& options, const Printer& say);

}  // namespace tessel::app
