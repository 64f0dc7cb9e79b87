// CUDA neighbour sampling: the graph in device memory, each step of sampling/gpu_sample_steps.h as a kernel (one
// thread per row or pick slot; rows run pick_math.h, the CPU PickRow's own algorithm), scans by CUB (pooled). The
// per-layer sequence is sampling/gpu_sampler_pipeline.h, shared with the simulated device's twin.
//
// Per layer: plan (slots and weighted-row scratch per row, destinations marked), scans, picks (rows of degree
// <= kLocalDegree keep a weighted row's scratch per thread, larger ones a slice of one global scratch), sort-free
// relabelling (first appearance by atomicMin + scan: NeighborSampler's order), row lengths + scan, the CSR (the
// CPU's double arithmetic; this file is compiled with --fmad=false), then the node maps are reset.

#include <climits>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/cuda_check.h"
#include "core/device.h"
#include "kernels/cuda/launch_cuda.h"
#include "sampling/cuda/gpu_sampler_cuda.h"
#include "sampling/gpu_sample_steps.h"
#include "sampling/gpu_sampler_pipeline.h"

namespace tessel::sampling::cuda {
namespace {

constexpr int kThreads = 256;

int Blocks(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 1 ? 1 : (b > (INT_MAX / 2) ? INT_MAX / 2 : b));
}

template <typename T>
__global__ void FillKernel(T* a, int64_t n, T value) {
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

// The pipeline's executor on a GPU (the legacy stream orders every launch, scan and copy).
struct CudaExec {
  template <typename IdT>
  static void Launch(gpu_steps::Step step, const gpu_steps::Graph<IdT>& g, const gpu_steps::Layer& l, int64_t n) {
    StepKernel<IdT><<<Blocks(n), kThreads>>>(step, g, l, n);
    TESSEL_CUDA_CHECK_LAUNCH();
  }
  template <typename T>
  static void Fill(T* a, int64_t n, T value) {
    if (n <= 0) return;
    FillKernel<<<Blocks(n), kThreads>>>(a, n, value);
    TESSEL_CUDA_CHECK_LAUNCH();
  }
  static void ExclusiveScan(int64_t* a, int64_t n) { kernels::cuda::ExclusiveSumInPlace(a, n); }
  static void CopyOnDevice(void* dst, const void* src, size_t bytes) {
    if (bytes == 0) return;
    TESSEL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0));
    ::tessel::device::NoteLaunchesSeen(1);
  }
  static void SetDevice(int device_id) { TESSEL_CUDA_CHECK(cudaSetDevice(device_id)); }
};

class CudaSampler final : public DeviceSampler, public SamplerPipeline<CudaExec> {
 public:
  using SamplerPipeline<CudaExec>::SamplerPipeline;
};

DeviceSamplerPtr CreateDeviceSampler(int device_id, const GraphArrays& graph) {
  return std::make_unique<CudaSampler>(device_id, graph);
}

void SampleOnDevice(DeviceSampler& sampler, const int64_t* seeds, int64_t num_seeds, const std::vector<int>& fanouts,
                    const std::vector<uint64_t>& bases, bool replace, bool gcn, const LayerSink& sink) {
  try {
    static_cast<CudaSampler&>(sampler).Sample(seeds, num_seeds, fanouts, bases, replace, gcn, sink);
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
