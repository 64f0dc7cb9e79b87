// The precision of dense matrix products on CUDA (`--math`): exact float32 by default, or TF32 tensor cores (inputs
// rounded to a 10-bit mantissa, float32 accumulation) where the user asks. A setting of the run's Context
// (core/context.h `Context::gemm_math`), which the kernels' GEMM reads; the CPU ignores it (its GEMMs are always
// float32). Plain C++17: kernels/cuda/dense.cu reads it.
#pragma once

#include <string_view>

namespace tessel {

enum class GemmMath { kFp32, kTf32 };

// "fp32" | "tf32"; throws tessel::Error naming --math and the accepted values.
GemmMath ParseGemmMath(std::string_view name);

}  // namespace tessel
