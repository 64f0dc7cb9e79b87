// CPU SVM kernels: LIBSVM's kernel formulas and parallel kernel rows over sparse float64 rows.
// Each K(i, c) is a sparse gather of row c against a dense copy of row i, summed in feature order.
#include "kernels/svm_kernel.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "core/error.h"
#include "core/memory_budget.h"
#include "core/parallel.h"
#include "core/simd4.h"
#include "core/target_clones.h"
#include "kernels/fast_exp.h"

namespace tessel::kernels {

std::string_view SvmKernelName(SvmKernelType type) { return EnumName(type); }

SvmKernelType ParseSvmKernel(std::string_view name) {
  for (const auto& [type, type_name] : EnumNames<SvmKernelType>::kNames) {
    // The name, or LIBSVM's -t digit (the enum's values are LIBSVM's kernel_type numbers).
    if (name == type_name || (name.size() == 1 && name[0] - '0' == static_cast<int>(type))) return type;
  }
  if (name == "poly") return SvmKernelType::kPolynomial;
  throw Error(fmt::format(
      "unknown SVM kernel '{}': use linear (0), polynomial (1), rbf (2) or sigmoid (3); precomputed kernels are not "
      "supported",
      name));
}

double SparseDot(std::span<const int32_t> a_idx, std::span<const double> a_val, std::span<const int32_t> b_idx,
                 std::span<const double> b_val) {
  double sum = 0;
  size_t p = 0;
  size_t q = 0;
  while (p < a_idx.size() && q < b_idx.size()) {
    if (a_idx[p] == b_idx[q]) {
      sum += a_val[p] * b_val[q];
      ++p;
      ++q;
    } else if (a_idx[p] > b_idx[q]) {
      ++q;
    } else {
      ++p;
    }
  }
  return sum;
}

double KernelFromDot(const SvmKernelParams& params, double dot, double sq_a, double sq_b) {
  switch (params.type) {
    case SvmKernelType::kLinear:
      return dot;
    case SvmKernelType::kPolynomial:
      return std::pow(params.gamma * dot + params.coef0, params.degree);
    case SvmKernelType::kRbf:
      return std::exp(-params.gamma * (sq_a + sq_b - 2 * dot));
    case SvmKernelType::kSigmoid:
      return std::tanh(params.gamma * dot + params.coef0);
  }
  return 0;
}

double KernelValue(const SvmKernelParams& params, std::span<const int32_t> a_idx, std::span<const double> a_val,
                   std::span<const int32_t> b_idx, std::span<const double> b_val) {
  if (params.type != SvmKernelType::kRbf) return KernelFromDot(params, SparseDot(a_idx, a_val, b_idx, b_val), 0, 0);
  double sum = 0;
  size_t p = 0;
  size_t q = 0;
  while (p < a_idx.size() && q < b_idx.size()) {
    if (a_idx[p] == b_idx[q]) {
      const double d = a_val[p] - b_val[q];
      sum += d * d;
      ++p;
      ++q;
    } else if (a_idx[p] > b_idx[q]) {
      sum += b_val[q] * b_val[q];
      ++q;
    } else {
      sum += a_val[p] * a_val[p];
      ++p;
    }
  }
  for (; p < a_idx.size(); ++p) sum += a_val[p] * a_val[p];
  for (; q < b_idx.size(); ++q) sum += b_val[q] * b_val[q];
  return std::exp(-params.gamma * sum);
}

namespace {

// Whether cols[0, len) are consecutive row ids (false when empty). Branch-free, so it vectorises.
TESSEL_CLONE_AVX2 bool Consecutive(const int32_t* cols, int64_t len) {
  if (len == 0) return false;
  const int32_t c0 = cols[0];
  uint32_t off = 0;
  for (int64_t q = 0; q < len; ++q) off |= static_cast<uint32_t>(cols[q]) ^ static_cast<uint32_t>(c0 + q);
  return off == 0;
}

// dots[q] = x . row(c0 + q) for q < len from the transposed copy, 32 columns at a time (16 on the baseline, whose
// 16 registers hold eight pairs): eight independent chains of four lanes keep both adders busy (eight columns, two
// chains, wait on the addition's latency). Each column's sum is the same chain in feature order as DenseDots'.
template <class F>
[[gnu::always_inline]] inline int64_t TransposedDots32(const double* c0, int64_t n, int64_t d, int64_t len,
                                                       const double* x, double* dots) {
  using V4d = typename F::D;
  constexpr int kAcc = F::kNative ? 8 : 4;  // accumulators of four columns
  int64_t p = 0;
  for (; p + 4 * kAcc <= len; p += 4 * kAcc) {
    V4d acc[kAcc] = {};
    for (int64_t m = 0; m < d; ++m) {
      const double* src = c0 + m * n + p;
      const double xm = x[m];
      for (int t = 0; t < kAcc; ++t) {
        V4d a;
        std::memcpy(&a, src + 4 * t, sizeof(a));
        acc[t] += a * xm;  // a product, then a sum: no multiply-add, the scalar chain's values
      }
    }
    std::memcpy(dots + p, acc, sizeof(acc));
  }
  return p;
}

// acc[t] + a_t[0] x[0] + a_t[1] x[1] + a_t[2] x[2] + a_t[3] x[3] for four rows a_0..a_3 (four features each), added
// in that order: the four rows' products as vectors, transposed in registers (products of the same feature side by
// side), then four vector additions, each lane one row's chain in feature order.
template <class F>
[[gnu::always_inline]] inline void AddTransposedProducts(typename F::D* acc, const double* a0, const double* a1,
                                                         const double* a2, const double* a3, const double* xs) {
  using V4d = typename F::D;
  if constexpr (!F::kNative) {  // the baseline's pairs: each feature's four products, in feature order
    for (int k = 0; k < 4; ++k) *acc += V4d{a0[k] * xs[k], a1[k] * xs[k], a2[k] * xs[k], a3[k] * xs[k]};
    return;
  } else {
    V4d x;
    std::memcpy(&x, xs, sizeof(x));
    V4d p[4];
    std::memcpy(&p[0], a0, sizeof(V4d));
    std::memcpy(&p[1], a1, sizeof(V4d));
    std::memcpy(&p[2], a2, sizeof(V4d));
    std::memcpy(&p[3], a3, sizeof(V4d));
    for (V4d& v : p) v *= x;
    const V4d t0 = __builtin_shufflevector(p[0], p[1], 0, 4, 2, 6);  // a0[0] a1[0] a0[2] a1[2]
    const V4d t1 = __builtin_shufflevector(p[0], p[1], 1, 5, 3, 7);
    const V4d t2 = __builtin_shufflevector(p[2], p[3], 0, 4, 2, 6);
    const V4d t3 = __builtin_shufflevector(p[2], p[3], 1, 5, 3, 7);
    *acc += __builtin_shufflevector(t0, t2, 0, 1, 4, 5);  // feature 0 of the four rows
    *acc += __builtin_shufflevector(t1, t3, 0, 1, 4, 5);
    *acc += __builtin_shufflevector(t0, t2, 2, 3, 6, 7);
    *acc += __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
  }
}

// dots[q] = x . row(cols[q]) over the d features of the dense rows, each sum in feature order. Eight independent
// chains (one per column, four features at a time: AddTransposedProducts) hide the addition latency; F is the vector
// family (core/simd4.h: 32-byte vectors in the AVX2 instantiation, pairs of 16-byte ones on the baseline), the same
// operations either way. Eight consecutive rows read the transposed copy (dense_cols, n rows; null when there is none):
// each feature's eight values are adjacent there, the same operations in the same order; when all of cols are
// consecutive
// (`consecutive`), 32 at a time (TransposedDots32).
template <class F>
[[gnu::always_inline]] inline void DenseDotsFor(const double* dense_rows, const double* dense_cols, int64_t n,
                                                int64_t d, const int32_t* cols, int64_t len, const double* x,
                                                double* dots, bool consecutive) {
  using V4d = typename F::D;
  int64_t p = 0;
  if (dense_cols != nullptr && consecutive) {
    p = TransposedDots32<F>(dense_cols + cols[0], n, d, len, x, dots);
  }
  for (; p + 8 <= len; p += 8) {
    bool run = dense_cols != nullptr;
    for (int t = 1; run && t < 8; ++t) run = cols[p + t] == cols[p] + t;
    if (run) {
      const double* c0 = dense_cols + cols[p];
      V4d lo = {0, 0, 0, 0};
      V4d hi = {0, 0, 0, 0};
      for (int64_t m = 0; m < d; ++m) {
        V4d a;
        V4d b;
        std::memcpy(&a, c0 + m * n, sizeof(a));
        std::memcpy(&b, c0 + m * n + 4, sizeof(b));
        lo += a * x[m];  // a product, then a sum: no multiply-add, the scalar chain's values
        hi += b * x[m];
      }
      std::memcpy(dots + p, &lo, sizeof(lo));
      std::memcpy(dots + p + 4, &hi, sizeof(hi));
      continue;
    }
    const double* r[8];
    for (int t = 0; t < 8; ++t) r[t] = dense_rows + cols[p + t] * d;
    V4d lo = {0, 0, 0, 0};
    V4d hi = {0, 0, 0, 0};
    int64_t m = 0;
    for (; m + 4 <= d; m += 4) {
      AddTransposedProducts<F>(&lo, r[0] + m, r[1] + m, r[2] + m, r[3] + m, x + m);
      AddTransposedProducts<F>(&hi, r[4] + m, r[5] + m, r[6] + m, r[7] + m, x + m);
    }
    for (; m < d; ++m) {
      const double xm = x[m];
      lo += V4d{r[0][m] * xm, r[1][m] * xm, r[2][m] * xm, r[3][m] * xm};
      hi += V4d{r[4][m] * xm, r[5][m] * xm, r[6][m] * xm, r[7][m] * xm};
    }
    std::memcpy(dots + p, &lo, sizeof(lo));
    std::memcpy(dots + p + 4, &hi, sizeof(hi));
  }
  for (; p < len; ++p) {
    const double* r0 = dense_rows + cols[p] * d;
    double d0 = 0;
    for (int64_t m = 0; m < d; ++m) d0 += r0[m] * x[m];
    dots[p] = d0;
  }
}
// DenseDotsFor as a kernel simd4::Dispatch runs (AVX2 or the baseline, core/simd4.h).
struct DenseDots {
  template <class F>
  [[gnu::always_inline]] static void Run(const double* dense_rows, const double* dense_cols, int64_t n, int64_t d,
                                         const int32_t* cols, int64_t len, const double* x, double* dots,
                                         bool consecutive) {
    DenseDotsFor<F>(dense_rows, dense_cols, n, d, cols, len, x, dots, consecutive);
  }
};

// RBF values from dot products: KernelFromDot's argument -gamma (|x|^2 + |z|^2 - 2 x.z), then the exponentials as
// one vectorised block (ExpInPlace; the AVX2 clone four lanes wide, the same values).
TESSEL_CLONE_AVX2 void RbfFromDots(double gamma, double sq_i, const double* sq, const int32_t* cols, int64_t len,
                                   double* dots, bool consecutive) {
  if (consecutive) {  // consecutive rows (a regression's, in data order): adjacent norms
    const double* s = sq + cols[0];
    for (int64_t q = 0; q < len; ++q) dots[q] = -gamma * (sq_i + s[q] - 2 * dots[q]);
  } else {
    for (int64_t q = 0; q < len; ++q) dots[q] = -gamma * (sq_i + sq[cols[q]] - 2 * dots[q]);
  }
  ExpInPlace(dots, len);
}

// out[q] = float(sign_i s[q] k[q]) for q < len (s null: all +1), LIBSVM's Q entries from kernel values; the AVX2
// clone converts four at a time.
TESSEL_CLONE_AVX2 void StoreQBlock(float* out, const double* k, int64_t len, int sign_i, const int8_t* s) {
  if (s == nullptr) {
    const auto si = static_cast<double>(sign_i);
    for (int64_t q = 0; q < len; ++q) out[q] = static_cast<float>(si * k[q]);
  } else {
    for (int64_t q = 0; q < len; ++q) out[q] = static_cast<float>(static_cast<double>(sign_i * s[q]) * k[q]);
  }
}

// QRow's store: one value (any kernel), or a block of RBF values (StoreQBlock).
struct QStore {
  int sign_i;
  const int8_t* s;  // null: all +1
  void operator()(float* o, int64_t p, double k) const {
    o[p] = static_cast<float>(static_cast<double>(s == nullptr ? sign_i : sign_i * s[p]) * k);
  }
  void Block(float* o, int64_t begin, const double* k, int64_t len) const {
    StoreQBlock(o + begin, k, len, sign_i, s == nullptr ? nullptr : s + begin);
  }
};

// The scratch row a kernel scatters x into: one double per feature id up to the largest (2^31 at most, 16 GiB), so
// it is compared with the memory budget before it is allocated.
std::vector<double> DenseScratch(int64_t num_cols) {
  memory::CheckArray(num_cols, static_cast<int64_t>(sizeof(double)),
                     fmt::format("the SVM kernel's scratch row over {} feature ids", num_cols),
                     "renumber the features densely (the largest feature id sets this size)");
  return std::vector<double>(static_cast<size_t>(num_cols), 0.0);
}

}  // namespace

SvmKernelRows::SvmKernelRows(SparseRowsView rows, SvmKernelParams params, bool allow_bits)
    : SvmKernelRows(Precompute(rows, params, allow_bits)) {}

SvmKernelRows::SvmKernelRows(std::shared_ptr<const Precomputed> pre)
    : rows_(pre->rows),
      params_(pre->params),
      pre_(std::move(pre)),
      calc_(pre_->calc),
      squared_norms_(pre_->squared_norms),
      dense_rows_(pre_->dense_rows),
      bits_(pre_->bits),
      bit_words_(pre_->bit_words),
      nnz_(pre_->nnz),
      table_(pre_->table),
      dense_(DenseScratch(calc_.num_cols)) {}

std::shared_ptr<const SvmKernelRows::Precomputed> SvmKernelRows::Precompute(SparseRowsView rows, SvmKernelParams params,
                                                                            bool allow_bits) {
  auto pre = std::make_shared<Precomputed>();
  pre->rows = rows;
  pre->params = params;
  pre->calc = rows;
  if (rows.num_cols > kCompactAboveCols) {
    const int64_t base = rows.num_rows() > 0 ? rows.indptr.front() : 0;
    const int64_t end = rows.num_rows() > 0 ? rows.indptr.back() : 0;
    std::vector<int32_t> used(rows.indices.begin() + base, rows.indices.begin() + end);
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    if (2 * static_cast<int64_t>(used.size()) < rows.num_cols) {
      pre->compact_indices.assign(rows.indices.begin(), rows.indices.end());
      for (int64_t e = base; e < end; ++e) {
        int32_t& c = pre->compact_indices[static_cast<size_t>(e)];
        c = static_cast<int32_t>(std::lower_bound(used.begin(), used.end(), c) - used.begin());
      }
      pre->compact_cols = std::move(used);
      pre->calc.indices = pre->compact_indices;
      pre->calc.num_cols = static_cast<int64_t>(pre->compact_cols.size());
    }
  }
  rows = pre->calc;  // below: the rows the kernel computes on
  if (params.type == SvmKernelType::kRbf) {
    pre->squared_norms.resize(static_cast<size_t>(rows.num_rows()));
    parallel_for<int64_t>(0, rows.num_rows(), 1024, [&](int64_t r) {
      const auto idx = rows.RowIndices(r);
      const auto val = rows.RowValues(r);
      pre->squared_norms[r] = SparseDot(idx, val, idx, val);
    });
  }
  const int64_t dense_cells = rows.num_rows() * rows.num_cols;
  const int64_t block_nnz = rows.num_rows() > 0 ? rows.indptr.back() - rows.indptr.front() : 0;
  const int64_t words = (rows.num_cols + 63) / 64;
  const bool all_ones = std::all_of(rows.values.begin(), rows.values.end(), [](double v) { return v == 1.0; });
  if (!(allow_bits && all_ones && words >= 1 && words <= kMaxBitWords) && rows.num_cols <= kMaxDenseCols &&
      dense_cells > 0 && 5 * block_nnz >= 2 * dense_cells) {
    pre->dense_rows.assign(static_cast<size_t>(dense_cells), 0.0);
    parallel_for<int64_t>(0, rows.num_rows(), 1024, [&](int64_t r) {
      const auto idx = rows.RowIndices(r);
      const auto val = rows.RowValues(r);
      double* d = pre->dense_rows.data() + r * rows.num_cols;
      for (size_t k = 0; k < idx.size(); ++k) d[idx[k]] = val[k];
    });
    if (rows.num_cols <= kMaxTransposedCols) {
      const int64_t n = rows.num_rows();
      pre->dense_cols.assign(static_cast<size_t>(dense_cells), 0.0);
      parallel_for<int64_t>(0, n, 1024, [&](int64_t r) {
        for (int64_t m = 0; m < rows.num_cols; ++m)
          pre->dense_cols[static_cast<size_t>(m * n + r)] = pre->dense_rows[static_cast<size_t>(r * rows.num_cols + m)];
      });
    }
  }
  if (allow_bits && all_ones && words >= 1 && words <= kMaxBitWords) {
    pre->bit_words = words;
    pre->bits.assign(static_cast<size_t>(rows.num_rows() * words), 0);
    parallel_for<int64_t>(0, rows.num_rows(), 1024, [&](int64_t r) {
      for (const int32_t f : rows.RowIndices(r)) pre->bits[r * words + f / 64] |= uint64_t{1} << (f % 64);
    });
    // Every kernel value is a function of one small integer (the distance |x|^2 + |z|^2 - 2 x.z for RBF, x.z
    // otherwise), so it is tabulated with the very expression KernelFromDot evaluates: bit-identical values.
    pre->nnz.resize(static_cast<size_t>(rows.num_rows()));
    for (int64_t r = 0; r < rows.num_rows(); ++r)
      pre->nnz[r] = static_cast<int32_t>(rows.indptr[r + 1] - rows.indptr[r]);
    const int64_t max_arg = 2 * rows.num_cols;
    pre->table.resize(static_cast<size_t>(max_arg + 1));
    for (int64_t m = 0; m <= max_arg; ++m) {
      const auto v = static_cast<double>(m);
      pre->table[m] =
          params.type == SvmKernelType::kRbf ? KernelFromDot(params, 0.0, v, 0.0) : KernelFromDot(params, v, 0, 0);
    }
  }
  return pre;
}

double SvmKernelRows::Diagonal(int64_t i) const {
  const auto idx = rows_.RowIndices(i);
  const auto val = rows_.RowValues(i);
  const double sq = squared_norms_.empty() ? SparseDot(idx, val, idx, val) : squared_norms_[i];
  return KernelFromDot(params_, sq, sq, sq);
}

SvmKernelRows::Fixed SvmKernelRows::FixedOf(int64_t i) const {
  Fixed f{calc_.RowIndices(i), calc_.RowValues(i)};
  f.sq = squared_norms_.empty() ? 0.0 : squared_norms_[i];
  if (!bits_.empty()) {
    f.bits = bits_.data() + i * bit_words_;
    f.nnz = nnz_[i];
  }
  return f;
}

template <bool kFloatOut, typename Out, typename Store>
void SvmKernelRows::Row(const Fixed& f, std::span<const int32_t> cols, Out* out, Store store) {
  const auto i_idx = f.idx;
  const auto i_val = f.val;
  if (bits_.empty())
    for (size_t k = 0; k < i_idx.size(); ++k) dense_[i_idx[k]] = i_val[k];
  const double* dense = dense_.data();
  const int64_t* indptr = calc_.indptr.data();
  const int32_t* indices = calc_.indices.data();
  const double* values = calc_.values.data();
  const double* sq = squared_norms_.empty() ? nullptr : squared_norms_.data();
  const double sq_i = sq == nullptr ? 0.0 : f.sq;
  const SvmKernelParams params = params_;
  const auto n = static_cast<int64_t>(cols.size());
  if (!bits_.empty()) {
    // Binary rows: x.z = popcount(x & z), the same integer the float64 sum of 1 * 1 products gives.
    const int64_t words = bit_words_;
    const uint64_t* bits = bits_.data();
    const uint64_t* bi = f.bits;
    const double* table = table_.data();
    const int32_t* nnz = nnz_.data();
    const int32_t nnz_i = f.nnz;
    const bool rbf = params.type == SvmKernelType::kRbf;
    parallel_for_chunks<int64_t>(0, n, 1024, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const int32_t c = cols[p];
        const uint64_t* bc = bits + c * words;
        int32_t count = 0;
        for (int64_t w = 0; w < words; ++w) count += std::popcount(bi[w] & bc[w]);
        store(out, p, table[rbf ? nnz_i + nnz[c] - 2 * count : count]);
      }
    });
    evaluations_.fetch_add(n, std::memory_order_relaxed);
    return;
  }
  // Chunks of 256 columns amortise the scheduling: first the dot products, then the kernel values (RBF Q rows:
  // one block of exponentials). Each dot product is one chain of dependent additions in feature order (as LIBSVM),
  // so four columns are interleaved to overlap their latencies.
  const bool fast_rbf = kFloatOut && params.type == SvmKernelType::kRbf;
  const double* dense_rows = dense_rows_.empty() ? nullptr : dense_rows_.data();
  const double* dense_cols = pre_->dense_cols.empty() ? nullptr : pre_->dense_cols.data();
  const int64_t d = calc_.num_cols;
  constexpr int64_t kBlock = 256;
  const auto block = [&](int64_t begin, int64_t end) {  // end - begin <= kBlock
    // Consecutive columns (a regression's or one-class problem's rows in data order, or a run of them) read adjacent
    // norms and the transposed copy; checked per block, by the thread that computes it.
    const bool consecutive = (fast_rbf || dense_cols != nullptr) && Consecutive(cols.data() + begin, end - begin);
    double dots[kBlock];
    int64_t p = begin;
    if (dense_rows != nullptr) {
      simd4::Dispatch<DenseDots>(dense_rows, dense_cols, calc_.num_rows(), d, cols.data() + begin, end - begin, dense,
                                 dots, consecutive);
    } else {
      for (; p + 4 <= end; p += 4) {
        int64_t k[4];
        int64_t e[4];
        double dot[4] = {0, 0, 0, 0};
        for (int t = 0; t < 4; ++t) {
          k[t] = indptr[cols[p + t]];
          e[t] = indptr[cols[p + t] + 1];
        }
        const int64_t common = std::min(std::min(e[0] - k[0], e[1] - k[1]), std::min(e[2] - k[2], e[3] - k[3]));
        for (int64_t m = 0; m < common; ++m) {
          dot[0] += values[k[0] + m] * dense[indices[k[0] + m]];
          dot[1] += values[k[1] + m] * dense[indices[k[1] + m]];
          dot[2] += values[k[2] + m] * dense[indices[k[2] + m]];
          dot[3] += values[k[3] + m] * dense[indices[k[3] + m]];
        }
        for (int t = 0; t < 4; ++t) {
          for (int64_t q = k[t] + common; q < e[t]; ++q) dot[t] += values[q] * dense[indices[q]];
          dots[p + t - begin] = dot[t];
        }
      }
      for (; p < end; ++p) {
        const int32_t c = cols[p];
        double dot = 0;
        for (int64_t k = indptr[c]; k < indptr[c + 1]; ++k) dot += values[k] * dense[indices[k]];
        dots[p - begin] = dot;
      }
    }
    const int64_t len = end - begin;
    if (fast_rbf) {
      RbfFromDots(params.gamma, sq_i, sq, cols.data() + begin, len, dots, consecutive);
      if constexpr (kFloatOut) {
        store.Block(out, begin, dots, len);
      } else {
        for (int64_t q = 0; q < len; ++q) store(out, begin + q, dots[q]);
      }
    } else {
      for (int64_t q = 0; q < len; ++q) {
        store(out, begin + q, KernelFromDot(params, dots[q], sq_i, sq == nullptr ? 0.0 : sq[cols[begin + q]]));
      }
    }
  };
  // Whole blocks of kBlock columns (the last one shorter), so that the 32-column steps of consecutive rows are not
  // cut into short tails at the threads' chunk boundaries.
  parallel_for_chunks<int64_t>(0, (n + kBlock - 1) / kBlock, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) block(b * kBlock, std::min(n, (b + 1) * kBlock));
  });
  for (const int32_t c : i_idx) dense_[c] = 0;
  evaluations_.fetch_add(n, std::memory_order_relaxed);
}

