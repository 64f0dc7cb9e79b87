// What TrainSvm's two paths share (svm_train.cc: the one-vs-one decomposition; svm_train_one.cc: one-class and the
// regressions, one problem over every row). Internal to tessel_svm.
#pragma once

#include <cstdint>

#include "datasets/dataset.h"
#include "kernels/svm_kernel.h"
#include "svm/glibc_rand.h"
#include "svm/smo_solver.h"
#include "svm/svm_model.h"
#include "svm/svm_params.h"
#include "svm/svm_train.h"

namespace tessel::svm {

// What every formulation starts from: the parameters checked, gamma resolved (1 / LIBSVM's max_index), the kernel's
// range checked, the rows as the kernels read them and the solver options.
struct PreparedTraining {
  SvmParams p;
  int64_t num_features = 0;  // max(the data's, LIBSVM's max_index)
  kernels::SparseRowsView rows;
  SolverOptions opts;
};
PreparedTraining PrepareTraining(const datasets::SparseRowDataset& data, const SvmParams& params);

// One-class SVM and the regressions: one problem over every row (LIBSVM's solve_one_class, solve_epsilon_svr,
// solve_nu_svr), its coefficients a (one-class) or a - a* (regression) per row, the model's support vectors the
// rows whose coefficient is not 0, in data order. TrainSvm's arguments.
SvmModel TrainOneProblem(const datasets::SparseRowDataset& data, const SvmParams& params, TrainReport* report,
                         const BinarySolver& solver, ShuffleRand* rand, const FitRunner* fits);

}  // namespace tessel::svm
