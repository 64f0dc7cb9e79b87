// Host-side declaration of the CUDA row gather (kernels/cuda/gather.cu); no CUDA headers, so the CPU file
// that dispatches to it compiles in every build. Pointers are device pointers.
#pragma once

#include <cstdint>

namespace tessel::kernels::cuda {

// out[i, :] = src[ids[i], :] for i in [0, n); ids already checked to lie in range.
void GatherRows(const float* src, int64_t cols, const int64_t* ids, int64_t n, float* out);

}  // namespace tessel::kernels::cuda
