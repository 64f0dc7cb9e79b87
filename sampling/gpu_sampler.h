// GpuNeighborSampler: node-wise neighbour sampling on a CUDA device with the graph resident in device memory. It
// draws exactly what NeighborSampler draws for the same key (uniform or skewed picks; identical blocks). On the
// simulated device (core/device.h, tests) the same pipeline runs on host twins of its kernels.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/rng.h"
#include "datasets/csr_graph.h"
#include "sampling/block.h"
#include "sampling/cuda/gpu_sampler_cuda.h"
#include "sampling/neighbor_sampler.h"
#include "sampling/skewed_policy.h"

namespace tessel::sampling {

// The skewed local-preferring policy (SkewedPolicy's arguments); the owners are copied to the device.
struct GpuSkew {
  std::span<const int32_t> edge_owner;  // per stored edge: the part owning the neighbour
  int32_t local_part = 0;
  SkewOptions options;
};

class GpuNeighborSampler {
 public:
  // Copies the graph (offsets, ids, aggregation degrees and, with skew, the edge owners and each row's s) to
  // device `device_id`; the graph need not outlive the sampler. Without skew (or with an inactive one) picks are
  // uniform, as NeighborSampler's default policy. Throws "built without CUDA" in CPU builds and names the
  // problem when the device does not exist.
  GpuNeighborSampler(const datasets::AnyGraph& graph, SamplerOptions options,
                     std::optional<GpuSkew> skew = std::nullopt, int device_id = 0);

  // NeighborSampler::Sample's contract and result: the blocks are identical to the CPU sampler's for the same
  // seeds and key (with NeighborSampler given the same SkewedPolicy, or none). The blocks stay on the device: each
  // adjacency's arrays and Block::device_src are written there and read by kernels in place; src_nodes is their
  // host copy (one download per layer; with all_sources false only the input layer's, blocks.front(), and the
  // others' src_nodes stay empty; with input_sources false too, none is downloaded). A uniform sample (every fanout
  // >= 0, no skew) waits for the device once: its layers' sizes, read at its end with the input layer's sources
  // when they are asked for and their bound is small (docs/gpu_sampling.md, "Bounded samples"). Not reentrant.
  std::vector<Block> Sample(std::span<const int64_t> seeds, const StreamKey& key, bool all_sources = true,
                            bool input_sources = true);

  const SamplerOptions& options() const { return options_; }
  int device_id() const { return device_id_; }

 private:
  SamplerOptions options_;
  int device_id_ = 0;
  int64_t num_nodes_ = 0;
  const cuda::SamplerCudaOps* ops_ = nullptr;
  cuda::DeviceSamplerPtr device_;
};

}  // namespace tessel::sampling
