// The GPU sampler's pipeline (gpu_sampler_pipeline.h) on the simulated device (core/device.h): each kernel of
// cuda/gpu_sampler.cu becomes a serial loop over the same step function (gpu_sample_steps.h), each CUB scan a
// std::exclusive_scan, each device-to-device copy a memcpy. Device pointers of the simulated device are host memory,
// so the same allocations and copies happen, counted, and the blocks are the CUDA pipeline's.
#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <utility>
#include <vector>

#include "core/device.h"
#include "core/error.h"
#include "sampling/cuda/gpu_sampler_cuda.h"
#include "sampling/gpu_sample_steps.h"
#include "sampling/gpu_sampler_pipeline.h"

namespace tessel::sampling::cuda {
namespace {

struct HostExec {
  template <typename IdT>
  static void Launch(gpu_steps::Step step, const gpu_steps::Graph<IdT>& g, const gpu_steps::Layer& l, int64_t n) {
    for (int64_t i = 0; i < n; ++i) gpu_steps::Run(step, g, l, i);
  }
  template <typename T>
  static void Fill(T* a, int64_t n, T value) {
    if (n > 0) std::fill_n(a, n, value);
  }
  static void ExclusiveScan(int64_t* a, int64_t n) { std::exclusive_scan(a, a + n, a, int64_t{0}); }
  // The fused scan kernel's work: the first-appearance flags and their scan, the row lengths' scan, both totals
  // staged.
  static void MarkScan(const gpu_steps::Layer& l, int64_t new_n, int64_t rows_n) {
    int64_t added = 0;
    for (int64_t p = 0; p < new_n; ++p) {
      const int64_t flag = gpu_steps::NewFlag(l, p);
      l.new_rank[p] = added;
      added += flag;
    }
    int64_t entries = 0;
    for (int64_t i = 0; i < rows_n; ++i) entries += std::exchange(l.out_indptr[i], entries);
    gpu_steps::StageNew(l, added);
    gpu_steps::StageEntries(l, entries);
  }
  static void CopyOnDevice(void* dst, const void* src, size_t bytes) {
    if (bytes > 0) std::memmove(dst, src, bytes);
  }
  static void SetDevice(int device_id) { device::SetDevice(device_id); }
};

class TwinSampler final : public DeviceSampler, public SamplerPipeline<HostExec> {
 public:
  TwinSampler(int device_id, const GraphArrays& graph) : SamplerPipeline<HostExec>(device_id, graph) {
    TESSEL_CHECK(device::Simulated(), "GPU sampler: the host twin runs only on the simulated device");
  }
};

DeviceSamplerPtr Create(int device_id, const GraphArrays& graph) {
  return std::make_unique<TwinSampler>(device_id, graph);
}

void Sample(DeviceSampler& sampler, const int64_t* seeds, int64_t num_seeds, const std::vector<int>& fanouts,
            const std::vector<uint64_t>& bases, bool replace, bool gcn, const LayerSink& sink) {
  static_cast<TwinSampler&>(sampler).Sample(seeds, num_seeds, fanouts, bases, replace, gcn, sink);
}

const SamplerCudaOps kTwinOps{Create, Sample};

}  // namespace

const SamplerCudaOps& SimulatedSamplerOps() { return kTwinOps; }

}  // namespace tessel::sampling::cuda
