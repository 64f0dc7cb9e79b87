// The sampling library's device registry (core/device_ops.h): the GPU sampler's CUDA table when this build compiled
// sampling/cuda/gpu_sampler.cu, null otherwise, and the samplers' table (block_sampler.h) built on it. The one file in
// the library that asks.
#include <memory>
#include <optional>
#include <utility>

#include "core/build_config.h"
#include "core/device_ops.h"
#include "sampling/block_sampler.h"
#include "sampling/cuda/gpu_sampler_cuda.h"
#include "sampling/gpu_sampler.h"

namespace tessel::sampling::cuda {

#if TESSEL_HAVE_CUDA
extern const SamplerCudaOps kSamplerCudaOps;  // sampling/cuda/gpu_sampler.cu
const SamplerCudaOps* CudaSamplerOps() { return &kSamplerCudaOps; }
#else
const SamplerCudaOps* CudaSamplerOps() { return nullptr; }
#endif

}  // namespace tessel::sampling::cuda

namespace tessel::sampling {
namespace {

// A sampler behind the one interface; kOnDevice: its blocks are written on the device.
template <typename Sampler, bool kOnDevice>
class Adapter final : public BlockSampler {
 public:
  template <typename... Args>
  explicit Adapter(Args&&... args) : sampler_(std::forward<Args>(args)...) {}
  std::vector<Block> Sample(std::span<const int64_t> seeds, const StreamKey& key, bool input_sources) override {
    if constexpr (kOnDevice) {
      return sampler_.Sample(seeds, key, false, input_sources);  // at most the input layer's sources on the host
    } else {
      return sampler_.Sample(seeds, key);
    }
  }
  bool BlocksOnDevice() const override { return kOnDevice; }

 private:
  Sampler sampler_;
};

std::unique_ptr<BlockSampler> MakeCpu(const datasets::AnyGraph& graph, SamplerOptions options, int /*device_id*/) {
  return std::make_unique<Adapter<NeighborSampler, false>>(graph, std::move(options));
}

std::unique_ptr<BlockSampler> MakeGpu(const datasets::AnyGraph& graph, SamplerOptions options, int device_id) {
  return std::make_unique<Adapter<GpuNeighborSampler, true>>(graph, std::move(options), std::nullopt, device_id);
}

const SamplerOps kCpuSamplers{MakeCpu};
const SamplerOps kGpuSamplers{MakeGpu};  // CUDA, or the host twins on the simulated device

}  // namespace

const SamplerOps& SamplerFor(const Context& ctx) {
  return SelectOps(ctx, kCpuSamplers, TESSEL_HAVE_CUDA ? &kGpuSamplers : nullptr, "sampling", &kGpuSamplers);
}

}  // namespace tessel::sampling
