// The product of dropped-out x with b, x never copied (kernels/cuda/dense_cuda.h DropoutGemm, DropoutGemmTN): the
// first GCN layer's input dropout fused into its GEMM (forward) and into its weight gradient (backward), so the
// layer neither writes a dropped-out copy of its input (rows x cols floats: 512 MB for 1M nodes x 128 features) nor
// reads it back. Shared-memory tiles of 32 x 32; each x element is read once per 32 output columns (the callers use
// these for outputs at most 32 wide: once), its mask bit computed as it is loaded (kernels/dropout_math.h, the
// CPU's function of the element's index).
#include "kernels/cuda/dense_cuda.h"
#include "kernels/cuda/launch_cuda.h"
#include "kernels/dropout_math.h"

namespace tessel::kernels::cuda {
namespace {

constexpr int kTile = 32;                      // rows, columns and inner indices per tile
constexpr int kTileRows = 8;                   // threads per block: kTile x kTileRows
constexpr int kPerThread = kTile / kTileRows;  // outputs per thread (one column, kPerThread rows)
static_assert(kPerThread == 4, "a thread's four outputs take one float4 of x a row or inner index");
constexpr int64_t kChunkRows = 4096;                  // DropoutGemmTN: x rows per partial product (at least)
constexpr int64_t kPartialFloats = int64_t{1} << 24;  // DropoutGemmTN: partial values at most (64 MB)

// x[i] after dropout: Dropout's value (kernels/cuda/dense.cu DropoutKernel).
__device__ inline float Dropped(const float* x, int64_t i, const DropoutSpec& spec) {
  if (!spec.Active()) return x[i];
  const uint64_t word = DropoutMaskWord(spec, static_cast<uint64_t>(i) >> 6);
  return ((word >> (i & 63)) & 1U) != 0 ? __fmul_rn(x[i], spec.scale) : 0.0F;
}

// acc = fma(v.w, b3, fma(v.z, b2, fma(v.y, b1, fma(v.x, b0, acc)))): four terms added in order.
__device__ inline float Fma4(float4 v, float b0, float b1, float b2, float b3, float acc) {
  return fmaf(v.w, b3, fmaf(v.z, b2, fmaf(v.y, b1, fmaf(v.x, b0, acc))));
}

// c[rows x n] = drop(x) · b. Block (kTile, kTileRows) computes the tile of rows blockIdx.x and columns blockIdx.y:
// thread (tx, ty) the column tx of rows ty, ty + 8, ty + 16, ty + 24, summing over the inner index in order. A
// warp's x values are read four at a time (one broadcast float4 per row and 4 inner indices), its b values one per
// lane: 8 shared-memory reads per 16 multiply-adds.
__global__ void DropoutGemmKernel(const float* __restrict__ x, int64_t rows, int64_t cols, DropoutSpec spec,
                                  const float* __restrict__ b, int64_t n, float* __restrict__ c) {
  __shared__ __align__(16) float xs[kTile][kTile + 4];  // [row][inner]; rows 16-byte aligned (float4 reads)
  __shared__ float bs[kTile][kTile + 1];                // [inner][column]
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int64_t row0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const int64_t col0 = static_cast<int64_t>(blockIdx.y) * kTile;
  float acc[kPerThread] = {};
  for (int64_t k0 = 0; k0 < cols; k0 += kTile) {
    for (int i = ty; i < kTile; i += kTileRows) {
      const int64_t r = row0 + i;
      const int64_t k = k0 + tx;
      xs[i][tx] = r < rows && k < cols ? Dropped(x, r * cols + k, spec) : 0.0F;
      const int64_t kb = k0 + i;
      const int64_t j = col0 + tx;
      bs[i][tx] = kb < cols && j < n ? b[kb * n + j] : 0.0F;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; k += 4) {
      const float b0 = bs[k][tx];
      const float b1 = bs[k + 1][tx];
      const float b2 = bs[k + 2][tx];
      const float b3 = bs[k + 3][tx];
#pragma unroll
      for (int q = 0; q < kPerThread; ++q) {
        const float4 v = *reinterpret_cast<const float4*>(&xs[ty + q * kTileRows][k]);
        acc[q] = Fma4(v, b0, b1, b2, b3, acc[q]);
      }
    }
    __syncthreads();
  }
  const int64_t j = col0 + tx;
  for (int q = 0; q < kPerThread; ++q) {
    const int64_t r = row0 + ty + q * kTileRows;
    if (r < rows && j < n) c[r * n + j] = acc[q];
  }
}

// partial[chunk][cols x n] = drop(x rows of the chunk)ᵀ · b (the same rows). Block (kTile, kTileRows): chunk
// blockIdx.x, inner (x column) tile blockIdx.y, output column tile blockIdx.z; thread (tx, ty) the column tx of x
// columns 4 ty .. 4 ty + 3 of the tile (one broadcast float4 read a row), summing over the chunk's rows in order.
__global__ void DropoutGemmTNPartialKernel(const float* __restrict__ x, int64_t rows, int64_t cols, DropoutSpec spec,
                                           const float* __restrict__ b, int64_t n, int64_t chunk_rows,
                                           float* __restrict__ partial) {
  __shared__ __align__(16) float xs[kTile][kTile + 4];  // [row][x column]; rows 16-byte aligned (float4 reads)
  __shared__ float bs[kTile][kTile + 1];                // [row][output column]
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int64_t first = static_cast<int64_t>(blockIdx.x) * chunk_rows;
  const int64_t last = first + chunk_rows < rows ? first + chunk_rows : rows;
  const int64_t k0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int64_t col0 = static_cast<int64_t>(blockIdx.z) * kTile;
  float acc[kPerThread] = {};
  for (int64_t r0 = first; r0 < last; r0 += kTile) {
    for (int i = ty; i < kTile; i += kTileRows) {
      const int64_t r = r0 + i;
      const int64_t k = k0 + tx;
      xs[i][tx] = r < last && k < cols ? Dropped(x, r * cols + k, spec) : 0.0F;
      const int64_t j = col0 + tx;
      bs[i][tx] = r < last && j < n ? b[r * n + j] : 0.0F;
    }
    __syncthreads();
#pragma unroll 8
    for (int i = 0; i < kTile; ++i) {
      const float bv = bs[i][tx];
      const float4 v = *reinterpret_cast<const float4*>(&xs[i][ty * kPerThread]);
      acc[0] = fmaf(v.x, bv, acc[0]);
      acc[1] = fmaf(v.y, bv, acc[1]);
      acc[2] = fmaf(v.z, bv, acc[2]);
      acc[3] = fmaf(v.w, bv, acc[3]);
    }
    __syncthreads();
  }
  const int64_t j = col0 + tx;
  float* out = partial + static_cast<int64_t>(blockIdx.x) * cols * n;
  for (int q = 0; q < kPerThread; ++q) {
    const int64_t k = k0 + ty * kPerThread + q;
    if (k < cols && j < n) out[k * n + j] = acc[q];
  }
}

// c[i] = sum over chunks in order of partial[chunk][i]: the same bits on every run.
__global__ void ChunkSumKernel(const float* __restrict__ partial, int64_t chunks, int64_t size, float* __restrict__ c) {
  for (int64_t i = GlobalIndex(); i < size; i += GlobalStride()) {
    float s = 0.0F;
    for (int64_t q = 0; q < chunks; ++q) s = __fadd_rn(s, partial[q * size + i]);
    c[i] = s;
  }
}

int TileBlocks(int64_t n) { return static_cast<int>((n + kTile - 1) / kTile); }

}  // namespace

void DropoutGemm(const float* x, int64_t rows, int64_t cols, const DropoutSpec& spec, const float* b, int64_t n,
                 float* c) {
  if (rows == 0 || n == 0) return;
  TESSEL_CHECK(TileBlocks(n) <= 65535, "DropoutGemm: {} output columns exceed the grid", n);
  const dim3 grid(static_cast<unsigned>(TileBlocks(rows)), static_cast<unsigned>(TileBlocks(n)));
  DropoutGemmKernel<<<grid, dim3(kTile, kTileRows)>>>(x, rows, cols, spec, b, n, c);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void DropoutGemmTN(const float* x, int64_t rows, int64_t cols, const DropoutSpec& spec, const float* b, int64_t n,
                   float* c) {
  if (cols == 0 || n == 0) return;
  TESSEL_CHECK(TileBlocks(cols) <= 65535 && TileBlocks(n) <= 65535, "DropoutGemmTN: {} x {} outputs exceed the grid",
               cols, n);
  // Chunks of at least kChunkRows rows (whole tiles), and at most kPartialFloats partial values in all (a wide x has
  // enough blocks in its column tiles); no row: one chunk of zeros.
  const int64_t size = cols * n;
  const int64_t most_chunks = kPartialFloats / size > 1 ? kPartialFloats / size : 1;
  int64_t chunk_rows = kChunkRows;
  if ((rows + chunk_rows - 1) / chunk_rows > most_chunks) chunk_rows = (rows + most_chunks - 1) / most_chunks;
  chunk_rows = (chunk_rows + kTile - 1) / kTile * kTile;
  const int64_t chunks = rows > 0 ? (rows + chunk_rows - 1) / chunk_rows : 1;
  auto* partial = static_cast<float*>(
      Scratch(ScratchSlot::kReduce, static_cast<size_t>(chunks) * static_cast<size_t>(size) * sizeof(float)));
  const dim3 grid(static_cast<unsigned>(chunks), static_cast<unsigned>(TileBlocks(cols)),
                  static_cast<unsigned>(TileBlocks(n)));
  DropoutGemmTNPartialKernel<<<grid, dim3(kTile, kTileRows)>>>(x, rows, cols, spec, b, n, chunk_rows, partial);
  TESSEL_CUDA_CHECK_LAUNCH();
  ChunkSumKernel<<<Blocks(size), kThreads>>>(partial, chunks, size, c);
  TESSEL_CUDA_CHECK_LAUNCH();
}

}  // namespace tessel::kernels::cuda
