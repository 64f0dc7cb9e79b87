// The subcommand registry: each Register* function lives in its own cmd_*.cc file.
// Actions run after parsing, inside main's error handler, so every failure prints "error: ...".
#include "tools/commands.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "comm/communicator.h"
#include "core/error.h"

namespace tessel::tools {
namespace {
std::map<const CLI::App*, std::function<void()>>& Actions() {
  static std::map<const CLI::App*, std::function<void()>> actions;
  return actions;
}
}  // namespace

void SetAction(CLI::App* sub, std::function<void()> run) { Actions()[sub] = std::move(run); }

void CheckOutputFile(const std::string& path, bool force, std::string_view flag,
                     std::initializer_list<std::string_view> inputs) {
  if (path.empty()) return;
  std::error_code ec;
  for (std::string_view input : inputs) {
    TESSEL_CHECK(input.empty() || !std::filesystem::equivalent(path, input, ec),
                 "{} {} is an input of this command; write to another path", flag, path);
  }
  TESSEL_CHECK(force || !std::filesystem::exists(path, ec),
               "{} {}: already exists; pass --force to replace it or choose another path", flag, path);
  // The folder must take the file (written as a temporary and renamed), checked now rather than after the work.
  const std::filesystem::path dir = std::filesystem::path(path).parent_path().empty()
                                        ? std::filesystem::path(".")
                                        : std::filesystem::path(path).parent_path();
  TESSEL_CHECK(std::filesystem::is_directory(dir, ec),
               "{} {}: the folder {} does not exist (or is not a folder); create it or choose another path", flag, path,
               dir.string());
  TESSEL_CHECK(::access(dir.c_str(), W_OK) == 0, "{} {}: the folder {} is not writable; choose another path", flag,
               path, dir.string());
}

CLI::Option* AddTimeoutOption(CLI::App* sub, double* seconds) {
  *seconds = comm::Communicator::kDefaultTimeoutSeconds;
  return sub
      ->add_option("--timeout", *seconds,
                   "Under mpirun: seconds a collective or message may wait for the other ranks before the whole job "
                   "ends with a message naming the ranks that did not answer (a stopped or hung rank); 0 = no limit")
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
