// CUDA neighbour sampling: the graph in device memory, each step of sampling/gpu_sample_steps.h as a kernel (one
// thread per row or pick slot; rows run pick_math.h, the CPU PickRow's own algorithm), scans by CUB (pooled).
//
// Per layer: plan (slots and weighted-row scratch per row, destinations marked), scans, picks (rows of degree
// <= kLocalDegree keep a weighted row's scratch per thread, larger ones a slice of one global scratch), sort-free
// relabelling (first appearance by atomicMin + scan: NeighborSampler's order), row lengths + scan, the CSR (the
// CPU's double arithmetic; this file is compiled with --fmad=false), then the node maps are reset.

#include <climits>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/cuda_check.h"
#include "core/device.h"
#include "core/rng.h"
#include "kernels/cuda/launch_cuda.h"
#include "sampling/cuda/gpu_sampler_cuda.h"
#include "sampling/gpu_sample_steps.h"

namespace tessel::sampling::cuda {
namespace {

constexpr int kThreads = 256;
constexpr unsigned long long kNoSlot = gpu_steps::kNone;

int Blocks(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 1 ? 1 : (b > (INT_MAX / 2) ? INT_MAX / 2 : b));
}

template <typename T>
std::vector<T> Download(const T* device, size_t n) {
  std::vector<T> host(n);
  if (n > 0) device::CopyToHost(host.data(), device, n * sizeof(T));
  return host;
}

template <typename T>
T DownloadOne(const T* device) {
  T value{};
  device::CopyToHost(&value, device, sizeof(T));
  return value;
}

template <typename T>
__global__ void Fill(T* a, int64_t n, T value) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    a[i] = value;
}

// Every step of sampling/gpu_sample_steps.h: thread i runs index i of [0, n).
template <typename IdT>
__global__ void StepKernel(gpu_steps::Step step, gpu_steps::Graph<IdT> g, gpu_steps::Layer l, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) gpu_steps::Run(step, g, l, i);
}

void ExclusiveScan(int64_t* a, int64_t n) { kernels::cuda::ExclusiveSumInPlace(a, n); }

}  // namespace

class DeviceSampler {
 public:
  DeviceSampler(int device_id, const GraphArrays& g) : device_id_(device_id) {
    TESSEL_CUDA_CHECK(cudaSetDevice(device_id_));
    const auto n = static_cast<size_t>(g.num_nodes);
    const auto e = static_cast<size_t>(g.num_entries);
    indptr_.Upload(g.indptr, n + 1);
    ids64_ = g.indices64 != nullptr;
    if (ids64_) {
      indices64_.Upload(g.indices64, e);
    } else {
      indices32_.Upload(g.indices32, e);
    }
    norm_degree_.Upload(g.norm_degree, n);
    if (g.row_skew != nullptr) {
      row_skew_.Upload(g.row_skew, n);
      edge_owner_.Upload(g.edge_owner, e);
      local_part_ = g.local_part;
    }
    local_id_.Reserve(n > 0 ? n : 1);
    first_.Reserve(n > 0 ? n : 1);
    Fill<<<Blocks(g.num_nodes), kThreads>>>(local_id_.data(), g.num_nodes, int32_t{-1});
    TESSEL_CUDA_CHECK_LAUNCH();
    Fill<<<Blocks(g.num_nodes), kThreads>>>(first_.data(), g.num_nodes, kNoSlot);
    TESSEL_CUDA_CHECK_LAUNCH();
    flags_.Reserve(2);
    TESSEL_CUDA_CHECK(cudaDeviceSynchronize());
  }

  std::vector<LayerArrays> Sample(const int64_t* seeds, int64_t num_seeds, const std::vector<int>& fanouts,
                                  const std::vector<uint64_t>& bases, bool replace, bool gcn) {
    TESSEL_CUDA_CHECK(cudaSetDevice(device_id_));
    std::vector<LayerArrays> out(fanouts.size());
    dst_.Upload(seeds, static_cast<size_t>(num_seeds));
    int64_t m = num_seeds;
    for (size_t l = fanouts.size(); l-- > 0;) {
      out[l] = ids64_ ? Layer(View<int64_t>(indices64_.data()), m, fanouts[l], bases[l], replace, gcn)
                      : Layer(View<int32_t>(indices32_.data()), m, fanouts[l], bases[l], replace, gcn);
      dst_.Swap(src_);
      m = static_cast<int64_t>(out[l].src_nodes.size());
    }
    return out;
  }

 private:
  template <typename IdT>
  gpu_steps::Graph<IdT> View(const IdT* indices) const {
    return gpu_steps::Graph<IdT>{indptr_.data(),     indices,    norm_degree_.data(), row_skew_.data(),
                                 edge_owner_.data(), local_part_};
  }

  template <typename IdT>
  static void Launch(gpu_steps::Step step, const gpu_steps::Graph<IdT>& g, const gpu_steps::Layer& l, int64_t n) {
    if (n <= 0) return;
    StepKernel<IdT><<<Blocks(n), kThreads>>>(step, g, l, n);
    TESSEL_CUDA_CHECK_LAUNCH();
  }

