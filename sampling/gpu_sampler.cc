// GpuNeighborSampler's host side: checks, the per-node aggregation degrees and skews (computed here exactly as
// NeighborSampler and SkewedPolicy compute them), the per-layer stream bases, the blocks from the device arrays,
// and EmulateGpuSample: the device's step pipeline (gpu_sample_steps.h) run in serial loops on the host.
#include "sampling/gpu_sampler.h"

#include <algorithm>
#include <numeric>
#include <utility>
#include <variant>

#include "core/device.h"
#include "core/error.h"
#include "core/parallel.h"
#include "sampling/gpu_sample_steps.h"

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

std::vector<Block> ToBlocks(std::vector<cuda::LayerArrays> layers) {
  std::vector<Block> blocks(layers.size());
  for (size_t l = 0; l < layers.size(); ++l) {
    cuda::LayerArrays& a = layers[l];
    Block& b = blocks[l];
    b.num_dst = static_cast<int64_t>(a.indptr.size()) - 1;
    b.src_nodes = std::move(a.src_nodes);
    b.adj = kernels::SparseMatrix{b.num_dst, b.num_src(), Buffer<int64_t>(std::move(a.indptr)),
                                  Buffer<int32_t>(std::move(a.indices)), Buffer<float>(std::move(a.values))};
  }
  return blocks;
}

void Scan(std::vector<int64_t>* a) { std::exclusive_scan(a->begin(), a->end(), a->begin(), int64_t{0}); }

// The host twin of DeviceSampler::Layer (cuda/gpu_sampler.cu): the same steps, in serial loops.
template <typename IdT>
cuda::LayerArrays EmulateLayer(const gpu_steps::Graph<IdT>& g, std::vector<int32_t>& local_id,
                               std::vector<unsigned long long>& first, const std::vector<int64_t>& dst, int fanout,
                               uint64_t base, bool replace, bool gcn) {
  using gpu_steps::Step;
  const auto m = static_cast<int64_t>(dst.size());
  const auto rows = static_cast<size_t>(m);
  std::vector<unsigned long long> flags(2, gpu_steps::kNone);
  std::vector<int64_t> slot(rows + 1), scratch_begin(rows + 1), out_indptr(rows + 1);
  gpu_steps::Layer l{};
  l.dst = dst.data();
  l.m = m;
  l.k = fanout;
  l.replace = replace;
  l.gcn = gcn;
  l.base = base;
  l.local_id = local_id.data();
  l.first = first.data();
  l.flags = flags.data();
  l.slot = slot.data();
  l.scratch_begin = scratch_begin.data();
  auto run = [&](Step step, int64_t n) {
    for (int64_t i = 0; i < n; ++i) gpu_steps::Run(step, g, l, i);
  };
  run(Step::kPlanRow, m + 1);
  Scan(&slot);
  Scan(&scratch_begin);
  if (flags[0] != gpu_steps::kNone) {
    run(Step::kClearDestination, m);
    throw Error(fmt::format("sampling: destination node {} is listed twice", flags[0]));
  }
  l.slots = slot[rows];
  const auto s = static_cast<size_t>(std::max<int64_t>(scratch_begin[rows], 1));
  std::vector<double> scratch_q(s), scratch_a(s);
  std::vector<uint8_t> scratch_capped(s);
  std::vector<int64_t> scratch_order(s);
  const auto slots = static_cast<size_t>(l.slots);
  std::vector<int64_t> slot_node(slots + 1), new_rank(slots + 1);
  std::vector<double> slot_factor(slots + 1);
  l.scratch_q = scratch_q.data();
  l.scratch_a = scratch_a.data();
  l.scratch_capped = scratch_capped.data();
  l.scratch_order = scratch_order.data();
  l.slot_node = slot_node.data();
  l.slot_factor = slot_factor.data();
  l.new_rank = new_rank.data();
  run(Step::kPickRow, m);
  run(Step::kFirstSeen, l.slots);
  run(Step::kMarkNew, l.slots + 1);
  Scan(&new_rank);
  l.num_src = m + new_rank[slots];
  cuda::LayerArrays out;
  out.src_nodes.assign(static_cast<size_t>(l.num_src), -1);
  std::copy(dst.begin(), dst.end(), out.src_nodes.begin());
  l.src = out.src_nodes.data();
  run(Step::kAssignNew, l.slots);
  l.out_indptr = out_indptr.data();
  run(Step::kRowLength, m + 1);
  Scan(&out_indptr);
  out.indices.assign(static_cast<size_t>(out_indptr[rows]), -1);
  out.values.assign(out.indices.size(), -1.0F);
  l.out_indices = out.indices.data();
  l.out_values = out.values.data();
  run(Step::kWriteRow, m);
  run(Step::kResetMaps, std::max(l.num_src, l.slots));
  TESSEL_CHECK(flags[1] == gpu_steps::kNone, "sampling: row {} has a negative or non-finite probability", flags[1]);
  out.indptr = std::move(out_indptr);
  return out;
}

}  // namespace

GpuNeighborSampler::GpuNeighborSampler(const datasets::AnyGraph& graph, SamplerOptions options,
                                       std::optional<GpuSkew> skew, int device_id)
    : options_(std::move(options)), device_id_(device_id), num_nodes_(datasets::NumNodes(graph)) {
  ops_ = cuda::CudaSamplerOps();
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

std::vector<Block> GpuNeighborSampler::Sample(std::span<const int64_t> seeds, const StreamKey& key) {
  CheckSeeds(seeds, num_nodes_);
  return ToBlocks(ops_->sample(*device_, seeds.data(), static_cast<int64_t>(seeds.size()), options_.fanouts,
                               Bases(key, options_.fanouts.size()), options_.replace,
                               options_.aggregation == Aggregation::kGcn));
}

std::vector<Block> EmulateGpuSample(const datasets::AnyGraph& graph, const SamplerOptions& options,
                                    const std::optional<GpuSkew>& skew, std::span<const int64_t> seeds,
                                    const StreamKey& key) {
  PreparedGraph prepared;
  Prepare(graph, options, skew, &prepared);
  const cuda::GraphArrays& a = prepared.arrays;
  CheckSeeds(seeds, a.num_nodes);
  const std::vector<uint64_t> bases = Bases(key, options.fanouts.size());
  const bool gcn = options.aggregation == Aggregation::kGcn;
  std::vector<int32_t> local_id(static_cast<size_t>(a.num_nodes), -1);
  std::vector<unsigned long long> first(local_id.size(), gpu_steps::kNone);
  std::vector<cuda::LayerArrays> layers(options.fanouts.size());
  std::vector<int64_t> dst(seeds.begin(), seeds.end());
  for (size_t l = layers.size(); l-- > 0;) {
    if (a.indices64 != nullptr) {
      const gpu_steps::Graph<int64_t> g{a.indptr, a.indices64, a.norm_degree, a.row_skew, a.edge_owner, a.local_part};
      layers[l] = EmulateLayer(g, local_id, first, dst, options.fanouts[l], bases[l], options.replace, gcn);
    } else {
      const gpu_steps::Graph<int32_t> g{a.indptr, a.indices32, a.norm_degree, a.row_skew, a.edge_owner, a.local_part};
      layers[l] = EmulateLayer(g, local_id, first, dst, options.fanouts[l], bases[l], options.replace, gcn);
    }
    dst = layers[l].src_nodes;
  }
  return ToBlocks(std::move(layers));
}

}  // namespace tessel::sampling
