// Train/validation/test splits: parsing "0.6,0.2,0.2" fractions and a seeded uniform random split of the
// labelled nodes (all nodes when there are no labels), reproducible for a seed through core/rng.h.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "datasets/dataset.h"

namespace tessel::datasets {

struct SplitFractions {
  double train = 0.6;
  double val = 0.2;
  double test = 0.2;
};
// Parses "train,val,test": three finite numbers >= 0 that sum to 1 within 1e-6. Throws tessel::Error saying
// what is wrong with an example of a valid value.
SplitFractions ParseSplitFractions(std::string_view text);

struct Split {
  std::vector<int64_t> train;  // sorted ascending
  std::vector<int64_t> val;
  std::vector<int64_t> test;
};

// Sizes of the three lists for `m` candidates: largest-remainder rounding of m * fraction, so they sum to m
// and each is within 1 of the exact share.
void SplitSizes(int64_t m, const SplitFractions& f, int64_t* train, int64_t* val, int64_t* test);

// A uniform random split of the candidates: nodes whose label is not kNoLabel, or all `num_nodes` nodes when
// `labels` is empty. Deterministic for (seed); a different seed gives an independent shuffle.
Split RandomSplit(int64_t num_nodes, std::span<const int32_t> labels, const SplitFractions& fractions, uint64_t seed);

// Replaces the dataset's split lists by RandomSplit of its nodes.
void AssignRandomSplit(NodeDataset& data, const SplitFractions& fractions, uint64_t seed);
// `data` with a new split made by AssignRandomSplit; its graph, features and labels are shared with `data` (no
// copy; the result keeps `data` alive), and `data` keeps its own split.
std::shared_ptr<const NodeDataset> WithRandomSplit(const std::shared_ptr<const NodeDataset>& data,
                                                   const SplitFractions& fractions, uint64_t seed);

}  // namespace tessel::datasets
