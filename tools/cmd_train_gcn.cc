// `tessel train gcn`: the options of app/train_gcn.h as flags; the final test accuracy on stdout (or --json).
#include <cstdio>
#include <memory>

#include "app/train_gcn.h"
#include "tools/commands.h"

namespace tessel::tools {

void RegisterTrainGcn(CLI::App& app) {
  CLI::App* group = GroupCommand(app, "train", "Train a model (gcn, svm)");
  CLI::App* sub = group->add_subcommand("gcn", "Train a GCN (Kipf & Welling) or GraphSAGE-mean node classifier");
  AddJob(sub, std::make_shared<app::TrainGcnOptions>(), [](const app::TrainGcnOptions& o) {
    const app::TrainGcnOutcome r = app::TrainGcn(o);
    if (r.lead) std::puts(o.json ? r.result.dump().c_str() : r.line.c_str());
  });
}

}  // namespace tessel::tools
