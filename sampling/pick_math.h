// The per-row "pick k" algorithms on raw arrays, shared by the CPU PickRow (rowwise_pick.cc) and the CUDA sampler
// kernel (sampling/cuda/gpu_sampler.cu) so both draw bit-identical picks from the same Rng stream.
//
// Problem: draw k of a row's deg neighbours and give each pick the factor that keeps the weighted sum of picks an
// unbiased estimate of the full row sum. Uniform rows: with replacement k independent offsets (factor deg/k);
// without, Floyd's k-subset algorithm (Bentley & Floyd, CACM 1987; factor deg/k = 1/π). Weighted rows (q >= 0, any
// scale): with replacement inverse-CDF draws (Hansen-Hurwitz factor total/(k·q)); without, inclusion probabilities
// π = min(1, c·q) with Σπ = k (capping the largest until consistent) and systematic PPS sampling over a random order
// (Madow 1949; Horvitz-Thompson factor 1/π). Only C++17 and TESSEL_HOST_DEVICE (host + device) code: no exceptions, no
// allocation; callers pass scratch arrays and receive an error code.
#pragma once

#include <cstdint>

#include "core/host_device.h"
#include "core/rng.h"

namespace tessel::sampling::pick_math {

// Scratch for one weighted row; each array holds at least deg entries. Uniform rows need none.
struct Scratch {
  double* a = nullptr;        // CDF (with replacement) or inclusion probabilities (without)
  uint8_t* capped = nullptr;  // inclusion probability fixed at 1
  int64_t* order = nullptr;   // random visiting order of systematic sampling
};

// Returned by PickRowArrays when q[j] is negative or not finite: kBadWeight - j (so j = kBadWeight - result).
constexpr int64_t kBadWeight = -1;

// The most picks a row can yield: exact for uniform rows; weighted rows without replacement may yield one more
// than k when rounding leaves Σπ a hair above k (systematic sampling takes every integer step below Σπ).
TESSEL_HOST_DEVICE inline int64_t MaxPicks(int64_t deg, int64_t k, bool replace, bool uniform) {
  if (deg <= 0 || k == 0) return 0;
  if (k < 0) return deg;
  if (replace) return k;
  if (uniform) return k < deg ? k : deg;
  return k + 1 < deg ? k + 1 : deg;
}

// True when a weighted row of this shape needs Scratch (and the q array) rather than only its output slots.
TESSEL_HOST_DEVICE inline bool NeedsScratch(int64_t deg, int64_t k, bool uniform) {
  return !uniform && deg > 0 && k > 0;
}

// Every neighbour once, factor 1.
TESSEL_HOST_DEVICE inline int64_t TakeAll(int64_t deg, int64_t* offsets, double* factors) {
  for (int64_t j = 0; j < deg; ++j) {
    offsets[j] = j;
    factors[j] = 1.0;
  }
  return deg;
}

// k independent uniform offsets in [0, deg), factor deg/k each.
TESSEL_HOST_DEVICE inline int64_t UniformWithReplacement(int64_t deg, int64_t k, Rng& rng, int64_t* offsets,
                                                         double* factors) {
  const double factor = static_cast<double>(deg) / static_cast<double>(k);
  for (int64_t i = 0; i < k; ++i) {
    offsets[i] = static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(deg)));
    factors[i] = factor;
  }
  return k;
}

// Floyd's algorithm: k < deg distinct offsets, every k-subset equally likely; factor deg/k each.
TESSEL_HOST_DEVICE inline int64_t FloydSubset(int64_t deg, int64_t k, Rng& rng, int64_t* offsets, double* factors) {
  const double factor = static_cast<double>(deg) / static_cast<double>(k);
  int64_t n = 0;
  for (int64_t j = deg - k; j < deg; ++j) {
    const auto t = static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(j + 1)));
    bool seen = false;
    for (int64_t i = 0; i < n && !seen; ++i) seen = offsets[i] == t;
    offsets[n] = seen ? j : t;
    factors[n] = factor;
    ++n;
  }
  return n;
}

// Sum and number of positive entries of q; *bad = index of the first negative or non-finite entry, or -1.
TESSEL_HOST_DEVICE inline void SummariseWeights(const double* q, int64_t deg, double* total, int64_t* positive,
                                                int64_t* bad) {
  *total = 0;
  *positive = 0;
  *bad = -1;
  for (int64_t j = 0; j < deg; ++j) {
    const double x = q[j];
    if (!(x >= 0.0 && x < 1e300)) {
      *bad = j;
      return;
    }
    *total += x;
    *positive += x > 0 ? 1 : 0;
  }
}

// True when every entry of q is positive and all are equal: the row then draws exactly what a uniform row draws.
TESSEL_HOST_DEVICE inline bool AllEqualPositive(const double* q, int64_t deg) {
  for (int64_t j = 0; j < deg; ++j) {
    if (!(q[j] > 0) || q[j] != q[0]) return false;
  }
  return true;
}

// Every neighbour with q > 0 once, factor 1.
TESSEL_HOST_DEVICE inline int64_t TakePositive(const double* q, int64_t deg, int64_t* offsets, double* factors) {
  int64_t n = 0;
  for (int64_t j = 0; j < deg; ++j) {
    if (q[j] > 0) {
      offsets[n] = j;
      factors[n] = 1.0;
      ++n;
    }
  }
  return n;
}

