// Shared by the sampler benchmarks (gcn_sampler_bench.cc, gpu_sampler_bench.cc): their generated inputs, a uniform
// random graph's raw edges and batches of distinct seed nodes, both drawn from the caller's Rng.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/rng.h"
#include "datasets/graph_builder.h"

namespace tessel::bench {

// EDGES edges (u, v) over NODES nodes, each end uniform: GraphBuilder makes the graph (self-loops dropped,
// duplicates merged).
inline datasets::EdgeList UniformRandomEdges(int64_t nodes, int64_t edges, Rng& rng) {
  datasets::EdgeList el;
  el.num_nodes = nodes;
  for (int64_t e = 0; e < edges; ++e) {
    el.Add(static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(nodes))),
           static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(nodes))));
  }
  return el;
}

// BATCHES seed sets of BATCH distinct nodes each (BATCH <= NODES), drawn uniformly from 0..NODES-1.
inline std::vector<std::vector<int64_t>> DistinctSeedSets(int64_t nodes, int64_t batch, int batches, Rng& rng) {
  std::vector<std::vector<int64_t>> seed_sets;
  for (int b = 0; b < batches; ++b) {
    std::vector<int64_t> s;
    std::vector<bool> used(static_cast<size_t>(nodes), false);
    while (static_cast<int64_t>(s.size()) < batch) {
      const auto u = static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(nodes)));
      if (!used[static_cast<size_t>(u)]) {
        used[static_cast<size_t>(u)] = true;
        s.push_back(u);
      }
    }
    seed_sets.push_back(std::move(s));
  }
  return seed_sets;
}

}  // namespace tessel::bench
