// Skewed local-preferring neighbour sampling (Jiang & Rumi, "Communication-Efficient Sampling for Distributed
// Training of Graph Convolutional Networks", 2021): a PickPolicy weighting owned neighbours s and remote ones 1.
//
// A row with L owned and R remote neighbours draws a remote neighbour with probability R/(s·L + R) per draw;
// PickRow's 1/(k·q) (with replacement) or 1/π (without) factors keep the aggregate unbiased for any s. s is
// either fixed (--skew) or chosen per row as the largest s whose Hansen-Hurwitz second moment, with unit values,
// stays within (1 + ε) of uniform sampling's (--skew-variance ε; derivation in docs/sampling.md). Rows whose
// neighbours are all owned or all remote, and every row when s = 1, draw exactly what UniformPolicy draws.
#pragma once

#include <cstdint>
#include <span>

#include "sampling/rowwise_pick.h"

namespace tessel::sampling {

struct SkewOptions {
  double skew = 1.0;              // s >= 1: owned neighbours get weight s, remote ones 1 (--skew)
  double variance_budget = -1.0;  // eps > 0: choose s per row from this budget instead (--skew-variance); < 0 off
  double max_skew = 64.0;         // cap for the variance-budget mode
  void Validate() const;          // throws with the flag name and the fix
  bool Active() const;            // false when every row would use s = 1 (skew == 1 and budget off)
};

// s for a row with num_local owned and num_remote remote neighbours (fixed s, or from the budget; 1 when either is
// 0). Budget mode: the largest s <= max_skew with (s·L + R)(L/s + R) <= (1 + eps)·d², d = L + R.
double RowSkew(int64_t num_local, int64_t num_remote, const SkewOptions& options);

// Weights s (owner of the neighbour == local_part) or 1 otherwise. edge_owner[e] is the part owning the
// neighbour stored at edge position e of the graph being sampled (same indexing as PickPolicy's row_begin).
// Keeps a view of edge_owner: the array must outlive the policy. Thread-safe (no mutable state).
class SkewedPolicy final : public PickPolicy {
 public:
  SkewedPolicy(std::span<const int32_t> edge_owner, int32_t local_part, SkewOptions options);
  // The owners looked up instead of stored (no array per edge): the neighbour at edge position e is cols[e], a local
  // id of part `own_part`: owned when < num_owned, else halo j = cols[e] - num_owned, owned by halo_owner[j]. Keeps
  // views of cols and halo_owner (they must outlive the policy).
  static SkewedPolicy FromColumns(std::span<const int32_t> cols, int64_t num_owned, int32_t own_part,
                                  std::span<const int32_t> halo_owner, int32_t local_part, SkewOptions options);
  // The owners looked up per node: the neighbour at edge position e is cols[e], a local id owned by part
  // node_part[cols[e]] (virtual ranks: a rank holding several parts of a folder tells them apart). Keeps views of
  // cols and node_part.
  static SkewedPolicy FromNodeParts(std::span<const int32_t> cols, std::span<const int32_t> node_part,
                                    int32_t local_part, SkewOptions options);
  bool Uniform() const override;  // true iff !options.Active()
  void Probabilities(int64_t row, int64_t row_begin, std::span<double> q) const override;
  // The requester can change per call (the owner of a node samples on behalf of another rank).
  SkewedPolicy WithLocalPart(int32_t part) const;

  int32_t local_part() const { return local_part_; }
  const SkewOptions& options() const { return options_; }

 private:
  int32_t OwnerAt(size_t e) const;  // the part owning the neighbour at edge position e

  std::span<const int32_t> edge_owner_;  // per edge; empty in the FromColumns form
  int32_t local_part_;
  SkewOptions options_;
  // The FromColumns form.
  std::span<const int32_t> cols_;
  int64_t num_owned_ = 0;
  int32_t own_part_ = 0;
  std::span<const int32_t> halo_owner_;
  std::span<const int32_t> node_part_;  // the FromNodeParts form (with cols_)
};

}  // namespace tessel::sampling
