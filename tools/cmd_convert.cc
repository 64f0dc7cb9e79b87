// `tessel convert`: the options of app/convert.h as flags; the conversion's summary on stdout.
#include <cstdio>
#include <memory>

#include "app/convert.h"
#include "tools/commands.h"

namespace tessel::tools {

void RegisterConvert(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("convert", "Convert a raw dataset into the native format (docs/formats.md)");
  AddJob(sub, std::make_shared<app::ConvertOptions>(),
         [](const app::ConvertOptions& o) { std::fputs(app::Convert(o).c_str(), stdout); });
}

}  // namespace tessel::tools
