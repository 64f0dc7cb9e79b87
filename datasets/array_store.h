// Typed array files for the native formats: one raw little-endian file per array plus a manifest entry
// {file, dtype, count, bytes, xxh3}; mapped back (mmap, zero copy) with dtype, size and checksum checks.
#pragma once

#include <bit>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/buffer.h"
#include "core/type_list.h"

namespace tessel::datasets {

static_assert(std::endian::native == std::endian::little, "the native formats store little-endian arrays");

enum class DType { kInt32, kInt64, kFloat32, kFloat64, kUint8 };

std::string_view DTypeName(DType dtype);  // "int32", "int64", "float32", "float64", "uint8"
size_t DTypeSize(DType dtype);
// False when `name` is not one of the names above.
bool ParseDType(std::string_view name, DType* dtype);

// The element type of every DType, in the enumeration's order (core/type_list.h).
using DTypeElements = std::tuple<int32_t, int64_t, float, double, uint8_t>;

template <typename T>
constexpr DType DTypeOf() {
  constexpr size_t at = kTypeIndex<T, DTypeElements>;
  static_assert(at < std::tuple_size_v<DTypeElements>, "no DType for this element type");
  return static_cast<DType>(at);
}

// One manifest entry: "name": {"file": "indptr.bin", "dtype": "int64", "count": 2709, "bytes": 21672, "xxh3": "..."}.
struct ArrayEntry {
  std::string file;
  DType dtype = DType::kUint8;
  int64_t count = 0;
  int64_t bytes = 0;
  std::string xxh3;  // 16 lowercase hex digits (core/checksum.h)

  nlohmann::ordered_json ToJson() const;
};

// The result of checking one array file against its entry; never throws for a bad file.
struct ArrayCheck {
  std::string name;
  bool ok = false;
  std::string detail;  // "ok" or what is wrong
};

// Writes arrays into a folder (normally an AtomicDirectory's temporary path) and collects their entries.
class ArrayWriter {
 public:
  explicit ArrayWriter(std::filesystem::path dir) : dir_(std::move(dir)) {}

  // Writes `values` to <dir>/<name>.bin and records the entry under `name`. Throws on a repeated name.
  template <typename T>
  void Add(const std::string& name, std::span<const T> values) {
    AddRaw(name, DTypeOf<T>(), values.data(), static_cast<int64_t>(values.size()));
  }
  template <typename T>
  void Add(const std::string& name, const Buffer<T>& values) {
    Add<T>(name, values.Host());
  }
  // {name: entry, ...} in write order, for the manifest's "arrays" key.
  const nlohmann::ordered_json& entries() const { return entries_; }

 private:
  void AddRaw(const std::string& name, DType dtype, const void* data, int64_t count);
  std::filesystem::path dir_;
  nlohmann::ordered_json entries_ = nlohmann::ordered_json::object();
};

// Reads the "arrays" object of a manifest and maps its files. Errors name the manifest, the array and the
// file, and end with `fix` (for example "re-run tessel convert").
class ArrayReader {
 public:
  // `arrays` is the manifest's "arrays" object; malformed entries are reported when first used.
  ArrayReader(std::filesystem::path dir, nlohmann::json arrays, std::string fix);

  bool Has(std::string_view name) const { return arrays_.contains(std::string(name)); }
  std::vector<std::string> Names() const;
  // Parses and checks the entry of `name` (present, keys, types, a known dtype, bytes = count * dtype size).
  ArrayEntry Entry(std::string_view name) const;

  // Maps the file of `name` privately (copy-on-write) into a Buffer without copying. Throws when the entry
  // is missing or malformed, the dtype is not T's, the file is missing or its size differs from the entry,
  // or (with verify) the XXH3 checksum differs. `expected_count` >= 0 is checked against the entry too.
  template <typename T>
  Buffer<T> Map(std::string_view name, bool verify, int64_t expected_count = -1) const {
    std::shared_ptr<void> owner;
    void* data = MapRaw(name, DTypeOf<T>(), verify, expected_count, &owner);
    return Buffer<T>::Borrow(std::move(owner), static_cast<T*>(data), static_cast<size_t>(Entry(name).count));
  }

  // Checks one array (entry, file size, checksum) without throwing.
  ArrayCheck Check(std::string_view name) const;
  // Checks every array, in parallel, in name order.
  std::vector<ArrayCheck> CheckAll() const;

 private:
  void* MapRaw(std::string_view name, DType dtype, bool verify, int64_t expected_count,
               std::shared_ptr<void>* owner) const;
  std::filesystem::path dir_;
  nlohmann::json arrays_;
  std::string fix_;
};

}  // namespace tessel::datasets
