// Gather and scatter of dense feature rows: out[i] = src[ids[i]] and out[ids[i]] += src[i]. GatherRows also
// has a CUDA kernel (kernels/cuda/gather.cu) whose CPU twin here is its test oracle.
#pragma once

#include <cstdint>

#include "core/buffer.h"
#include "core/context.h"
#include "kernels/matrix.h"

namespace tessel::kernels {

// out resized to [ids.size() x src.cols], out[i, :] = src[ids[i], :]. Throws on an id outside [0, src.rows).
// On CUDA the result is left current on the device (read it with out->View(), which copies it back).
void GatherRows(const Context& ctx, const Matrix& src, const Buffer<int64_t>& ids, Matrix* out);
// out[ids[i], :] += src[i, :]; repeated ids add up in index order (deterministic). out keeps its shape.
void ScatterAddRows(const Context& ctx, const Matrix& src, const Buffer<int64_t>& ids, Matrix* out);

}  // namespace tessel::kernels
