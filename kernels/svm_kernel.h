// SVM kernel functions (linear, polynomial, RBF, sigmoid with LIBSVM's parameter meanings) and kernel rows
// over a block of sparse float64 rows, computed in parallel with a dense scratch copy of the fixed row.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "core/csr_view.h"
#include "core/params.h"

namespace tessel::kernels {

// The values are LIBSVM's kernel_type numbers (-t 0..3).
enum class SvmKernelType : int { kLinear = 0, kPolynomial = 1, kRbf = 2, kSigmoid = 3 };

// LIBSVM's model-file names: "linear", "polynomial", "rbf", "sigmoid".
std::string_view SvmKernelName(SvmKernelType type);
// Accepts the model-file names, "poly", and LIBSVM's digits "0".."3"; throws naming the accepted values.
SvmKernelType ParseSvmKernel(std::string_view name);

// K(x, z): linear x.z; polynomial (gamma x.z + coef0)^degree; RBF exp(-gamma |x - z|^2);
// sigmoid tanh(gamma x.z + coef0).
struct SvmKernelParams {
  SvmKernelType type = SvmKernelType::kRbf;
  int degree = 3;
  double gamma = 0;
  double coef0 = 0;
};

// The rows the SVM kernels read: the one CSR view with float64 values (LIBSVM's), 0-based feature ids strictly
// ascending within a row, num_cols = the number of features (SparseRowDataset::Rows, SvmModel::SupportVectors).
using SparseRowsView = CsrView<int32_t, double>;

// Sparse dot product by merging the two index lists (the summation order of LIBSVM's Kernel::dot).
double SparseDot(std::span<const int32_t> a_idx, std::span<const double> a_val, std::span<const int32_t> b_idx,
                 std::span<const double> b_val);

// The training-time kernel value from a dot product and the two squared norms (LIBSVM's Kernel member
// functions: RBF as exp(-gamma (|x|^2 + |z|^2 - 2 x.z))).
double KernelFromDot(const SvmKernelParams& params, double dot, double sq_a, double sq_b);

// The prediction-time kernel value (LIBSVM's k_function: RBF from the sum of squared differences).
double KernelValue(const SvmKernelParams& params, std::span<const int32_t> a_idx, std::span<const double> a_val,
                   std::span<const int32_t> b_idx, std::span<const double> b_val);

// Kernel rows K(i, c) over a fixed set of rows. The fixed row i is scattered into a dense float64 scratch
// vector once per call, so each K(i, c) costs O(nnz of row c). Squared norms are precomputed for RBF. Rows that
// are at least 40% non-zero over at most kMaxDenseCols features (letter, usps) are also kept dense, so x.z runs
// over contiguous memory; the sum is still in feature order (the added terms are exact zeros): the same value. With
// at most kMaxTransposedCols features the dense rows are also kept transposed, so eight consecutive rows' dot
// products (a regression's or one-class problem's rows, in data order) read each feature's eight values at once.
// Q rows (floats) of the RBF kernel take their exponentials in blocks through ExpInPlace (kernels/fast_exp.h).
// When every stored value is 1 (binary features such as a9a, w8a) and there are at most 64 * kMaxBitWords
// features, rows are also kept as bit sets and x.z is a popcount of their AND (exact: the same integer).
// One object serves one caller at a time (the scratch vector is its own); work inside a call is parallel. Share()
// gives another caller (a concurrent one-vs-one pair) an object over the same precomputed norms, dense rows, bit
// rows and table, built once, with its own scratch and evaluation count.
class SvmKernelRows {
 public:
  static constexpr int64_t kMaxBitWords = 16;
  static constexpr int64_t kMaxDenseCols = 4096;
  // Feature ids above this many (a 32 MiB scratch row) are renumbered compactly when fewer than half are in use.
  static constexpr int64_t kCompactAboveCols = int64_t{1} << 22;
  static constexpr int64_t kMaxTransposedCols = 64;

  // allow_bits = false keeps the general path even for binary rows: the distributed solver passes the ranks'
  // common answer, since a row from another rank (QRowOf) must be computable the same way.
  SvmKernelRows(SparseRowsView rows, SvmKernelParams params, bool allow_bits = true);
  SvmKernelRows(const SvmKernelRows&) = delete;
  SvmKernelRows& operator=(const SvmKernelRows&) = delete;

  // The same rows and kernel for another caller: the precomputed arrays are shared (no copy, no recomputation);
  // the scratch row and the evaluation count are the new object's. The rows' storage must outlive both.
  SvmKernelRows Share() const { return SvmKernelRows(pre_); }

