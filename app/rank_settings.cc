// Settings and content fingerprints for the ranks' agreement (app/rank_settings.h).
#include "app/rank_settings.h"

#include <algorithm>
#include <exception>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "core/checksum.h"
#include "core/file_io.h"

namespace tessel::app {
namespace {

namespace fs = std::filesystem;

// "SIZE bytes, XXH3 HEX" of a regular file (mapped, not copied).
std::string FileHash(const fs::path& path) {
  const uintmax_t size = fs::file_size(path);
  if (size == 0) return "0 bytes";
  const auto file = MappedFile::Open(path);
  return fmt::format("{} bytes, XXH3 {}", file->size(), ChecksumHex(file->data(), file->size()));
}

}  // namespace

std::string FlagLabel(const ParamInfo& p) {
  const std::string flags = p.Flag();
  std::string out;
  size_t start = 0;
  while (start <= flags.size()) {
    const size_t end = std::min(flags.find(',', start), flags.size());
    const std::string one = flags.substr(start, end - start);
    if (!one.empty() && one[0] != '!') {
      if (!out.empty()) out += '/';
      out += one;
    }
    start = end + 1;
  }
  return out.empty() ? flags : out;
}

std::string SettingText(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_array()) {
    std::string out;
    for (const auto& v : value) {
      if (!out.empty()) out += ',';
      out += SettingText(v);
    }
    return out;
  }
  return value.dump();
}

std::string ContentFingerprint(const fs::path& path) {
  try {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (fs::is_directory(st)) {
      for (const char* meta : {"manifest.json", "partitions.json", "checkpoint.json"}) {
        if (fs::is_regular_file(path / meta, ec)) return fmt::format("{} of {}", meta, FileHash(path / meta));
      }
      return "a folder without manifest.json, partitions.json or checkpoint.json";
    }
    if (fs::is_regular_file(st)) return FileHash(path);
    if (fs::exists(st)) return "not a regular file or folder (its content is not compared)";
    // A node-table prefix (datasets/text_input.h): the files PREFIX.* next to it, by name.
    const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
    const std::string stem = path.filename().string() + ".";
    std::vector<fs::path> files;
    if (!path.filename().empty() && fs::is_directory(dir, ec)) {
      for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.size() > stem.size() && name.compare(0, stem.size(), stem) == 0 && entry.is_regular_file(ec)) {
          files.push_back(entry.path());
        }
      }
    }
    if (files.empty()) return "missing";
    std::sort(files.begin(), files.end());
    std::string all;
    for (const fs::path& f : files) {
      all += f.filename().string().substr(stem.size());
      all += ": ";
      all += FileHash(f);
      all += '\n';
    }
    return fmt::format("{} files PREFIX.*, XXH3 {}", files.size(), ChecksumHex(all.data(), all.size()));
  } catch (const std::exception& e) {
    return fmt::format("unreadable ({})", e.what());
  }
}

}  // namespace tessel::app
