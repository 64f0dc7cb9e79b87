// Row-wise top-k: the k largest values of every row of a dense matrix with their column ids, in decreasing
// order (ties: smaller column first). CPU (kernels/cpu/topk.cc) and CUDA (kernels/cuda/topk.cu) twins.
#pragma once

#include <cstdint>

#include "core/buffer.h"
#include "core/context.h"
#include "kernels/matrix.h"

namespace tessel::kernels {

// values resized to [x.rows x k], indices to x.rows * k entries (row-major, like values). Needs
// 0 <= k <= x.cols and NaN-free rows (NaN has no place in the order). On CUDA both outputs are left current on
// the device.
void TopK(const Context& ctx, const Matrix& x, int64_t k, Matrix* values, Buffer<int32_t>* indices);

}  // namespace tessel::kernels
