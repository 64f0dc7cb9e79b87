// The device side of GpuNeighborSampler (sampling/gpu_sampler.h) seen from host C++: plain arrays in and out, no
// CUDA headers and only C++17, so gpu_sampler.cc compiles everywhere. The device entry points form one table
// (core/device_ops.h) that sampling/device_registry.cc hands out only when the build compiled gpu_sampler.cu.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace tessel::sampling::cuda {

// Host arrays copied into device memory by SamplerCudaOps::create (none is kept).
struct GraphArrays {
  int64_t num_nodes = 0;
  int64_t num_entries = 0;
  const int64_t* indptr = nullptr;     // num_nodes + 1
  const int32_t* indices32 = nullptr;  // num_entries ids: exactly one of indices32 / indices64
  const int64_t* indices64 = nullptr;
  const double* norm_degree = nullptr;  // per node: the degree in the aggregation weights (NeighborSampler's)
  const double* row_skew = nullptr;     // per node: s of the skewed policy (1 = uniform row); nullptr: no skew
  const int32_t* edge_owner = nullptr;  // per entry, with row_skew: owner part of the stored neighbour
  int32_t local_part = 0;               // with row_skew: neighbours owned by this part get weight s
};

// One sampled layer in host memory: source nodes (destinations first), then the CSR of the block.
struct LayerArrays {
  std::vector<int64_t> src_nodes;
  std::vector<int64_t> indptr;
  std::vector<int32_t> indices;
  std::vector<float> values;
};

class DeviceSampler;  // defined in gpu_sampler.cu
struct DeviceSamplerDeleter {
  void (*destroy)(DeviceSampler* sampler) noexcept = nullptr;  // set by the table's create
  void operator()(DeviceSampler* sampler) const noexcept {
    if (destroy != nullptr) destroy(sampler);
  }
};
using DeviceSamplerPtr = std::unique_ptr<DeviceSampler, DeviceSamplerDeleter>;

// The device side of the sampler.
struct SamplerCudaOps {
  // Uploads the graph to device `device_id`. Throws tessel::Error.
  DeviceSamplerPtr (*create)(int device_id, const GraphArrays& graph);
  // Samples layers L-1 .. 0 from the seeds (already checked to lie in range): layer l picks fanouts[l] neighbours
  // per destination row with the row stream Rng(Mix64(bases[l] ^ Mix64(u))). Returns the layers input layer first.
  // Throws tessel::Error when a destination node is listed twice.
  std::vector<LayerArrays> (*sample)(DeviceSampler& sampler, const int64_t* seeds, int64_t num_seeds,
                                     const std::vector<int>& fanouts, const std::vector<uint64_t>& bases, bool replace,
                                     bool gcn);
};

// The table, or null when this build has no CUDA (sampling/device_registry.cc).
const SamplerCudaOps* CudaSamplerOps();

}  // namespace tessel::sampling::cuda
