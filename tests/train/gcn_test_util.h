// Shared by the GCN trainer tests: the bundled Cora (tests/data/cora, the Planetoid split), read once per process.
// Header-only; test code only.
#pragma once

#include <filesystem>

#include "datasets/readers.h"

namespace tessel::train::gcn::test_util {

inline const datasets::NodeDataset& BundledCora() {
  static const datasets::NodeDataset data = [] {
    auto d = datasets::ReadNodeTable(
        datasets::NodeTableFromPrefix(std::filesystem::path(TESSEL_TEST_DATA) / "cora" / "cora"));
    d.name = "cora";
    return d;
  }();
  return data;
}

}  // namespace tessel::train::gcn::test_util
