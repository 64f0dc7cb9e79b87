// JSON for parameter lists (core/params.h): ParamsToJson writes every declared parameter under its name,
// ParamsFromJson reads them back (keys that are absent keep the config's defaults; a value of the wrong type throws
// naming the key). Enumerations are stored by name. Used for the config echo in results, metrics and checkpoints.
#pragma once

#include <filesystem>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/params.h"

namespace tessel {
namespace params_detail {

struct JsonWriter {
  nlohmann::json* out;
  template <typename T>
  void operator()(const ParamInfo& p, const T& field) const {
    if constexpr (std::is_enum_v<T>) {
      (*out)[std::string(p.name)] = std::string(EnumName(field));
    } else if constexpr (std::is_same_v<T, std::filesystem::path>) {
      (*out)[std::string(p.name)] = field.string();
    } else {
      (*out)[std::string(p.name)] = field;
    }
  }
};

struct JsonReader {
  const nlohmann::json* in;
  template <typename T>
  void operator()(const ParamInfo& p, T& field) const {
    const std::string key(p.name);
    if (!in->contains(key)) return;
    const nlohmann::json& v = in->at(key);
    try {
      if constexpr (std::is_enum_v<T>) {
        field = ParseEnum<T>(v.get<std::string>(), key);
      } else if constexpr (std::is_same_v<T, std::filesystem::path>) {
        field = v.get<std::string>();
      } else {
        field = v.get<T>();
      }
    } catch (const nlohmann::json::exception& e) {
      throw Error("\"" + key + "\": " + e.what());
    }
  }
};

}  // namespace params_detail

template <typename Config>
nlohmann::json ParamsToJson(const Config& config) {
  nlohmann::json out = nlohmann::json::object();
  Config::Params(config, params_detail::JsonWriter{&out});
  return out;
}

template <typename Config>
void ParamsFromJson(const nlohmann::json& in, Config* config) {
  TESSEL_CHECK(in.is_object(), "expected a JSON object of parameters, got {}", in.dump());
  Config::Params(*config, params_detail::JsonReader{&in});
}

}  // namespace tessel
