// Dataset loading shared by `tessel train gcn`, `tessel predict gcn` and the Python binding: a native dataset folder
// (manifest.json) or a node-table prefix (PREFIX.edges.txt, PREFIX.features.txt, ...), plus the optional random split.
#pragma once

#include <string>

#include "datasets/dataset.h"
#include "datasets/native_format.h"

namespace tessel::datasets {

// Loads DIR as a native dataset when DIR/manifest.json exists, else as the node-table prefix DIR; throws
// naming both forms when neither fits.
// `options` apply to a native folder only (a node table is always parsed and checked whole).
NodeDataset OpenNodeDataset(const std::string& path, const LoadOptions& options = {});

}  // namespace tessel::datasets
