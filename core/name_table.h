// Names of an enumeration's values kept as one array indexed by the value, for enumerations that count from 0
// without gaps (the partitioner's options, the compression methods, the comm and array element types, ...):
//
//   constexpr std::array<std::string_view, 3> kMethodNames{"metis", "random", "hash"};
//   static_assert(kMethodNames.size() == static_cast<size_t>(Method::kHash) + 1);
//   std::string_view MethodName(Method m) { return NameAt(kMethodNames, m, "unknown"); }
//
// Parameters that the CLI and the JSON read by name use EnumNames (core/params.h) instead.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace tessel {

// names[value]; `fallback` for a value past the end of the list.
template <typename E, size_t N>
constexpr std::string_view NameAt(const std::array<std::string_view, N>& names, E value, std::string_view fallback) {
  const auto i = static_cast<size_t>(value);
  return i < N ? names[i] : fallback;
}

// The value whose name is `name`; nullopt when none is.
template <typename E, size_t N>
constexpr std::optional<E> ValueNamed(const std::array<std::string_view, N>& names, std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<E>(i);
  }
  return std::nullopt;
}

}  // namespace tessel
