// The command-line side of core/params.h: AddParams(sub, config) adds one CLI11 option per declared parameter,
// bound to the config field, with its help text and its default shown; booleans become flags, enumerations accept
// their names, integer lists are comma-separated. The returned ParamOptions finds an option by parameter name
// (to ask whether it was given).
#pragma once

#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/params.h"

namespace tessel::tools {

class ParamOptions {
 public:
  void Add(std::string_view name, CLI::Option* option) { options_[std::string(name)] = option; }
  // The option declared under `name` (throws when there is none).
  CLI::Option* operator[](std::string_view name) const;
  // Whether the option `name` was given on the command line.
  bool Given(std::string_view name) const { return (*this)[name]->count() > 0; }
  // Whether any of the options was given.
  bool Any() const {
    for (const auto& [name, option] : options_) {
      if (option->count() > 0) return true;
    }
    return false;
  }

 private:
  std::map<std::string, CLI::Option*, std::less<>> options_;
};

namespace cli_detail {

std::string JoinInts(const std::vector<int>& values);
// Runs fn; a tessel::Error it throws becomes CLI::ValidationError, so CLI11 reports the bad value like its own
// checks (message, --help hint, non-zero exit) instead of the error escaping the parser.
template <typename Fn>
void AsValidationError(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    throw CLI::ValidationError(e.what());
  }
}
std::vector<int> ParseIntList(const std::string& text, const std::string& flag);

struct CliBinder {
  CLI::App* app;
  ParamOptions* options;
  template <typename T>
  void operator()(const ParamInfo& p, T& field) const {
    if (!p.cli) return;
    const std::string flag = p.Flag();
    const std::string help(p.help);
    CLI::Option* o = nullptr;
    if constexpr (std::is_same_v<T, bool>) {
      o = app->add_flag(flag, field, help);
    } else if constexpr (std::is_enum_v<T>) {
      std::string accepted;
      for (const auto& [v, name] : EnumNames<T>::kNames) accepted += (accepted.empty() ? "" : "|") + std::string(name);
      T* target = &field;
      o = app->add_option_function<std::string>(
                 flag,
                 [target, flag](const std::string& text) {
                   AsValidationError([&] { *target = ParseEnum<T>(text, flag); });
                 },
                 help)
              ->type_name(accepted)
              ->default_str(std::string(EnumName(field)));
    } else if constexpr (std::is_same_v<T, std::vector<int>>) {
      T* target = &field;
      o = app->add_option_function<std::string>(
                 flag,
                 [target, flag](const std::string& text) {
                   AsValidationError([&] { *target = ParseIntList(text, flag); });
                 },
                 help)
              ->type_name("N,N,...")
              ->default_str(JoinInts(field));
    } else {
      o = app->add_option(flag, field, help)->capture_default_str();
    }
    if (!p.group.empty()) o->group(std::string(p.group));
    options->Add(p.name, o);
  }
};

}  // namespace cli_detail

// Adds every parameter of `config` (Config::Params) to `sub`, bound to the fields of *config (which must outlive
// parsing), into `options` when given.
template <typename Config>
ParamOptions AddParams(CLI::App* sub, Config* config) {
  ParamOptions options;
  Config::Params(*config, cli_detail::CliBinder{sub, &options});
  return options;
}

}  // namespace tessel::tools
