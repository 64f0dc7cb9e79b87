// libFuzzer target: the `tessel` command line. The input is split at '\0' bytes into the arguments after
// "tessel"; the CLI::App is built as tools/main.cc builds it and parsed. The actions never run: success,
// CLI::ParseError (including --help and --version) and tessel::Error from a validator are the expected outcomes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/log.h"
#include "core/memory_budget.h"
#include "tests/fuzz/fuzz_util.h"
#include "tools/commands.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  (void)fuzz::ScratchDir("cli");  // quiet logs; relative paths in the arguments stay where the fuzzer runs
  std::vector<std::string> args;
  std::string_view rest = fuzz::AsText(data, size);
  while (!rest.empty()) {
    const size_t at = rest.find('\0');
    args.emplace_back(rest.substr(0, at));
    if (at == std::string_view::npos) break;
    rest.remove_prefix(at + 1);
  }
  std::vector<const char*> argv{"tessel"};
  for (const std::string& a : args) argv.push_back(a.c_str());

  CLI::App app{"tessel"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tessel fuzz");
  // The global options of tools/main.cc (keep in step with it).
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")->capture_default_str();
  std::string max_memory = "0";
  app.add_option("--max-memory", max_memory, "Most memory this process may hold")->capture_default_str();
  double max_inflate_ratio = memory::InflateLimits{}.max_ratio;
  app.add_option("--max-inflate-ratio", max_inflate_ratio, "Largest inflate ratio")->capture_default_str();
  tools::RegisterCommands(app);
  return fuzz::Run([&] {
    try {
      app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::ParseError&) {
      return;
    }
    // What main() parses before running the action (without applying it: the harness keeps its own limits).
    (void)log::ParseLevel(log_level);
    (void)memory::ParseSize(max_memory, "--max-memory");
  });
}
