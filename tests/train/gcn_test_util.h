// Shared by the GCN trainer tests: the bundled Cora (tests/data/cora, the Planetoid split), read once per process.
// Header-only; test code only.
#pragma once

#include <filesystem>
#include <utility>
#include <vector>

#include "datasets/readers.h"
#include "train/gcn/checkpoint.h"

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

// The state of a run of `epochs` epochs that failed inside its second, `done` of its `steps` steps taken, as the
// survivors' just-in-time state says it (written by 4 ranks): the checkpoint in `one_epoch` (after epoch 1) with the
// mid-epoch fields set. The weights are epoch 1's: a test compares resumes from it, not with a straight run.
inline TrainState MidEpochState(const std::filesystem::path& one_epoch, int64_t steps, int64_t done, int epochs) {
  TrainState mid = LoadCheckpoint(one_epoch);
  mid.epoch_steps_done = done;
  mid.epoch_steps = steps;
  mid.adam_steps = steps + done;
  mid.ranks = 4;
  mid.just_in_time = true;
  mid.config["epochs"] = epochs;
  return mid;
}

}  // namespace tessel::train::gcn::test_util
