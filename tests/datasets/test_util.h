// Helpers shared by the dataset reader tests: a graph as plain adjacency lists, for exact comparisons.
// Header-only; test code only.
#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "datasets/csr_graph.h"

namespace tessel::datasets::testing_util {

inline std::vector<std::vector<int64_t>> Adjacency(const AnyGraph& graph) {
  return std::visit(
      [](const auto& g) {
        std::vector<std::vector<int64_t>> adj(static_cast<size_t>(g.num_nodes()));
        for (int64_t u = 0; u < g.num_nodes(); ++u) {
          for (auto v : g.Neighbors(u)) adj[u].push_back(static_cast<int64_t>(v));
        }
        return adj;
      },
      graph);
}

}  // namespace tessel::datasets::testing_util
