// `tessel predict gcn`: the options of app/predict_gcn.h as flags; the predictions on stdout without --output.
#include <cstdio>
#include <memory>
#include <string>

#include "app/predict_gcn.h"
#include "tools/commands.h"

namespace tessel::tools {

void RegisterPredictGcn(CLI::App& app) {
  CLI::App* group = GroupCommand(app, "predict", "Predict with a trained model (gcn, svm)");
  CLI::App* sub = group->add_subcommand("gcn", "Predict node classes with a GCN checkpoint");
  AddJob(sub, std::make_shared<app::PredictGcnOptions>(), [](const app::PredictGcnOptions& o) {
    const std::string text = app::PredictGcn(o);
    std::fwrite(text.data(), 1, text.size(), stdout);
  });
}

}  // namespace tessel::tools
