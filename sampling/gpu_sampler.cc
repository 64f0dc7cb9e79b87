// GpuNeighborSampler's host side: checks, the per-node aggregation degrees and skews (computed here exactly as
// NeighborSampler and SkewedPolicy compute them), the per-layer stream bases, and the blocks the device writes.
#include "sampling/gpu_sampler.h"

#include <algorithm>
#include <numeric>
#include <utility>
#include <variant>

#include "core/device.h"
#include "core/error.h"
#include "core/parallel.h"

namespace tessel::sampling {
namespace {

// The graph arrays the device receives, with the per-node arrays they point to.
struct PreparedGraph {
  std::vector<double> norm_degree;
  std::vector<double> row_skew;
  cuda::GraphArrays arrays;
};

void Prepare(const datasets::AnyGraph& graph, const SamplerOptions& options, const std::optional<GpuSkew>& skew,
             PreparedGraph* out) {
  options.Validate();
  const int64_t n = datasets::NumNodes(graph);
  TESSEL_CHECK(n <= INT32_MAX, "sampling: {} nodes do not fit 32-bit block ids", n);
  const bool gcn = options.aggregation == Aggregation::kGcn;
  out->norm_degree.resize(static_cast<size_t>(n));
  cuda::GraphArrays& arrays = out->arrays;
  if (skew) skew->options.Validate();
  if (skew && skew->options.Active()) {
    TESSEL_CHECK(static_cast<int64_t>(skew->edge_owner.size()) == datasets::NumEntries(graph),
                 "GPU sampler: {} edge owners for a graph with {} stored edges (build edge_owner over the graph being "
                 "sampled)",
                 skew->edge_owner.size(), datasets::NumEntries(graph));
    out->row_skew.resize(static_cast<size_t>(n));
    arrays.row_skew = out->row_skew.data();
    arrays.edge_owner = skew->edge_owner.data();
    arrays.local_part = skew->local_part;
  }
  std::visit(
      [&](const auto& g) {
        auto indptr = g.indptr().Host();
        auto indices = g.indices().Host();
        parallel_for<int64_t>(0, n, 4096, [&](int64_t u) {
          int64_t d = 0;
          for (auto v : g.Neighbors(u)) d += static_cast<int64_t>(v) != u ? 1 : 0;
          out->norm_degree[u] = static_cast<double>(d) + (gcn ? 1.0 : 0.0);
          if (!out->row_skew.empty()) {  // SkewedPolicy::Probabilities' s for this row
            const auto owners = skew->edge_owner.subspan(static_cast<size_t>(indptr[u]),
                                                         static_cast<size_t>(indptr[u + 1] - indptr[u]));
            const auto local = static_cast<int64_t>(std::count(owners.begin(), owners.end(), skew->local_part));
            out->row_skew[u] = RowSkew(local, static_cast<int64_t>(owners.size()) - local, skew->options);
          }
        });
        arrays.num_nodes = n;
        arrays.num_entries = g.num_entries();
        arrays.indptr = indptr.data();
        if constexpr (sizeof(typename std::decay_t<decltype(g)>::Id) == 4) {
          arrays.indices32 = indices.data();
        } else {
          arrays.indices64 = indices.data();
        }
      },
      graph);
  arrays.norm_degree = out->norm_degree.data();
}

void CheckSeeds(std::span<const int64_t> seeds, int64_t n) {
  for (int64_t s : seeds) TESSEL_CHECK(s >= 0 && s < n, "sampling: seed node {} outside [0, {})", s, n);
}

// NeighborSampler's per-layer stream bases: layer l draws from Rng(key with purpose + l)().
std::vector<uint64_t> Bases(const StreamKey& key, size_t layers) {
  std::vector<uint64_t> bases(layers);
  for (size_t l = 0; l < layers; ++l) {
    StreamKey k = key;
    k.purpose += static_cast<uint64_t>(l);
    bases[l] = Rng(k)();
  }
  return bases;
}

// The sink the device writes a sample's layers to: each layer's Block, its arrays allocated on the device only (the
// host side of a Buffer is allocated but neither touched nor uploaded; it is filled only if read there).
struct BlockSink {
  std::vector<Block>* blocks;
  bool input_ids_given = false;  // a bounded sample read the input layer's sources with its sizes

