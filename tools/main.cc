// The `tessel` command: global options, one CLI11 subcommand per job of app/ (tools/commands.cc), and the one place
// that turns exceptions into "error: ..." on stderr and a non-zero exit status.
#include <cstdio>
#include <exception>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "app/run_options.h"
#include "core/build_config.h"
#include "core/device.h"
#include "core/error.h"
#include "core/fault_inject.h"
#include "core/log.h"
#include "core/memory_budget.h"
#include "core/peer_failure.h"
#if TESSEL_MPI
#include "comm/mpi_comm.h"
#endif
#include "tools/cli_params.h"
#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"tessel: distributed GCN and SVM training (convert -> partition -> train -> predict)"};
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", fmt::format("tessel {} (CUDA {})", TESSEL_VERSION, tessel::device::BuiltWithCuda() ? "on" : "off"));
  // Values are parsed strictly (tools/cli_params.h): no empty text, numbers finite and in range.
  tessel::app::GlobalOptions global;
  tessel::tools::AddParams(&app, &global);
  // Global options may also come after the subcommand (`tessel train gcn ... --log-level warn`).
  app.fallthrough();
  // CLI11's messages quote the command line: control bytes in them are escaped as in every other message. An
  // unknown option gets the closest known one of the command it was given to ("did you mean --lr?").
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    std::string message = CLI::FailureMessage::simple(a, e);
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      const std::vector<tessel::tools::KnownOption> known = tessel::tools::SelectedOptions(*a);
      for (const std::string& extra : a->remaining(true)) {
        if (!extra.starts_with("-")) continue;
        const std::string guess = tessel::tools::SuggestOption(extra.substr(0, extra.find('=')), known);
        if (!guess.empty()) message += fmt::format("{}: did you mean {}?\n", extra, guess);
      }
    }
    return tessel::PrintableText(message);
  });
  app.get_formatter()->column_width(38);
  app.footer("Run `tessel SUBCOMMAND --help` for the options of each step. Docs: docs/cli.md");

  tessel::tools::RegisterCommands(app);

  // `tessel launch -np K`: Horovod's and mpirun's spelling of --np (CLI11 takes one letter after a single dash).
  if (argc > 1 && std::string_view(argv[1]) == "launch") {
    for (int i = 2; i < argc && std::string_view(argv[i]) != "--"; ++i) {
      if (std::string_view(argv[i]) == "-np") argv[i] = const_cast<char*>("--np");
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    global.Apply();
    tessel::fault::InitFromEnvironment();  // a malformed TESSEL_FAULT is an error before any work
    tessel::tools::RunSelected(app);
  } catch (const std::exception& e) {
    // A bare std::bad_alloc says nothing: name what was running, the memory there was and what needs less.
    // std::length_error is the same failure one step earlier: a container asked for more than it can ever hold.
    const bool out_of_memory =
        dynamic_cast<const std::bad_alloc*>(&e) != nullptr || dynamic_cast<const std::length_error*>(&e) != nullptr;
    const std::string message =
        out_of_memory ? tessel::PrintableText(tessel::memory::OutOfMemoryMessage()) : tessel::PrintableText(e.what());
    std::fflush(stdout);
    // mpirun ended the job after another rank failed, and this rank's call failed first: still a rank failure.
    const int status = tessel::peer_failure::TermRequested() ? tessel::peer_failure::kRankFailureExit : 1;
    if (status != 1) tessel::peer_failure::RunHook("the job is ending because another rank failed");
#if TESSEL_MPI
    // Under mpirun one failing rank must end the whole job (MPI_Abort), never leave the others waiting.
    if (tessel::comm::MpiInitialized()) tessel::comm::AbortJob(message, status);
#endif
    // Written with its length: nothing in the message (PrintableText leaves no NUL) can cut it short.
    const std::string line = "error: " + message + "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
    return status;
  }
  return 0;
}
