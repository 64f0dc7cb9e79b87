// JSON for parameter lists (core/params.h): ParamsToJson writes every declared parameter under its name,
// ParamsFromJson reads them back (keys that are absent keep the config's defaults; a value of the wrong type, a
// number out of its field's range, a fraction for an integer or a non-finite number throws naming the key).
// Enumerations are stored by name. Used for the config echo in results, metrics and checkpoints.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/params.h"

namespace tessel {
namespace params_detail {

template <typename T>
struct IsVector : std::false_type {};
template <typename T, typename A>
struct IsVector<std::vector<T, A>> : std::true_type {};

struct JsonWriter {
  nlohmann::json* out;
  template <typename T>
  void operator()(const ParamInfo& p, const T& field) const {
    if constexpr (std::is_enum_v<T>) {
      (*out)[std::string(p.name)] = std::string(EnumName(field));
    } else if constexpr (TextParam<T>) {
      (*out)[std::string(p.name)] = field.Text();
    } else if constexpr (std::is_same_v<T, std::filesystem::path>) {
      (*out)[std::string(p.name)] = field.string();
    } else {
      (*out)[std::string(p.name)] = field;
    }
  }
};

// A JSON value as an arithmetic T, never converted silently: a bool only from true/false; an integer only from a
// JSON integer (or an integral number such as 3.0) within T's range; a floating value only from a finite number
// within T's range. Throws naming `key`, the value and the accepted range.
template <typename T>
T JsonNumber(const nlohmann::json& v, const std::string& key) {
  if constexpr (std::is_same_v<T, bool>) {
    TESSEL_CHECK(v.is_boolean(), "\"{}\" is {}; give true or false", key, v.dump());
    return v.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    const std::string range =
        fmt::format("an integer in [{}, {}]", std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    bool in_range = false;
    T out{};
    if (v.is_number_unsigned()) {
      const auto u = v.get<uint64_t>();
      in_range = std::in_range<T>(u);
      if (in_range) out = static_cast<T>(u);
    } else if (v.is_number_integer()) {
      const auto s = v.get<int64_t>();
      in_range = std::in_range<T>(s);
      if (in_range) out = static_cast<T>(s);
    } else if (v.is_number_float()) {
      const double d = v.get<double>();
      TESSEL_CHECK(std::isfinite(d) && d == std::trunc(d), "\"{}\" is {}, not a whole number; give {}", key, v.dump(),
                   range);
      // Within int64_t (below 2^63) or, for a non-negative value, uint64_t (below 2^64): then compared exactly.
      if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
        const auto s = static_cast<int64_t>(d);
        in_range = std::in_range<T>(s);
        if (in_range) out = static_cast<T>(s);
      } else if (d >= 0 && d < 18446744073709551616.0) {
        const auto u = static_cast<uint64_t>(d);
        in_range = std::in_range<T>(u);
        if (in_range) out = static_cast<T>(u);
      }
    } else {
      throw Error(fmt::format("\"{}\" is {}, not a number; give {}", key, v.dump(), range));
    }
    TESSEL_CHECK(in_range, "\"{}\" is {}, out of range; give {}", key, v.dump(), range);
    return out;
  } else {
    static_assert(std::is_floating_point_v<T>);
    TESSEL_CHECK(v.is_number(), "\"{}\" is {}, not a number; give a finite number", key, v.dump());
    const double d = v.get<double>();
    TESSEL_CHECK(std::isfinite(d) && std::abs(d) <= static_cast<double>(std::numeric_limits<T>::max()),
                 "\"{}\" is {}, out of range; give a finite number of magnitude at most {}", key, v.dump(),
                 std::numeric_limits<T>::max());
    return static_cast<T>(d);
  }
}

// A number outside the declared range of `p` (ParamInfo::lo, hi) throws naming `key` and the range.
inline void CheckBounds(const ParamInfo& p, double value, const std::string& text, const std::string& key) {
  if (value >= p.lo && value <= p.hi) return;
  throw Error(fmt::format("\"{}\" is {}, out of range; give a number in [{}, {}]", key, text, p.lo, p.hi));
}

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
      } else if constexpr (TextParam<T>) {
        TESSEL_CHECK(v.is_string(), "\"{}\" is {}, not text", key, v.dump());
        field = T::FromText(v.get<std::string>(), key);
      } else if constexpr (std::is_same_v<T, std::filesystem::path>) {
        field = v.get<std::string>();
      } else if constexpr (std::is_arithmetic_v<T>) {
        field = JsonNumber<T>(v, key);
        if constexpr (!std::is_same_v<T, bool>) CheckBounds(p, static_cast<double>(field), v.dump(), key);
      } else if constexpr (IsVector<T>::value && std::is_arithmetic_v<typename T::value_type>) {
        TESSEL_CHECK(v.is_array(), "\"{}\" is {}, not a list of numbers", key, v.dump());
        T values;
        for (size_t i = 0; i < v.size(); ++i) {
          values.push_back(JsonNumber<typename T::value_type>(v[i], fmt::format("{}[{}]", key, i)));
        }
        field = std::move(values);
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
