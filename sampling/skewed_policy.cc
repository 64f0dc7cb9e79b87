// SkewedPolicy and the per-row skew (Jiang & Rumi 2021): fixed s, or the variance-budget rule
// s + 1/s <= 2 + eps·d²/(L·R) solved in closed form (docs/sampling.md derives it).
#include "sampling/skewed_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace tessel::sampling {

void SkewOptions::Validate() const {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  TESSEL_CHECK(skew >= 1.0 && skew < kInf,
               "--skew: {} is not a skew (owned neighbours are weighted s >= 1 times remote ones; use 1 to sample "
               "without skew, or for example 4)",
               skew);
  TESSEL_CHECK(variance_budget == -1.0 || (variance_budget > 0.0 && variance_budget < kInf),
               "--skew-variance: {} is not a variance budget (give eps > 0, for example 0.5: each row's second "
               "moment may grow by a factor 1 + eps; -1 or leaving it unset uses a fixed --skew)",
               variance_budget);
  TESSEL_CHECK(max_skew >= 1.0 && max_skew < kInf,
               "--skew-max: {} is not a cap on the skew (give a finite value >= 1, for example 64)", max_skew);
  TESSEL_CHECK(variance_budget < 0.0 || skew == 1.0,
               "--skew {} and --skew-variance {} exclude each other (give a fixed --skew, or a budget that chooses "
               "s per row; cap the budget's s with --skew-max)",
               skew, variance_budget);
}

bool SkewOptions::Active() const { return skew != 1.0 || variance_budget > 0.0; }

double RowSkew(int64_t num_local, int64_t num_remote, const SkewOptions& options) {
  TESSEL_CHECK(num_local >= 0 && num_remote >= 0, "sampling: negative neighbour counts ({} owned, {} remote)",
               num_local, num_remote);
  if (num_local == 0 || num_remote == 0) return 1.0;
  if (options.variance_budget < 0.0) return options.skew;
  // s + 1/s <= c = 2 + t with t = eps·d²/(L·R); the larger root of s² - c·s + 1 = 0 is
  // (c + sqrt(c² - 4))/2 = 1 + t/2 + sqrt(t·(t + 4))/2 (this form has no cancellation for small t).
  const auto l = static_cast<double>(num_local);
  const auto r = static_cast<double>(num_remote);
  const double d = l + r;
  const double t = options.variance_budget * (d / l) * (d / r);
  const double s = 1.0 + 0.5 * t + 0.5 * std::sqrt(t * (t + 4.0));
  return std::clamp(s, 1.0, std::max(1.0, options.max_skew));
}

SkewedPolicy::SkewedPolicy(std::span<const int32_t> edge_owner, int32_t local_part, SkewOptions options)
    : edge_owner_(edge_owner), local_part_(local_part), options_(options) {
  options_.Validate();
}

SkewedPolicy SkewedPolicy::FromColumns(std::span<const int32_t> cols, int64_t num_owned, int32_t own_part,
                                       std::span<const int32_t> halo_owner, int32_t local_part, SkewOptions options) {
  SkewedPolicy p({}, local_part, options);
  p.cols_ = cols;
  p.num_owned_ = num_owned;
  p.own_part_ = own_part;
  p.halo_owner_ = halo_owner;
  return p;
}

SkewedPolicy SkewedPolicy::FromNodeParts(std::span<const int32_t> cols, std::span<const int32_t> node_part,
                                         int32_t local_part, SkewOptions options) {
  SkewedPolicy p({}, local_part, options);
  p.cols_ = cols;
  p.node_part_ = node_part;
  return p;
}

bool SkewedPolicy::Uniform() const { return !options_.Active(); }

int32_t SkewedPolicy::OwnerAt(size_t e) const {
  if (cols_.empty()) return edge_owner_[e];
  const int32_t c = cols_[e];
  if (!node_part_.empty()) return node_part_[static_cast<size_t>(c)];
  return c < num_owned_ ? own_part_ : halo_owner_[static_cast<size_t>(c - num_owned_)];
}

void SkewedPolicy::Probabilities(int64_t row, int64_t row_begin, std::span<double> q) const {
  const size_t known = cols_.empty() ? edge_owner_.size() : cols_.size();
  TESSEL_CHECK(row_begin >= 0 && static_cast<uint64_t>(row_begin) + q.size() <= known,
               "sampling: row {} spans edges [{}, {}) but the skewed policy knows the owners of {} edges (build "
               "edge_owner over the graph being sampled)",
               row, row_begin, static_cast<uint64_t>(row_begin) + q.size(), known);
  const auto begin = static_cast<size_t>(row_begin);
  int64_t local = 0;
  for (size_t j = 0; j < q.size(); ++j) local += OwnerAt(begin + j) == local_part_ ? 1 : 0;
  const double s = RowSkew(local, static_cast<int64_t>(q.size()) - local, options_);
  for (size_t j = 0; j < q.size(); ++j) q[j] = OwnerAt(begin + j) == local_part_ ? s : 1.0;
}

SkewedPolicy SkewedPolicy::WithLocalPart(int32_t part) const {
  SkewedPolicy p = *this;
  p.local_part_ = part;
  return p;
}

}  // namespace tessel::sampling
