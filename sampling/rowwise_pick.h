// The per-row "pick k" skeleton of neighbour sampling (DGL src/array/cpu/rowwise_pick.h) with pluggable
// probabilities: a PickPolicy gives the draw probabilities of one row's neighbours, PickRow draws k of them
// and returns, per pick, the factor that makes the weighted sum of picks an unbiased estimate of the full
// row sum: 1/(k·q) with replacement (Hansen-Hurwitz), 1/π with inclusion probability π without (Horvitz-
// Thompson; uniform rows use a random k-subset, π = k/deg; weighted rows use systematic PPS sampling in a
// random order, Madow 1949). A new sampler (e.g. the skewed local-preferring one) is a new PickPolicy.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/rng.h"

namespace tessel::sampling {

class PickPolicy {
 public:
  virtual ~PickPolicy() = default;
  // True when all neighbours are equally likely (the fast path; Probabilities is then not called).
  virtual bool Uniform() const = 0;
  // q[j] >= 0 for the j-th stored neighbour of `row` (edges [row_begin, row_begin + q.size())); any scale.
  virtual void Probabilities(int64_t row, int64_t row_begin, std::span<double> q) const = 0;
};

class UniformPolicy final : public PickPolicy {
 public:
  bool Uniform() const override { return true; }
  void Probabilities(int64_t /*row*/, int64_t /*row_begin*/, std::span<double> q) const override {
    for (double& x : q) x = 1.0;
  }
};

// Probabilities proportional to given per-edge weights (for example the graph's edge weights).
class EdgeWeightPolicy final : public PickPolicy {
 public:
  explicit EdgeWeightPolicy(std::span<const float> edge_weights) : w_(edge_weights) {}
  bool Uniform() const override { return false; }
  void Probabilities(int64_t /*row*/, int64_t row_begin, std::span<double> q) const override {
    for (size_t j = 0; j < q.size(); ++j) q[j] = static_cast<double>(w_[static_cast<size_t>(row_begin) + j]);
  }

 private:
  std::span<const float> w_;
};

struct Pick {
  int64_t offset = 0;   // position of the neighbour within the row
  double factor = 1.0;  // estimator factor: 1/(k·q) or 1/π; 1 when the whole row is taken
};

// Appends the picks of one row with `deg` neighbours to `out`. k < 0 takes every neighbour (factor 1).
// With replacement a row with deg > 0 yields exactly k picks (repeats allowed); without, min(k, deg)
// distinct picks (neighbours with q = 0 are never picked). `scratch` is reused between calls.
void PickRow(int64_t row, int64_t row_begin, int64_t deg, int64_t k, bool replace, const PickPolicy& policy, Rng& rng,
             std::vector<double>* scratch, std::vector<Pick>* out);

}  // namespace tessel::sampling
