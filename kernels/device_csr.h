// A CSR matrix in device memory as kernels/matrix.h stores it (int64 offsets, int32 columns, values or null for
// all-ones), the operand the raw sparse kernels take (kernels/cuda/sparse_cuda.h and their host twins). `key`
// identifies the host object for a descriptor cache (any stable address). Plain C++17: .cu files include it.
#pragma once

#include <cstdint>

namespace tessel::kernels {

struct DeviceCsr {
  const void* key = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t nnz = 0;
  const int64_t* indptr = nullptr;
  const int32_t* indices = nullptr;
  const float* values = nullptr;
};

}  // namespace tessel::kernels
