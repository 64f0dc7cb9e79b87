// CUDA sparse kernels: CSR x dense by tessel's row kernel for narrow outputs (the GCN's hidden and class widths) and
// through cuSPARSE's generic SpMM for wide ones (row-major dense operands, descriptors cached per thread and
// re-pointed each call, grow-only work buffer); CSR transposition through cusparseCsr2cscEx2.
#include <algorithm>
#include <memory>
#include <vector>

#include "kernels/cuda/launch_cuda.h"
#include "kernels/cuda/sparse_cuda.h"

namespace tessel::kernels::cuda {
namespace {

__global__ void NarrowKernel(const int64_t* in, int64_t n, int32_t* out) {
  for (int64_t i = GlobalIndex(); i < n; i += GlobalStride()) out[i] = static_cast<int32_t>(in[i]);
}
__global__ void WidenKernel(const int32_t* in, int64_t n, int64_t* out) {
  for (int64_t i = GlobalIndex(); i < n; i += GlobalStride()) out[i] = in[i];
}
__global__ void FillKernel(float* out, int64_t n, float value) {
  for (int64_t i = GlobalIndex(); i < n; i += GlobalStride()) out[i] = value;
}

// out[i] = length of row ids[i] for i < m, out[m] = 0 (an exclusive scan then gives the offsets).
__global__ void GatheredLengthsKernel(const int64_t* __restrict__ indptr, const int64_t* __restrict__ ids, int64_t m,
                                      int64_t* __restrict__ out) {
  for (int64_t i = GlobalIndex(); i <= m; i += GlobalStride()) {
    out[i] = i < m ? indptr[ids[i] + 1] - indptr[ids[i]] : 0;
  }
}

// One warp per gathered row: its entries copied in order (coalesced reads and writes within the row).
constexpr int kGatherWarp = 32;
__global__ void GatherEntriesKernel(const int64_t* __restrict__ indptr, const int32_t* __restrict__ indices,
                                    const float* __restrict__ values, const int64_t* __restrict__ ids, int64_t m,
                                    const int64_t* __restrict__ out_indptr, int32_t* __restrict__ out_indices,
                                    float* __restrict__ out_values) {
  const int lane = static_cast<int>(threadIdx.x % kGatherWarp);
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / kGatherWarp);
  for (int64_t i = GlobalIndex() / kGatherWarp; i < m; i += warps) {
    const int64_t begin = indptr[ids[i]];
    const int64_t len = indptr[ids[i] + 1] - begin;
    const int64_t out = out_indptr[i];
    for (int64_t e = lane; e < len; e += kGatherWarp) {
      out_indices[out + e] = indices[begin + e];
      if (out_values != nullptr) out_values[out + e] = values[begin + e];
    }
  }
}

// n ones in the calling thread's scratch; refilled only when the scratch moved or grew.
const float* Ones(int64_t n) {
  thread_local const void* filled_at = nullptr;
  thread_local int64_t filled = 0;
  auto* p = static_cast<float*>(Scratch(ScratchSlot::kOnes, static_cast<size_t>(n) * sizeof(float)));
  if (p != filled_at || filled < n) {
    FillKernel<<<Blocks(n), kThreads>>>(p, n, 1.0F);
    TESSEL_CUDA_CHECK_LAUNCH();
    filled_at = p;
    filled = n;
  }
  return p;
}

// One cached set of SpMM descriptors. The key only selects descriptors of the right shape and index type;
// the data pointers are set on every call.
struct SpmmEntry {
  const void* key = nullptr;
  int64_t rows = 0, cols = 0, nnz = 0, n = 0;
  bool wide = false;
  cusparseSpMatDescr_t a = nullptr;
  cusparseDnMatDescr_t x = nullptr;
  cusparseDnMatDescr_t y = nullptr;

