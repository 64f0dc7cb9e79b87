// The small tables of core: element-type lists (core/type_list.h), enumeration names indexed by value
// (core/name_table.h) and the grow-only array over any memory (core/grow_array.h).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include "core/grow_array.h"
#include "core/name_table.h"
#include "core/type_list.h"

namespace tessel {
namespace {

using Types = std::tuple<int8_t, float, double, int64_t>;

TEST(TypeList, IndexOfEveryTypeAndPastTheEndForOthers) {
  static_assert(kTypeIndex<int8_t, Types> == 0);
  static_assert(kTypeIndex<float, Types> == 1);
  static_assert(kTypeIndex<double, Types> == 2);
  static_assert(kTypeIndex<int64_t, Types> == 3);
  static_assert(kTypeIndex<uint16_t, Types> == 4);
  static_assert(kTypeIndex<int, std::tuple<int, int>> == 0);  // the first of repeats
}

TEST(TypeList, VisitCallsWithTheTypeAtTheIndex) {
  const auto size_at = [](size_t i) {
    return VisitTypeAt<Types>(i, []<typename T>(std::type_identity<T>) { return sizeof(T); });
  };
  EXPECT_EQ(size_at(0), 1U);
  EXPECT_EQ(size_at(1), 4U);
  EXPECT_EQ(size_at(2), 8U);
  EXPECT_EQ(size_at(3), 8U);
  int visited = -1;
  VisitTypeAt<Types>(2, [&]<typename T>(std::type_identity<T>) { visited = static_cast<int>(kTypeIndex<T, Types>); });
  EXPECT_EQ(visited, 2);
}

enum class Colour : uint8_t { kRed, kGreen, kBlue };
constexpr std::array<std::string_view, 3> kColourNames{"red", "green", "blue"};

TEST(NameTable, NamesByValueAndValuesByName) {
  static_assert(NameAt(kColourNames, Colour::kGreen, "?") == "green");
  EXPECT_EQ(NameAt(kColourNames, Colour::kBlue, "?"), "blue");
  EXPECT_EQ(NameAt(kColourNames, static_cast<Colour>(7), "?"), "?");
  EXPECT_EQ(ValueNamed<Colour>(kColourNames, "red"), std::optional<Colour>(Colour::kRed));
  EXPECT_EQ(ValueNamed<Colour>(kColourNames, "blue"), std::optional<Colour>(Colour::kBlue));
  EXPECT_FALSE(ValueNamed<Colour>(kColourNames, "Blue").has_value());
  EXPECT_FALSE(ValueNamed<Colour>(kColourNames, "").has_value());
}

// Heap memory that counts its calls.
struct CountedHeap {
  static inline int allocations = 0;
  static inline int releases = 0;
  static void* Allocate(size_t bytes) {
    ++allocations;
    return std::malloc(bytes);
  }
  static void Release(void* ptr) noexcept {
    if (ptr != nullptr) ++releases;
    std::free(ptr);
  }
};

TEST(GrowArray, GrowsByHalfKeepsLargeEnoughMemoryAndFreesOnce) {
  CountedHeap::allocations = 0;
  CountedHeap::releases = 0;
  {
    device::GrowArray<int32_t, CountedHeap> a;
    EXPECT_EQ(a.data(), nullptr);
    a.Reserve(0);  // backed by memory even for 0 elements
    EXPECT_NE(a.data(), nullptr);
    EXPECT_EQ(a.capacity(), 1U);
    a.Reserve(10);
    EXPECT_EQ(a.capacity(), 10U);
    int32_t* p = a.data();
    a.Reserve(8);  // large enough: kept
    EXPECT_EQ(a.data(), p);
    a.Reserve(11);  // grows by at least half
    EXPECT_EQ(a.capacity(), 15U);
    EXPECT_EQ(CountedHeap::allocations, 3);
    device::GrowArray<int32_t, CountedHeap> b(std::move(a));
    EXPECT_EQ(b.capacity(), 15U);
    device::GrowArray<int32_t, CountedHeap> c;
    c = std::move(b);
    EXPECT_EQ(c.capacity(), 15U);
  }
  EXPECT_EQ(CountedHeap::releases, CountedHeap::allocations);
}

}  // namespace
}  // namespace tessel
