// Dataset loading shared by `tessel train gcn` and `tessel predict gcn`: a native dataset folder (manifest.json)
// or a node-table prefix (PREFIX.edges.txt, PREFIX.features.txt, ...), plus the optional random split.
#pragma once

#include <string>

#include "datasets/dataset.h"

namespace tessel::tools {

// Loads DIR as a native dataset when DIR/manifest.json exists, else as the node-table prefix DIR; throws
// naming both forms when neither fits.
datasets::NodeDataset LoadGcnDataset(const std::string& path);

}  // namespace tessel::tools
