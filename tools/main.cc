// The `tessel` command: global options, one CLI11 subcommand per tools/cmd_*.cc file, and the one place
// that turns exceptions into "error: ..." on stderr and a non-zero exit status.
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/build_config.h"
#include "core/device.h"
#include "core/error.h"
#include "core/fault_inject.h"
#include "core/log.h"
#include "core/memory_budget.h"
#if TESSEL_MPI
#include "comm/mpi_comm.h"
#endif
#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"tessel: distributed GCN and SVM training (convert -> partition -> train -> predict)"};
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", fmt::format("tessel {} (CUDA {})", TESSEL_VERSION, tessel::device::BuiltWithCuda() ? "on" : "off"));
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")->capture_default_str();
  std::string max_memory = "0";
  app.add_option("--max-memory", max_memory,
                 "Most memory this process may hold (e.g. 8G, binary units); larger allocations are refused with a "
                 "message before they are made. 0: only the machine's available memory limits")
      ->capture_default_str();
  double max_inflate_ratio = tessel::memory::InflateLimits{}.max_ratio;
  app.add_option("--max-inflate-ratio", max_inflate_ratio,
                 "Largest size ratio a .gz/.bz2 input may inflate to before it is refused as a decompression bomb "
                 "(0: no limit)")
      ->capture_default_str();
  app.get_formatter()->column_width(38);
  app.footer("Run `tessel SUBCOMMAND --help` for the options of each step. Docs: docs/cli.md");

  tessel::tools::RegisterCommands(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    tessel::log::SetLevel(tessel::log::ParseLevel(log_level));
    tessel::fault::InitFromEnvironment();  // a malformed TESSEL_FAULT is an error before any work
    tessel::memory::SetLimit(tessel::memory::ParseSize(max_memory, "--max-memory"));
    tessel::memory::SetInflateLimits({max_inflate_ratio});
    tessel::tools::RunSelected(app);
  } catch (const std::exception& e) {
    // A bare std::bad_alloc says nothing: name what was running, the memory there was and what needs less.
    const std::string message = dynamic_cast<const std::bad_alloc*>(&e) != nullptr
                                    ? tessel::PrintableText(tessel::memory::OutOfMemoryMessage())
                                    : tessel::PrintableText(e.what());
    std::fflush(stdout);
#if TESSEL_MPI
    // Under mpirun one failing rank must end the whole job (MPI_Abort), never leave the others waiting.
    if (tessel::comm::MpiInitialized()) tessel::comm::AbortJob(message);
#endif
    std::fprintf(stderr, "error: %s\n", message.c_str());
    return 1;
  }
  return 0;
}
