// The coarsening route of distributed partitioning (issue 51; DistAlgorithm::kCoarsen), step 3 of
// dist_partition_steps.h without ParMETIS: PT-Scotch's ParMETIS interface holds about 290 bytes per local adjacency
// entry, this route a few arrays of the block's size.
//  1. Each rank clusters its own rows by size-constrained label propagation over the edges between its own rows
//     (as ParHIP and dKaMinPar coarsen, but local, so no cluster weight needs agreeing on): rounds of moves to the
//     neighbouring cluster of most edge weight that stays under the cluster caps, then the clusters contracted into a
//     weighted graph and clustered again, level after level while they shrink by a tenth or more.
//  2. The cluster graph over all ranks (every edge between two clusters, its weight the fine edges between them) is
//     gathered on rank 0 and partitioned there by serial METIS; each rank's clusters' parts come back.
//  3. Every row takes its cluster's part, then rounds of distributed label-propagation refinement: a row moves to
//     the part of most neighbours when that gains and the part stays under the balance bound (each rank spends a
//     1/K share of every part's room a round; rows of an overloaded part move out first).
// Deterministic: the visiting orders come from the seed, METIS runs once on rank 0 with the seed.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "core/log.h"
#include "core/rng.h"
#include "partition/dist_partition_steps.h"
#include "partition/metis_partitioner.h"

