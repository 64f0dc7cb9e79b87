// `tessel info PATH`: the options of app/info.h as flags; the description on stdout.
#include <cstdio>
#include <memory>
#include <string_view>

#include "app/info.h"
#include "tools/commands.h"

namespace tessel::tools {

void RegisterInfo(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("info", "Describe a native dataset and verify its checksums");
  AddJob(sub, std::make_shared<app::InfoOptions>(), [](const app::InfoOptions& o) { app::Info(o, StdoutPrinter()); });
}

}  // namespace tessel::tools
