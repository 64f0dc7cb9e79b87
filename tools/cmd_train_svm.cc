// `tessel train svm`: the options of app/train_svm.h as svm-train's flags; what svm-train prints on stdout.
#include <cstdio>
#include <memory>

#include "app/train_svm.h"
#include "tools/commands.h"

namespace tessel::tools {

void RegisterTrainSvm(CLI::App& app) {
  CLI::App* group = GroupCommand(app, "train", "Train a model (gcn, svm)");
  CLI::App* sub = group->add_subcommand(
      "svm",
      "LIBSVM's SVMs (C-SVC, nu-SVC, one-class, epsilon-SVR, nu-SVR: SMO with second-order working sets and sample "
      "elimination) on LIBSVM text data");
  sub->set_help_flag("--help", "Print this help message and exit");  // -h is svm-train's shrinking flag
  AddJob(sub, std::make_shared<app::TrainSvmOptions>(),
         [](const app::TrainSvmOptions& o) { std::fputs(app::TrainSvm(o).c_str(), stdout); });
}

}  // namespace tessel::tools
