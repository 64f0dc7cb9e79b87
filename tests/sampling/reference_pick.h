// The serial reference PickRow for tests: the std-library code PickRow ran before it moved onto
// sampling/pick_math.h (std::vector scratch, std::partial_sum, std::upper_bound), kept as the oracle both must match.
#pragma once

#include <algorithm>
#include <numeric>
#include <span>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "sampling/rowwise_pick.h"

namespace tessel::sampling::testing {

inline void RefUniform(int64_t deg, int64_t k, bool replace, Rng& rng, std::vector<Pick>* out) {
  const double factor = static_cast<double>(deg) / static_cast<double>(k);
  if (replace) {
    for (int64_t i = 0; i < k; ++i)
      out->push_back({static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(deg))), factor});
    return;
  }
  // Floyd's algorithm: k distinct offsets, each k-subset equally likely.
  const size_t first = out->size();
  for (int64_t j = deg - k; j < deg; ++j) {
    const auto t = static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(j + 1)));
    const bool seen = std::any_of(out->begin() + static_cast<std::ptrdiff_t>(first), out->end(),
                                  [&](const Pick& p) { return p.offset == t; });
    out->push_back({seen ? j : t, factor});
  }
}

// q: the row's checked probabilities, not all equal and positive (those rows take the uniform path).
inline void RefWeighted(std::span<const double> q, int64_t k, bool replace, Rng& rng, std::vector<Pick>* out) {
  const auto deg = static_cast<int64_t>(q.size());
  double total = 0;
  int64_t positive = 0;
  for (double x : q) {
    total += x;
    positive += x > 0 ? 1 : 0;
  }
  if (positive == 0) return;
  if (!replace && positive <= k) {
    for (int64_t j = 0; j < deg; ++j) {
      if (q[j] > 0) out->push_back({j, 1.0});
    }
    return;
  }
  if (replace) {
    std::vector<double> cdf(q.size());
    std::partial_sum(q.begin(), q.end(), cdf.begin());
    for (int64_t i = 0; i < k; ++i) {
      const double u = rng.Uniform() * total;
      auto j = static_cast<int64_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
      j = std::min(j, deg - 1);
      while (q[j] == 0) --j;  // u landed on the boundary of a zero-width interval
      out->push_back({j, total / (static_cast<double>(k) * q[j])});
    }
    return;
  }
  // Inclusion probabilities pi_j = min(1, c·q_j) with sum k (capping the largest until consistent).
  std::vector<double> pi(q.begin(), q.end());
  std::vector<bool> capped(q.size(), false);
  for (int iter = 0; iter < 64; ++iter) {
    double free_mass = 0;
    int64_t fixed = 0;
    for (size_t j = 0; j < q.size(); ++j) {
      if (capped[j]) {
        ++fixed;
      } else {
        free_mass += q[j];
      }
    }
    const double c = static_cast<double>(k - fixed) / free_mass;
    bool changed = false;
    for (size_t j = 0; j < q.size(); ++j) {
      if (capped[j]) continue;
      pi[j] = c * q[j];
      if (pi[j] >= 1.0) {
        pi[j] = 1.0;
        capped[j] = true;
        changed = true;
      }
    }
    if (!changed) break;
  }
  // Systematic sampling over a random order: exactly k distinct picks with P(j picked) = pi_j.
  std::vector<int64_t> order(static_cast<size_t>(deg));
  std::iota(order.begin(), order.end(), 0);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.UniformInt(i)]);
  double u = rng.Uniform();
  double cum = 0;
  for (int64_t j : order) {
    if (pi[j] <= 0) continue;
    const double next = cum + pi[j];
    if (u < next) {
      out->push_back({j, 1.0 / pi[j]});
      u += 1.0;
    }
    cum = next;
  }
}

inline void ReferencePickRow(int64_t row, int64_t row_begin, int64_t deg, int64_t k, bool replace,
                             const PickPolicy& policy, Rng& rng, std::vector<double>* scratch, std::vector<Pick>* out) {
  if (deg <= 0 || k == 0) return;
  if (k > 0 && !policy.Uniform()) {
    scratch->assign(static_cast<size_t>(deg), 0.0);
    std::span<double> q(*scratch);
    policy.Probabilities(row, row_begin, q);
    for (double x : q) {
      TESSEL_CHECK(x >= 0.0 && x < 1e300, "sampling: row {} has a negative or non-finite probability {}", row, x);
    }
    // A row whose probabilities are all equal and positive takes the uniform path below, so it consumes exactly
    // the random draws UniformPolicy would (a skew of 1, or a row with only owned or only remote neighbours).
    const bool equal = q[0] > 0 && std::all_of(q.begin(), q.end(), [&](double x) { return x == q[0]; });
    if (!equal) {
      RefWeighted(q, k, replace, rng, out);
      return;
    }
  }
  if (k < 0 || (!replace && deg <= k)) {
    for (int64_t j = 0; j < deg; ++j) out->push_back({j, 1.0});
    return;
  }
  RefUniform(deg, k, replace, rng, out);
}

}  // namespace tessel::sampling::testing
