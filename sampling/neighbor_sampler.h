// Node-wise neighbour sampling (GraphSAGE, Hamilton et al. 2017; DGL's sample_neighbors / PyG's NeighborLoader
// semantics): from the seed nodes backwards, each destination node picks fanout[l] neighbours (with or without
// replacement, -1 = all), giving one Block per layer whose weights keep the aggregation unbiased.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/rng.h"
#include "datasets/csr_graph.h"
#include "sampling/block.h"
#include "sampling/rowwise_pick.h"

namespace tessel::sampling {

// The full aggregation each block estimates.
enum class Aggregation {
  kGcn,   // Â = D^-1/2 (A + I) D^-1/2 (degrees without self-loops, plus one); the self term is kept exactly
  kMean,  // D^-1 A (GraphSAGE-mean); isolated nodes aggregate to zero
};

struct SamplerOptions {
  std::vector<int> fanouts;  // fanouts[l] for layer l, input layer first (DGL order); -1 = all neighbours
  bool replace = false;
  Aggregation aggregation = Aggregation::kGcn;
  void Validate() const;
};

class NeighborSampler {
 public:
  // Keeps a reference to `graph` (and `policy`); both must outlive the sampler. policy = nullptr: uniform.
  NeighborSampler(const datasets::AnyGraph& graph, SamplerOptions options,
                  std::shared_ptr<const PickPolicy> policy = nullptr);

  // Blocks for layers 0 .. L-1 (blocks.back().num_dst == seeds.size(), in seed order). All draws come from
  // streams derived from `key` (purpose key.purpose + layer), so a (key, seeds) pair always gives the same
  // blocks whatever the thread count. Not reentrant: one Sample call at a time per sampler.
  std::vector<Block> Sample(std::span<const int64_t> seeds, const StreamKey& key);

  const SamplerOptions& options() const { return options_; }

 private:
  template <typename IdT>
  Block SampleLayer(const datasets::CsrGraph<IdT>& g, std::span<const int64_t> dst, int fanout, const StreamKey& key);

  const datasets::AnyGraph& graph_;
  SamplerOptions options_;
  std::shared_ptr<const PickPolicy> policy_;
  std::vector<double> norm_degree_;  // degree used by the aggregation weights, per node
  std::vector<int32_t> local_id_;    // scratch: global -> local id of the block being built, -1 elsewhere
};

}  // namespace tessel::sampling
