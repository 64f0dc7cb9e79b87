// The subcommand registry of the `tessel` binary: commands.cc adds one CLI11 subcommand per job of app/ (one line
// each) with the function that runs it. main.cc only calls RegisterCommands and RunSelected.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "app/run_options.h"
#include "tools/cli_params.h"

namespace tessel::tools {

// Adds every subcommand to `app`.
void RegisterCommands(CLI::App& app);
// Runs the subcommand that the parsed command line selected.
void RunSelected(CLI::App& app);

// Used by the registry (commands.cc): remember `run` as the action of `sub`.
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

}  // namespace tessel::tools
