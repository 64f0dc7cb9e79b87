// The subcommand registry of the `tessel` binary: each tools/cmd_*.cc adds its CLI11 subcommand and the
// function that runs it. main.cc only calls RegisterCommands and RunSelected.
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "app/run_options.h"
#include "core/output_guard.h"
#include "tools/cli_params.h"

namespace tessel::tools {

// Adds every subcommand to `app`.
void RegisterCommands(CLI::App& app);
// Runs the subcommand that the parsed command line selected.
void RunSelected(CLI::App& app);

// Used by the cmd_*.cc files: remember `run` as the action of `sub`.
void SetAction(CLI::App* sub, std::function<void()> run);
// A job's options struct (app/*.h: every option declared once in its Params) as the options of `sub`, bound to
// *options; after parsing, the action records which were given (options->given) and calls run(*options).
template <typename Options, typename Run>
void AddJob(CLI::App* sub, std::shared_ptr<Options> options, Run run) {
  auto bound = std::make_shared<ParamOptions>(AddParams(sub, options.get()));
  SetAction(sub, [options, bound, run] {
    bound->ForEachGiven([&](const std::string& name) { options->given.Add(name); });
    run(*options);
  });
}

// A Printer (app/run_options.h) that writes to stdout as it is called.
app::Printer StdoutPrinter();

// The group subcommand `name` ("train", "predict"), created on first use, so `train gcn` and `train svm` can
// live in different files.
CLI::App* GroupCommand(CLI::App& app, const std::string& name, const std::string& description);

// `--timeout SECONDS` for subcommands that build a communicator (default Communicator::kDefaultTimeoutSeconds);
// CheckTimeout validates the value before the communicator is made.
CLI::Option* AddTimeoutOption(CLI::App* sub, double* seconds);
void CheckTimeout(double seconds);

// Checks an output file given by `flag` before any work with the one output guard (core/output_guard.h): it is
// not, does not contain and does not lie inside any of `inputs` (the files, folders and node-table prefixes the
// command reads) or `other_outputs` (the command's other outputs), even with --force; it is not a device; an
// existing path is replaced only when it is a regular file and --force is given. Empty paths (no output asked for,
// an option not given) pass or are skipped.
void CheckOutputFile(const std::string& path, bool force, std::string_view flag,
                     std::initializer_list<std::string_view> inputs = {},
                     std::initializer_list<std::string_view> other_outputs = {});

}  // namespace tessel::tools
