// Host-side declaration of the CUDA SVM kernel rows (kernels/cuda/svm_kernel.cu): q kernel rows at once as one
// cuSPARSE sparse-dense product (column rows x dense working-set rows) and the kernel map. No CUDA headers, and
// C++17 (the .cu files' standard), so plain pointers instead of spans.
#pragma once

#include <cstdint>
#include <memory>

namespace tessel::kernels::cuda {

// Host CSR rows (0-based feature ids ascending within a row), as kernels::SparseRowsView.
struct HostCsr {
  const int64_t* indptr = nullptr;  // num_rows + 1
  const int32_t* indices = nullptr;
  const double* values = nullptr;
  int64_t num_rows = 0;
  int64_t num_features = 0;
};

// kernels::SvmKernelParams: type 0..3 = linear, polynomial, rbf, sigmoid (LIBSVM's -t).
struct KernelSpec {
  int type = 2;
  int degree = 3;
  double gamma = 0;
  double coef0 = 0;
};

// Kernel rows on the device over CSR rows uploaded once. Two column sets (slots) can be live at the same time
// (the active and the eliminated samples of a solver); each is a CSR of a subset of the rows, gathered on the
// device. Dot products are float64 (cuSPARSE SpMM, CUDA_R_64F); the kernel map uses KernelFromDot's formulas.
// All pointers taken or returned are device pointers; every call is ordered on the legacy default stream.
class SvmKernelRowsCuda {
 public:
  static constexpr int kSlots = 2;

  SvmKernelRowsCuda(const HostCsr& rows, const KernelSpec& params);
  ~SvmKernelRowsCuda();
  SvmKernelRowsCuda(const SvmKernelRowsCuda&) = delete;
  SvmKernelRowsCuda& operator=(const SvmKernelRowsCuda&) = delete;

  // The columns of `slot`: rows ids[0..n) (device array, kept by reference until the next call for the slot).
  void SetColumns(int slot, const int32_t* ids, int64_t n);
  int64_t Columns(int slot) const;

  // out[t * n + k] = float(sign[t] * col_sign[k] * K(ws[t], column k)) for t < q, n = Columns(slot): LIBSVM's
  // Q entries. `sign` and `col_sign` may be null (all +1). q <= max_rows given at the first call (grown as needed).
  void QRows(int slot, const int32_t* ws, const int8_t* sign, int64_t q, const int8_t* col_sign, float* out);
  // The same in float64 without signs: out[t * n + k] = K(ws[t], column k).
  void KRows(int slot, const int32_t* ws, int64_t q, double* out);
  // Sizes the work arrays for q rows over n columns at once (QRows and KRows then allocate only when a call
  // exceeds them).
  void ReserveRows(int64_t q, int64_t n);
  // diag[k] = K(ids[k], ids[k]) for k < n.
  void Diagonal(const int32_t* ids, int64_t n, double* diag);

  int64_t evaluations() const { return evaluations_; }
  int64_t num_rows() const { return num_rows_; }

 private:
  struct Impl;
  template <typename Out>
  void Rows(int slot, const int32_t* ws, const int8_t* sign, int64_t q, const int8_t* col_sign, Out* out);

  std::unique_ptr<Impl> impl_;
  KernelSpec params_;
  int64_t num_rows_ = 0;
  int64_t evaluations_ = 0;
};

}  // namespace tessel::kernels::cuda
