// Array files of the native formats: raw little-endian writes with XXH3 entries, and zero-copy mmap reads
// that check the dtype, the byte size and (on request) the checksum against the manifest entry.
#include "datasets/array_store.h"

#include <array>
#include <limits>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "core/checksum.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/name_table.h"
#include "core/parallel.h"

namespace tessel::datasets {
namespace fs = std::filesystem;
namespace {

// DType's names, indexed by its value (the manifests' "dtype").
constexpr std::array<std::string_view, 5> kDTypeNames{"int32", "int64", "float32", "float64", "uint8"};
static_assert(kDTypeNames.size() == std::tuple_size_v<DTypeElements>);

// A manifest may only name plain files inside its own folder.
bool IsPlainFileName(std::string_view file) {
  return !file.empty() && file != "." && file != ".." && file.find('/') == std::string_view::npos &&
         file.find('\\') == std::string_view::npos && file.find('\0') == std::string_view::npos;
}

}  // namespace

std::string_view DTypeName(DType dtype) { return NameAt(kDTypeNames, dtype, "unknown"); }

size_t DTypeSize(DType dtype) {
  const auto i = static_cast<size_t>(dtype);
  if (i >= std::tuple_size_v<DTypeElements>) return 0;
  return VisitTypeAt<DTypeElements>(i, []<typename T>(std::type_identity<T>) { return sizeof(T); });
}

bool ParseDType(std::string_view name, DType* dtype) {
  const std::optional<DType> d = ValueNamed<DType>(kDTypeNames, name);
  if (d) *dtype = *d;
  return d.has_value();
}

nlohmann::ordered_json ArrayEntry::ToJson() const {
  return {{"file", file}, {"dtype", DTypeName(dtype)}, {"count", count}, {"bytes", bytes}, {"xxh3", xxh3}};
}

void ArrayWriter::AddRaw(const std::string& name, DType dtype, const void* data, int64_t count) {
  TESSEL_CHECK(!entries_.contains(name), "array '{}' written twice into {}", name, dir_.string());
  ArrayEntry e;
  e.file = name + ".bin";
  TESSEL_CHECK(IsPlainFileName(e.file), "array name '{}' is not a plain file name", name);
  e.dtype = dtype;
  e.count = count;
  const size_t bytes = static_cast<size_t>(count) * DTypeSize(dtype);
  e.bytes = static_cast<int64_t>(bytes);
  e.xxh3 = ChecksumHex(data, bytes);
  WriteFileAtomic(dir_ / e.file, std::span<const std::byte>(static_cast<const std::byte*>(data), bytes));
  entries_[name] = e.ToJson();
}

ArrayReader::ArrayReader(fs::path dir, nlohmann::json arrays, std::string fix)
    : dir_(std::move(dir)), arrays_(std::move(arrays)), fix_(std::move(fix)) {
  if (!arrays_.is_object()) {
    throw Error::InFile((dir_ / "manifest.json").string(), "\"arrays\" must be an object of array entries; " + fix_);
  }
}

std::vector<std::string> ArrayReader::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, entry] : arrays_.items()) names.push_back(name);
  return names;
}

