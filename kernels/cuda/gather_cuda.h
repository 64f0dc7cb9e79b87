// Host-side declarations of the CUDA row gather and scatter-add (kernels/cuda/gather.cu); no CUDA headers, so
// the CPU file that dispatches to them compiles in every build. Pointers are device pointers.
#pragma once

#include <cstdint>

#include "kernels/device_csr.h"
#include "kernels/dropout_math.h"

namespace tessel::kernels::cuda {

// out[i, :] = src[ids[i], :] for i in [0, n); ids already checked to lie in range.
void GatherRows(const float* src, int64_t cols, const int64_t* ids, int64_t n, float* out);
// out[i, j] = dropout(src[r_i, j]) with r_i = ids[i] (ids null: r_i = i) and the mask element i * cols + j of the
// stream (kernels/dropout_math.h): GatherRows then Dropout in one pass, the same values.
void GatherRowsDropout(const float* src, int64_t cols, const int64_t* ids, int64_t n, const DropoutSpec& spec,
                       float* out);
// out[d, :] = sum over the entries e of row d of a: w_e * dropout(src[r_s, :]) with s = a's column, r_s = ids[s]
// (ids null: r_s = s), the mask elements s * cols + j of the gathered matrix: GatherRowsDropout then SpMM without
// building the gathered matrix. One warp per destination row, lanes over columns, the entries in order with
// round-to-nearest products and sums: the CPU's fused kernel's values, bit for bit. src has src_rows rows.
void GatherSpMM(const DeviceCsr& a, const float* src, int64_t src_rows, int64_t cols, const int64_t* ids,
                const DropoutSpec& spec, float* out);
// out[t, :] += src[order[k], :] for k in [start[t], start[t + 1]), t in [0, targets), k ascending.
void ScatterAddRows(const float* src, int64_t cols, const int64_t* order, const int64_t* start, int64_t targets,
                    float* out);

}  // namespace tessel::kernels::cuda