void SvmKernelRows::QRow(int64_t i, int sign_i, std::span<const int32_t> cols, std::span<const int8_t> signs,
                         std::span<float> out) {
  TESSEL_CHECK(out.size() >= cols.size(), "QRow: output holds {} values for {} columns", out.size(), cols.size());
  QRowImpl(FixedOf(i), sign_i, cols, signs, out.data());
}

void SvmKernelRows::QRowOf(ExternalRow x, int sign_x, std::span<const int32_t> cols, std::span<const int8_t> signs,
                           std::span<float> out) {
  TESSEL_CHECK(out.size() >= cols.size(), "QRowOf: output holds {} values for {} columns", out.size(), cols.size());
  TESSEL_CHECK(x.indices.size() == x.values.size(), "QRowOf: {} feature ids for {} values", x.indices.size(),
               x.values.size());
  for (size_t k = 0; k < x.indices.size(); ++k)
    TESSEL_CHECK(x.indices[k] >= 0 && x.indices[k] < rows_.num_cols && (k == 0 || x.indices[k] > x.indices[k - 1]),
                 "QRowOf: feature id {} (entry {}) is out of range [0, {}) or not ascending", x.indices[k], k,
                 rows_.num_cols);
  Fixed f{x.indices, x.values};
  if (!squared_norms_.empty()) f.sq = SparseDot(x.indices, x.values, x.indices, x.values);  // all of x's ids
  // Over compact ids (Precomputed::calc), x keeps the ids the rows use: the others meet only zeros.
  std::vector<int32_t> compact_idx;
  std::vector<double> compact_val;
  if (!pre_->compact_cols.empty()) {
    const std::vector<int32_t>& used = pre_->compact_cols;
    for (size_t k = 0; k < x.indices.size(); ++k) {
      const auto it = std::lower_bound(used.begin(), used.end(), x.indices[k]);
      if (it == used.end() || *it != x.indices[k]) continue;
      compact_idx.push_back(static_cast<int32_t>(it - used.begin()));
      compact_val.push_back(x.values[k]);
    }
    f.idx = compact_idx;
    f.val = compact_val;
  }
  std::array<uint64_t, kMaxBitWords> words{};
  if (!bits_.empty()) {
    for (const double v : x.values) TESSEL_CHECK(v == 1.0, "QRowOf: value {} of a row against binary rows is not 1", v);
    for (const int32_t c : f.idx) words[static_cast<size_t>(c / 64)] |= uint64_t{1} << (c % 64);
    f.bits = words.data();
    f.nnz = static_cast<int32_t>(x.indices.size());
  }
  QRowImpl(f, sign_x, cols, signs, out.data());
}

void SvmKernelRows::QRowImpl(const Fixed& f, int sign_i, std::span<const int32_t> cols, std::span<const int8_t> signs,
                             float* out) {
  TESSEL_CHECK(signs.empty() || signs.size() == cols.size(), "QRow: {} signs for {} columns", signs.size(),
               cols.size());
  Row<true>(f, cols, out, QStore{sign_i, signs.empty() ? nullptr : signs.data()});
}

void SvmKernelRows::KRow(int64_t i, std::span<const int32_t> cols, std::span<double> out) {
  TESSEL_CHECK(out.size() >= cols.size(), "KRow: output holds {} values for {} columns", out.size(), cols.size());
  Row<false>(FixedOf(i), cols, out.data(), [](double* o, int64_t p, double k) { o[p] = k; });
}

}  // namespace tessel::kernels
