// k-fold cross-validation as svm-train -v k computes it (LIBSVM's svm_cross_validation): the same folds (stratified
// by class for C-SVC and nu-SVC, LIBSVM's shuffle with C's rand() as glibc gives it unseeded), each fold's model
// trained on the other folds' rows in LIBSVM's order, and svm-train's summary lines.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "datasets/dataset.h"
#include "svm/glibc_rand.h"
#include "svm/svm_params.h"
#include "svm/svm_train.h"

namespace tessel::svm {

struct CrossValidationResult {
  int folds = 0;                   // as used (at most the number of rows: leave-one-out)
  std::vector<double> target;      // the prediction for every row by the model that did not see it
  double accuracy = 0;             // classification and one-class: % of rows predicted right
  double mean_squared_error = 0;   // regression
  double squared_correlation = 0;  // regression
  // svm-train's lines: "Cross Validation Accuracy = 83.3333%" or the two regression lines.
  std::string Summary(SvmType type) const;
};

// Trains `folds` models (folds >= 2) on every fold's complement, several at once when there are threads for them
// (each gets an equal share of -m), and predicts the held-out rows. `solver` as TrainSvm's. The answer does not
// depend on the schedule.
// `rand` continues a caller's generator (LIBSVM's one rand() per process; default: a fresh one, seed 1). With
// -b 1 the folds train one after the other, since each fold's probability fit draws from it in turn (their fits
// then go through `fits`). `fits` (optional) runs the folds without -b 1 (FitRunner: under mpirun, spread over the
// ranks; the folds then train with fits->solver). `asked_by` names what asked for the folds in messages (empty:
// "-v K"; -b 1's regressions: their internal five folds).
CrossValidationResult CrossValidate(const datasets::SparseRowDataset& data, const SvmParams& params, int folds,
                                    const BinarySolver& solver = {}, ShuffleRand* rand = nullptr,
                                    const FitRunner* fits = nullptr, std::string_view asked_by = {});

}  // namespace tessel::svm
