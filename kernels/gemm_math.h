// The precision of dense matrix products on CUDA (`--math`): exact float32 by default, or TF32 tensor cores (inputs
// rounded to a 10-bit mantissa, float32 accumulation) where the user asks. Process-wide; the CPU ignores it (its
// GEMMs are always float32). Plain C++17: kernels/cuda/dense.cu reads it.
#pragma once

namespace tessel::kernels {

enum class GemmMath { kFp32, kTf32 };
void SetGemmMath(GemmMath math);
GemmMath GetGemmMath();

}  // namespace tessel::kernels
