// The subcommand registry: each Register* function lives in its own cmd_*.cc file.
// Actions run after parsing, inside main's error handler, so every failure prints "error: ...".
#include "tools/commands.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>

#include "comm/communicator.h"
#include "core/error.h"
#include "core/output_guard.h"
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

void CheckOutputFile(const std::string& path, bool force, std::string_view flag,
                     std::initializer_list<std::string_view> inputs,
                     std::initializer_list<std::string_view> other_outputs) {
  CheckOutputPath(path, OutputKind::kFile, force, flag, PathList(inputs), PathList(other_outputs));
}

CLI::Option* AddTimeoutOption(CLI::App* sub, double* seconds) {
  *seconds = comm::Communicator::kDefaultTimeoutSeconds;
  return AddOption(sub, "--timeout", seconds,
                   "Under mpirun: seconds a collective or message may wait for the other ranks before the whole job "
                   "ends with a message naming the ranks that did not answer (a stopped or hung rank); 0 = no limit",
                   {0, std::numeric_limits<double>::max()})
      ->capture_default_str();
}

void CheckTimeout(double seconds) {
  TESSEL_CHECK(std::isfinite(seconds) && seconds >= 0,
               "--timeout {} must be a finite number of seconds >= 0 (0 = no limit; the default is {:g})", seconds,
               comm::Communicator::kDefaultTimeoutSeconds);
}

CLI::App* GroupCommand(CLI::App& app, const std::string& name, const std::string& description) {
  for (CLI::App* sub : app.get_subcommands([&](CLI::App* s) { return s->get_name() == name; })) return sub;
  CLI::App* group = app.add_subcommand(name, description);
  group->require_subcommand(1);
  return group;
}

void RegisterTrainSvm(CLI::App& app);    // tools/cmd_train_svm.cc
void RegisterPredictSvm(CLI::App& app);  // tools/cmd_predict_svm.cc
void RegisterGenerate(CLI::App& app);    // tools/cmd_generate.cc
void RegisterPartition(CLI::App& app);   // tools/cmd_partition.cc
void RegisterConvert(CLI::App& app);     // tools/cmd_convert.cc
void RegisterInfo(CLI::App& app);        // tools/cmd_info.cc
void RegisterTrainGcn(CLI::App& app);    // tools/cmd_train_gcn.cc
void RegisterPredictGcn(CLI::App& app);  // tools/cmd_predict_gcn.cc

void RegisterCommands(CLI::App& app) {
  // One line per subcommand file (tools/cmd_*.cc).
  RegisterTrainSvm(app);
  RegisterPredictSvm(app);
  RegisterGenerate(app);
  RegisterPartition(app);
  RegisterConvert(app);
  RegisterInfo(app);
  RegisterTrainGcn(app);
  RegisterPredictGcn(app);
  (void)app;
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
