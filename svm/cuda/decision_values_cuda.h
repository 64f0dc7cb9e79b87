// Host-side declaration of the CUDA decision values (svm/cuda/decision_values.cu). No CUDA headers and
// C++17 (the .cu standard): plain pointers. The batched solver runs on the device loop (svm/device_loop.h).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cuda/svm_kernel_cuda.h"

namespace tessel::svm::cuda {

// Decision values of a binary or one-vs-one model on the device: out[p * n + k] = sum_s coef[p][s] K(sv_s, x_k)
// - rho[p] for every pair p, with `data` holding the n query rows followed by the support vectors.
std::vector<double> DecisionValuesCuda(const kernels::cuda::HostCsr& data, int64_t num_queries,
                                       const kernels::cuda::KernelSpec& kernel, const double* coef, int64_t pairs,
                                       const double* rho);

}  // namespace tessel::svm::cuda
