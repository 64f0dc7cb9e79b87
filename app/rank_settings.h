// What the ranks of one mpirun job compare before they start (comm/agree.h): the effective parameters of a config
// under their flags, and content fingerprints of the inputs (a path may differ from machine to machine; what it
// holds may not).
#pragma once

#include <filesystem>
#include <string>
#include <type_traits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "comm/agree.h"
#include "core/params.h"
#include "core/params_json.h"

namespace tessel::app {

// How a message names a parameter: its flags without the negated forms ("-c,--cost" -> "-c/--cost",
// "--overlap,!--no-overlap" -> "--overlap", "hidden" -> "--hidden").
std::string FlagLabel(const ParamInfo& p);

// The setting's text of a parameter value as its JSON echo holds it: strings as they are, lists comma-separated,
// numbers and booleans as JSON writes them (doubles round-trip exactly, so 0.05 and 5e-2 agree; AddParamSettings
// writes floats in their own shortest form).
std::string SettingText(const nlohmann::json& value);

namespace rank_settings_detail {
struct Collector {
  comm::Settings* out;
  template <typename T>
  void operator()(const ParamInfo& p, const T& field) const {
    if (!p.cli) return;  // taken from the data, not given by the user
    if constexpr (std::is_same_v<T, float>) {
      out->emplace_back(FlagLabel(p), fmt::format("{}", field));  // the float's shortest form (0.05, not 0.0500000007)
    } else {
      nlohmann::json j = nlohmann::json::object();
      params_detail::JsonWriter{&j}(p, field);
      out->emplace_back(FlagLabel(p), SettingText(j.at(std::string(p.name))));
    }
  }
};
}  // namespace rank_settings_detail

// Appends one setting per command-line parameter of `config` (Config::Params), named by FlagLabel.
template <typename Config>
void AddParamSettings(const Config& config, comm::Settings* out) {
  Config::Params(config, rank_settings_detail::Collector{out});
}

// A content fingerprint of an input, never the path: a regular file's size and XXH3; a folder's manifest.json,
// partitions.json or checkpoint.json (whichever it holds first; they carry the checksums of the folder's arrays);
// a node-table prefix's files PREFIX.*; "missing", "unreadable (...)" or "not a regular file" otherwise. Never
// throws (a rank that cannot read its input differs, and the reader names the problem when all ranks agree).
std::string ContentFingerprint(const std::filesystem::path& path);

}  // namespace tessel::app
