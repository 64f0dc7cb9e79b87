// The device side of GpuNeighborSampler (sampling/gpu_sampler.h) seen from host C++: plain arrays in and out, no
// CUDA headers and only C++17, so gpu_sampler.cc compiles everywhere. The device entry points form one table
// (core/device_ops.h) that sampling/device_registry.cc hands out only when the build compiled gpu_sampler.cu.
#pragma once

#include <cstddef>
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

// Where one sampled layer is written: device arrays of the caller (the Block's buffers), handed out by the sink once
// the layer's sizes are known, or, in a bounded sample (sampling/gpu_sampler_pipeline.h), before the layers run, for
// their bounds; `sized` then gives the real sizes (never more), read at the sample's end. src_nodes: num_src ids
// (destinations first); the block's CSR: indptr (m + 1), indices and values (nnz each). Every pointer is valid
// (non-null) even for 0 elements.
struct LayerTargets {
  int64_t* src_nodes = nullptr;
  int64_t* indptr = nullptr;
  int32_t* indices = nullptr;
  float* values = nullptr;
};
struct LayerSink {
  void* context = nullptr;
  // Layer `layer` (0 = input layer) has m destination rows, num_src source nodes and nnz entries.
  LayerTargets (*targets)(void* context, size_t layer, int64_t m, int64_t num_src, int64_t nnz) = nullptr;
  // A bounded sample's real sizes of layer `layer` (the first m, num_src, m + 1 and nnz elements of its targets);
  // host_src: the input layer's num_src source ids on the host when input_sources asked for them, else null.
  void (*sized)(void* context, size_t layer, int64_t m, int64_t num_src, int64_t nnz,
                const int64_t* host_src) = nullptr;
  // A bounded sample reads the input layer's source ids with its sizes, in its one download, when their bound is
  // at most SamplerPipeline::kMergedIdsMax (the bound is read: beyond it a second download of the real count costs
  // less); `sized` then hands them over.
  bool input_sources = false;
};

// The device side's state; each table's create makes its own kind (the CUDA pipeline, or its simulated twin).
class DeviceSampler {
 public:
  virtual ~DeviceSampler() = default;
};
using DeviceSamplerPtr = std::unique_ptr<DeviceSampler>;

// The device side of the sampler.
struct SamplerCudaOps {
  // Uploads the graph to device `device_id`. Throws tessel::Error.
  DeviceSamplerPtr (*create)(int device_id, const GraphArrays& graph);
  // Samples layers L-1 .. 0 from the seeds (host memory, already checked to lie in range; one upload): layer l
  // picks fanouts[l] neighbours per destination row with the row stream Rng(Mix64(bases[l] ^ Mix64(u))), and is
  // written to sink.targets(l, ...), on the device. Throws tessel::Error when a destination node is listed twice.
  void (*sample)(DeviceSampler& sampler, const int64_t* seeds, int64_t num_seeds, const std::vector<int>& fanouts,
                 const std::vector<uint64_t>& bases, bool replace, bool gcn, const LayerSink& sink);
};

// The table, or null when this build has no CUDA (sampling/device_registry.cc).
const SamplerCudaOps* CudaSamplerOps();
// The same pipeline on the simulated device (core/device.h), each kernel a serial host loop (gpu_sampler_twin.cc).
const SamplerCudaOps& SimulatedSamplerOps();

}  // namespace tessel::sampling::cuda
