// The command-line side of core/params.h: AddParams(sub, config) adds one CLI11 option per declared parameter,
// bound to the config field, with its help text and its default shown; booleans become flags, enumerations accept
// their names, integer lists are comma-separated. The returned ParamOptions finds an option by parameter name
// (to ask whether it was given).
//
// Every value goes through one strict parser (AddOption below, behind every declared
// option): integers must be plain decimal digits within the field's type and the option's range (no wrap of -1
// into an unsigned, no 1e8 or 2.5 for an integer), floating values finite and in range, and text options non-empty;
// each refusal names the option and the accepted range.
#pragma once

#include <cstdint>
#include <limits>
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
  // Calls fn(name) for each option given on the command line.
  template <typename Fn>
  void ForEachGiven(Fn&& fn) const {
    for (const auto& [name, option] : options_) {
      if (option->count() > 0) fn(name);
    }
  }
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

// The values an arithmetic option accepts, both ends included; the default is the whole range of the type
// (for floating types: every finite value).
template <typename T>
struct Bounds {
  T lo = std::numeric_limits<T>::lowest();
  T hi = std::numeric_limits<T>::max();
};

namespace cli_detail {

// The option's name in messages: its first long name ("--nodes" of "--nodes,-n"), else its first name.
std::string DisplayName(const std::string& flag);
// The strict conversions behind AddOption and AddParams; each throws tessel::Error naming `name` and the range.
// Integers: an optional sign and decimal digits only, within [lo, hi] (no wrap, no exponent, fraction or hex).
int64_t ParseSigned(const std::string& text, const std::string& name, int64_t lo, int64_t hi);
uint64_t ParseUnsigned(const std::string& text, const std::string& name, uint64_t lo, uint64_t hi);
// A finite number within [lo, hi] (nan and inf refused, and values beyond the field's type: `lo`/`hi`).
double ParseFinite(const std::string& text, const std::string& name, double lo, double hi);
// Refuses an empty value: an empty path or spec is a mistake, not "unset".
void CheckNotEmpty(const std::string& text, const std::string& name);

template <typename T>
T ParseNumber(const std::string& text, const std::string& name, const Bounds<T>& b) {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(ParseFinite(text, name, static_cast<double>(b.lo), static_cast<double>(b.hi)));
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(ParseSigned(text, name, static_cast<int64_t>(b.lo), static_cast<int64_t>(b.hi)));
  } else {
    return static_cast<T>(ParseUnsigned(text, name, static_cast<uint64_t>(b.lo), static_cast<uint64_t>(b.hi)));
  }
}

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

// An option whose text `parse` converts and stores (throwing tessel::Error on a bad value), shown in --help with
// CLI11's type name for T and, after capture_default_str(), the field's current value.
template <typename T, typename Parse>
CLI::Option* AddParsed(CLI::App* app, const std::string& flag, T* field, const std::string& help, Parse parse) {
  CLI::Option* o = app->add_option_function<std::string>(
      flag, [field, parse](const std::string& text) { AsValidationError([&] { *field = parse(text); }); }, help);
  o->type_name(CLI::detail::type_name<T>());
  o->default_function([field] { return CLI::detail::to_string(*field); });
  return o;
}

}  // namespace cli_detail

// `flag` bound to an integer or floating field through the strict parser: refused, naming the option and the
// range, unless the value is a plain integer (or a finite number) within `bounds` and the field's type. Returns the
// option for chaining (->capture_default_str(), ->required(), ->group(...)).
template <typename T>
CLI::Option* AddOption(CLI::App* app, const std::string& flag, T* field, const std::string& help,
                       std::type_identity_t<Bounds<T>> bounds = {}) {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, "use add_flag for booleans");
  const std::string name = cli_detail::DisplayName(flag);
  return cli_detail::AddParsed(app, flag, field, help, [name, bounds](const std::string& text) {
    return cli_detail::ParseNumber<T>(text, name, bounds);
  });
}

