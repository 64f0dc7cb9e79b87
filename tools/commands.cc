// The subcommand registry: each Register* function lives in its own cmd_*.cc file.
// Actions run after parsing, inside main's error handler, so every failure prints "error: ...".
#include "tools/commands.h"

#include <map>

#include "core/error.h"

namespace tessel::tools {
namespace {
std::map<const CLI::App*, std::function<void()>>& Actions() {
  static std::map<const CLI::App*, std::function<void()>> actions;
  return actions;
}
}  // namespace

void SetAction(CLI::App* sub, std::function<void()> run) { Actions()[sub] = std::move(run); }

CLI::App* GroupCommand(CLI::App& app, const std::string& name, const std::string& description) {
  for (CLI::App* sub : app.get_subcommands([&](CLI::App* s) { return s->get_name() == name; })) return sub;
  CLI::App* group = app.add_subcommand(name, description);
  group->require_subcommand(1);
  return group;
}

void RegisterCommands(CLI::App& app) {
  // One line per subcommand file (tools/cmd_*.cc).
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