// First index i in [0, n) with a[i] > x (n when none), like std::upper_bound on an ascending array.
TESSEL_HOST_DEVICE inline int64_t UpperBound(const double* a, int64_t n, double x) {
  int64_t lo = 0;
  while (n > 0) {
    const int64_t half = n / 2;
    if (!(x < a[lo + half])) {
      lo += half + 1;
      n -= half + 1;
    } else {
      n = half;
    }
  }
  return lo;
}

// k inverse-CDF draws proportional to q (total = Σq > 0); factor total/(k·q). cdf: deg entries of scratch.
TESSEL_HOST_DEVICE inline int64_t WeightedWithReplacement(const double* q, int64_t deg, int64_t k, double total,
                                                          Rng& rng, double* cdf, int64_t* offsets, double* factors) {
  double sum = 0;
  for (int64_t j = 0; j < deg; ++j) {
    sum += q[j];
    cdf[j] = sum;
  }
  for (int64_t i = 0; i < k; ++i) {
    const double u = rng.Uniform() * total;
    int64_t j = UpperBound(cdf, deg, u);
    if (j > deg - 1) j = deg - 1;
    while (q[j] == 0) --j;  // u landed on the boundary of a zero-width interval
    offsets[i] = j;
    factors[i] = total / (static_cast<double>(k) * q[j]);
  }
  return k;
}

// Inclusion probabilities pi_j = min(1, c·q_j) with Σpi = k, capping the largest until consistent (at most 64
// rounds). Needs more than k positive entries.
TESSEL_HOST_DEVICE inline void InclusionProbabilities(const double* q, int64_t deg, int64_t k, double* pi,
                                                      uint8_t* capped) {
  for (int64_t j = 0; j < deg; ++j) {
    pi[j] = q[j];
    capped[j] = 0;
  }
  for (int iter = 0; iter < 64; ++iter) {
    double free_mass = 0;
    int64_t fixed = 0;
    for (int64_t j = 0; j < deg; ++j) {
      if (capped[j]) {
        ++fixed;
      } else {
        free_mass += q[j];
      }
    }
    const double c = static_cast<double>(k - fixed) / free_mass;
    bool changed = false;
    for (int64_t j = 0; j < deg; ++j) {
      if (capped[j]) continue;
      pi[j] = c * q[j];
      if (pi[j] >= 1.0) {
        pi[j] = 1.0;
        capped[j] = 1;
        changed = true;
      }
    }
    if (!changed) break;
  }
}

// Systematic sampling over a random order (Fisher-Yates with rng): distinct picks with P(j picked) = pi_j, factor
// 1/pi_j. order: deg entries of scratch.
TESSEL_HOST_DEVICE inline int64_t Systematic(const double* pi, int64_t deg, Rng& rng, int64_t* order, int64_t* offsets,
                                             double* factors) {
  for (int64_t j = 0; j < deg; ++j) order[j] = j;
  for (auto i = static_cast<uint64_t>(deg); i > 1; --i) {
    const uint64_t r = rng.UniformInt(i);
    const int64_t t = order[i - 1];
    order[i - 1] = order[r];
    order[r] = t;
  }
  double u = rng.Uniform();
  double cum = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < deg; ++i) {
    const int64_t j = order[i];
    if (pi[j] <= 0) continue;
    const double next = cum + pi[j];
    if (u < next) {
      offsets[n] = j;
      factors[n] = 1.0 / pi[j];
      ++n;
      u += 1.0;
    }
    cum = next;
  }
  return n;
}

// The picks of one row with deg neighbours (PickRow's contract, rowwise_pick.h): k < 0 takes every neighbour
// (factor 1); with replacement a row yields k picks, without min(k, deg) distinct ones (weighted: never a neighbour
// with q = 0). q = nullptr for a uniform policy, else deg probabilities (any scale); a q whose entries are all equal
// and positive draws exactly what the uniform policy draws. offsets/factors hold MaxPicks(...) entries. Returns the
// number of picks, or kBadWeight - j when q[j] is negative or not finite.
TESSEL_HOST_DEVICE inline int64_t PickRowArrays(int64_t deg, int64_t k, bool replace, const double* q, Rng& rng,
                                                const Scratch& scratch, int64_t* offsets, double* factors) {
  if (deg <= 0 || k == 0) return 0;
  if (k < 0) return TakeAll(deg, offsets, factors);
  if (q != nullptr) {
    double total = 0;
    int64_t positive = 0;
    int64_t bad = -1;
    SummariseWeights(q, deg, &total, &positive, &bad);
    if (bad >= 0) return kBadWeight - bad;
    if (!AllEqualPositive(q, deg)) {
      if (positive == 0) return 0;
      if (!replace && positive <= k) return TakePositive(q, deg, offsets, factors);
      if (replace) return WeightedWithReplacement(q, deg, k, total, rng, scratch.a, offsets, factors);
      InclusionProbabilities(q, deg, k, scratch.a, scratch.capped);
      return Systematic(scratch.a, deg, rng, scratch.order, offsets, factors);
    }
  }
  if (!replace && deg <= k) return TakeAll(deg, offsets, factors);
  if (replace) return UniformWithReplacement(deg, k, rng, offsets, factors);
  return FloydSubset(deg, k, rng, offsets, factors);
}

}  // namespace tessel::sampling::pick_math
