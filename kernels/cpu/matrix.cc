// SparseMatrix validation and the "not on CUDA yet" error shared by the kernels that are CPU-only for now.
// Validation runs on matrices that come from outside the kernels (datasets, samplers in tests).
#include "kernels/matrix.h"

#include <cmath>

namespace tessel::kernels {

void SparseMatrix::Validate(std::string_view what) const {
  TESSEL_CHECK(rows >= 0 && cols >= 0, "{}: negative shape {}x{}", what, rows, cols);
  TESSEL_CHECK(static_cast<int64_t>(indptr.size()) == rows + 1, "{}: {} offsets for {} rows (need rows + 1)", what,
               indptr.size(), rows);
  auto p = indptr.Host();
  TESSEL_CHECK(p[0] == 0, "{}: first offset is {}, not 0", what, p[0]);
  for (int64_t r = 0; r < rows; ++r) {
    TESSEL_CHECK(p[r] <= p[r + 1], "{}: offsets decrease at row {}", what, r);
  }
  TESSEL_CHECK(p[rows] == nnz(), "{}: last offset {} but {} column ids", what, p[rows], nnz());
  for (int32_t c : indices.Host()) {
    TESSEL_CHECK(c >= 0 && c < cols, "{}: column id {} outside [0, {})", what, c, cols);
  }
  if (has_values()) {
    TESSEL_CHECK(static_cast<int64_t>(values.size()) == nnz(), "{}: {} values for {} entries", what, values.size(),
                 nnz());
    for (float v : values.Host()) TESSEL_CHECK(std::isfinite(v), "{}: value {} is not finite", what, v);
  }
}

}  // namespace tessel::kernels
