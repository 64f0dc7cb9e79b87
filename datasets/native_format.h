// The native on-disk formats (DESIGN.md §3): a folder with manifest.json (format version, kind, counts, dtypes,
// split sizes, one XXH3 checksum per array) and one raw little-endian file per array, loaded with mmap.
// Written into a temporary folder and renamed, so a failure never leaves a half-written dataset.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/array_store.h"
#include "datasets/dataset.h"

namespace tessel::datasets {

namespace fs = std::filesystem;

inline constexpr int kNativeFormatVersion = 1;
// The largest node, entry, row or non-zero count a manifest may declare (2^62): far beyond any machine, and low
// enough that count + 1 and count x 8 bytes never wrap around in int64. Larger counts are refused as damage.
inline constexpr int64_t kMaxNativeCount = int64_t{1} << 62;

enum class DatasetKind { kNode, kSparseRows };

struct WriteOptions {
  bool overwrite = false;         // replace an existing dataset folder (--force); other folders are never replaced
  std::string flag = "--output";  // the option or argument naming the folder, for messages ("path" in Python)
};
// Throws unless `dir` can be written with `options` (the output guard, core/output_guard.h): it must not exist, or
// (with overwrite) be an empty folder or a tessel dataset; any other existing folder or file, a device, and any path
// that is, contains or lies inside one of `inputs` (the files the command reads) is never replaced. Commands call
// it before reading inputs.
void CheckOutputFolder(const fs::path& dir, const WriteOptions& options, std::span<const fs::path> inputs = {});
// Both writers check the output folder, validate the dataset and leave nothing behind when they fail.
void WriteNodeDataset(const NodeDataset& data, const fs::path& dir, const WriteOptions& options = {});
void WriteSparseRowDataset(const SparseRowDataset& data, const fs::path& dir, const WriteOptions& options = {});

struct LoadOptions {
  bool verify_checksums = true;  // hash every array on load (several GB/s)
  bool validate = true;          // run the structural Validate() of the dataset
};
// Throws naming the folder and the fix when it is not a native dataset, the version is unknown, a file is
// missing or has the wrong size, or a checksum disagrees.
DatasetKind PeekKind(const fs::path& dir);
std::string_view KindName(DatasetKind kind);  // "node" or "sparse_rows"
NodeDataset LoadNodeDataset(const fs::path& dir, const LoadOptions& options = {});
SparseRowDataset LoadSparseRowDataset(const fs::path& dir, const LoadOptions& options = {});
// The SVM commands' --data: a native sparse-rows folder (tessel convert --from libsvm|idx) or LIBSVM text.
SparseRowDataset ReadSparseRows(const fs::path& path);
nlohmann::json ReadManifest(const fs::path& dir);

// Checks every array of the folder against its manifest entry (file present, size, XXH3), in parallel, without
// throwing on a mismatch (ArrayCheck is in datasets/array_store.h). Throws only when the manifest is unreadable.
std::vector<ArrayCheck> VerifyChecksums(const fs::path& dir);

}  // namespace tessel::datasets
