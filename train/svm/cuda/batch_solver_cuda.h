// Host-side declaration of the CUDA batched C-SVC solver (train/svm/cuda/batch_solver.cu), the device twin of
// train/svm/batch_solver.cc. No CUDA headers and C++17 (the .cu standard): plain pointers, no spans.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cuda/svm_kernel_cuda.h"
#include "train/svm/elimination.h"

namespace tessel::train::svm::cuda {

struct BatchCudaProblem {
  kernels::cuda::HostCsr rows;  // the dataset rows
  kernels::cuda::KernelSpec kernel;
  const int32_t* sample_rows = nullptr;  // sample s is dataset row sample_rows[s]
  const int8_t* y = nullptr;             // +1 / -1 per sample
  int64_t l = 0;
  double cp = 1;
  double cn = 1;
  double eps = 1e-3;
  ShrinkingPolicy shrinking = ShrinkingPolicy::kPeriodic;
  int64_t max_iterations = -1;
  int working_set = 1024;  // q <= 1024: the subproblem runs in one thread block
  int64_t inner_limit = -1;
  double inner_factor = 0.1;
};

struct BatchCudaResult {
  // The final state per sample, in sample order: a_i (unsigned), the gradient G_i and the bound status
  // (batch::BoundStatus); the caller derives alpha, rho and the objective from it (FillSolution).
  std::vector<double> a;
  std::vector<double> g;
  std::vector<int8_t> status;
  double gap = 0;
  int64_t iterations = 0;
  int64_t rounds = 0;
  int64_t kernel_evaluations = 0;
  int64_t shrink_checks = 0;
  int64_t reconstructions = 0;
  int64_t bound_changes = 0;
  int64_t min_active = 0;
  bool hit_iteration_limit = false;
};

// Runs on the current CUDA device; throws tessel::Error with the CUDA/cuSPARSE message on any failure.
BatchCudaResult SolveBatchCuda(const BatchCudaProblem& problem);

// Decision values of a binary or one-vs-one model on the device: out[p * n + k] = sum_s coef[p][s] K(sv_s, x_k)
// - rho[p] for every pair p, with `data` holding the n query rows followed by the support vectors.
std::vector<double> DecisionValuesCuda(const kernels::cuda::HostCsr& data, int64_t num_queries,
                                       const kernels::cuda::KernelSpec& kernel, const double* coef, int64_t pairs,
                                       const double* rho);

}  // namespace tessel::train::svm::cuda