ArrayEntry ArrayReader::Entry(std::string_view name) const {
  const std::string manifest = (dir_ / "manifest.json").string();
  auto fail = [&](const std::string& what) {
    return Error::InFile(manifest, fmt::format("array '{}': {}; {}", name, what, fix_));
  };
  const auto it = arrays_.find(std::string(name));
  if (it == arrays_.end()) throw fail("missing from \"arrays\"");
  const nlohmann::json& j = *it;
  if (!j.is_object()) throw fail("entry must be an object");
  for (const char* key : {"file", "dtype", "count", "bytes", "xxh3"}) {
    if (!j.contains(key)) throw fail(fmt::format("missing key '{}'", key));
  }
  ArrayEntry e;
  if (!j["file"].is_string() || !IsPlainFileName(j["file"].get<std::string>())) {
    throw fail("\"file\" must be a file name inside the dataset folder");
  }
  e.file = j["file"].get<std::string>();
  if (!j["dtype"].is_string() || !ParseDType(j["dtype"].get<std::string>(), &e.dtype)) {
    throw fail(fmt::format("unknown dtype {} (expected int32, int64, float32, float64 or uint8)", j["dtype"].dump()));
  }
  if (!j["count"].is_number_integer() || j["count"].get<int64_t>() < 0) {
    throw fail("\"count\" must be a non-negative integer");
  }
  if (!j["bytes"].is_number_integer() || j["bytes"].get<int64_t>() < 0) {
    throw fail("\"bytes\" must be a non-negative integer");
  }
  e.count = j["count"].get<int64_t>();
  e.bytes = j["bytes"].get<int64_t>();
  // count x element size must not wrap around: a wrapped product could match a short file and map too few bytes.
  const auto width = static_cast<int64_t>(DTypeSize(e.dtype));
  if (e.count > std::numeric_limits<int64_t>::max() / width) {
    throw fail(fmt::format("\"count\" {} of {} values does not fit in a file (count x {} bytes overflows)", e.count,
                           DTypeName(e.dtype), width));
  }
  if (e.bytes != e.count * static_cast<int64_t>(DTypeSize(e.dtype))) {
    throw fail(fmt::format("\"bytes\" is {} but {} {} values take {}", e.bytes, e.count, DTypeName(e.dtype),
                           e.count * static_cast<int64_t>(DTypeSize(e.dtype))));
  }
  if (!j["xxh3"].is_string() || j["xxh3"].get<std::string>().size() != 16) {
    throw fail("\"xxh3\" must be 16 hex digits");
  }
  e.xxh3 = j["xxh3"].get<std::string>();
  return e;
}

void* ArrayReader::MapRaw(std::string_view name, DType dtype, bool verify, int64_t expected_count,
                          std::shared_ptr<void>* owner) const {
  const ArrayEntry e = Entry(name);
  const std::string manifest = (dir_ / "manifest.json").string();
  if (e.dtype != dtype) {
    throw Error::InFile(manifest, fmt::format("array '{}' has dtype {}, expected {}; {}", name, DTypeName(e.dtype),
                                              DTypeName(dtype), fix_));
  }
  if (expected_count >= 0 && e.count != expected_count) {
    throw Error::InFile(manifest, fmt::format("array '{}' has {} values, the counts in the manifest need {}; {}", name,
                                              e.count, expected_count, fix_));
  }
  const fs::path path = dir_ / e.file;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw Error::InFile(path.string(), fmt::format("file of array '{}' is missing; {}", name, fix_));
  }
  auto mapped = MappedFile::Open(path);
  if (static_cast<int64_t>(mapped->size()) != e.bytes) {
    throw Error::InFile(
        path.string(), fmt::format("array '{}' has {} bytes but the manifest says {} (truncated or replaced); {}", name,
                                   mapped->size(), e.bytes, fix_));
  }
  if (verify) {
    const std::string actual = ChecksumHex(mapped->data(), mapped->size());
    if (actual != e.xxh3) {
      throw Error::InFile(path.string(),
                          fmt::format("checksum mismatch for array '{}' (xxh3 {}, manifest says {}): the file is "
                                      "corrupt; {}",
                                      name, actual, e.xxh3, fix_));
    }
  }
  void* data = mapped->data();
  *owner = std::move(mapped);
  return data;
}

ArrayCheck ArrayReader::Check(std::string_view name) const {
  ArrayCheck c;
  c.name = std::string(name);
  try {
    const ArrayEntry e = Entry(name);
    std::shared_ptr<void> owner;
    MapRaw(name, e.dtype, /*verify=*/true, -1, &owner);
    c.ok = true;
    c.detail = "ok";
  } catch (const Error& err) {
    c.ok = false;
    c.detail = err.what();
  }
  return c;
}

std::vector<ArrayCheck> ArrayReader::CheckAll() const {
  const std::vector<std::string> names = Names();
  std::vector<ArrayCheck> checks(names.size());
  parallel_for<size_t>(0, names.size(), 1, [&](size_t i) { checks[i] = Check(names[i]); });
  return checks;
}

}  // namespace tessel::datasets
