// One interface for the whole-graph mini-batch samplers, chosen like the kernels' tables (core/device_ops.h
// SelectOps): SamplerFor(ctx).make gives the CPU sampler (NeighborSampler) for a CPU context and, for a CUDA one, the
// GPU sampler (GpuNeighborSampler; on the simulated device its host twins), whose blocks stay on the device. The same
// seeds and key give the same blocks from either.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/context.h"
#include "core/rng.h"
#include "datasets/csr_graph.h"
#include "sampling/block.h"
#include "sampling/neighbor_sampler.h"

namespace tessel::sampling {

class BlockSampler {
 public:
  virtual ~BlockSampler() = default;
  // NeighborSampler::Sample's contract: blocks for layers 0 .. L-1 from streams derived from `key`. A sampler whose
  // blocks are on the device (BlocksOnDevice) copies only the input block's src_nodes to the host (the model's
  // input rows), and only when `input_sources` (a device gather of dense rows reads Block::device_src and needs no
  // host copy: one wait for the device less a step); the other blocks' are in their device_src, and their src_nodes
  // stay empty (adj.cols counts them).
  virtual std::vector<Block> Sample(std::span<const int64_t> seeds, const StreamKey& key,
                                    bool input_sources = true) = 0;
  // Whether the blocks' adjacencies and Block::device_src are written on the device (the GPU sampler).
  virtual bool BlocksOnDevice() const = 0;
};

// The device table of samplers. make keeps a reference to `graph` on the CPU (it must outlive the sampler) and
// copies it to device `device_id` on a device.
struct SamplerOps {
  std::unique_ptr<BlockSampler> (*make)(const datasets::AnyGraph& graph, SamplerOptions options, int device_id);
};

// The table for ctx.device (throws "built without CUDA" when CUDA is asked of a CPU-only build).
const SamplerOps& SamplerFor(const Context& ctx);

}  // namespace tessel::sampling
