// The coarsening route's refinement (issue 51; dist_coarsen.h): rounds of distributed label propagation on the parts
// METIS gave the clusters, keeping the best balanced parts a round reached. Each round every row may ask to move to
// the part of most neighbours when that gains (rows of an overloaded part ask to move out); the ranks add up the
// asks of every pair of parts, and what moves is every exchange (as much from a to b as from b to a, which leaves
// the weights where they were) plus each part's room under the growth bound, shared in proportion. Exchanges are
// what makes it fast: with room alone (each part may grow by 1% of its weight a round), moving a part's rows to where
// they belong took about 60-90 rounds on CSBM graphs whose initial parts mixed the communities; with exchanges, 12-25.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "core/log.h"
#include "core/rng.h"
#include "partition/dist_coarsen.h"

namespace tessel::partition::detail {
namespace {

constexpr int kRefineRounds = 200;  // refinement rounds at most

// The total weight of each part over all ranks.
std::vector<int64_t> PartWeights(DistPartitionRun& run, const std::vector<int64_t>& vwgt) {
  std::vector<int64_t> w(Z(run.P), 0);
  for (size_t i = 0; i < vwgt.size(); ++i) w[Z(run.assignment.part[i])] += vwgt[i];
  SumOverRanks(run.comm, &w);
  return w;
}

// How much weight may move from part a to part b this round (`demand`: what the rows of all ranks ask, P x P, row
// a = from): every exchange both ways (a row of a to b against one of b to a leaves both weights as they were), and
// of the rest, each part's room under `grow_w` shared among the parts asking for it in proportion.
std::vector<int64_t> Allowed(const std::vector<int64_t>& demand, const std::vector<int64_t>& w, int32_t P,
                             int64_t grow_w) {
  std::vector<int64_t> allowed(demand.size(), 0);
  for (int32_t a = 0; a < P; ++a) {
    for (int32_t b = 0; b < P; ++b) {
      const size_t ab = Z(a) * Z(P) + Z(b);
      allowed[ab] = std::min(demand[ab], demand[Z(b) * Z(P) + Z(a)]);
    }
  }
  for (int32_t b = 0; b < P; ++b) {
    int64_t asked = 0;
    for (int32_t a = 0; a < P; ++a) asked += demand[Z(a) * Z(P) + Z(b)] - allowed[Z(a) * Z(P) + Z(b)];
    const int64_t room = std::min(asked, std::max<int64_t>(0, grow_w - w[Z(b)]));
    if (asked == 0 || room == 0) continue;
    for (int32_t a = 0; a < P; ++a) {
      const size_t ab = Z(a) * Z(P) + Z(b);
      allowed[ab] += static_cast<int64_t>(static_cast<double>(demand[ab] - allowed[ab]) * static_cast<double>(room) /
                                          static_cast<double>(asked));
    }
  }
  return allowed;
}

// What a round's pass over the rows finds (RefineScan): this rank's cut entries at the round's start, the rows that
// ask to move (row, part) and the weight they ask for each pair of parts (P x P, row = from).
struct RoundAsks {
  int64_t cut = 0;
  std::vector<std::pair<int32_t, int32_t>> asks;
  std::vector<int64_t> demand;
};

// The parts of the rows, then of the ghosts (`gpart`), in one array of the narrowest type that holds them: the pass
// over the rows reads one of them per entry in no order, and a byte each keeps the million of a 250k-row block with
// its ghosts in a core's cache where 64-bit ghost parts (6 MB) were not.
template <typename T>
std::vector<T> RowAndGhostParts(const std::vector<int32_t>& part, const std::vector<int64_t>& gpart) {
  std::vector<T> np(part.size() + gpart.size());
  std::copy(part.begin(), part.end(), np.begin());
  std::transform(gpart.begin(), gpart.end(), np.begin() + static_cast<std::ptrdiff_t>(part.size()),
                 [](int64_t q) { return static_cast<T>(q); });
  return np;
}

// One refinement round's pass over the rows (`np`: the rows' and then the ghosts' parts at its start, `w` the parts'
// weights). Every row asks to move to the adjacent part of most neighbours when that gains, or out of an overloaded
// part (to the lightest one when no neighbour's part takes it). Only about half the rows may ask, a different half
// every round, so two neighbours on two ranks seldom swap parts blindly. The same pass counts the cut entries (the
// other half's too), so a round reads the adjacency once.
template <typename T>
RoundAsks RefineScan(DistPartitionRun& run, const std::vector<int64_t>& vwgt, const std::vector<T>& np,
                     const std::vector<int32_t>& slot, const std::vector<int64_t>& w, int64_t max_w, int round) {
  const std::vector<int32_t>& part = run.assignment.part;
  const std::vector<int64_t>& ptr = run.symmetry.adj_ptr;
  const size_t P = Z(run.P);
  const int64_t rows = run.b.rows();
  const auto lightest = static_cast<int32_t>(std::min_element(w.begin(), w.end()) - w.begin());
  const auto part_of = [&](int64_t e) {
    const int32_t s = slot[Z(e)];
    return static_cast<int32_t>(np[Z(s >= 0 ? rows + s : ~s)]);
  };
  std::vector<int64_t> conn(P, 0);
  std::vector<int32_t> touched;
  RoundAsks r;
  r.demand.assign(P * P, 0);
  const uint64_t salt = Mix64(run.options.seed ^ (0x7265666eULL + static_cast<uint64_t>(round)));
  for (int64_t i = 0; i < run.b.rows(); ++i) {
    const int32_t from = part[Z(i)];
    const bool must = w[Z(from)] > max_w;
    if (!must && (Mix64(salt ^ static_cast<uint64_t>(run.b.lo + i)) & 1) != 0) {
      for (int64_t e = ptr[Z(i)]; e < ptr[Z(i) + 1]; ++e) r.cut += part_of(e) != from ? 1 : 0;
      continue;
    }
    for (int64_t e = ptr[Z(i)]; e < ptr[Z(i) + 1]; ++e) {
      const int32_t q = part_of(e);
      if (conn[Z(q)] == 0) touched.push_back(q);
      ++conn[Z(q)];
    }
    r.cut += ptr[Z(i) + 1] - ptr[Z(i)] - conn[Z(from)];
    int32_t best = -1;
    for (const int32_t q : touched) {
      if (q == from) continue;
      if (best < 0 || conn[Z(q)] > conn[Z(best)] || (conn[Z(q)] == conn[Z(best)] && q < best)) best = q;
    }
    const bool gains = best >= 0 && conn[Z(best)] > conn[Z(from)];
    for (const int32_t q : touched) conn[Z(q)] = 0;
    touched.clear();
    if (must && !gains) best = lightest != from ? lightest : -1;
    if (best < 0 || !(gains || must)) continue;
    r.asks.emplace_back(static_cast<int32_t>(i), best);
    r.demand[Z(from) * P + Z(best)] += vwgt[Z(i)];
  }
  return r;
}

// Moves this rank's share of what Allowed grants each pair of parts (`all`: every rank's demand), rows in order.
// Returns the moves.
int64_t RefineMoves(DistPartitionRun& run, const std::vector<int64_t>& vwgt, RoundAsks& r,
                    const std::vector<int64_t>& all, const std::vector<int64_t>& w, int64_t grow_w) {
  std::vector<int32_t>& part = run.assignment.part;
  const size_t P = Z(run.P);
  const std::vector<int64_t> allowed = Allowed(all, w, run.P, grow_w);
  // This rank's quota of each pair: its share of the demand, times the fraction granted.
  std::vector<int64_t>& quota = r.demand;
  for (size_t ab = 0; ab < quota.size(); ++ab) {
    if (all[ab] > 0) {
      quota[ab] = static_cast<int64_t>(static_cast<double>(quota[ab]) * static_cast<double>(allowed[ab]) /
                                       static_cast<double>(all[ab]));
    }
  }
  int64_t moved = 0;
  for (const auto& [i, to] : r.asks) {
    int64_t& q = quota[Z(part[Z(i)]) * P + Z(to)];
    if (vwgt[Z(i)] > q) continue;
    q -= vwgt[Z(i)];
    part[Z(i)] = to;
    ++moved;
  }
  return moved;
}

}  // namespace

int Refine(DistPartitionRun& run, const std::vector<int64_t>& vwgt, const std::vector<int64_t>& ghosts,
           const std::vector<int32_t>& slot) {
  std::vector<int32_t>& part = run.assignment.part;
  std::vector<int64_t> total{std::accumulate(vwgt.begin(), vwgt.end(), int64_t{0})};
  SumOverRanks(run.comm, &total);
  const auto max_w = static_cast<int64_t>(run.options.imbalance * static_cast<double>(total[0]) / run.P);
  // Parts grow only to a fifth of the allowed imbalance, so no part fills up with the pieces of several communities
  // and blocks the moves that would sort them (with the whole bound, one part reached it at 1M CSBM nodes and the
  // cut stalled at twice METIS's).
  const auto grow_w = std::min(
      max_w, static_cast<int64_t>((1 + (run.options.imbalance - 1) / 5) * static_cast<double>(total[0]) / run.P));
  std::vector<int32_t> best_part;
  int64_t best_cut = -1;
  int round = 0;
  OwnerQuery ghost_parts(run, run.vtxdist, ghosts);
  for (; round <= kRefineRounds; ++round) {
    const std::vector<int64_t> gpart = ghost_parts.Ask<1>([&](int64_t row, int64_t* out) { *out = part[Z(row)]; });
    const std::vector<int64_t> w = PartWeights(run, vwgt);
    RoundAsks asks = run.P <= 256
                         ? RefineScan(run, vwgt, RowAndGhostParts<uint8_t>(part, gpart), slot, w, max_w, round)
                         : RefineScan(run, vwgt, RowAndGhostParts<int32_t>(part, gpart), slot, w, max_w, round);
    std::vector<int64_t> all = asks.demand;  // every rank's demand, then the cut: one sum over the ranks
    all.push_back(asks.cut);
    SumOverRanks(run.comm, &all);
    const int64_t cut = all.back();
    all.pop_back();
    const bool balanced = *std::max_element(w.begin(), w.end()) <= max_w;
    log::Debug("partition: refinement round {}: {} cut entries, heaviest part {} (bound {})", round, cut,
               *std::max_element(w.begin(), w.end()), max_w);
    if (balanced && best_cut >= 0 && cut >= best_cut - best_cut / 1000) break;  // less than 0.1% better
    if (balanced && (best_cut < 0 || cut < best_cut)) {
      best_cut = cut;
      best_part = part;
    }
    if (round == kRefineRounds) break;
    std::vector<int64_t> moved{RefineMoves(run, vwgt, asks, all, w, grow_w)};
    SumOverRanks(run.comm, &moved);
    if (moved[0] == 0) break;
  }
  if (best_cut >= 0) part = std::move(best_part);
  return round;
}

}  // namespace tessel::partition::detail
