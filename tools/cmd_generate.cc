// `tessel generate csbm|rmat`: the options of app/generate.h as flags. Reports the drawn and kept edge counts,
// degrees and timings on stderr, or as JSON on stdout with --json.
#include <cstdio>
#include <memory>

#include "app/generate.h"
#include "tools/commands.h"

namespace tessel::tools {

void RegisterGenerate(CLI::App& app) {
  CLI::App* group = GroupCommand(app, "generate", "Make a synthetic dataset (CSBM or R-MAT) in the native format");
  CLI::App* csbm = group->add_subcommand(
      "csbm",
      "Contextual stochastic block model: classes as communities, homophily, heavy-tailed degrees, "
      "Gaussian class features");
  AddJob(csbm, std::make_shared<app::GenerateCsbmOptions>(),
         [](const app::GenerateCsbmOptions& o) { std::fputs(app::GenerateCsbm(o).c_str(), stdout); });
  CLI::App* rmat = group->add_subcommand(
      "rmat", "R-MAT power-law graph (Graph500 parameters by default); optional random features and labels");
  AddJob(rmat, std::make_shared<app::GenerateRmatOptions>(),
         [](const app::GenerateRmatOptions& o) { std::fputs(app::GenerateRmat(o).c_str(), stdout); });
}

}  // namespace tessel::tools