  // The pipeline of gpu_sample_steps.h for one layer (EmulateGpuSample in gpu_sampler.cc is its host twin).
  template <typename IdT>
  LayerArrays Layer(const gpu_steps::Graph<IdT>& g, int64_t m, int fanout, uint64_t base, bool replace, bool gcn) {
    using gpu_steps::Step;
    const auto rows = static_cast<size_t>(m);
    gpu_steps::Layer l{};
    l.dst = dst_.data();
    l.m = m;
    l.k = fanout;
    l.replace = replace;
    l.gcn = gcn;
    l.base = base;
    l.local_id = local_id_.data();
    l.first = first_.data();
    l.flags = flags_.Reserve(2);
    Fill<<<1, 2>>>(l.flags, 2, kNoSlot);
    TESSEL_CUDA_CHECK_LAUNCH();
    l.slot = slot_.Reserve(rows + 1);
    l.scratch_begin = scratch_begin_.Reserve(rows + 1);
    Launch(Step::kPlanRow, g, l, m + 1);
    ExclusiveScan(l.slot, m + 1);
    ExclusiveScan(l.scratch_begin, m + 1);
    l.slots = DownloadOne(l.slot + m);
    const int64_t scratch = DownloadOne(l.scratch_begin + m);
    const auto duplicate = DownloadOne(l.flags);
    if (duplicate != kNoSlot) {
      Launch(Step::kClearDestination, g, l, m);
      TESSEL_CUDA_CHECK(cudaDeviceSynchronize());
      throw Error(fmt::format("sampling: destination node {} is listed twice", duplicate));
    }
    const auto s = static_cast<size_t>(scratch > 0 ? scratch : 1);
    l.scratch_q = scratch_q_.Reserve(s);
    l.scratch_a = scratch_a_.Reserve(s);
    l.scratch_capped = scratch_capped_.Reserve(s);
    l.scratch_order = scratch_order_.Reserve(s);
    const auto slots = static_cast<size_t>(l.slots);
    l.slot_node = slot_node_.Reserve(slots + 1);
    l.slot_factor = slot_factor_.Reserve(slots + 1);
    l.new_rank = new_rank_.Reserve(slots + 1);
    Launch(Step::kPickRow, g, l, m);
    Launch(Step::kFirstSeen, g, l, l.slots);
    Launch(Step::kMarkNew, g, l, l.slots + 1);
    ExclusiveScan(l.new_rank, l.slots + 1);
    l.num_src = m + DownloadOne(l.new_rank + l.slots);
    l.src = src_.Reserve(static_cast<size_t>(l.num_src));
    if (m > 0) TESSEL_CUDA_CHECK(cudaMemcpy(l.src, l.dst, rows * sizeof(int64_t), cudaMemcpyDeviceToDevice));
    Launch(Step::kAssignNew, g, l, l.slots);
    l.out_indptr = out_indptr_.Reserve(rows + 1);
    Launch(Step::kRowLength, g, l, m + 1);
    ExclusiveScan(l.out_indptr, m + 1);
    const int64_t nnz = DownloadOne(l.out_indptr + m);
    l.out_indices = out_indices_.Reserve(static_cast<size_t>(nnz) + 1);
    l.out_values = out_values_.Reserve(static_cast<size_t>(nnz) + 1);
    Launch(Step::kWriteRow, g, l, m);
    Launch(Step::kResetMaps, g, l, l.num_src > l.slots ? l.num_src : l.slots);
    const auto bad_row = DownloadOne(l.flags + 1);
    TESSEL_CHECK(bad_row == kNoSlot, "sampling: row {} has a negative or non-finite probability", bad_row);
    LayerArrays layer;
    layer.src_nodes = Download(l.src, static_cast<size_t>(l.num_src));
    layer.indptr = Download(l.out_indptr, rows + 1);
    layer.indices = Download(l.out_indices, static_cast<size_t>(nnz));
    layer.values = Download(l.out_values, static_cast<size_t>(nnz));
    return layer;
  }

  int device_id_ = 0;
  bool ids64_ = false;
  int32_t local_part_ = 0;
  device::Array<int64_t> indptr_;
  device::Array<int32_t> indices32_;
  device::Array<int64_t> indices64_;
  device::Array<double> norm_degree_;
  device::Array<double> row_skew_;
  device::Array<int32_t> edge_owner_;
  device::Array<int32_t> local_id_;          // global -> local id of the block being built, -1 elsewhere
  device::Array<unsigned long long> first_;  // first slot of a new source node, kNoSlot elsewhere
  device::Array<unsigned long long> flags_;  // [duplicate destination, row with a bad probability], kNoSlot = none
  device::Array<int64_t> dst_, src_, slot_, scratch_begin_, slot_node_, new_rank_, out_indptr_, scratch_order_;
  device::Array<double> slot_factor_, scratch_q_, scratch_a_;
  device::Array<uint8_t> scratch_capped_;
  device::Array<int32_t> out_indices_;
  device::Array<float> out_values_;
};

namespace {

void DestroyDeviceSampler(DeviceSampler* sampler) noexcept { delete sampler; }

DeviceSamplerPtr CreateDeviceSampler(int device_id, const GraphArrays& graph) {
  return DeviceSamplerPtr(new DeviceSampler(device_id, graph), DeviceSamplerDeleter{&DestroyDeviceSampler});
}

std::vector<LayerArrays> SampleOnDevice(DeviceSampler& sampler, const int64_t* seeds, int64_t num_seeds,
                                        const std::vector<int>& fanouts, const std::vector<uint64_t>& bases,
                                        bool replace, bool gcn) {
  try {
    return sampler.Sample(seeds, num_seeds, fanouts, bases, replace, gcn);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // e.g. std::bad_alloc from the host side
    throw Error(fmt::format("GPU sampler: {}", e.what()));
  }
}

}  // namespace

extern const SamplerCudaOps kSamplerCudaOps;  // read by sampling/device_registry.cc
const SamplerCudaOps kSamplerCudaOps{CreateDeviceSampler, SampleOnDevice};

}  // namespace tessel::sampling::cuda