  SpmmEntry() = default;
  SpmmEntry(const SpmmEntry&) = delete;
  SpmmEntry& operator=(const SpmmEntry&) = delete;
  ~SpmmEntry() {  // statuses ignored: may run at thread exit while the runtime unloads
    if (a != nullptr) cusparseDestroySpMat(a);
    if (x != nullptr) cusparseDestroyDnMat(x);
    if (y != nullptr) cusparseDestroyDnMat(y);
  }
};

constexpr size_t kCacheEntries = 16;  // per thread; least recently used is evicted

SpmmEntry& FindOrCreate(const DeviceCsr& m, int64_t n, bool wide, void* indptr, void* indices, void* values,
                        const float* x, float* y) {
  thread_local std::vector<std::unique_ptr<SpmmEntry>> cache;
  for (size_t i = 0; i < cache.size(); ++i) {
    SpmmEntry& e = *cache[i];
    if (e.key == m.key && e.rows == m.rows && e.cols == m.cols && e.nnz == m.nnz && e.n == n && e.wide == wide) {
      TESSEL_CUSPARSE_CHECK(cusparseCsrSetPointers(e.a, indptr, indices, values));
      TESSEL_CUSPARSE_CHECK(cusparseDnMatSetValues(e.x, const_cast<float*>(x)));
      TESSEL_CUSPARSE_CHECK(cusparseDnMatSetValues(e.y, y));
      if (i + 1 != cache.size()) std::swap(cache[i], cache.back());  // most recent at the back
      return *cache.back();
    }
  }
  if (cache.size() == kCacheEntries) cache.erase(cache.begin());
  auto e = std::make_unique<SpmmEntry>();
  e->key = m.key;
  e->rows = m.rows;
  e->cols = m.cols;
  e->nnz = m.nnz;
  e->n = n;
  e->wide = wide;
  const cusparseIndexType_t it = wide ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
  TESSEL_CUSPARSE_CHECK(cusparseCreateCsr(&e->a, m.rows, m.cols, m.nnz, indptr, indices, values, it, it,
                                          CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  TESSEL_CUSPARSE_CHECK(
      cusparseCreateDnMat(&e->x, m.cols, n, n, const_cast<float*>(x), CUDA_R_32F, CUSPARSE_ORDER_ROW));
  TESSEL_CUSPARSE_CHECK(cusparseCreateDnMat(&e->y, m.rows, n, n, y, CUDA_R_32F, CUSPARSE_ORDER_ROW));
  cache.push_back(std::move(e));
  return *cache.back();
}

// Row-parallel CSR x dense: a group of G lanes (a power of two, 4 to 32) takes one row, lane l of the group the
// columns l, l + G, ...; each value sums its row's entries in order, w * x rounded at each step (__fmul_rn,
// __fadd_rn: no contraction), as the CPU's SpMM does, so the two agree bit for bit. Four entries are loaded before
// they are added (the loads overlap; the additions keep their order). Reads the int64 offsets and int32 columns
// as they are: nothing is narrowed, widened or scaled first.
template <int G>
__global__ void SpMMRowsKernel(const int64_t* __restrict__ indptr, const int32_t* __restrict__ indices,
                               const float* __restrict__ values, int64_t rows, const float* __restrict__ x, int64_t n,
                               float* __restrict__ y) {
  const int lane = static_cast<int>(threadIdx.x % G);
  const int64_t groups = static_cast<int64_t>(gridDim.x) * (blockDim.x / G);
  for (int64_t r = GlobalIndex() / G; r < rows; r += groups) {
    const int64_t begin = indptr[r];
    const int64_t end = indptr[r + 1];
    for (int64_t j = lane; j < n; j += G) {
      float acc = 0.0F;
      int64_t e = begin;
      for (; e + 4 <= end; e += 4) {
        float w[4];
        float v[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          w[k] = values != nullptr ? values[e + k] : 1.0F;
          v[k] = x[static_cast<int64_t>(indices[e + k]) * n + j];
        }
#pragma unroll
        for (int k = 0; k < 4; ++k) acc = __fadd_rn(acc, __fmul_rn(w[k], v[k]));
      }
      for (; e < end; ++e) {
        const float w = values != nullptr ? values[e] : 1.0F;
        acc = __fadd_rn(acc, __fmul_rn(w, x[static_cast<int64_t>(indices[e]) * n + j]));
      }
      y[r * n + j] = acc;
    }
  }
}

template <int G>
void LaunchSpMMRows(const DeviceCsr& a, const float* x, int64_t n, float* y) {
  constexpr int kBlock = 256;
  constexpr int64_t kRowsPerBlock = kBlock / G;
  constexpr int64_t kMaxBlocks = int64_t{1} << 22;  // beyond, the grid strides
  const int64_t blocks = std::min((a.rows + kRowsPerBlock - 1) / kRowsPerBlock, kMaxBlocks);
  SpMMRowsKernel<G><<<static_cast<unsigned>(blocks), kBlock>>>(a.indptr, a.indices, a.values, a.rows, x, n, y);
  TESSEL_CUDA_CHECK_LAUNCH();
}

}  // namespace

void SpMM(const DeviceCsr& a, const float* x, int64_t n, float* y) {
  if (a.rows == 0 || n == 0) return;
  if (a.nnz == 0) {
    TESSEL_CUDA_CHECK(cudaMemset(y, 0, static_cast<size_t>(a.rows * n) * sizeof(float)));
    ::tessel::device::NoteLaunchesSeen(1);
    return;
  }
  if (!SpMMUsesRowKernel(a, n)) {
    SpMMCusparse(a, x, n, y);
  } else if (n <= 4) {
    LaunchSpMMRows<4>(a, x, n, y);
  } else if (n <= 8) {
    LaunchSpMMRows<8>(a, x, n, y);
  } else if (n <= 16) {
    LaunchSpMMRows<16>(a, x, n, y);
  } else {
    LaunchSpMMRows<32>(a, x, n, y);
  }
}

void SpMMCusparse(const DeviceCsr& a, const float* x, int64_t n, float* y) {
  if (a.rows == 0 || n == 0) return;
  if (a.nnz == 0) {
    TESSEL_CUDA_CHECK(cudaMemset(y, 0, static_cast<size_t>(a.rows * n) * sizeof(float)));
    ::tessel::device::NoteLaunchesSeen(1);
    return;
  }
  const bool wide = a.nnz > INT32_MAX || a.rows > INT32_MAX || a.cols > INT32_MAX;
  void* indptr = const_cast<int64_t*>(a.indptr);
  void* indices = const_cast<int32_t*>(a.indices);
  if (wide) {
    auto* w = static_cast<int64_t*>(Scratch(ScratchSlot::kIndices64, static_cast<size_t>(a.nnz) * sizeof(int64_t)));
    WidenKernel<<<Blocks(a.nnz), kThreads>>>(a.indices, a.nnz, w);
    TESSEL_CUDA_CHECK_LAUNCH();
    indices = w;
  } else {
    auto* p32 =
        static_cast<int32_t*>(Scratch(ScratchSlot::kIndptr32, static_cast<size_t>(a.rows + 1) * sizeof(int32_t)));
    NarrowKernel<<<Blocks(a.rows + 1), kThreads>>>(a.indptr, a.rows + 1, p32);
    TESSEL_CUDA_CHECK_LAUNCH();
    indptr = p32;
  }
  void* values = const_cast<float*>(a.values != nullptr ? a.values : Ones(a.nnz));
  SpmmEntry& e = FindOrCreate(a, n, wide, indptr, indices, values, x, y);
  cusparseHandle_t h = CusparseHandle();
  const float alpha = 1.0F;
  const float beta = 0.0F;
  size_t bytes = 0;
  TESSEL_CUSPARSE_CHECK(cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                &alpha, e.a, e.x, &beta, e.y, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT,
                                                &bytes));
  void* work = Scratch(ScratchSlot::kSpmmWork, bytes);
  TESSEL_CUSPARSE_CHECK(cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, e.a,
                                     e.x, &beta, e.y, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, work));
  ::tessel::device::NoteLaunchesSeen(1);
}