  static cuda::LayerTargets Targets(void* context, size_t layer, int64_t m, int64_t num_src, int64_t nnz) {
    Block& b = (*static_cast<BlockSink*>(context)->blocks)[layer];
    b.num_dst = m;
    b.device_src = Buffer<int64_t>::Uninitialized(static_cast<size_t>(num_src));
    b.adj = kernels::SparseMatrix{m, num_src, Buffer<int64_t>::Uninitialized(static_cast<size_t>(m) + 1),
                                  Buffer<int32_t>::Uninitialized(static_cast<size_t>(nnz)),
                                  Buffer<float>::Uninitialized(static_cast<size_t>(nnz))};
    return cuda::LayerTargets{b.device_src.OverwriteDevice(), b.adj.indptr.OverwriteDevice(),
                              b.adj.indices.OverwriteDevice(), b.adj.values.OverwriteDevice()};
  }
  // A bounded sample's real sizes: the arrays keep their device memory and take the first elements.
  static void Sized(void* context, size_t layer, int64_t m, int64_t num_src, int64_t nnz, const int64_t* host_src) {
    auto* sink = static_cast<BlockSink*>(context);
    Block& b = (*sink->blocks)[layer];
    if (host_src != nullptr) {
      b.src_nodes.assign(host_src, host_src + num_src);
      sink->input_ids_given = true;
    }
    b.num_dst = m;
    b.adj.rows = m;
    b.adj.cols = num_src;
    b.device_src.ShrinkOnDevice(static_cast<size_t>(num_src));
    b.adj.indptr.ShrinkOnDevice(static_cast<size_t>(m) + 1);
    b.adj.indices.ShrinkOnDevice(static_cast<size_t>(nnz));
    b.adj.values.ShrinkOnDevice(static_cast<size_t>(nnz));
  }
};

}  // namespace

GpuNeighborSampler::GpuNeighborSampler(const datasets::AnyGraph& graph, SamplerOptions options,
                                       std::optional<GpuSkew> skew, int device_id)
    : options_(std::move(options)), device_id_(device_id), num_nodes_(datasets::NumNodes(graph)) {
  ops_ = device::Simulated() ? &cuda::SimulatedSamplerOps() : cuda::CudaSamplerOps();
  TESSEL_CHECK(ops_ != nullptr,
               "GPU sampler: this tessel was built without CUDA (rebuild with -DTESSEL_CUDA=ON, or sample on the CPU)");
  const int devices = device::CudaDeviceCount();
  TESSEL_CHECK(device_id >= 0 && device_id < devices,
               "GPU sampler: CUDA device {} does not exist ({} visible; give an id in [0, {}), or sample on the CPU)",
               device_id, devices, devices);
  PreparedGraph prepared;
  Prepare(graph, options_, skew, &prepared);
  device_ = ops_->create(device_id_, prepared.arrays);
}

std::vector<Block> GpuNeighborSampler::Sample(std::span<const int64_t> seeds, const StreamKey& key, bool all_sources,
                                              bool input_sources) {
  CheckSeeds(seeds, num_nodes_);
  std::vector<Block> blocks(options_.fanouts.size());
  BlockSink sink{&blocks};
  ops_->sample(*device_, seeds.data(), static_cast<int64_t>(seeds.size()), options_.fanouts,
               Bases(key, options_.fanouts.size()), options_.replace, options_.aggregation == Aggregation::kGcn,
               cuda::LayerSink{&sink, &BlockSink::Targets, &BlockSink::Sized, input_sources || all_sources});
  for (size_t l = 0; l < blocks.size(); ++l) {
    if (l == 0 && sink.input_ids_given) continue;  // read with the sizes
    if ((l == 0 && input_sources) || all_sources)
      blocks[l].src_nodes = blocks[l].device_src.ToVector();  // one download each
  }
  return blocks;
}

}  // namespace tessel::sampling