  // A row that is not one of rows(): a sample broadcast by another rank of the distributed solver. Feature ids
  // must be < rows().num_cols; with bit rows (binary()) every value must be 1.
  struct ExternalRow {
    std::span<const int32_t> indices;
    std::span<const double> values;
  };

  // out[p] = float(sign_i * signs[p] * K(i, cols[p])) for every p (LIBSVM's Q matrix entries, Qfloat = float).
  // `signs` may be empty (all +1).
  void QRow(int64_t i, int sign_i, std::span<const int32_t> cols, std::span<const int8_t> signs, std::span<float> out);
  // QRow with the fixed row x instead of row i: the very same arithmetic (identical values for identical rows).
  void QRowOf(ExternalRow x, int sign_x, std::span<const int32_t> cols, std::span<const int8_t> signs,
              std::span<float> out);
  // out[p] = K(i, cols[p]) in float64.
  void KRow(int64_t i, std::span<const int32_t> cols, std::span<double> out);
  bool binary() const { return !bits_.empty(); }
  bool dense() const { return !dense_rows_.empty(); }
  // K(i, i).
  double Diagonal(int64_t i) const;

  const SparseRowsView& rows() const { return rows_; }
  const SvmKernelParams& params() const { return params_; }
  // Kernel values computed so far by QRow/KRow.
  int64_t evaluations() const { return evaluations_.load(std::memory_order_relaxed); }

 private:
  // The fixed row of a kernel row: its entries, squared norm (RBF) and, for bit rows, its words and count.
  struct Fixed {
    std::span<const int32_t> idx;
    std::span<const double> val;
    double sq = 0;
    const uint64_t* bits = nullptr;
    int32_t nnz = 0;
  };
  Fixed FixedOf(int64_t i) const;
  // store(out, p, K) for every column p. kFloatOut: the values end as floats, so RBF may use ExpInPlace.
  template <bool kFloatOut, typename Out, typename Store>
  void Row(const Fixed& f, std::span<const int32_t> cols, Out* out, Store store);
  void QRowImpl(const Fixed& f, int sign_i, std::span<const int32_t> cols, std::span<const int8_t> signs, float* out);

  // What the constructor computes from the rows, shared by the objects Share() makes.
  struct Precomputed {
    SparseRowsView rows;  // as given (rows())
    // The rows the kernel computes on: `rows`, or, when the feature ids span far more than the ids in use (a
    // stray id of 2^31 - 1 in a file of two rows), the same rows over compact ids: the ids in use numbered 0, 1, ...
    // in their order (`compact_cols` the original of each), so the scratch row holds one double per id in use and
    // every sum keeps its order: the same values.
    SparseRowsView calc;
    std::vector<int32_t> compact_indices;
    std::vector<int32_t> compact_cols;
    SvmKernelParams params;
    std::vector<double> squared_norms;  // per row (RBF only)
    std::vector<double> dense_rows;     // num_rows * num_cols values when the rows are dense enough, else empty
    std::vector<double> dense_cols;     // dense_rows transposed (num_cols * num_rows) when num_cols is small
    std::vector<uint64_t> bits;         // num_rows * bit_words words when the rows are binary, else empty
    int64_t bit_words = 0;
    std::vector<int32_t> nnz;   // per row, binary rows only
    std::vector<double> table;  // binary rows: the kernel value per integer argument (see the constructor)
  };
  explicit SvmKernelRows(std::shared_ptr<const Precomputed> pre);
  static std::shared_ptr<const Precomputed> Precompute(SparseRowsView rows, SvmKernelParams params, bool allow_bits);

  SparseRowsView rows_;
  SvmKernelParams params_;
  std::shared_ptr<const Precomputed> pre_;
  SparseRowsView calc_;  // pre_->calc: the rows over the ids the kernel computes with
  // Views of pre_'s arrays.
  std::span<const double> squared_norms_;
  std::span<const double> dense_rows_;
  std::span<const uint64_t> bits_;
  int64_t bit_words_ = 0;
  std::span<const int32_t> nnz_;
  std::span<const double> table_;
  std::vector<double> dense_;  // scratch: the fixed row, dense
  std::atomic<int64_t> evaluations_{0};
};

}  // namespace tessel::kernels

namespace tessel {
// The one list of SvmKernelType's names (LIBSVM's model-file names); Parse also takes "poly" and the digits 0..3.
TESSEL_ENUM_NAMES_PARSED(kernels::SvmKernelType, kernels::ParseSvmKernel, {kernels::SvmKernelType::kLinear, "linear"},
                         {kernels::SvmKernelType::kPolynomial, "polynomial"}, {kernels::SvmKernelType::kRbf, "rbf"},
                         {kernels::SvmKernelType::kSigmoid, "sigmoid"});
}  // namespace tessel
