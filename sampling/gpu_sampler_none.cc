// The device side of GpuNeighborSampler in a CPU-only build: creating one throws "built without CUDA", so every
// caller still compiles and links (DESIGN.md §2, Context + Dispatch).
#include "core/error.h"
#include "sampling/cuda/gpu_sampler_cuda.h"

namespace tessel::sampling::cuda {
namespace {
[[noreturn]] void NoCuda() {
  throw Error("GPU sampler: this tessel was built without CUDA (rebuild with -DTESSEL_CUDA=ON, or sample on the CPU)");
}
}  // namespace

void DeviceSamplerDeleter::operator()(DeviceSampler* /*sampler*/) const noexcept {}

DeviceSamplerPtr CreateDeviceSampler(int /*device_id*/, const GraphArrays& /*graph*/) { NoCuda(); }

std::vector<LayerArrays> SampleOnDevice(DeviceSampler& /*sampler*/, const int64_t* /*seeds*/, int64_t /*num_seeds*/,
                                        const std::vector<int>& /*fanouts*/, const std::vector<uint64_t>& /*bases*/,
                                        bool /*replace*/, bool /*gcn*/) {
  NoCuda();
}

}  // namespace tessel::sampling::cuda
