// One-class SVM and the regressions (TrainSvm's path for them, train_common.h): LIBSVM's solve_one_class,
// solve_epsilon_svr and solve_nu_svr, one problem over every row, and the model of the rows whose coefficient is not 0.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/log.h"
#include "core/progress.h"
#include "svm/cross_validation.h"
#include "svm/probability.h"
#include "svm/train_common.h"

namespace tessel::svm {

SvmModel TrainOneProblem(const datasets::SparseRowDataset& data, const SvmParams& params, TrainReport* report,
                         const BinarySolver& solver, ShuffleRand* rand, const FitRunner* fits) {
  const auto start_time = std::chrono::steady_clock::now();
  const PreparedTraining prep = PrepareTraining(data, params);
  const SvmParams& p = prep.p;
  const int64_t l = data.num_rows;
  const auto labels = data.labels.Host();
  TESSEL_CHECK(static_cast<int64_t>(labels.size()) == l, "{}: {} labels for {} rows", data.name, labels.size(), l);
  const bool regression = IsRegression(p.type);
  TESSEL_CHECK(!regression || l < (int64_t{1} << 30), "{}: {} rows exceed the regression's 2 l 32-bit variables",
               data.name, l);
  const int64_t n = regression ? 2 * l : l;  // the regressions' variables a (k < l) and a* (k >= l)
  std::vector<int32_t> rows(static_cast<size_t>(n));
  std::vector<int8_t> y(static_cast<size_t>(n));
  std::vector<double> linear(static_cast<size_t>(n), 0.0);
  std::vector<double> alpha0;
  double c = 1;
  for (int64_t k = 0; k < n; ++k) {
    rows[k] = static_cast<int32_t>(k % l);
    y[k] = k < l ? 1 : -1;
  }
  if (p.type == SvmType::kOneClass) {  // nu l variables at their bound 1, then the rest of nu l, then 0
    alpha0.assign(static_cast<size_t>(l), 0.0);
    const auto at_bound = static_cast<int64_t>(p.nu * static_cast<double>(l));
    for (int64_t k = 0; k < at_bound; ++k) alpha0[k] = 1;
    if (at_bound < l) alpha0[at_bound] = p.nu * static_cast<double>(l) - static_cast<double>(at_bound);
  } else if (p.type == SvmType::kEpsilonSvr) {
    c = p.C;
    for (int64_t k = 0; k < l; ++k) {
      linear[k] = p.p - labels[k];
      linear[k + l] = p.p + labels[k];
    }
  } else {  // nu-SVR
    c = p.C;
    alpha0.assign(static_cast<size_t>(n), 0.0);
    double sum = p.C * p.nu * static_cast<double>(l) / 2;
    for (int64_t k = 0; k < l; ++k) {
      alpha0[k] = alpha0[k + l] = std::min(sum, p.C);
      sum -= alpha0[k];
      linear[k] = -labels[k];
      linear[k + l] = labels[k];
    }
  }
  std::vector<double> prob_a;
  if (p.probability != 0 && regression) {  // svm_svr_probability, before the solve as in LIBSVM
    ShuffleRand local(p.random_seed);
    SvmParams cv_params = p;
    cv_params.probability = 0;
    const CrossValidationResult cv =
        CrossValidate(data, cv_params, 5, fits != nullptr ? fits->solver : solver, rand != nullptr ? rand : &local,
                      fits, "-b 1 (the regression's probability model: five internal folds)");
    prob_a = {LaplaceScale(labels, cv.target)};
    log::Info(
        "svm: prob. model for test data: target value = predicted value + z, z: Laplace distribution "
        "e^(-|z|/sigma)/(2 sigma), sigma = {:g}",
        prob_a[0]);
  }
  kernels::SvmKernelRows kernel(prep.rows, p.kernel);
  BinaryProblem problem{&kernel, rows, y, c, c};
  problem.p = linear;
  problem.alpha0 = alpha0;
  problem.nu = p.type == SvmType::kNuSvr;
  SolverResult res;
  {
    Progress progress(fmt::format("svm: solving the {} problem of {} rows", SvmTypeName(p.type), l));
    res = solver ? solver(problem, prep.opts) : SolveBinary(problem, prep.opts);
  }
  TESSEL_CHECK(static_cast<int64_t>(res.alpha.size()) == n, "TrainSvm: {} coefficients for {} variables",
               res.alpha.size(), n);
  // res.alpha holds y a: a for k < l and -a* for k >= l, so a - a* is their sum.
  std::vector<double> coef(static_cast<size_t>(l));
  for (int64_t k = 0; k < l; ++k) coef[k] = regression ? res.alpha[k] + res.alpha[k + l] : res.alpha[k];
  if (p.type == SvmType::kNuSvr) log::Info("svm: epsilon = {:.6f}", -res.r);
  log::Info("svm: {}: obj = {:.6f}, rho = {:.6f}, nSV = {}, nBSV = {}, iterations = {}", SvmTypeName(p.type), res.obj,
            res.rho, res.nr_sv, res.nr_bsv, res.iterations);

  SvmModel m;
  m.type = p.type;
  m.kernel = p.kernel;
  m.nr_class = 2;
  m.rho = {res.rho};
  m.prob_a = std::move(prob_a);
  m.num_features = prep.num_features;
  m.num_features_known = true;
  const auto indptr = data.indptr.Host();
  const auto indices = data.indices.Host();
  const auto values = data.values.Host();
  for (int64_t r = 0; r < l; ++r) {
    if (coef[r] == 0) continue;
    m.sv_rows.push_back(r);
    m.sv_coef.push_back(coef[r]);
    for (int64_t e = indptr[r]; e < indptr[r + 1]; ++e) {
      m.sv_indices.push_back(indices[e]);
      m.sv_values.push_back(values[e]);
    }
    m.sv_indptr.push_back(static_cast<int64_t>(m.sv_indices.size()));
  }
  if (report != nullptr) {
    TrainReport rep;
    rep.gamma = p.kernel.gamma;
    rep.iterations = res.iterations;
    rep.kernel_evaluations = res.kernel_evaluations;
    res.alpha.clear();
    rep.pairs.push_back({0, 0, n, std::move(res)});
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
    *report = std::move(rep);
  }
  return m;
}

}  // namespace tessel::svm
