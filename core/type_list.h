// Enumerations that name element types (comm::DataType, datasets::DType) list their types once, as a std::tuple in
// the enumeration's order; these two read such a list, so the type -> value and value -> type directions are not
// written out again per type.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace tessel {

// The position of T in the tuple Types; std::tuple_size_v<Types> when T is not in it.
template <typename T, typename Types>
inline constexpr size_t kTypeIndex = []<size_t... I>(std::index_sequence<I...>) {
  size_t at = sizeof...(I);
  ((at == sizeof...(I) && std::is_same_v<T, std::tuple_element_t<I, Types>> ? void(at = I) : void()), ...);
  return at;
}
(std::make_index_sequence<std::tuple_size_v<Types>>{});

// fn(std::type_identity<E>{}) for E the type at position `index` (below std::tuple_size_v<Types>; the caller checks)
// of Types, its result returned.
template <typename Types, typename Fn>
auto VisitTypeAt(size_t index, Fn&& fn) {
  return [&]<size_t... I>(std::index_sequence<I...>) {
    using R = decltype(fn(std::type_identity<std::tuple_element_t<0, Types>>{}));
    constexpr R (*kCalls[])(Fn&) = {
        [](Fn& f) -> R { return f(std::type_identity<std::tuple_element_t<I, Types>>{}); }...};
    return kCalls[index](fn);
  }
  (std::make_index_sequence<std::tuple_size_v<Types>>{});
}

}  // namespace tessel
