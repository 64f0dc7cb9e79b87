// Small node datasets for the partition tests: seeded random graphs (symmetric or directed, with or without
// self-loops and weights), grids, dense or sparse features, labels and splits, all built in memory.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/rng.h"
#include "datasets/dataset.h"
#include "datasets/graph_builder.h"
#include "partition/partitioner.h"

namespace tessel::partition::fixtures {

struct GraphSpec {
  int64_t nodes = 200;
  int64_t edges = 800;  // drawn before cleaning
  bool directed = false;
  bool self_loops = false;
  bool weighted = false;
  bool sparse_features = false;
  int64_t feature_dim = 5;
  bool split = true;
  bool int64_ids = false;
  uint64_t seed = 1;
};

// Rows of a random dataset; features are value f(node, column) so a test can check where a row came from.
inline float FeatureValue(int64_t node, int64_t col) {
  return static_cast<float>(node) + 0.001F * static_cast<float>(col);
}

inline datasets::NodeDataset RandomDataset(const GraphSpec& spec) {
  Rng rng(spec.seed);
  const auto n = static_cast<uint64_t>(spec.nodes);
  datasets::EdgeList edges;
  edges.num_nodes = spec.nodes;
  for (int64_t e = 0; e < spec.edges; ++e) {
    // Half the edges local (ids close together) so METIS has structure to find.
    const auto u = static_cast<int64_t>(rng.UniformInt(n));
    const auto v = e % 2 == 0 ? static_cast<int64_t>((static_cast<uint64_t>(u) + 1 + rng.UniformInt(5)) % n)
                              : static_cast<int64_t>(rng.UniformInt(n));
    edges.Add(u, v);
    if (spec.weighted) edges.weights.push_back(static_cast<float>(1 + rng.UniformInt(9)));
  }
  if (spec.self_loops) {
    for (int64_t u = 0; u < spec.nodes; u += 7) {
      edges.Add(u, u);
      if (spec.weighted) edges.weights.push_back(1.0F);
    }
  }
  datasets::BuildOptions opt;
  opt.symmetrize = !spec.directed;
  opt.remove_self_loops = !spec.self_loops;
  datasets::NodeDataset d;
  d.name = "random";
  const datasets::GraphBuilder builder(opt);
  if (spec.int64_ids) {
    d.graph = builder.Build<int64_t>(edges);
  } else {
    d.graph = builder.Build<int32_t>(edges);
  }
  if (spec.feature_dim > 0) {
    d.features.num_rows = spec.nodes;
    d.features.dim = spec.feature_dim;
    if (spec.sparse_features) {
      d.features.sparse = true;
      std::vector<int64_t> ptr{0};
      std::vector<int32_t> idx;
      std::vector<float> val;
      for (int64_t u = 0; u < spec.nodes; ++u) {
        for (int64_t c = u % 3; c < spec.feature_dim; c += 2) {
          idx.push_back(static_cast<int32_t>(c));
          val.push_back(FeatureValue(u, c));
        }
        ptr.push_back(static_cast<int64_t>(idx.size()));
      }
      d.features.indptr = Buffer<int64_t>(std::move(ptr));
      d.features.indices = Buffer<int32_t>(std::move(idx));
      d.features.values = Buffer<float>(std::move(val));
    } else {
      std::vector<float> f(static_cast<size_t>(spec.nodes * spec.feature_dim));
      for (int64_t u = 0; u < spec.nodes; ++u) {
        for (int64_t c = 0; c < spec.feature_dim; ++c)
          f[static_cast<size_t>(u * spec.feature_dim + c)] = FeatureValue(u, c);
      }
      d.features.dense = Buffer<float>(std::move(f));
    }
  }
  d.num_classes = 3;
  std::vector<int32_t> labels(static_cast<size_t>(spec.nodes));
  for (int64_t u = 0; u < spec.nodes; ++u) labels[u] = u % 5 == 4 ? datasets::kNoLabel : static_cast<int32_t>(u % 3);
  d.labels = Buffer<int32_t>(std::move(labels));
  if (spec.split) {
    std::vector<int64_t> train;
    std::vector<int64_t> val;
    std::vector<int64_t> test;
    for (int64_t u = 0; u < spec.nodes; ++u) {
      const uint64_t r = rng.UniformInt(10);
      if (r < 5) {
        train.push_back(u);
      } else if (r < 7) {
        val.push_back(u);
      } else if (r < 9) {
        test.push_back(u);
      }
    }
    d.train = Buffer<int64_t>(std::move(train));
    d.val = Buffer<int64_t>(std::move(val));
    d.test = Buffer<int64_t>(std::move(test));
  }
  d.Validate();
  return d;
}

// A rows x cols 4-neighbour grid (a mesh-like graph with a known good partition), no features.
inline datasets::NodeDataset GridDataset(int64_t rows, int64_t cols) {
  datasets::EdgeList edges;
  edges.num_nodes = rows * cols;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t u = r * cols + c;
      if (c + 1 < cols) edges.Add(u, u + 1);
      if (r + 1 < rows) edges.Add(u, u + cols);
    }
  }
  datasets::NodeDataset d;
  d.name = "grid";
  d.graph = datasets::GraphBuilder().Build<int32_t>(edges);
  return d;
}

// Partitioner options: a method, k parts and a seed, the rest defaults.
inline PartitionOptions Options(Method method, int32_t k, uint64_t seed = 0) {
  PartitionOptions o;
  o.method = method;
  o.num_parts = k;
  o.seed = seed;
  return o;
}

}  // namespace tessel::partition::fixtures
