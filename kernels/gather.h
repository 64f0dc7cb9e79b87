// Gather and scatter of dense feature rows: out[i] = src[ids[i]] and out[ids[i]] += src[i], and the gathers fused
// with dropout and aggregation that sampled mini-batches use. GatherRows also has a CUDA kernel
// (kernels/cuda/gather.cu) whose CPU twin here is its test oracle; the fused ones run on CUDA as their composition
// (GatherRows, Dropout, SpMM: the same values).
#pragma once

#include <cstdint>
#include <span>

#include "core/buffer.h"
#include "core/context.h"
#include "core/rng.h"
#include "kernels/matrix.h"

namespace tessel::kernels {

// out resized to [ids.size() x src.cols], out[i, :] = src[ids[i], :]. Throws on an id outside [0, src.rows).
// On CUDA the result is left current on the device (read it with out->View(), which copies it back).
void GatherRows(const Context& ctx, const Matrix& src, const Buffer<int64_t>& ids, Matrix* out);
// out resized to ids.size(), out[i] = src[ids[i]] (a permutation of a sparse matrix's values, say). Throws on an id
// outside [0, src.size()).
void GatherValues(const Context& ctx, const Buffer<float>& src, const Buffer<int64_t>& ids, Buffer<float>* out);
// The input rows of a layer with dropout, fused into the gather (no separate dropout pass, no mask stored):
// out resized to [n x src.cols], out[i, :] = dropout(src[r_i, :]) with r_i = ids[i] (ids empty: r_i = i for
// i < count), the mask element of (i, j) being i * src.cols + j of the stream `key` (kernels/dropout_math.h). The
// same values as GatherRows then Dropout(p, key); p = 0 is a plain gather.
void GatherRowsDropout(const Context& ctx, const Matrix& src, std::span<const int64_t> ids, int64_t count, float p,
                       const StreamKey& key, Matrix* out);
// Aggregation of gathered, dropped-out rows without building them: out = a · dropout(src[ids]) where a is
// [n_dst x n] over the n rows src[ids[0 .. n)] (ids empty: src's own rows, n = src.rows) and the mask is
// GatherRowsDropout's (element (i, j) of the gathered matrix is i * src.cols + j). The same values as SpMM(a,
// GatherRowsDropout(src, ids, n, p, key)); out resized to [a.rows x src.cols].
void GatherSpMM(const Context& ctx, const SparseMatrix& a, const Matrix& src, std::span<const int64_t> ids, float p,
                const StreamKey& key, Matrix* out);
// The same two over ids in a Buffer, which a caller keeps from call to call so that on a device both gathers of a
// step read one uploaded copy. GatherRowsDropout takes the first `count` ids (count <= ids.size()), or with ids
// empty the first `count` rows of src.
void GatherRowsDropout(const Context& ctx, const Matrix& src, const Buffer<int64_t>& ids, int64_t count, float p,
                       const StreamKey& key, Matrix* out);
void GatherSpMM(const Context& ctx, const SparseMatrix& a, const Matrix& src, const Buffer<int64_t>& ids, float p,
                const StreamKey& key, Matrix* out);
// out[ids[i], :] += src[i, :]; repeated ids add up in index order (deterministic). out keeps its shape.
void ScatterAddRows(const Context& ctx, const Matrix& src, const Buffer<int64_t>& ids, Matrix* out);

}  // namespace tessel::kernels
