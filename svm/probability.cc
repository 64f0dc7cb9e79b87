// LIBSVM 3.24's sigmoid_train and the end of svm_svr_probability, in its order of operations.
#include "svm/probability.h"

#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/log.h"

namespace tessel::svm {

void SigmoidTrain(std::span<const double> dec, std::span<const double> labels, double* a_out, double* b_out) {
  TESSEL_CHECK(dec.size() == labels.size(), "SigmoidTrain: {} decision values for {} labels", dec.size(),
               labels.size());
  const size_t l = dec.size();
  double prior1 = 0;
  double prior0 = 0;
  for (size_t i = 0; i < l; ++i) {
    if (labels[i] > 0) {
      prior1 += 1;
    } else {
      prior0 += 1;
    }
  }
  constexpr int kMaxIter = 100;
  constexpr double kMinStep = 1e-10;
  constexpr double kSigma = 1e-12;  // keeps the Hessian strictly positive definite
  constexpr double kEps = 1e-5;
  const double hi_target = (prior1 + 1.0) / (prior1 + 2.0);
  const double lo_target = 1 / (prior0 + 2.0);
  std::vector<double> t(l);
  double a = 0.0;
  double b = std::log((prior0 + 1.0) / (prior1 + 1.0));
  const auto loss = [&](double aa, double bb) {
    double f = 0.0;
    for (size_t i = 0; i < l; ++i) {
      const double f_ab = dec[i] * aa + bb;
      if (f_ab >= 0) {
        f += t[i] * f_ab + std::log(1 + std::exp(-f_ab));
      } else {
        f += (t[i] - 1) * f_ab + std::log(1 + std::exp(f_ab));
      }
    }
    return f;
  };
  for (size_t i = 0; i < l; ++i) t[i] = labels[i] > 0 ? hi_target : lo_target;
  double fval = loss(a, b);
  int iter = 0;
  for (; iter < kMaxIter; ++iter) {
    double h11 = kSigma;
    double h22 = kSigma;
    double h21 = 0.0;
    double g1 = 0.0;
    double g2 = 0.0;
    for (size_t i = 0; i < l; ++i) {
      const double f_ab = dec[i] * a + b;
      double p;
      double q;
      if (f_ab >= 0) {
        p = std::exp(-f_ab) / (1.0 + std::exp(-f_ab));
        q = 1.0 / (1.0 + std::exp(-f_ab));
      } else {
        p = 1.0 / (1.0 + std::exp(f_ab));
        q = std::exp(f_ab) / (1.0 + std::exp(f_ab));
      }
      const double d2 = p * q;
      h11 += dec[i] * dec[i] * d2;
      h22 += d2;
      h21 += dec[i] * d2;
      const double d1 = t[i] - p;
      g1 += dec[i] * d1;
      g2 += d1;
    }
    if (std::fabs(g1) < kEps && std::fabs(g2) < kEps) break;
    // The Newton direction -inv(H) g.
    const double det = h11 * h22 - h21 * h21;
    const double da = -(h22 * g1 - h21 * g2) / det;
    const double db = -(-h21 * g1 + h11 * g2) / det;
    const double gd = g1 * da + g2 * db;
    double stepsize = 1;  // line search
    while (stepsize >= kMinStep) {
      const double new_a = a + stepsize * da;
      const double new_b = b + stepsize * db;
      const double newf = loss(new_a, new_b);
      if (newf < fval + 0.0001 * stepsize * gd) {  // sufficient decrease
        a = new_a;
        b = new_b;
        fval = newf;
        break;
      }
      stepsize = stepsize / 2.0;
    }
    if (stepsize < kMinStep) {
      log::Info("svm: line search fails in two-class probability estimates");
      break;
    }
  }
  if (iter >= kMaxIter) log::Info("svm: reaching maximal iterations in two-class probability estimates");
  *a_out = a;
  *b_out = b;
}

double LaplaceScale(std::span<const double> targets, std::span<const double> predictions) {
  TESSEL_CHECK(targets.size() == predictions.size() && !targets.empty(), "LaplaceScale: {} targets, {} predictions",
               targets.size(), predictions.size());
  const size_t l = targets.size();
  std::vector<double> ymv(l);
  double mae = 0;
  for (size_t i = 0; i < l; ++i) {
    ymv[i] = targets[i] - predictions[i];
    mae += std::fabs(ymv[i]);
  }
  mae /= static_cast<double>(l);
  const double std_dev = std::sqrt(2 * mae * mae);
  size_t count = 0;
  mae = 0;
  for (size_t i = 0; i < l; ++i) {
    if (std::fabs(ymv[i]) > 5 * std_dev) {
      ++count;
    } else {
      mae += std::fabs(ymv[i]);
    }
  }
  return mae / static_cast<double>(l - count);
}

}  // namespace tessel::svm
