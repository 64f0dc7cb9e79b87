// The subcommand registry: one line per job of app/ (its options, declared there, become the subcommand's flags).
// Actions run after parsing, inside main's error handler, so every failure prints "error: ...".
#include "tools/commands.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "app/convert.h"
#include "app/generate.h"
#include "app/info.h"
#include "app/launch.h"
#include "app/partition.h"
#include "app/predict_gcn.h"
#include "app/predict_svm.h"
#include "app/train_gcn.h"
#include "app/train_svm.h"
#include "core/error.h"
#include "tools/cli_params.h"

namespace tessel::tools {
namespace {
std::map<const CLI::App*, std::function<void()>>& Actions() {
  static std::map<const CLI::App*, std::function<void()>> actions;
  return actions;
}
}  // namespace

app::Printer StdoutPrinter() {
  return app::Printer([](std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); });
}

void SetAction(CLI::App* sub, std::function<void()> run) { Actions()[sub] = std::move(run); }

CLI::App* GroupCommand(CLI::App& app, const std::string& name, const std::string& description) {
  for (CLI::App* sub : app.get_subcommands([&](CLI::App* s) { return s->get_name() == name; })) return sub;
  CLI::App* group = app.add_subcommand(name, description);
  group->require_subcommand(1);
  return group;
}

namespace {

void Write(std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// A job whose run function returns what the command prints.
template <typename Options>
void TextJob(CLI::App* sub, std::string (*run)(const Options&)) {
  AddJob(sub, std::make_shared<Options>(), [run](const Options& o) { Write(run(o)); });
}

// A job that prints as it goes (app::Printer).
template <typename Options>
void PrintingJob(CLI::App* sub, void (*run)(const Options&, const app::Printer&)) {
  AddJob(sub, std::make_shared<Options>(), [run](const Options& o) { run(o, StdoutPrinter()); });
}

}  // namespace

void RegisterCommands(CLI::App& app) {
  // One line per job of app/ (their options are declared there); the order is --help's.
  CLI::App* train = GroupCommand(app, "train", "Train a model (gcn, svm)");
  CLI::App* predict = GroupCommand(app, "predict", "Predict with a trained model (gcn, svm)");
  CLI::App* svm = train->add_subcommand(
      "svm",
      "LIBSVM's SVMs (C-SVC, nu-SVC, one-class, epsilon-SVR, nu-SVR: SMO with second-order working sets and sample "
      "elimination) on LIBSVM text data");
  svm->set_help_flag("--help", "Print this help message and exit");  // -h is svm-train's shrinking flag
  TextJob(svm, &app::TrainSvm);
  TextJob(predict->add_subcommand("svm", "Predict LIBSVM text data with a LIBSVM model (any svm_type)"),
          &app::PredictSvm);
  CLI::App* generate = GroupCommand(app, "generate", "Make a synthetic dataset (CSBM or R-MAT) in the native format");
  TextJob(generate->add_subcommand("csbm",
                                   "Contextual stochastic block model: classes as communities, homophily, "
                                   "heavy-tailed degrees, Gaussian class features"),
          &app::GenerateCsbm);
  TextJob(generate->add_subcommand(
              "rmat", "R-MAT power-law graph (Graph500 parameters by default); optional random features and labels"),
          &app::GenerateRmat);
  PrintingJob(app.add_subcommand("partition",
                                 "Split a node dataset into K parts (METIS with balance constraints, or random/hash "
                                 "baselines) with 1-hop halos; under mpirun -np R the R ranks partition together, "
                                 "each reading only a block of the dataset (ParMETIS's API from PT-Scotch)"),
              &app::Partition);
  TextJob(app.add_subcommand("convert", "Convert a raw dataset into the native format (docs/formats.md)"),
          &app::Convert);
  PrintingJob(app.add_subcommand("info",
                                 "Describe a dataset, a partition folder, a GCN or SVM checkpoint or an SVM model, and "
                                 "verify their checksums"),
              &app::Info);
  AddJob(train->add_subcommand("gcn", "Train a GCN (Kipf & Welling) or GraphSAGE-mean node classifier"),
         std::make_shared<app::TrainGcnOptions>(), [](const app::TrainGcnOptions& o) {
           const app::TrainGcnOutcome r = app::TrainGcn(o);
           if (r.lead) Write((o.json ? r.result.dump() : r.line) + "\n");
         });
  TextJob(predict->add_subcommand("gcn", "Predict node classes with a GCN checkpoint"), &app::PredictGcn);
  AddJob(
      app.add_subcommand("launch",
                         "Run `train gcn` or `train svm` under mpirun and, when a rank fails, restart it on the ranks "
                         "that are left from the state they saved (-np K --min-np M -- train gcn|svm ... --checkpoint "
                         "DIR)"),
      std::make_shared<app::LaunchOptions>(), [](const app::LaunchOptions& o) {
        const int status = app::Launch(o);
        if (status != 0) {  // the job's own status (its message is printed already)
          std::fflush(stdout);
          std::exit(status);
        }
      });
}

void RunSelected(CLI::App& app) {
  // The deepest selected subcommand runs ("tessel train gcn" runs gcn's action).
  const CLI::App* selected = &app;
  while (!selected->get_subcommands().empty()) selected = selected->get_subcommands().front();
  auto it = Actions().find(selected);
  TESSEL_CHECK(it != Actions().end(), "'{}' needs a subcommand; see --help", selected->get_name());
  it->second();
}

}  // namespace tessel::tools
