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

#include <cub/block/block_scan.cuh>

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

// The fused scan (the pipeline's MarkScan): block 0 scans the first-appearance flags of [0, new_n) into new_rank
// (computing them as kMarkNew does), block 1 the row lengths out_indptr[0, rows_n), each in tiles of
// kScanThreads x kScanItems with a running carry; then each stages its total (gpu_steps::StageNew / StageEntries).
// One launch for what kMarkNew, two CUB scans and kStage do; the pipeline uses it up to kFusedScanMax elements.
constexpr int kScanThreads = 512;  // with 8 items: no register spills on sm_90 (1024 threads spill)
constexpr int kScanItems = 8;      // 8 independent loads a thread in flight (NewFlag reads two node maps at random)

__global__ void __launch_bounds__(kScanThreads) MarkScanKernel(gpu_steps::Layer l, int64_t new_n, int64_t rows_n) {
  using BlockScan = cub::BlockScan<int64_t, kScanThreads>;
  __shared__ typename BlockScan::TempStorage temp;
  __shared__ int64_t carry;
  const bool marks = blockIdx.x == 0;
  int64_t* a = marks ? l.new_rank : l.out_indptr;
  const int64_t n = marks ? new_n : rows_n;
  if (threadIdx.x == 0) carry = 0;
  __syncthreads();
  for (int64_t tile = 0; tile < n; tile += int64_t{kScanThreads} * kScanItems) {
    const int64_t first = tile + static_cast<int64_t>(threadIdx.x) * kScanItems;
    int64_t items[kScanItems];
    for (int j = 0; j < kScanItems; ++j) {
      const int64_t i = first + j;
      items[j] = i < n ? (marks ? gpu_steps::NewFlag(l, i) : a[i]) : 0;
    }
    int64_t tile_total = 0;
    BlockScan(temp).ExclusiveSum(items, items, tile_total);
    const int64_t base = carry;
    for (int j = 0; j < kScanItems; ++j) {
      if (first + j < n) a[first + j] = base + items[j];
    }
    __syncthreads();  // every thread has read carry and is done with temp
    if (threadIdx.x == 0) carry = base + tile_total;
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    if (marks) {
      gpu_steps::StageNew(l, carry);
    } else {
      gpu_steps::StageEntries(l, carry);
    }
  }
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
  static void MarkScan(const gpu_steps::Layer& l, int64_t new_n, int64_t rows_n) {
    MarkScanKernel<<<2, kScanThreads>>>(l, new_n, rows_n);
    TESSEL_CUDA_CHECK_LAUNCH();
  }
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
