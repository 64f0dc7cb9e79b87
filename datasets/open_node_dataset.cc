// OpenNodeDataset: picks the native reader (mmap, checksummed) or the node-table text reader by what exists.
// The node-table form lets the bundled tests/data/cora/cora prefix train without a convert step.
#include "datasets/open_node_dataset.h"

#include <filesystem>

#include "core/error.h"
#include "core/log.h"
#include "datasets/native_format.h"
#include "datasets/readers.h"

namespace tessel::datasets {

NodeDataset OpenNodeDataset(const std::string& path, const LoadOptions& options) {
  namespace fs = std::filesystem;
  if (fs::exists(fs::path(path) / "manifest.json")) {
    log::Info("loading native dataset {}", path);
    return datasets::LoadNodeDataset(path, options);
  }
  datasets::NodeTablePaths paths;
  try {
    paths = datasets::NodeTableFromPrefix(path);
  } catch (const Error& e) {
    throw Error(
        fmt::format("--dataset {}: neither a native dataset folder (no {}/manifest.json) nor a node-table "
                    "prefix ({}); convert the data with `tessel convert` first",
                    path, path, e.what()));
  }
  log::Info("loading node table {}.*", path);
  datasets::NodeDataset d = datasets::ReadNodeTable(paths);
  if (d.name.empty()) d.name = fs::path(path).filename().string();
  return d;
}

}  // namespace tessel::datasets
