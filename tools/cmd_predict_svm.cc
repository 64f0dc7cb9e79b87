// `tessel predict svm`: the options of app/predict_svm.h as flags; what svm-predict prints on stdout.
#include <cstdio>
#include <memory>

#include "app/predict_svm.h"
#include "tools/commands.h"

namespace tessel::tools {

void RegisterPredictSvm(CLI::App& app) {
  CLI::App* group = GroupCommand(app, "predict", "Predict with a trained model (gcn, svm)");
  CLI::App* sub = group->add_subcommand("svm", "Predict LIBSVM text data with a LIBSVM model (any svm_type)");
  AddJob(sub, std::make_shared<app::PredictSvmOptions>(),
         [](const app::PredictSvmOptions& o) { std::fputs(app::PredictSvm(o).c_str(), stdout); });
}

}  // namespace tessel::tools
