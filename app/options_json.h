// A job's options from JSON (the Python keywords, by declared name) and its declaration as JSON (for Python's
// signatures, checks and docstrings): the same Params list the command line binds.
#pragma once

#include <set>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/params.h"
#include "core/params_json.h"

namespace tessel::app {

// Sets the options named in `in` (Python's keywords, each a declared parameter offered to Python; anything else is
// refused naming the known ones) and records them in options->given.
template <typename Options>
void OptionsFromJson(const nlohmann::json& in, Options* options) {
  TESSEL_CHECK(in.is_object(), "expected a JSON object of options, got {}", in.dump());
  std::set<std::string, std::less<>> known;
  Options::Params(*options, [&](const ParamInfo& p, const auto&) {
    if (p.OnPython()) known.emplace(p.name);
  });
  for (const auto& [key, value] : in.items()) {
    if (!known.contains(key)) {
      std::string names;
      for (const std::string& n : known) names += (names.empty() ? "" : ", ") + n;
      throw Error("unknown option '" + key + "'; the options are " + names);
    }
    options->given.Add(key);
  }
  ParamsFromJson(in, options);
}

// The parameters of Options offered to Python, as JSON [{name, help, flag, group, default[, choices]}] (flag: the
// command line's names, "--hidden" or "--overlap,!--no-overlap"; default: as JSON writes the value).
template <typename Options>
nlohmann::json DescribeOptions(const Options& defaults) {
  nlohmann::json out = nlohmann::json::array();
  Options::Params(defaults, [&](const ParamInfo& p, const auto& field) {
    if (!p.OnPython() || !p.cli) return;
    using T = std::decay_t<decltype(field)>;
    nlohmann::json d = nlohmann::json::object();
    params_detail::JsonWriter{&d}(p, field);
    nlohmann::json entry{{"name", p.name},
                         {"help", p.help},
                         {"flag", p.Flag()},
                         {"group", p.group},
                         {"default", d.at(std::string(p.name))}};
    if constexpr (std::is_enum_v<T>) {
      nlohmann::json names = nlohmann::json::array();
      for (const auto& [v, name] : EnumNames<T>::kNames) names.push_back(std::string(name));
      entry["choices"] = names;
    }
    out.push_back(std::move(entry));
  });
  return out;
}

}  // namespace tessel::app
