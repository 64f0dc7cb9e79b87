// Host-side declaration of the CUDA row-wise top-k (kernels/cuda/topk.cu). No CUDA headers; device pointers.
// The CPU twin in kernels/cpu/topk.cc is the test oracle.
#pragma once

#include <cstdint>

namespace tessel::kernels::cuda {

// values[i, :k] and indices[i, :k]: the k largest entries of row i of x[n_rows x c], decreasing, ties by column.
void TopK(const float* x, int64_t n_rows, int64_t c, int64_t k, float* values, int32_t* indices);

}  // namespace tessel::kernels::cuda
