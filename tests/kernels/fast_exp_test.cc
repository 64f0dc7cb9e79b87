// ExpInPlace (kernels/fast_exp.h) against std::exp: within 4 ulp over the range the SVM kernels use and beyond,
// exact at 0, clamped outside [-708, 709].
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/rng.h"
#include "kernels/fast_exp.h"

namespace tessel::kernels {
namespace {

TEST(FastExp, WithinFourUlpOfStdExp) {
  Rng rng(StreamKey{.seed = 3, .purpose = 17});
  std::vector<double> x;
  for (int k = 0; k < 200000; ++k) x.push_back(-708.0 + rng.Uniform() * 1417.0);
  for (int k = 0; k < 100000; ++k) x.push_back(-rng.Uniform() * 40.0);  // RBF arguments
  for (int k = 0; k < 1000; ++k) x.push_back((rng.Uniform() - 0.5) * 1e-6);
  x.push_back(0.0);
  x.push_back(-0.0);
  x.push_back(std::log(2.0));
  std::vector<double> y = x;
  ExpInPlace(y.data(), static_cast<int64_t>(y.size()));
  double worst = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    const double want = std::exp(x[k]);
    const double ulp = std::nextafter(want, INFINITY) - want;
    worst = std::max(worst, std::fabs(y[k] - want) / ulp);
  }
  EXPECT_LE(worst, 4.0);
  EXPECT_EQ(y[x.size() - 3], 1.0);
  EXPECT_EQ(y[x.size() - 2], 1.0);
}

TEST(FastExp, ClampsOutsideTheRange) {
  double x[4] = {-1000.0, -708.0, 709.0, 1000.0};
  ExpInPlace(x, 4);
  EXPECT_EQ(x[0], x[1]);
  EXPECT_GT(x[0], 0.0);
  EXPECT_NEAR(x[1], std::exp(-708.0), 4 * std::exp(-708.0) * 2.3e-16);
  EXPECT_EQ(x[2], x[3]);
  EXPECT_TRUE(std::isfinite(x[3]));
}

}  // namespace
}  // namespace tessel::kernels