void Transpose(const DeviceCsr& a, int64_t* t_indptr, int32_t* t_indices, float* t_values) {
  TESSEL_CHECK(a.nnz <= INT32_MAX && a.rows <= INT32_MAX && a.cols < INT32_MAX,
               "Transpose on CUDA: {}x{} with {} entries exceeds cusparseCsr2cscEx2's 32-bit indices", a.rows, a.cols,
               a.nnz);
  if (a.nnz == 0 || a.rows == 0) {
    TESSEL_CUDA_CHECK(cudaMemset(t_indptr, 0, static_cast<size_t>(a.cols + 1) * sizeof(int64_t)));
    ::tessel::device::NoteLaunchesSeen(1);
    return;
  }
  // int32 offsets of a and of the result side by side in one scratch; with no values, the symbolic pass gets
  // stand-in value arrays (CUSPARSE_ACTION_SYMBOLIC never reads or writes them).
  const size_t p32_count = static_cast<size_t>(a.rows + 1 + 255) / 256 * 256;
  auto* p32 = static_cast<int32_t*>(
      Scratch(ScratchSlot::kIndptr32, (p32_count + static_cast<size_t>(a.cols + 1)) * sizeof(int32_t)));
  int32_t* c32 = p32 + p32_count;
  NarrowKernel<<<Blocks(a.rows + 1), kThreads>>>(a.indptr, a.rows + 1, p32);
  TESSEL_CUDA_CHECK_LAUNCH();
  const bool numeric = a.values != nullptr;
  const void* in_values = numeric ? static_cast<const void*>(a.values) : Ones(a.nnz);
  void* out_values = numeric ? static_cast<void*>(t_values)
                             : Scratch(ScratchSlot::kIndices64, static_cast<size_t>(a.nnz) * sizeof(float));
  const cusparseAction_t action = numeric ? CUSPARSE_ACTION_NUMERIC : CUSPARSE_ACTION_SYMBOLIC;
  cusparseHandle_t h = CusparseHandle();
  const int m = static_cast<int>(a.rows);
  const int n = static_cast<int>(a.cols);
  const int nnz = static_cast<int>(a.nnz);
  size_t work_bytes = 0;
  TESSEL_CUSPARSE_CHECK(cusparseCsr2cscEx2_bufferSize(h, m, n, nnz, in_values, p32, a.indices, out_values, c32,
                                                      t_indices, CUDA_R_32F, action, CUSPARSE_INDEX_BASE_ZERO,
                                                      CUSPARSE_CSR2CSC_ALG1, &work_bytes));
  void* work = Scratch(ScratchSlot::kTranspose, std::max<size_t>(work_bytes, 1));
  TESSEL_CUSPARSE_CHECK(cusparseCsr2cscEx2(h, m, n, nnz, in_values, p32, a.indices, out_values, c32, t_indices,
                                           CUDA_R_32F, action, CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, work));
  ::tessel::device::NoteLaunchesSeen(1);
  WidenKernel<<<Blocks(a.cols + 1), kThreads>>>(c32, a.cols + 1, t_indptr);
  TESSEL_CUDA_CHECK_LAUNCH();
}

void GatherSparseRows(const DeviceCsr& a, const int64_t* ids, int64_t m, int64_t* out_indptr, int32_t* out_indices,
                      float* out_values) {
  GatheredLengthsKernel<<<Blocks(m + 1), kThreads>>>(a.indptr, ids, m, out_indptr);
  TESSEL_CUDA_CHECK_LAUNCH();
  ExclusiveSumInPlace(out_indptr, m + 1);
  if (m == 0 || a.nnz == 0) return;
  GatherEntriesKernel<<<Blocks(m * kGatherWarp), kThreads>>>(a.indptr, a.indices, a.values, ids, m, out_indptr,
                                                             out_indices, out_values);
  TESSEL_CUDA_CHECK_LAUNCH();
}

}  // namespace tessel::kernels::cuda
