// Shared by the GCN trainer tests: the bundled Cora (tests/data/cora, the Planetoid split), read once per process.
// Header-only; test code only.
#pragma once

#include <filesystem>
#include <utility>
#include <vector>

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

// The bundled Cora with its features stored dense (sparse-input and dense-input layers take different paths).
inline const datasets::NodeDataset& BundledDenseCora() {
  static const datasets::NodeDataset data = [] {
    datasets::NodeDataset d = datasets::ReadNodeTable(
        datasets::NodeTableFromPrefix(std::filesystem::path(TESSEL_TEST_DATA) / "cora" / "cora"));
    d.name = "cora";
    const datasets::Features& f = d.features;
    std::vector<float> dense(static_cast<size_t>(f.num_rows * f.dim), 0.0F);
    const auto p = f.indptr.Host();
    const auto idx = f.indices.Host();
    const auto val = f.values.Host();
    for (int64_t r = 0; r < f.num_rows; ++r) {
      for (int64_t e = p[r]; e < p[r + 1]; ++e) {
        dense[static_cast<size_t>(r * f.dim + idx[e])] = val.empty() ? 1.0F : val[e];
      }
    }
    datasets::Features out;
    out.num_rows = f.num_rows;
    out.dim = f.dim;
    out.dense = Buffer<float>(std::move(dense));
    d.features = std::move(out);
    return d;
  }();
  return data;
}

}  // namespace tessel::train::gcn::test_util
