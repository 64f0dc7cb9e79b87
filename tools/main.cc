// The `tessel` command: global options, one CLI11 subcommand per tools/cmd_*.cc file, and the one place
// that turns exceptions into "error: ..." on stderr and a non-zero exit status.
#include <cstdio>
#include <exception>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/build_config.h"
#include "core/device.h"
#include "core/error.h"
#include "core/log.h"
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
    tessel::tools::RunSelected(app);
  } catch (const std::exception& e) {
    std::fflush(stdout);
#if TESSEL_MPI
    // Under mpirun one failing rank must end the whole job (MPI_Abort), never leave the others waiting.
    if (tessel::comm::MpiInitialized()) tessel::comm::AbortJob(tessel::PrintableText(e.what()));
#endif
    std::fprintf(stderr, "error: %s\n", tessel::PrintableText(e.what()).c_str());
    return 1;
  }
  return 0;
}