// `flag` bound to a text field (a path or a spec); an empty value is refused naming the option.
inline CLI::Option* AddOption(CLI::App* app, const std::string& flag, std::string* field, const std::string& help) {
  const std::string name = cli_detail::DisplayName(flag);
  return cli_detail::AddParsed(app, flag, field, help, [name](const std::string& text) {
    cli_detail::CheckNotEmpty(text, name);
    return text;
  });
}

namespace cli_detail {

// The declared range of `p` within T's own (ParamInfo::lo, hi; infinite ends = the type's ends).
template <typename T>
Bounds<T> DeclaredBounds(const ParamInfo& p) {
  Bounds<T> b;
  if (p.lo > static_cast<double>(b.lo)) b.lo = static_cast<T>(p.lo);
  if (p.hi < static_cast<double>(b.hi)) b.hi = static_cast<T>(p.hi);
  return b;
}

struct CliBinder {
  CLI::App* app;
  ParamOptions* options;
  template <typename T>
  void operator()(const ParamInfo& p, T& field) const {
    if (!p.OnCli()) return;
    const std::string flag = p.Flag();
    const std::string help(p.help);
    CLI::Option* o = nullptr;
    if constexpr (std::is_same_v<T, bool>) {
      o = app->add_flag(flag, field, help);
    } else if constexpr (std::is_enum_v<T>) {
      std::string accepted;
      for (const auto& [v, name] : EnumNames<T>::kNames) accepted += (accepted.empty() ? "" : "|") + std::string(name);
      T* target = &field;
      const std::string name = DisplayName(flag);
      o = app->add_option_function<std::string>(
                 flag,
                 [target, name](const std::string& text) {
                   AsValidationError([&] { *target = ParseEnum<T>(text, name); });
                 },
                 help)
              ->type_name(accepted)
              ->default_str(std::string(EnumName(field)));
    } else if constexpr (TextParam<T>) {
      T* target = &field;
      const std::string name = DisplayName(flag);
      o = app->add_option_function<std::string>(
                 flag,
                 [target, name](const std::string& text) {
                   AsValidationError([&] {
                     CheckNotEmpty(text, name);
                     *target = T::FromText(text, name);
                   });
                 },
                 help)
              ->type_name("TEXT");
      const std::string shown = field.Text();
      if (!shown.empty()) o->default_str(shown);
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
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      // A required positional list takes at least one value, so that the words after `--` are its (CLI11 hands them
      // to the parent command when the subcommand expects none).
      o = app->add_option(flag, field, help)->expected(p.required && p.Positional() ? 1 : 0, p.max_values);
      if (!p.Positional()) o->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)->allow_extra_args(false);
    } else if constexpr (std::is_same_v<T, std::string>) {
      o = AddOption(app, flag, &field, help)->capture_default_str();
    } else if constexpr (std::is_arithmetic_v<T>) {
      o = AddOption(app, flag, &field, help, DeclaredBounds<T>(p))->capture_default_str();
    } else {
      o = app->add_option(flag, field, help)->capture_default_str();
    }
    if (p.required) o->required();
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

// A known option for SuggestOption: its long name ("--lr") and its help text.
struct KnownOption {
  std::string name;
  std::string description;
};

// The known option a misspelt `unknown` ("--learning-rate", "--epoch", "--Batch_Size") most likely meant, or "" when
// none is close: the same name but for case and '_' against '-'; a name within a few edits; the initials of its
// words ("--learning-rate" -> "--lr"); a name it begins or that begins it (3 letters at least); an option whose
// help text holds every word of it. The first rule that finds one decides; the first option in order among ties.
std::string SuggestOption(std::string_view unknown, const std::vector<KnownOption>& known);

// The long options of `app` and of the subcommands selected on its command line (the ones a mistyped option could
// have been meant for), for SuggestOption.
std::vector<KnownOption> SelectedOptions(const CLI::App& app);

}  // namespace tessel::tools
