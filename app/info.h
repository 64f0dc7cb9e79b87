// `tessel info PATH`: what a native dataset holds (kind, counts, degrees, features, classes, split) or a partition
// folder's statistics, and whether every array still matches its checksum; human-readable, or one JSON object with
// --json. Every option declared once here.
#pragma once

#include <string>

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
    using F = ParamInfo::Front;
    v(ParamInfo{.name = "path",
                .help = "Dataset folder (made by tessel convert or tessel generate)",
                .flag = "path",
                .front = F::kCli,
                .required = true},
      c.path);
    v(ParamInfo{.name = "json", .help = "Print one JSON object instead of text", .front = F::kCli}, c.json);
    v(ParamInfo{.name = "verify",
                .help = "Verify every array's XXH3 checksum",
                .flag = "--verify,!--no-verify",
                .front = F::kCli},
      c.verify);
  }
};

// Describes the dataset or partition folder to `say`; throws naming the damaged arrays when a checksum fails.
void Info(const InfoOptions& options, const Printer& say);

}  // namespace tessel::app