namespace tessel::partition::detail {
namespace {

constexpr int kClusterRounds = 5;          // label-propagation rounds a level
constexpr int kFirstLevelRounds = 30;      // on the rows themselves: labels spread through each community
constexpr int kMaxLevels = 12;             // local contraction levels at most
constexpr int kRefineRounds = 200;         // refinement rounds at most
constexpr int64_t kClustersPerPart = 256;  // the cluster caps: a part's weight (and nodes) over this

// A weighted graph of this rank's vertices: CSR over local ids, edge weights, each vertex's constraint weight and
// fine-node count.
struct LocalGraph {
  std::vector<int64_t> ptr{0};
  std::vector<int32_t> col;
  std::vector<int64_t> ew;
  std::vector<int64_t> vw;
  std::vector<int64_t> vn;
  int32_t n() const { return static_cast<int32_t>(vw.size()); }
};

size_t Z(int64_t i) { return static_cast<size_t>(i); }

// A visiting order of n vertices from the seed (Fisher-Yates on Mix64, the same on every platform).
std::vector<int32_t> Order(int32_t n, uint64_t seed) {
  std::vector<int32_t> order(Z(n));
  std::iota(order.begin(), order.end(), 0);
  for (int32_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int32_t>(Mix64(seed + static_cast<uint64_t>(i)) % static_cast<uint64_t>(i + 1));
    std::swap(order[Z(i)], order[Z(j)]);
  }
  return order;
}

// Size-constrained label propagation on g; returns each vertex's cluster in [0, *count), numbered in vertex order.
std::vector<int32_t> Propagate(const LocalGraph& g, int64_t max_w, int64_t max_n, uint64_t seed, int rounds,
                               int32_t* count) {
  const int32_t n = g.n();
  std::vector<int32_t> label(Z(n));
  std::iota(label.begin(), label.end(), 0);
  std::vector<int64_t> cw = g.vw;
  std::vector<int64_t> cn = g.vn;
  std::vector<int64_t> rating(Z(n), 0);
  std::vector<int32_t> touched;
  const std::vector<int32_t> order = Order(n, seed);
  for (int r = 0; r < rounds; ++r) {
    int64_t moved = 0;
    for (const int32_t u : order) {
      const int32_t from = label[Z(u)];
      for (int64_t e = g.ptr[Z(u)]; e < g.ptr[Z(u) + 1]; ++e) {
        const int32_t c = label[Z(g.col[Z(e)])];
        if (rating[Z(c)] == 0) touched.push_back(c);
        rating[Z(c)] += g.ew[Z(e)];
      }
      // The best cluster; ties broken by a hash of (round, vertex, cluster), not by the smaller id, which would
      // pull every vertex towards the first clusters.
      int32_t best = from;
      int64_t best_rating = rating[Z(from)];
      uint64_t best_tie = 0;
      const uint64_t salt = Mix64(seed ^ (static_cast<uint64_t>(r) << 40) ^ static_cast<uint64_t>(u));
      for (const int32_t c : touched) {
        if (c == from || cw[Z(c)] + g.vw[Z(u)] > max_w || cn[Z(c)] + g.vn[Z(u)] > max_n) continue;
        const uint64_t tie = Mix64(salt + static_cast<uint64_t>(c));
        if (rating[Z(c)] > best_rating || (rating[Z(c)] == best_rating && best != from && tie > best_tie)) {
          best = c;
          best_rating = rating[Z(c)];
          best_tie = tie;
        }
      }
      for (const int32_t c : touched) rating[Z(c)] = 0;
      touched.clear();
      if (best == from) continue;
      cw[Z(from)] -= g.vw[Z(u)];
      cn[Z(from)] -= g.vn[Z(u)];
      cw[Z(best)] += g.vw[Z(u)];
      cn[Z(best)] += g.vn[Z(u)];
      label[Z(u)] = best;
      ++moved;
    }
    if (moved == 0) break;
  }
  std::vector<int32_t> id(Z(n), -1);
  int32_t c = 0;
  for (int32_t& l : label) {
    if (id[Z(l)] < 0) id[Z(l)] = c++;
    l = id[Z(l)];
  }
  *count = c;
  return label;
}

// The graph of g's clusters: vertex weights summed, parallel edges merged (weights summed), internal edges dropped.
LocalGraph Contract(const LocalGraph& g, const std::vector<int32_t>& label, int32_t count) {
  std::vector<int64_t> start(Z(count) + 1, 0);
  for (const int32_t l : label) ++start[Z(l) + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<int32_t> members(label.size());
  std::vector<int64_t> next(start.begin(), start.end() - 1);
  for (int32_t u = 0; u < g.n(); ++u) members[Z(next[Z(label[Z(u)])]++)] = u;
  LocalGraph c;
  c.vw.assign(Z(count), 0);
  c.vn.assign(Z(count), 0);
  std::vector<int64_t> rating(Z(count), 0);
  std::vector<int32_t> touched;
  for (int32_t k = 0; k < count; ++k) {
    for (int64_t m = start[Z(k)]; m < start[Z(k) + 1]; ++m) {
      const int32_t u = members[Z(m)];
      c.vw[Z(k)] += g.vw[Z(u)];
      c.vn[Z(k)] += g.vn[Z(u)];
      for (int64_t e = g.ptr[Z(u)]; e < g.ptr[Z(u) + 1]; ++e) {
        const int32_t d = label[Z(g.col[Z(e)])];
        if (d == k) continue;
        if (rating[Z(d)] == 0) touched.push_back(d);
        rating[Z(d)] += g.ew[Z(e)];
      }
    }
    for (const int32_t d : touched) {
      c.col.push_back(d);
      c.ew.push_back(rating[Z(d)]);
      rating[Z(d)] = 0;
    }
    touched.clear();
    c.ptr.push_back(static_cast<int64_t>(c.col.size()));
  }
  return c;
}

// Step 1: every row's local cluster in [0, *count).
std::vector<int32_t> LocalClusters(const DistPartitionRun& run, const std::vector<int64_t>& vwgt, int64_t max_w,
                                   int64_t max_n, int32_t* count) {
  const Block& b = run.b;
  const std::vector<int64_t>& ptr = run.symmetry.adj_ptr;
  const std::vector<int64_t>& adj = run.symmetry.adj;
  LocalGraph g;
  g.ptr.reserve(Z(b.rows()) + 1);
  for (int64_t i = 0; i < b.rows(); ++i) {
    for (int64_t e = ptr[Z(i)]; e < ptr[Z(i) + 1]; ++e) {
      if (adj[Z(e)] >= b.lo && adj[Z(e)] < b.hi) {
        g.col.push_back(static_cast<int32_t>(adj[Z(e)] - b.lo));
        g.ew.push_back(1);
      }
    }
    g.ptr.push_back(static_cast<int64_t>(g.col.size()));
  }
  g.vw = vwgt;
  g.vn.assign(Z(b.rows()), 1);
  std::vector<int32_t> map(Z(b.rows()));
  std::iota(map.begin(), map.end(), 0);
  int32_t n = g.n();
  for (int level = 0; level < kMaxLevels && !g.col.empty(); ++level) {
    int32_t c = 0;
    const std::vector<int32_t> label =
        Propagate(g, max_w, max_n, Mix64(run.options.seed ^ (static_cast<uint64_t>(level) << 32) ^ Z(run.me)),
                  level == 0 ? kFirstLevelRounds : kClusterRounds, &c);
    for (int32_t& m : map) m = label[Z(m)];
    const bool shrank = c <= n - n / 10;
    log::Debug("partition: rank {} clustering level {}: {} -> {} vertices", run.me, level, n, c);
    g = Contract(g, label, c);
    n = c;
    if (!shrank) break;
  }
  *count = n;
  return map;
}

// The value `of(row)` of each of the sorted, unique remote nodes `ghosts`, asked of their owners (one
// request/reply exchange).
template <typename F>
std::vector<int64_t> AskOwners(DistPartitionRun& run, const std::vector<int64_t>& ghosts, F of) {
  std::vector<int64_t> counts(Z(run.K), 0);
  for (const int64_t v : ghosts) ++counts[Z(OwnerOf(run.vtxdist, v))];
  std::vector<int64_t> asked_counts;
  std::vector<int64_t> asked = Exchange(run.comm, ghosts, counts, &asked_counts, "partition");
  comm::OnEveryRankOrFail(run.comm, [&] {
    for (int64_t& v : asked) {
      TESSEL_CHECK(v >= run.b.lo && v < run.b.hi,
                   "distributed partition: rank {} was asked for node {} outside its "
                   "rows",
                   run.me, v);
      v = of(v - run.b.lo);
    }
  });
  std::vector<int64_t> got = Exchange(run.comm, asked, asked_counts, nullptr, "partition");
  TESSEL_CHECK(got.size() == ghosts.size(), "distributed partition: {} answers for {} remote nodes", got.size(),
               ghosts.size());
  return got;
}

// The block's remote neighbours, sorted and unique, and each adjacency entry's slot: >= 0 the index among them,
// < 0 the local row ~slot.
std::vector<int64_t> Ghosts(const DistPartitionRun& run, std::vector<int32_t>* slot) {
  const std::vector<int64_t>& adj = run.symmetry.adj;
  std::vector<int64_t> ghosts;
  for (const int64_t v : adj) {
    if (v < run.b.lo || v >= run.b.hi) ghosts.push_back(v);
  }
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  slot->resize(adj.size());
  for (size_t e = 0; e < adj.size(); ++e) {
    const int64_t v = adj[e];
    (*slot)[e] = (v >= run.b.lo && v < run.b.hi)
                     ? ~static_cast<int32_t>(v - run.b.lo)
                     : static_cast<int32_t>(std::lower_bound(ghosts.begin(), ghosts.end(), v) - ghosts.begin());
  }
  return ghosts;
}

// Step 2: the cluster graph gathered on rank 0, partitioned by METIS there; returns this rank's clusters' parts.
std::vector<int64_t> PartitionClusters(DistPartitionRun& run, const std::vector<int32_t>& cluster, int32_t count,
                                       const std::vector<int64_t>& vwgt, const std::vector<int64_t>& ghosts,
                                       const std::vector<int32_t>& slot) {
  std::vector<int64_t> counts_all(Z(run.K));
  std::vector<int64_t> mine{count};
  run.comm.Allgather<int64_t>(mine, counts_all, "setup").ThrowIfError();
  const std::vector<int64_t> dist = Starts(counts_all);
  const int64_t first = dist[Z(run.me)];
  const std::vector<int64_t> ghost_cluster =
      AskOwners(run, ghosts, [&](int64_t row) { return first + cluster[Z(row)]; });
  // This rank's cluster rows: members grouped by counting sort, edges merged through a dense rating over all
  // clusters.
  std::vector<int64_t> start(Z(count) + 1, 0);
  for (const int32_t c : cluster) ++start[Z(c) + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<int32_t> members(cluster.size());
  std::vector<int64_t> next(start.begin(), start.end() - 1);
  for (size_t i = 0; i < cluster.size(); ++i) members[Z(next[Z(cluster[i])]++)] = static_cast<int32_t>(i);
  std::vector<int64_t> rating(Z(dist.back()), 0);
  std::vector<int64_t> touched;
  std::vector<int64_t> vw(Z(count), 0);
  std::vector<int64_t> deg(Z(count), 0);
  std::vector<int64_t> adj;
  std::vector<int64_t> ew;
  const std::vector<int64_t>& ptr = run.symmetry.adj_ptr;
  for (int32_t k = 0; k < count; ++k) {
    for (int64_t m = start[Z(k)]; m < start[Z(k) + 1]; ++m) {
      const int32_t i = members[Z(m)];
      vw[Z(k)] += vwgt[Z(i)];
      for (int64_t e = ptr[Z(i)]; e < ptr[Z(i) + 1]; ++e) {
        const int32_t s = slot[Z(e)];
        const int64_t d = s >= 0 ? ghost_cluster[Z(s)] : first + cluster[Z(~s)];
        if (d == first + k) continue;
        if (rating[Z(d)] == 0) touched.push_back(d);
        rating[Z(d)] += 1;
      }
    }
    for (const int64_t d : touched) {
      adj.push_back(d);
      ew.push_back(rating[Z(d)]);
      rating[Z(d)] = 0;
    }
    deg[Z(k)] = static_cast<int64_t>(touched.size());
    touched.clear();
  }
  std::vector<int64_t>().swap(rating);
  std::vector<int64_t> entries{static_cast<int64_t>(adj.size())};
  SumOverRanks(run.comm, &entries);
  run.result.coarse_vertices = dist.back();
  run.result.coarse_entries = entries[0];
  if (run.me == 0 && dist.back() > run.n / 4) {
    log::Warn(
        "partition: the ranks' own rows share few edges, so the clusters shrink the graph only to {} of {} "
        "nodes; rank 0 holds that cluster graph ({} entries) for METIS. Fewer ranks, or ids with locality "
        "(neighbours numbered close together), give a smaller cluster graph",
        dist.back(), run.n, entries[0]);
  }
  // Everything to rank 0 (one exchange per array), METIS there, each rank's parts back.
  const auto to_root = [&](const std::vector<int64_t>& v) {
    std::vector<int64_t> c(Z(run.K), 0);
    c[0] = static_cast<int64_t>(v.size());
    return Exchange(run.comm, v, c, nullptr, "partition");
  };
  const std::vector<int64_t> all_vw = to_root(vw);
  const std::vector<int64_t> all_deg = to_root(deg);
  const std::vector<int64_t> all_adj = to_root(adj);
  const std::vector<int64_t> all_ew = to_root(ew);
  std::vector<int64_t> parts;
  std::vector<int64_t> back(Z(run.K), 0);
  comm::OnEveryRankOrFail(run.comm, [&] {
    if (run.me != 0) return;
    log::Info("partition: METIS on rank 0 over the cluster graph ({} clusters of {} rows, {} entries)", dist.back(),
              run.n, all_adj.size());
    std::vector<int64_t> xadj(all_deg.size() + 1, 0);
    std::partial_sum(all_deg.begin(), all_deg.end(), xadj.begin() + 1);
    const std::vector<int32_t> p =
        MetisPartCsr(xadj, all_adj, all_ew, all_vw, run.P, run.options.imbalance, run.options.seed);
    parts.assign(p.begin(), p.end());
    for (int r = 0; r < run.K; ++r) back[Z(r)] = counts_all[Z(r)];
  });
  std::vector<int64_t> cpart = Exchange(run.comm, parts, back, nullptr, "partition");
  TESSEL_CHECK(static_cast<int64_t>(cpart.size()) == count, "distributed partition: {} cluster parts for {} clusters",
               cpart.size(), count);
  return cpart;
}

// The total weight of each part over all ranks.
std::vector<int64_t> PartWeights(DistPartitionRun& run, const std::vector<int64_t>& vwgt) {
  std::vector<int64_t> w(Z(run.P), 0);
  for (size_t i = 0; i < vwgt.size(); ++i) w[Z(run.assignment.part[i])] += vwgt[i];
  SumOverRanks(run.comm, &w);
  return w;
}

// The cut entries of the current parts over all ranks (`gpart`: the ghosts' parts).
int64_t CutEntries(DistPartitionRun& run, const std::vector<int64_t>& gpart, const std::vector<int32_t>& slot) {
  const std::vector<int32_t>& part = run.assignment.part;
  const std::vector<int64_t>& ptr = run.symmetry.adj_ptr;
  std::vector<int64_t> cut{0};
  for (int64_t i = 0; i < run.b.rows(); ++i) {
    for (int64_t e = ptr[Z(i)]; e < ptr[Z(i) + 1]; ++e) {
      const int32_t s = slot[Z(e)];
      cut[0] += (s >= 0 ? gpart[Z(s)] : part[Z(~s)]) != part[Z(i)] ? 1 : 0;
    }
  }
  SumOverRanks(run.comm, &cut);
  return cut[0];
}

// One refinement round over the rows (`gpart`: the ghosts' parts at its start, `w` the parts' weights): a row moves
// to the adjacent part of most neighbours when that gains, or out of an overloaded part, within this rank's share of
// every part's room. Only about half the rows may move, a different half every round, so two neighbours on two ranks
// seldom swap parts blindly. Returns the moves.
int64_t RefineRound(DistPartitionRun& run, const std::vector<int64_t>& vwgt, const std::vector<int64_t>& gpart,
                    const std::vector<int32_t>& slot, const std::vector<int64_t>& w, int64_t max_w, int64_t grow_w,
                    int round) {
  std::vector<int32_t>& part = run.assignment.part;
  const std::vector<int64_t>& ptr = run.symmetry.adj_ptr;
  std::vector<int64_t> room(Z(run.P));
  std::vector<int64_t> excess(Z(run.P));
  for (int32_t p = 0; p < run.P; ++p) {
    room[Z(p)] = std::max<int64_t>(0, grow_w - w[Z(p)]) / run.K;
    excess[Z(p)] = w[Z(p)] > max_w ? (w[Z(p)] - max_w + run.K - 1) / run.K : 0;
  }
  const auto lightest = static_cast<int32_t>(std::min_element(w.begin(), w.end()) - w.begin());
  std::vector<int64_t> conn(Z(run.P), 0);
  std::vector<int32_t> touched;
  const uint64_t salt = Mix64(run.options.seed ^ (0x7265666eULL + static_cast<uint64_t>(round)));
  int64_t moved = 0;
  for (int64_t i = 0; i < run.b.rows(); ++i) {
    const int32_t from = part[Z(i)];
    const bool must = excess[Z(from)] > 0;
    if (!must && (Mix64(salt ^ static_cast<uint64_t>(run.b.lo + i)) & 1) != 0) continue;
    const int64_t wi = vwgt[Z(i)];
    for (int64_t e = ptr[Z(i)]; e < ptr[Z(i) + 1]; ++e) {
      const int32_t s = slot[Z(e)];
      const auto q = static_cast<int32_t>(s >= 0 ? gpart[Z(s)] : part[Z(~s)]);
      if (conn[Z(q)] == 0) touched.push_back(q);
      ++conn[Z(q)];
    }
    int32_t best = -1;
    for (const int32_t q : touched) {
      if (q == from || wi > room[Z(q)]) continue;
      if (best < 0 || conn[Z(q)] > conn[Z(best)] || (conn[Z(q)] == conn[Z(best)] && q < best)) best = q;
    }
    if (best < 0 && must && lightest != from && wi <= room[Z(lightest)]) best = lightest;
    const bool gains = best >= 0 && conn[Z(best)] > conn[Z(from)];
    for (const int32_t q : touched) conn[Z(q)] = 0;
    touched.clear();
    if (best < 0 || !(gains || must)) continue;
    room[Z(best)] -= wi;
    if (must) excess[Z(from)] = std::max<int64_t>(0, excess[Z(from)] - wi);
    part[Z(i)] = best;
    ++moved;
  }
  return moved;
}

// Step 3: label-propagation refinement of run.assignment.part, keeping the best balanced parts a round reached;
// returns the rounds run.
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
  for (; round <= kRefineRounds; ++round) {
    const std::vector<int64_t> gpart = AskOwners(run, ghosts, [&](int64_t row) { return part[Z(row)]; });
    const std::vector<int64_t> w = PartWeights(run, vwgt);
    const int64_t cut = CutEntries(run, gpart, slot);
    const bool balanced = *std::max_element(w.begin(), w.end()) <= max_w;
    log::Debug("partition: refinement round {}: {} cut entries, heaviest part {} (bound {})", round, cut,
               *std::max_element(w.begin(), w.end()), max_w);
    if (balanced && best_cut >= 0 && cut >= best_cut - best_cut / 1000) break;  // less than 0.1% better
    if (balanced && (best_cut < 0 || cut < best_cut)) {
      best_cut = cut;
      best_part = part;
    }
    if (round == kRefineRounds) break;
    std::vector<int64_t> moved{RefineRound(run, vwgt, gpart, slot, w, max_w, grow_w, round)};
    SumOverRanks(run.comm, &moved);
    if (moved[0] == 0) break;
  }
  if (best_cut >= 0) part = std::move(best_part);
  return round;
}

}  // namespace

void CoarsenAssign(DistPartitionRun& run, const std::vector<int64_t>& vwgt) {
  std::vector<int64_t> sums{std::accumulate(vwgt.begin(), vwgt.end(), int64_t{0})};
  SumOverRanks(run.comm, &sums);
  const int64_t max_w = std::max<int64_t>(1, sums[0] / (run.P * kClustersPerPart));
  const int64_t max_n = std::max<int64_t>(1, run.n / (run.P * kClustersPerPart));
  int32_t count = 0;
  const std::vector<int32_t> cluster = LocalClusters(run, vwgt, max_w, max_n, &count);
  std::vector<int32_t> slot;
  const std::vector<int64_t> ghosts = Ghosts(run, &slot);
  const std::vector<int64_t> cpart = PartitionClusters(run, cluster, count, vwgt, ghosts, slot);
  run.assignment.part.resize(cluster.size());
  for (size_t i = 0; i < cluster.size(); ++i) run.assignment.part[i] = static_cast<int32_t>(cpart[Z(cluster[i])]);
  const int rounds = Refine(run, vwgt, ghosts, slot);
  run.result.refinement_rounds = rounds;
  log::Info("partition: rank {}: {} rows in {} clusters; refinement took {} rounds", run.me, run.b.rows(), count,
            rounds);
}

}  // namespace tessel::partition::detail
