// CUDA SVM kernel rows (ThunderSVM's batched rows): the working-set rows are densified into a d x q matrix, one
// cuSPARSE SpMM (column rows x dense, float64) gives every dot product, and one kernel maps them to K or Q values.
#include <algorithm>
#include <vector>

#include "core/device.h"
#include "kernels/cuda/launch_cuda.h"
#include "kernels/cuda/svm_kernel_cuda.h"

namespace tessel::kernels::cuda {
namespace {

// KernelFromDot (kernels/cpu/svm_kernel.cc) on the device: the same expressions.
__device__ inline double DeviceKernel(int type, int degree, double gamma, double coef0, double dot, double sq_a,
                                      double sq_b) {
  switch (type) {
    case 0:
      return dot;
    case 1:
      return pow(gamma * dot + coef0, static_cast<double>(degree));
    case 2:
      return exp(-gamma * (sq_a + sq_b - 2 * dot));
    default:
      return tanh(gamma * dot + coef0);
  }
}

__global__ void SubsetLengths(const int32_t* __restrict__ indptr, const int32_t* __restrict__ ids, int64_t n,
                              int32_t* __restrict__ sub_indptr) {
  for (int64_t k = GlobalIndex(); k < n; k += GlobalStride()) {
    const int32_t r = ids[k];
    sub_indptr[k + 1] = indptr[r + 1] - indptr[r];
    if (k == 0) sub_indptr[0] = 0;
  }
}

// One warp per row copies its entries.
__global__ void SubsetCopy(const int32_t* __restrict__ indptr, const int32_t* __restrict__ indices,
                           const double* __restrict__ values, const int32_t* __restrict__ ids, int64_t n,
                           const int32_t* __restrict__ sub_indptr, int32_t* __restrict__ sub_indices,
                           double* __restrict__ sub_values) {
  const int64_t warp = GlobalIndex() / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t warps = GlobalStride() / 32;
  for (int64_t k = warp; k < n; k += warps) {
    const int32_t r = ids[k];
    const int32_t begin = indptr[r];
    const int32_t len = indptr[r + 1] - begin;
    for (int32_t e = lane; e < len; e += 32) {
      sub_indices[sub_indptr[k] + e] = indices[begin + e];
      sub_values[sub_indptr[k] + e] = values[begin + e];
    }
  }
}

// dense[t * d + f] = row ws[t]'s value of feature f (dense zeroed before).
__global__ void ScatterRows(const int32_t* __restrict__ indptr, const int32_t* __restrict__ indices,
                            const double* __restrict__ values, const int32_t* __restrict__ ws, int64_t q, int64_t d,
                            double* __restrict__ dense) {
  for (int64_t t = blockIdx.x; t < q; t += gridDim.x) {
    const int32_t r = ws[t];
    for (int32_t e = indptr[r] + static_cast<int32_t>(threadIdx.x); e < indptr[r + 1]; e += blockDim.x)
      dense[t * d + indices[e]] = values[e];
  }
}

__global__ void SquaredNorms(const int32_t* __restrict__ indptr, const double* __restrict__ values, int64_t rows,
                             double* __restrict__ sq) {
  for (int64_t r = GlobalIndex(); r < rows; r += GlobalStride()) {
    double s = 0;
    for (int32_t e = indptr[r]; e < indptr[r + 1]; ++e) s += values[e] * values[e];  // feature order, as SparseDot
    sq[r] = s;
  }
}

template <typename Out>
__global__ void MapKernel(const double* __restrict__ dots, int64_t n, int64_t q, const int32_t* __restrict__ ws,
                          const int8_t* __restrict__ sign, const int32_t* __restrict__ cols,
                          const int8_t* __restrict__ col_sign, const double* __restrict__ sq, int type, int degree,
                          double gamma, double coef0, Out* __restrict__ out) {
  const int64_t total = n * q;
  for (int64_t idx = GlobalIndex(); idx < total; idx += GlobalStride()) {
    const int64_t t = idx / n;
    const int64_t k = idx - t * n;
    const double v = DeviceKernel(type, degree, gamma, coef0, dots[idx], sq[ws[t]], sq[cols[k]]);
    const int s = (sign == nullptr ? 1 : sign[t]) * (col_sign == nullptr ? 1 : col_sign[k]);
    out[idx] = static_cast<Out>(static_cast<double>(s) * v);
  }
}

__global__ void DiagonalKernel(const int32_t* __restrict__ ids, int64_t n, const double* __restrict__ sq, int type,
                               int degree, double gamma, double coef0, double* __restrict__ diag) {
  for (int64_t k = GlobalIndex(); k < n; k += GlobalStride()) {
    const double s = sq[ids[k]];
    diag[k] = DeviceKernel(type, degree, gamma, coef0, s, s, s);
  }
}

}  // namespace

struct SvmKernelRowsCuda::Impl {
  // Rows in CSR with 32-bit offsets (cuSPARSE's), on the device.
  struct Csr {
    device::Array<int32_t> indptr;
    device::Array<int32_t> indices;
    device::Array<double> values;
  };
  struct Slot {
    const int32_t* ids = nullptr;
    int64_t n = 0;
    int64_t nnz = 0;
    Csr rows;  // the columns' rows, copied from every row's
    cusparseSpMatDescr_t desc = nullptr;
  };
  int64_t d = 0;
  int64_t nnz = 0;  // entries of every row
  Csr rows;         // every row
  device::Array<double> sq;
  device::Array<double> dense;  // d x q, the working-set rows
  device::Array<double> dots;   // n x q, column-major
  device::Array<char> work;
  Slot slots[kSlots];

