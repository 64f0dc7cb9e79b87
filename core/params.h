// One declaration per user-facing parameter: its JSON name, flag, help text, group and the config field it binds.
// A config type lists its parameters once, in a static `Params(self, visitor)`; the CLI (tools/cli_params.h) and
// JSON (core/params_json.h) are visitors over that list, so a parameter is never written twice.
//
//   struct ModelConfig {
//     int64_t hidden = 16;
//     template <typename Self, typename V> static void Params(Self& c, V&& v) {
//       v(ParamInfo{"hidden", "Hidden units per layer (>= 1)"}, c.hidden);
//     }
//   };
//
// Visitors are called as v(const ParamInfo&, Field&) for each parameter, in declaration order; Self is the config
// type or its const version, so one list serves reading and writing. Enumerations name their values through
// EnumNames<E> (below), so the CLI accepts and the JSON stores the names, never the numbers.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/error.h"

namespace tessel {

struct ParamInfo {
  std::string_view name;        // JSON key, snake_case; the flag is "--" + name with '_' -> '-' unless `flag` is set
  std::string_view help;        // one line for --help (the default is appended by the CLI)
  std::string_view flag = {};   // explicit CLI11 names ("-c,--cost") when they are not derived from `name`
  std::string_view group = {};  // --help section; empty = the subcommand's options
  bool cli = true;              // false: recorded in JSON (checkpoints, metrics) but not a command-line option
  // Where the option is offered: both front ends, the command line alone (--json, a path the Python API takes as an
  // object) or Python alone.
  enum class Front : uint8_t { kBoth, kCli, kPython };
  Front front = Front::kBoth;
  bool required = false;  // the command line refuses to run without it
  // The values a number accepts, both ends included (checked by the CLI's parser and by JSON/Python alike).
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  // A list of text values (std::vector<std::string>): at most this many values after one flag (svm-train's -w 1 2,
  // a positional TRAINING_FILE [MODEL_FILE]).
  int max_values = 1;

  // Modifiers for declarations in one line: ParamInfo{"quiet", "..."}.Flags("-q,--quiet").Cli().
  constexpr ParamInfo Flags(std::string_view f) const {
    return With([&](ParamInfo& p) { p.flag = f; });
  }
  constexpr ParamInfo Group(std::string_view g) const {
    return With([&](ParamInfo& p) { p.group = g; });
  }
  constexpr ParamInfo Cli() const {
    return With([](ParamInfo& p) { p.front = Front::kCli; });
  }  // not in Python
  constexpr ParamInfo Required() const {
    return With([](ParamInfo& p) { p.required = true; });
  }
  constexpr ParamInfo Range(double l, double h = std::numeric_limits<double>::infinity()) const {
    return With([&](ParamInfo& p) {
      p.lo = l;
      p.hi = h;
    });
  }
  constexpr ParamInfo Values(int n) const {
    return With([&](ParamInfo& p) { p.max_values = n; });
  }
  template <typename Fn>
  constexpr ParamInfo With(Fn&& fn) const {
    ParamInfo p = *this;
    fn(p);
    return p;
  }

  bool OnCli() const { return cli && front != Front::kPython; }
  bool OnPython() const { return front != Front::kCli; }
  bool Positional() const { return !flag.empty() && flag.front() != '-'; }

  // The long flag ("--hidden", "--weight-decay") derived from name when `flag` is empty.
  std::string Flag() const {
    if (!flag.empty()) return std::string(flag);
    std::string out = "--";
    for (char ch : name) out += ch == '_' ? '-' : ch;
    return out;
  }
};

// A parameter held as a typed value with a text form (a compression spec, a network link): parsed once, at the
// edge, by T::FromText(text, option) (throwing tessel::Error naming the option), and written back by Text().
template <typename T>
concept TextParam = requires(const T& value, std::string_view text) {
  { T::FromText(text, text) } -> std::same_as<T>;
  { value.Text() } -> std::convertible_to<std::string>;
};

// Every enumeration that is a parameter names its values once, with TESSEL_ENUM_NAMES inside namespace tessel:
//   TESSEL_ENUM_NAMES(ModelKind, {ModelKind::kGcn, "gcn"}, {ModelKind::kSage, "sage"});
// which specialises EnumNames<ModelKind> with kNames, an array of {value, name}.
template <typename E>
struct EnumNames;

// The {value, name} list of an enumeration as a constexpr array (the length from the list).
template <typename E, size_t N>
constexpr std::array<std::pair<E, std::string_view>, N> NameArray(const std::pair<E, std::string_view> (&names)[N]) {
  std::array<std::pair<E, std::string_view>, N> out{};
  for (size_t i = 0; i < N; ++i) out[i] = names[i];
  return out;
}

// NOLINTBEGIN(cppcoreguidelines-macro-usage): a declaration of data, the one list of an enumeration's names.
#define TESSEL_ENUM_NAMES(E, ...)                                         \
  template <>                                                             \
  struct EnumNames<E> {                                                   \
    static constexpr auto kNames = ::tessel::NameArray<E>({__VA_ARGS__}); \
  }
// The same, with `parse` (std::string_view -> E) accepting more spellings than the names (svm-train's digits, say).
#define TESSEL_ENUM_NAMES_PARSED(E, parse, ...)                           \
  template <>                                                             \
  struct EnumNames<E> {                                                   \
    static constexpr auto kNames = ::tessel::NameArray<E>({__VA_ARGS__}); \
    static E Parse(std::string_view text) { return parse(text); }         \
  }
// NOLINTEND(cppcoreguidelines-macro-usage)

template <typename E>
std::string_view EnumName(E value) {
  for (const auto& [v, name] : EnumNames<E>::kNames) {
    if (v == value) return name;
  }
  return "?";
}

// An EnumNames specialisation may add `static E Parse(std::string_view)` when more spellings than kNames are
// accepted (svm-train's digits, say) or its message says more; ParseEnum and the CLI then use it.
template <typename E, typename = void>
struct HasEnumParse : std::false_type {};
template <typename E>
struct HasEnumParse<E, std::void_t<decltype(EnumNames<E>::Parse(std::string_view{}))>> : std::true_type {};

// Parses one of the names of E; throws naming `what` and the accepted values.
template <typename E>
E ParseEnum(std::string_view text, std::string_view what) {
  if constexpr (HasEnumParse<E>::value) {
    try {
      return EnumNames<E>::Parse(text);
    } catch (const Error& e) {  // its message names the value; this names where it came from
      throw Error(std::string(what) + ": " + e.what());
    }
  }
  std::string accepted;
  for (const auto& [v, name] : EnumNames<E>::kNames) {
    if (name == text) return v;
    accepted += accepted.empty() ? "" : ", ";
    accepted += name;
  }
  throw Error(std::string(what) + ": '" + std::string(text) + "' is not one of " + accepted);
}

template <typename E, typename = void>
struct HasEnumNames : std::false_type {};
template <typename E>
struct HasEnumNames<E, std::void_t<decltype(EnumNames<E>::kNames)>> : std::true_type {};

}  // namespace tessel
