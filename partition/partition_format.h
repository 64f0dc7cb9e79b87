// The partition folder (DESIGN.md §3, docs/partition.md): partitions.json (method, seed, K, node ranges, edge
// cut, per-part counts, imbalance, halo replication, one checksum per part manifest) and part-<k>/ with the typed
// arrays of one LocalPart. Written atomically; LoadPart maps one part back for one rank and validates it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "datasets/dataset.h"
#include "partition/partition_build.h"
#include "partition/partition_stats.h"
#include "partition/partitioner.h"

namespace tessel::partition {

namespace fs = std::filesystem;

inline constexpr int kPartitionFormatVersion = 1;

// Wall-clock seconds of each step of PartitionToFolder (reported by the CLI, never written to the folder).
struct PartitionTimings {
  double prepare = 0;  // METIS input: symmetrise, vertex weights, idx_t copies
  double metis = 0;    // inside METIS_PartGraph* only
  double assign = 0;   // the whole assignment step (prepare + metis, or random/hash)
  double stats = 0;    // edge cut, counts, imbalance
  double build = 0;    // relabel, halos, local CSR, owned node data
  double write = 0;    // array files, manifests, partitions.json, rename
  double total = 0;
  // Process CPU seconds (all threads): inside METIS, and of the whole call. On a shared machine these stay
  // meaningful when wall-clock time includes waiting for a core.
  double metis_cpu = 0;
  double cpu_total = 0;
};

struct PartitionResult {
  PartitionStats stats;
  std::string algorithm;         // "kway", "recursive", "random", "hash" or "single"
  int64_t metis_objective = -1;  // METIS's reported edge cut or volume; -1 when METIS did not run
  PartitionTimings timings;
  nlohmann::ordered_json description;  // the content of partitions.json
};

// Partitions `data` and writes the folder `dir`, built under a temporary name and renamed into place. An
// existing `dir` is an error unless `overwrite`, and even then only a partition folder (or an empty folder) is
// replaced. Equal inputs give byte-identical folders (no timestamps, no paths).
PartitionResult PartitionToFolder(const datasets::NodeDataset& data, const PartitionOptions& options,
                                  const fs::path& dir, bool overwrite);

// What partitions.json says of the partitioned dataset (its "dataset" object).
struct DatasetSummary {
  std::string name;
  int64_t num_nodes = 0;
  int64_t num_entries = 0;
  bool symmetric = true;
  bool weighted = false;
  int64_t feature_dim = 0;
  bool features_sparse = false;
  int32_t num_classes = 0;
  int64_t train = 0;
  int64_t val = 0;
  int64_t test = 0;
  std::string fingerprint;  // DatasetFingerprint
};
DatasetSummary SummarizeDataset(const datasets::NodeDataset& data, bool symmetric);

// The pieces of a partition folder, shared by PartitionToFolder and the distributed DistPartitionToFolder
// (partition/dist_partition.h), so both write the same bytes for the same parts.
namespace folder {
// The "format" of partitions.json and of a part's manifest.json.
inline constexpr const char* kFormatName = "tessel-partition";
inline constexpr const char* kPartFormatName = "tessel-partition-part";
std::string PartDirName(int32_t k);  // "part-<k>"
// Writes one part's arrays and manifest.json into `dir` (created; it must not exist); returns the manifest's XXH3
// (16 hex digits), which partitions.json records.
std::string WritePart(const LocalPart& part, const fs::path& dir);
// The content of partitions.json. `offsets` are the node ranges (K + 1), `manifest_sums` one per part.
nlohmann::ordered_json Describe(const DatasetSummary& dataset, const PartitionOptions& options,
                                const std::string& algorithm, int64_t metis_objective,
                                const std::vector<Constraint>& balance, const std::vector<int64_t>& offsets,
                                const PartitionStats& stats, const std::vector<std::string>& manifest_sums);
}  // namespace folder

struct LoadPartOptions {
  bool verify_checksums = true;  // hash every array of the part (XXH3, several GB/s)
  bool validate = true;          // LocalPart::Validate() after loading
};

// XXH3-based fingerprint (16 hex digits) of a dataset's graph, features and labels (not its split), stored as
// "dataset.fingerprint" in partitions.json so training can check that --dataset is the partitioned dataset. A
// dataset loaded from a native folder carries it already (NodeDataset::fingerprint, made from the manifest's
// per-array checksums without reading the arrays); otherwise every array is hashed. Both give the same value.
std::string DatasetFingerprint(const datasets::NodeDataset& data);

// Throws unless `data` is the dataset partitions.json (`desc`, read from `dir`) describes: name, counts, and the
// fingerprint of graph, features and labels (partitions written before fingerprints existed are checked on name
// and counts only, with a warning). `path` is how the user named the dataset, for the message.
void CheckPartitionDataset(const nlohmann::json& desc, const std::string& dir, const datasets::NodeDataset& data,
                           const std::string& path);

// Reads partitions.json and checks its format and version and that it agrees with itself (node ranges from 0 to the
// dataset's node count, per-part counts and their sums); throws naming the file and the fix.
nlohmann::json ReadPartitionsJson(const fs::path& dir);
// True when `dir` holds a partitions.json (for `tessel info` to tell partitions from datasets).
bool IsPartitionFolder(const fs::path& dir);
// Maps part `rank` (arrays borrowed from the files) and checks it against partitions.json: the part manifest's
// checksum, counts, node range and dataset (nodes, classes, feature width), and (by option) every array checksum,
// the structure, and that every halo node is the node its owner part holds at its remote id.
LocalPart LoadPart(const fs::path& dir, int32_t rank, const LoadPartOptions& options = {});

// Loads every part with checksums and validation; one {"part", "ok", "detail"} per part ("ok" or the error).
// Never throws for a bad part (only when partitions.json itself is unreadable or refused).
nlohmann::ordered_json VerifyPartition(const fs::path& dir);

// partitions.json plus "path"; what `tessel info PARTITION_DIR --json` prints.
nlohmann::json DescribePartition(const fs::path& dir);
// The human-readable summary of a description (settings, cut, halo replication, imbalance, a per-part table).
std::string FormatPartitionSummary(const nlohmann::json& description);

}  // namespace tessel::partition