  ~Impl() {
    for (Slot& s : slots)
      if (s.desc != nullptr) cusparseDestroySpMat(s.desc);  // status ignored: a destructor must not throw
  }
};

SvmKernelRowsCuda::SvmKernelRowsCuda(const HostCsr& rows, const KernelSpec& params)
    : impl_(std::make_unique<Impl>()), params_(params), num_rows_(rows.num_rows) {
  const int64_t nnz = rows.num_rows > 0 ? rows.indptr[rows.num_rows] : 0;
  TESSEL_CHECK(nnz < (int64_t{1} << 31), "CUDA SVM kernel: {} non-zeros exceed cuSPARSE's 32-bit offsets here", nnz);
  TESSEL_CHECK(rows.num_features >= 1, "CUDA SVM kernel: the rows have no features");
  std::vector<int32_t> indptr32(rows.indptr, rows.indptr + rows.num_rows + 1);
  impl_->d = rows.num_features;
  impl_->nnz = nnz;
  impl_->rows.indptr.Upload(indptr32.data(), indptr32.size());
  impl_->rows.indices.Upload(rows.indices, static_cast<size_t>(nnz));
  impl_->rows.values.Upload(rows.values, static_cast<size_t>(nnz));
  impl_->sq.Reserve(static_cast<size_t>(num_rows_));
  if (num_rows_ > 0) {
    SquaredNorms<<<Blocks(num_rows_), kThreads>>>(impl_->rows.indptr.data(), impl_->rows.values.data(), num_rows_,
                                                  impl_->sq.data());
    TESSEL_CUDA_CHECK_LAUNCH();
  }
}

SvmKernelRowsCuda::~SvmKernelRowsCuda() = default;

int64_t SvmKernelRowsCuda::Columns(int slot) const { return impl_->slots[slot].n; }

void SvmKernelRowsCuda::SetColumns(int slot, const int32_t* ids, int64_t n) {
  TESSEL_CHECK(slot >= 0 && slot < kSlots, "CUDA SVM kernel: slot {} out of range", slot);
  Impl::Slot& s = impl_->slots[slot];
  if (s.desc != nullptr) {
    TESSEL_CUSPARSE_CHECK(cusparseDestroySpMat(s.desc));
    s.desc = nullptr;
  }
  s.ids = ids;
  s.n = n;
  s.nnz = 0;
  if (n == 0) return;
  const Impl::Csr& all = impl_->rows;
  Impl::Csr& sub = s.rows;
  sub.indptr.Reserve(static_cast<size_t>(n + 1));
  SubsetLengths<<<Blocks(n), kThreads>>>(all.indptr.data(), ids, n, sub.indptr.data());
  TESSEL_CUDA_CHECK_LAUNCH();
  InclusiveSumInPlace(sub.indptr.data() + 1, n);
  int32_t nnz = 0;
  device::CopyToHost(&nnz, sub.indptr.data() + n, sizeof(int32_t));
  s.nnz = nnz;
  sub.indices.Reserve(static_cast<size_t>(nnz));
  sub.values.Reserve(static_cast<size_t>(nnz));
  SubsetCopy<<<Blocks(n * 32), kThreads>>>(all.indptr.data(), all.indices.data(), all.values.data(), ids, n,
                                           sub.indptr.data(), sub.indices.data(), sub.values.data());
  TESSEL_CUDA_CHECK_LAUNCH();
  TESSEL_CUSPARSE_CHECK(cusparseCreateCsr(&s.desc, n, impl_->d, nnz, sub.indptr.data(), sub.indices.data(),
                                          sub.values.data(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                          CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
}

template <typename Out>
void SvmKernelRowsCuda::Rows(int slot, const int32_t* ws, const int8_t* sign, int64_t q, const int8_t* col_sign,
                             Out* out) {
  TESSEL_CHECK(slot >= 0 && slot < kSlots, "CUDA SVM kernel: slot {} out of range", slot);
  Impl& m = *impl_;
  Impl::Slot& s = m.slots[slot];
  if (s.n == 0 || q == 0) return;
  const int64_t d = m.d;
  m.dense.Reserve(static_cast<size_t>(d * q));
  m.dots.Reserve(static_cast<size_t>(s.n * q));
  TESSEL_CUDA_CHECK(cudaMemset(m.dense.data(), 0, static_cast<size_t>(d * q) * sizeof(double)));
  ::tessel::device::NoteLaunchesSeen(1);
  ScatterRows<<<static_cast<int>(std::min<int64_t>(q, 65535)), 128>>>(m.rows.indptr.data(), m.rows.indices.data(),
                                                                      m.rows.values.data(), ws, q, d, m.dense.data());
  TESSEL_CUDA_CHECK_LAUNCH();
  cusparseHandle_t handle = CusparseHandle();
  cusparseDnMatDescr_t b = nullptr;
  cusparseDnMatDescr_t c = nullptr;
  TESSEL_CUSPARSE_CHECK(cusparseCreateDnMat(&b, d, q, d, m.dense.data(), CUDA_R_64F, CUSPARSE_ORDER_COL));
  TESSEL_CUSPARSE_CHECK(cusparseCreateDnMat(&c, s.n, q, s.n, m.dots.data(), CUDA_R_64F, CUSPARSE_ORDER_COL));
  const double one = 1;
  const double zero = 0;
  size_t bytes = 0;
  // CSR_ALG1 without transposes: deterministic run to run.
  TESSEL_CUSPARSE_CHECK(cusparseSpMM_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s.desc, b, &zero, c, CUDA_R_64F,
                                                CUSPARSE_SPMM_CSR_ALG1, &bytes));
  m.work.Reserve(bytes);
  TESSEL_CUSPARSE_CHECK(cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                     s.desc, b, &zero, c, CUDA_R_64F, CUSPARSE_SPMM_CSR_ALG1, m.work.data()));
  ::tessel::device::NoteLaunchesSeen(1);
  TESSEL_CUSPARSE_CHECK(cusparseDestroyDnMat(b));
  TESSEL_CUSPARSE_CHECK(cusparseDestroyDnMat(c));
  MapKernel<Out><<<Blocks(s.n * q), kThreads>>>(m.dots.data(), s.n, q, ws, sign, s.ids, col_sign, m.sq.data(),
                                                params_.type, params_.degree, params_.gamma, params_.coef0, out);
  TESSEL_CUDA_CHECK_LAUNCH();
  evaluations_ += s.n * q;
}

void SvmKernelRowsCuda::QRows(int slot, const int32_t* ws, const int8_t* sign, int64_t q, const int8_t* col_sign,
                              float* out) {
  Rows<float>(slot, ws, sign, q, col_sign, out);
}

void SvmKernelRowsCuda::KRows(int slot, const int32_t* ws, int64_t q, double* out) {
  Rows<double>(slot, ws, nullptr, q, nullptr, out);
}

void SvmKernelRowsCuda::ReserveRows(int64_t q, int64_t n) {
  impl_->dense.Reserve(static_cast<size_t>(impl_->d * q));
  impl_->dots.Reserve(static_cast<size_t>(n * q));
  impl_->work.Reserve(1);  // CSR_ALG1's SpMM asks for no workspace: allocated now, not at the first product
  // Each slot's column rows at their largest (every row), so no later SetColumns allocates: a solver's eliminated
  // set grows round after round, and each growth was a pool allocation (and, cold, a cudaMalloc) mid-solve.
  const int64_t nnz = impl_->nnz;
  for (Impl::Slot& s : impl_->slots) {
    s.rows.indptr.Reserve(static_cast<size_t>(std::min(n, num_rows_) + 1));
    s.rows.indices.Reserve(static_cast<size_t>(std::max<int64_t>(nnz, 1)));
    s.rows.values.Reserve(static_cast<size_t>(std::max<int64_t>(nnz, 1)));
  }
}

void SvmKernelRowsCuda::Diagonal(const int32_t* ids, int64_t n, double* diag) {
  if (n == 0) return;
  DiagonalKernel<<<Blocks(n), kThreads>>>(ids, n, impl_->sq.data(), params_.type, params_.degree, params_.gamma,
                                          params_.coef0, diag);
  TESSEL_CUDA_CHECK_LAUNCH();
}

}  // namespace tessel::kernels::cuda
