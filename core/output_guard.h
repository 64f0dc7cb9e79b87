// The one check every writer makes before any work (CLI and Python): an output never replaces an input of the run,
// another output of the run, a device, or a file or folder of another kind, even with --force.
#pragma once

#include <filesystem>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

// What a writer puts at its output path; an existing path is replaced only by a writer of its own kind.
enum class OutputKind {
  kFile,              // a regular file (predictions, metrics, an SVM model and its sidecar)
  kDatasetFolder,     // a tessel dataset (manifest.json with "format": "tessel-dataset")
  kPartitionFolder,   // a partition folder (partitions.json with "format": "tessel-partition")
  kCheckpointFolder,  // a GCN checkpoint (checkpoint.json with "kind": "tessel-gcn-checkpoint")
};

// Throws tessel::Error, naming `flag` and `out` and saying the fix, unless `out` may be written now:
//  - it is not, does not contain and does not lie inside any of `inputs` (the run's input files and folders and
//    its other outputs; compared as resolved paths and by device/inode, so symbolic links, hard links and `..` do
//    not hide a match), even with `force`. An input that does not exist is a prefix (tests/data/cora/cora): the
//    files of its folder named PREFIX.* are the inputs. Empty inputs are skipped;
//  - it is not a device, named pipe or socket (omit the option to write nothing);
//  - when it exists: it is of `kind` (a regular file for kFile; for the folder kinds a folder of that kind or an
//    empty folder), and `force` is set; any other file or folder is never replaced;
//  - its parent folder exists and is writable.
// An empty `out` (no output asked for) passes. `flag` names the option ("--output") or the Python argument
// ("checkpoint"); a flag starting with "--" or a positional argument's upper-case name ("OUTPUT_FILE") gets "pass
// --force" in messages, a Python argument "pass force=True".
// `other_outputs` are the run's other outputs, checked as inputs are (two outputs of one run never overlap).
void CheckOutputPath(const std::filesystem::path& out, OutputKind kind, bool force, std::string_view flag,
                     std::span<const std::filesystem::path> inputs = {},
                     std::span<const std::filesystem::path> other_outputs = {});

// Only the first rule: throws when `out` is, contains or lies inside one of `inputs`.
void CheckOutputNotInput(const std::filesystem::path& out, std::string_view flag,
                         std::span<const std::filesystem::path> inputs);

// The non-empty entries of `paths`, for passing a command's options as `inputs`.
std::vector<std::filesystem::path> PathList(std::initializer_list<std::string_view> paths);

// Whether `path` is an existing file (kFile: a regular file) or a non-empty folder of that kind.
bool HoldsOutputOf(const std::filesystem::path& path, OutputKind kind);

// What is at `path`, for messages: "does not exist", "is a regular file", "is a folder of other files", "is a tessel
// dataset", "is a tessel partition folder", "is a tessel checkpoint", "is an empty folder", "is a device", ...
std::string DescribePath(const std::filesystem::path& path);

}  // namespace tessel
