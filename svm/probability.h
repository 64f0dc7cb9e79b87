// svm-train -b 1's fits (LIBSVM 3.24): Platt's sigmoid on cross-validated decision values (Lin, Lin, Weng, "A note on
// Platt's probabilistic outputs for support vector machines", 2007: Newton's method with backtracking), and the
// regressions' Laplace scale of the cross-validated residuals.
#pragma once

#include <span>

namespace tessel::svm {

// LIBSVM's sigmoid_train: A and B of P(y = +1 | f) = 1 / (1 + exp(A f + B)) fitted to the decision values `dec`
// and their labels (> 0 for +1) by regularised maximum likelihood.
void SigmoidTrain(std::span<const double> dec, std::span<const double> labels, double* a, double* b);

// LIBSVM's svm_svr_probability after its cross-validation: sigma of a Laplace distribution of the residuals
// (target - prediction), the mean absolute residual once those beyond 5 standard deviations of a first Laplace fit
// are left out.
double LaplaceScale(std::span<const double> targets, std::span<const double> predictions);

}  // namespace tessel::svm
