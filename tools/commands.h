// The subcommand registry of the `tessel` binary: each tools/cmd_*.cc adds its CLI11 subcommand and the
// function that runs it. main.cc only calls RegisterCommands and RunSelected.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace tessel::tools {

// Adds every subcommand to `app`.
void RegisterCommands(CLI::App& app);
// Runs the subcommand that the parsed command line selected.
void RunSelected(CLI::App& app);

// Used by the cmd_*.cc files: remember `run` as the action of `sub`.
void SetAction(CLI::App* sub, std::function<void()> run);
// The group subcommand `name` ("train", "predict"), created on first use, so `train gcn` and `train svm` can
// live in different files.
CLI::App* GroupCommand(CLI::App& app, const std::string& name, const std::string& description);

// `--timeout SECONDS` for subcommands that build a communicator (default Communicator::kDefaultTimeoutSeconds);
// CheckTimeout validates the value before the communicator is made.
CLI::Option* AddTimeoutOption(CLI::App* sub, double* seconds);
void CheckTimeout(double seconds);

// Checks an output file given by `flag` before any work: it may exist only with --force, and it must not be one
// of `inputs` (the files the command reads). Empty paths (no output asked for) pass.
void CheckOutputFile(const std::string& path, bool force, std::string_view flag,
                     std::initializer_list<std::string_view> inputs = {});

}  // namespace tessel::tools
