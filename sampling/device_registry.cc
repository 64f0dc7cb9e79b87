// The sampling library's device registry (core/device_ops.h): the GPU sampler's CUDA table when this build compiled
// sampling/cuda/gpu_sampler.cu, null otherwise. The one file in the library that asks.
#include "core/build_config.h"
#include "sampling/cuda/gpu_sampler_cuda.h"

namespace tessel::sampling::cuda {

#if TESSEL_HAVE_CUDA
extern const SamplerCudaOps kSamplerCudaOps;  // sampling/cuda/gpu_sampler.cu
const SamplerCudaOps* CudaSamplerOps() { return &kSamplerCudaOps; }
#else
const SamplerCudaOps* CudaSamplerOps() { return nullptr; }
#endif

}  // namespace tessel::sampling::cuda
