// RNG streams: reproducible per key, different per coordinate, and distributions with the right moments.
#include "core/rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

namespace tessel {
namespace {

TEST(Rng, SameKeySameStream) {
  Rng a(StreamKey{.seed = 1, .rank = 2, .epoch = 3, .batch = 4});
  Rng b(StreamKey{.seed = 1, .rank = 2, .epoch = 3, .batch = 4});
  for (int i = 0; i < 100; ++i) ASSERT_EQ(a(), b());
}

TEST(Rng, EveryCoordinateChangesTheStream) {
  const StreamKey base{.seed = 1, .rank = 2, .epoch = 3, .batch = 4, .purpose = 5};
  std::vector<StreamKey> keys(6, base);
  keys[1].seed++;
  keys[2].rank++;
  keys[3].epoch++;
  keys[4].batch++;
  keys[5].purpose++;
  std::set<uint64_t> firsts;
  for (const auto& k : keys) firsts.insert(Rng(k)());
  EXPECT_EQ(firsts.size(), keys.size());
}

TEST(Rng, UniformMomentsAndRange) {
  Rng r(42);
  const int n = 200000;
  double sum = 0;
  double sq = 0;
  for (int i = 0; i < n; ++i) {
    const double u = r.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sq += u * u;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.005);
  EXPECT_NEAR(sq / n - (sum / n) * (sum / n), 1.0 / 12.0, 0.002);
}

TEST(Rng, UniformIntIsUnbiased) {
  Rng r(7);
  const uint64_t k = 6;
  std::vector<int> counts(k, 0);
  const int n = 120000;
  for (int i = 0; i < n; ++i) {
    const uint64_t x = r.UniformInt(k);
    ASSERT_LT(x, k);
    counts[x]++;
  }
  for (int c : counts) EXPECT_NEAR(c, n / static_cast<double>(k), 5 * std::sqrt(n / static_cast<double>(k)));
}

TEST(Rng, NormalMoments) {
  Rng r(3);
  const int n = 200000;
  double sum = 0;
  double sq = 0;
  for (int i = 0; i < n; ++i) {
    const double z = r.Normal();
    sum += z;
    sq += z * z;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sq / n, 1.0, 0.01);
}

}  // namespace
}  // namespace tessel
