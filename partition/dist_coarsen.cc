// The coarsening route of distributed partitioning (issue 51; DistAlgorithm::kCoarsen), step 3 of
// dist_partition_steps.h without ParMETIS: PT-Scotch's ParMETIS interface holds about 290 bytes per local adjacency
// entry, this route a few arrays of the block's size, and rank 0 a cluster graph of bounded size.
//  1. Multilevel clustering, every level distributed like the rows (as ParHIP and dKaMinPar coarsen). On each level
//     the ranks cluster all vertices together by size-constrained label propagation over every edge, cut edges
//     between ranks included: a cluster is named by a vertex's global id and its weight is kept by that vertex's
//     rank; each round every rank reads its ghosts' clusters and the weights of the clusters it sees, moves about
//     half its vertices (a different half each round, so two neighbours on two ranks seldom swap blindly) to the
//     neighbouring cluster of most edge weight (the larger on a tie), spending at most a 1/K share of each
//     cluster's room under the cap, and sends the weight changes to the clusters' ranks, so no cluster passes the
//     cap. The clusters are numbered by their ranks and contracted: each rank sends its vertices' share of every
//     cluster's edges to the cluster's rank, which merges them into the next level. Levels go on, the cap 4 times
//     larger each (a part's weight over 256, 64, 16, then 8), until the cluster graph has at most `budget` entries
//     (a share of the block's entries, or a million) or stops shrinking.
//  2. The coarsest level is gathered on rank 0 and partitioned there by serial METIS; the parts go back to the
//     clusters' ranks and every row asks for its cluster's part through the levels.
//  3. Refinement (dist_refine.cc).
// Deterministic: the visiting orders come from the seed, METIS runs once on rank 0 with the seed.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/log.h"
#include "core/rng.h"
#include "partition/dist_coarsen.h"
#include "partition/metis_partitioner.h"
#include "partition/sorted_index.h"

namespace tessel::partition::detail {
namespace {

constexpr size_t kPrefetchRows = 16;        // rows whose clusters' records are prefetched at once
constexpr int kClusterRounds = 5;           // label-propagation rounds a level at most
constexpr int kMaxLevels = 8;               // coarsening levels at most
constexpr int64_t kClustersPerPart = 256;   // the first level's cluster caps: a part's weight (and nodes) over this
constexpr int64_t kMinClustersPerPart = 8;  // the caps grow 4x a level up to a part's weight over this

// One level's graph, distributed like the rows: rank r holds vertices [dist[r], dist[r + 1]), their adjacency
// (global ids, `ew` the edge weights, empty for all 1), weight and fine-node count (`vn`, empty for all 1), the
// remote neighbours (sorted, unique) and each entry's slot (Ghosts).
struct Level {
  std::vector<int64_t> dist;
  std::vector<int64_t> ptr;
  std::vector<int64_t> adj;
  std::vector<int64_t> ew;
  std::vector<int64_t> vw;
  std::vector<int64_t> vn;
  std::vector<int64_t> ghosts;
  std::vector<int32_t> slot;
  int64_t lo(int me) const { return dist[Z(me)]; }
  int64_t rows() const { return static_cast<int64_t>(vw.size()); }
  int64_t W(int64_t e) const { return ew.empty() ? 1 : ew[Z(e)]; }
  int64_t N(int64_t v) const { return vn.empty() ? 1 : vn[Z(v)]; }
};

// The clusters of label propagation on one level: each vertex's cluster (a global vertex id of the level), and the
// weight and node count of the clusters named by this rank's vertices, exact after every round.
struct LpState {
  std::vector<int64_t> label;
  std::vector<int64_t> cw;
  std::vector<int64_t> cn;
};

// A visiting order of n rows from the seed (Fisher-Yates on Mix64, the same on every platform).
std::vector<int32_t> Order(int64_t n, uint64_t seed) {
  std::vector<int32_t> order(Z(n));
  std::iota(order.begin(), order.end(), 0);
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(Mix64(seed + static_cast<uint64_t>(i)) % static_cast<uint64_t>(i + 1));
    std::swap(order[Z(i)], order[Z(j)]);
  }
  return order;
}

// The sorted, unique clusters of the rows and the ghosts, and each one's index among them.
std::vector<int64_t> Candidates(const std::vector<int64_t>& label, const std::vector<int64_t>& glabel,
                                std::vector<int32_t>* li, std::vector<int32_t>* gi) {
  std::vector<int64_t> all(label);
  all.insert(all.end(), glabel.begin(), glabel.end());
  std::vector<int32_t> at;
  std::vector<int64_t> cand = IndexOf(std::move(all), &at);
  li->assign(at.begin(), at.begin() + static_cast<std::ptrdiff_t>(label.size()));
  gi->assign(at.begin() + static_cast<std::ptrdiff_t>(label.size()), at.end());
  return cand;
}

// What one round knows of a cluster it sees, in 32 bytes so that rating a row's neighbouring clusters reads one cache
// line each (the clusters are indexed by their place among the sorted candidates, a million or more on the first
// level, and visited in no order): the edge weight from the row being visited, the cluster's weight at the round's
// start, its id, and this rank's share of its room under the caps (weight, nodes): a 1/K share of what the caps
// leave, so the ranks together never pass them.
struct alignas(32) Seen {
  int64_t rating = 0;
  int64_t weight = 0;
  int64_t id = 0;
  int32_t room_w = 0;
  int32_t room_n = 0;
};

int32_t Room(int64_t cap, int64_t size, int K) {
  return static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(0, cap - size) / K, INT32_MAX));
}

// The weight changes of the clusters `seen` (`delta`: weight, nodes per cluster) to the clusters' ranks, applied
// there.
void SendDeltas(DistPartitionRun& run, const Level& g, const std::vector<Seen>& seen, const std::vector<int64_t>& delta,
                LpState& s) {
  std::vector<int64_t> send;
  std::vector<int64_t> counts(Z(run.K), 0);
  for (size_t c = 0; c < seen.size(); ++c) {  // the candidates' order is the ranks' order
    if (delta[2 * c] == 0 && delta[2 * c + 1] == 0) continue;
    send.insert(send.end(), {seen[c].id, delta[2 * c], delta[2 * c + 1]});
    counts[Z(OwnerOf(g.dist, seen[c].id))] += 3;
  }
  const std::vector<int64_t> got = Exchange(run.comm, send, counts, nullptr, "partition");
  const int64_t lo = g.lo(run.me);
  for (size_t i = 0; i + 2 < got.size(); i += 3) {
    s.cw[Z(got[i] - lo)] += got[i + 1];
    s.cn[Z(got[i] - lo)] += got[i + 2];
  }
}

// The first round's candidates (every vertex its own cluster): the ghosts below the block, the rows, the ghosts
// above it, sorted already; each one's weight and nodes (a ghost's asked of its rank by the ghosts' query). What
// Candidates and AskOwners would give, without sorting a million ids and sending them to their ranks.
std::vector<int64_t> FirstCandidates(const Level& g, int me, OwnerQuery& ghost_labels, const LpState& s,
                                     std::vector<int32_t>* li, std::vector<int32_t>* gi, std::vector<int64_t>* size) {
  const int64_t rows = g.rows();
  const auto below =
      static_cast<int64_t>(std::lower_bound(g.ghosts.begin(), g.ghosts.end(), g.lo(me)) - g.ghosts.begin());
  const std::vector<int64_t> gsize = ghost_labels.Ask<2>([&](int64_t v, int64_t* out) {
    out[0] = s.cw[Z(v)];
    out[1] = s.cn[Z(v)];
  });
  std::vector<int64_t> cand(g.ghosts.size() + Z(rows));
  size->resize(2 * cand.size());
  li->resize(Z(rows));
  gi->resize(g.ghosts.size());
  for (int64_t j = 0; j < static_cast<int64_t>(g.ghosts.size()); ++j) {
    const int64_t at = j < below ? j : j + rows;
    (*gi)[Z(j)] = static_cast<int32_t>(at);
    cand[Z(at)] = g.ghosts[Z(j)];
    (*size)[2 * Z(at)] = gsize[2 * Z(j)];
    (*size)[2 * Z(at) + 1] = gsize[2 * Z(j) + 1];
  }
  for (int64_t i = 0; i < rows; ++i) {
    (*li)[Z(i)] = static_cast<int32_t>(below + i);
    cand[Z(below + i)] = s.label[Z(i)];
    (*size)[2 * Z(below + i)] = s.cw[Z(i)];
    (*size)[2 * Z(below + i) + 1] = s.cn[Z(i)];
  }
  return cand;
}

// The clusters of the rows and the ghosts at a round's start: each one's index among the candidates (`li`, `gi`),
// and what the round knows of each candidate (its weight and nodes asked of its rank).
std::vector<Seen> SeeClusters(DistPartitionRun& run, const Level& g, int64_t max_w, int64_t max_n, bool first,
                              OwnerQuery& ghost_labels, const LpState& s, std::vector<int32_t>* li,
                              std::vector<int32_t>* gi) {
  std::vector<int64_t> cand;
  std::vector<int64_t> size;
  if (first) {
    cand = FirstCandidates(g, run.me, ghost_labels, s, li, gi, &size);
  } else {
    cand = Candidates(s.label, ghost_labels.Ask<1>([&](int64_t v, int64_t* out) { *out = s.label[Z(v)]; }), li, gi);
    size = AskOwners<2>(run, g.dist, cand, [&](int64_t c, int64_t* out) {
      out[0] = s.cw[Z(c)];
      out[1] = s.cn[Z(c)];
    });
  }
  std::vector<Seen> seen(cand.size());
  for (size_t c = 0; c < cand.size(); ++c) {
    seen[c] = {0, size[2 * c], cand[c], Room(max_w, size[2 * c], run.K), Room(max_n, size[2 * c + 1], run.K)};
  }
  return seen;
}

// One round of distributed label propagation on level g (step 1); returns this rank's moves.
// `ghost_labels` asks the ghosts' owners for their labels; in the first round (`first`) every vertex is its own
// cluster, so a ghost's label is its id and only its weight is asked.
int64_t LpRound(DistPartitionRun& run, const Level& g, const std::vector<int32_t>& order, int64_t max_w, int64_t max_n,
                uint64_t salt, bool first, OwnerQuery& ghost_labels, LpState& s) {
  std::vector<int32_t> li;
  std::vector<int32_t> gi;
  std::vector<Seen> seen = SeeClusters(run, g, max_w, max_n, first, ghost_labels, s, &li, &gi);
  std::vector<int64_t> delta(2 * seen.size(), 0);  // this rank's net change of each cluster: weight, nodes
  const auto fits = [&](int32_t c, int64_t w, int64_t n) {
    return delta[2 * Z(c)] + w <= seen[Z(c)].room_w && delta[2 * Z(c) + 1] + n <= seen[Z(c)].room_n;
  };
  std::vector<int32_t> touched;
  const int64_t lo = g.lo(run.me);
  int64_t moved = 0;
  // The rows are visited in batches: first the records of the clusters a batch's entries name are prefetched (a
  // million or more records in no order, whose misses within one row would wait on each other), then the batch's
  // rows are visited in order.
  std::array<int32_t, kPrefetchRows> batch{};
  for (size_t next = 0; next < order.size();) {
    size_t nb = 0;
    for (; next < order.size() && nb < batch.size(); ++next) {
      if ((Mix64(salt ^ static_cast<uint64_t>(lo + order[next])) & 1) == 0) batch[nb++] = order[next];
    }
    for (size_t j = 0; j < nb; ++j) {
      for (int64_t e = g.ptr[Z(batch[j])]; e < g.ptr[Z(batch[j]) + 1]; ++e) {
        const int32_t sl = g.slot[Z(e)];
        __builtin_prefetch(&seen[Z(sl >= 0 ? gi[Z(sl)] : li[Z(~sl)])]);
      }
    }
    for (size_t j = 0; j < nb; ++j) {
      const int32_t u = batch[j];
      const uint64_t h = Mix64(salt ^ static_cast<uint64_t>(lo + u));
      const int32_t from = li[Z(u)];
      for (int64_t e = g.ptr[Z(u)]; e < g.ptr[Z(u) + 1]; ++e) {
        const int32_t sl = g.slot[Z(e)];
        const int32_t c = sl >= 0 ? gi[Z(sl)] : li[Z(~sl)];
        if (seen[Z(c)].rating == 0) touched.push_back(c);
        seen[Z(c)].rating += g.W(e);
      }
      // The cluster of most edge weight that has room; among equals the larger one (its weight at the round's start,
      // the row's own cluster without the row), then a hash of (round, row, cluster). Preferring the larger cluster is
      // what makes the clusters of a graph without local structure (a random graph: every neighbour's cluster one
      // edge) grow to the cap instead of stopping at a few nodes each. The room is looked at only where a cluster
      // would win, the hashes only on a tie of rating and weight.
      const int64_t wu = g.vw[Z(u)];
      const int64_t nu = g.N(u);
      int32_t best = from;
      int64_t best_rating = seen[Z(from)].rating;
      int64_t best_size = seen[Z(from)].weight - wu;
      bool tie_known = false;
      uint64_t best_tie = 0;
      for (const int32_t c : touched) {
        const Seen& k = seen[Z(c)];
        if (c == from || k.rating < best_rating || (k.rating == best_rating && k.weight < best_size)) continue;
        const bool tie = k.rating == best_rating && k.weight == best_size;
        uint64_t t = 0;
        if (tie) {
          if (!tie_known) best_tie = Mix64(h + static_cast<uint64_t>(seen[Z(best)].id));
          tie_known = true;
          t = Mix64(h + static_cast<uint64_t>(k.id));
          if (t <= best_tie) continue;
        }
        if (!fits(c, wu, nu)) continue;
        best = c;
        best_rating = k.rating;
        best_size = k.weight;
        best_tie = t;
        tie_known = tie;
      }
      for (const int32_t c : touched) seen[Z(c)].rating = 0;
      touched.clear();
      if (best == from) continue;
      delta[2 * Z(from)] -= wu;
      delta[2 * Z(from) + 1] -= nu;
      delta[2 * Z(best)] += wu;
      delta[2 * Z(best) + 1] += nu;
      li[Z(u)] = best;
      ++moved;
    }
  }
  for (size_t i = 0; i < li.size(); ++i) s.label[i] = seen[Z(li[i])].id;
  SendDeltas(run, g, seen, delta, s);
  return moved;
}

// The clusters of a level as the next level's vertices, numbered by their ranks (rank r's in
// [dist[r], dist[r + 1])).
struct Coarse {
  std::vector<int64_t> dist;   // K + 1
  std::vector<int64_t> row;    // each vertex's cluster
  std::vector<int64_t> ghost;  // each ghost's cluster
  std::vector<int64_t> vw;     // the weights and node counts of this rank's clusters
  std::vector<int64_t> vn;
};

// Step 1 on one level: label propagation, then the clusters numbered.
Coarse Cluster(DistPartitionRun& run, const Level& g, int64_t max_w, int64_t max_n, int level) {
  const int64_t rows = g.rows();
  const int64_t lo = g.lo(run.me);
  LpState s;
  s.label.resize(Z(rows));
  std::iota(s.label.begin(), s.label.end(), lo);
  s.cw = g.vw;
  s.cn.resize(Z(rows));
  for (int64_t v = 0; v < rows; ++v) s.cn[Z(v)] = g.N(v);
  const uint64_t seed = Mix64(run.options.seed ^ (static_cast<uint64_t>(level) << 32));
  const std::vector<int32_t> order = Order(rows, Mix64(seed ^ Z(run.me)));
  OwnerQuery ghost_labels(run, g.dist, g.ghosts);
  for (int round = 0; round < kClusterRounds; ++round) {
    std::vector<int64_t> moved{LpRound(run, g, order, max_w, max_n,
                                       Mix64(seed ^ (0x6c70ULL << 40) ^ static_cast<uint64_t>(round)), round == 0,
                                       ghost_labels, s)};
    SumOverRanks(run.comm, &moved);
    log::Debug("partition: level {} clustering round {}: {} of {} vertices moved", level, round, moved[0],
               g.dist.back());
    if (moved[0] <= g.dist.back() / 100) break;  // under 1% of the vertices
  }
  Coarse c;
  std::vector<int64_t> dense(Z(rows), -1);
  int64_t count = 0;
  for (int64_t i = 0; i < rows; ++i) {
    if (s.cn[Z(i)] > 0) {
      c.vw.push_back(s.cw[Z(i)]);
      c.vn.push_back(s.cn[Z(i)]);
      dense[Z(i)] = count++;
    }
  }
  Free(s.cw);
  Free(s.cn);
  std::vector<int64_t> counts(Z(run.K));
  std::vector<int64_t> mine{count};
  run.comm.Allgather<int64_t>(mine, counts, "setup").ThrowIfError();
  c.dist = Starts(counts);
  const int64_t first = c.dist[Z(run.me)];
  const std::vector<int64_t> glabel = ghost_labels.Ask<1>([&](int64_t v, int64_t* out) { *out = s.label[Z(v)]; });
  std::vector<int32_t> li;
  std::vector<int32_t> gi;
  const std::vector<int64_t> cand = Candidates(s.label, glabel, &li, &gi);
  const std::vector<int64_t> id =
      AskOwners<1>(run, g.dist, cand, [&](int64_t k, int64_t* out) { *out = first + dense[Z(k)]; });
  c.row.resize(li.size());
  c.ghost.resize(gi.size());
  for (size_t i = 0; i < li.size(); ++i) c.row[i] = id[Z(li[i])];
  for (size_t i = 0; i < gi.size(); ++i) c.ghost[i] = id[Z(gi[i])];
  return c;
}

// The next level's rows of this rank's clusters from the records [cluster, degree, (neighbour, weight) x degree]
// every rank sent it (`got`), merged per cluster.
Level MergeRows(DistPartitionRun& run, Coarse& c, const std::vector<int64_t>& got) {
  const int64_t first = c.dist[Z(run.me)];
  const int64_t m = c.dist[Z(run.me) + 1] - first;
  std::vector<int64_t> start(Z(m) + 1, 0);
  for (size_t i = 0; i < got.size(); i += 2 + 2 * Z(got[i + 1])) ++start[Z(got[i] - first) + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<int64_t> records(Z(start.back()));
  std::vector<int64_t> next(start.begin(), start.end() - 1);
  for (size_t i = 0; i < got.size(); i += 2 + 2 * Z(got[i + 1])) {
    records[Z(next[Z(got[i] - first)]++)] = static_cast<int64_t>(i);
  }
  Level r;
  r.ptr.assign(1, 0);
  std::vector<int64_t> rating(Z(c.dist.back()), 0);
  std::vector<int64_t> touched;
  for (int64_t k = 0; k < m; ++k) {
    for (int64_t q = start[Z(k)]; q < start[Z(k) + 1]; ++q) {
      const size_t at = Z(records[Z(q)]);
      for (int64_t j = 0; j < got[at + 1]; ++j) {
        const int64_t d = got[at + 2 + 2 * Z(j)];
        if (rating[Z(d)] == 0) touched.push_back(d);
        rating[Z(d)] += got[at + 3 + 2 * Z(j)];
      }
    }
    for (const int64_t d : touched) {
      r.adj.push_back(d);
      r.ew.push_back(rating[Z(d)]);
      rating[Z(d)] = 0;
    }
    r.ptr.push_back(static_cast<int64_t>(r.adj.size()));
    touched.clear();
  }
  r.vw = std::move(c.vw);
  r.vn = std::move(c.vn);
  r.dist = c.dist;
  r.ghosts = GhostsOf(r.adj, r.dist[Z(run.me)], r.dist[Z(run.me) + 1], &r.slot);
  return r;
}

// Step 1's contraction: the clusters of level g as the next level, each cluster's row on its rank (this rank's
// vertices' share of every cluster's edges, merged there).
Level Contract(DistPartitionRun& run, const Level& g, Coarse& c) {
  std::vector<int64_t> pieces = c.row;  // the clusters of this rank's vertices
  std::sort(pieces.begin(), pieces.end());
  pieces.erase(std::unique(pieces.begin(), pieces.end()), pieces.end());
  std::vector<int64_t> start(pieces.size() + 1, 0);
  for (const int64_t k : c.row) ++start[Z(std::lower_bound(pieces.begin(), pieces.end(), k) - pieces.begin()) + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<int32_t> members(c.row.size());
  std::vector<int64_t> next(start.begin(), start.end() - 1);
  for (size_t i = 0; i < c.row.size(); ++i) {
    const auto p = std::lower_bound(pieces.begin(), pieces.end(), c.row[i]) - pieces.begin();
    members[Z(next[Z(p)]++)] = static_cast<int32_t>(i);
  }
  // One exchange per destination rank, so a rank holds only one rank's share of the records it sends (at 8 ranks
  // the records of all clusters at once were the largest term of the clustering's memory).
  std::vector<int64_t> rating(Z(c.dist.back()), 0);
  std::vector<int64_t> touched;
  Level r;
  size_t p = 0;
  size_t fetched = 0;  // the members whose entries' clusters were prefetched (16 members ahead: see LpRound)
  for (int t = 0; t < run.K; ++t) {
    std::vector<int64_t> send;
    for (; p < pieces.size() && pieces[p] < c.dist[Z(t) + 1]; ++p) {
      for (; fetched < std::min(members.size(), Z(start[p + 1]) + kPrefetchRows); ++fetched) {
        const int32_t i = members[fetched];
        for (int64_t e = g.ptr[Z(i)]; e < g.ptr[Z(i) + 1]; ++e) {
          const int32_t s = g.slot[Z(e)];
          __builtin_prefetch(s >= 0 ? &c.ghost[Z(s)] : &c.row[Z(~s)]);
        }
      }
      for (int64_t m = start[p]; m < start[p + 1]; ++m) {
        const int32_t i = members[Z(m)];
        for (int64_t e = g.ptr[Z(i)]; e < g.ptr[Z(i) + 1]; ++e) {
          const int32_t s = g.slot[Z(e)];
          const int64_t d = s >= 0 ? c.ghost[Z(s)] : c.row[Z(~s)];
          if (d == pieces[p]) continue;
          if (rating[Z(d)] == 0) touched.push_back(d);
          rating[Z(d)] += g.W(e);
        }
      }
      send.insert(send.end(), {pieces[p], static_cast<int64_t>(touched.size())});
      for (const int64_t d : touched) {
        send.insert(send.end(), {d, rating[Z(d)]});
        rating[Z(d)] = 0;
      }
      touched.clear();
    }
    std::vector<int64_t> counts(Z(run.K), 0);
    counts[Z(t)] = static_cast<int64_t>(send.size());
    const std::vector<int64_t> got = Exchange(run.comm, send, counts, nullptr, "partition");
    if (t == run.me) {
      Free(send);
      r = MergeRows(run, c, got);
    }
  }
  return r;
}

// Step 2: the coarsest level gathered on rank 0, METIS there; returns this rank's vertices' parts.
std::vector<int64_t> PartitionOnRoot(DistPartitionRun& run, const Level& g) {
  const auto to_root = [&](const std::vector<int64_t>& v) {
    std::vector<int64_t> n(Z(run.K), 0);
    n[0] = static_cast<int64_t>(v.size());
    return Exchange(run.comm, v, n, nullptr, "partition");
  };
  std::vector<int64_t> deg(Z(g.rows()));
  for (int64_t v = 0; v < g.rows(); ++v) deg[Z(v)] = g.ptr[Z(v) + 1] - g.ptr[Z(v)];
  const std::vector<int64_t> all_vw = to_root(g.vw);
  const std::vector<int64_t> all_deg = to_root(deg);
  const std::vector<int64_t> all_adj = to_root(g.adj);
  const std::vector<int64_t> all_ew = to_root(g.ew);
  std::vector<int64_t> parts;
  std::vector<int64_t> back(Z(run.K), 0);
  comm::OnEveryRankOrFail(run.comm, [&] {
    if (run.me != 0) return;
    log::Info("partition: METIS on rank 0 over the cluster graph ({} clusters of {} rows, {} entries)", g.dist.back(),
              run.n, all_adj.size());
    std::vector<int64_t> xadj(all_deg.size() + 1, 0);
    std::partial_sum(all_deg.begin(), all_deg.end(), xadj.begin() + 1);
    const std::vector<int32_t> p =
        MetisPartCsr(xadj, all_adj, all_ew, all_vw, run.P, run.options.imbalance, run.options.seed);
    parts.assign(p.begin(), p.end());
    for (int k = 0; k < run.K; ++k) back[Z(k)] = g.dist[Z(k) + 1] - g.dist[Z(k)];
  });
  std::vector<int64_t> cpart = Exchange(run.comm, parts, back, nullptr, "partition");
  TESSEL_CHECK(static_cast<int64_t>(cpart.size()) == g.rows(),
               "distributed partition: {} cluster parts for {} clusters", cpart.size(), g.rows());
  return cpart;
}

// Each of this rank's rows' vertex at `next` (the level after the one `cluster` names: `cluster` its rows' vertices
// there, asked of the vertices' ranks).
void Project(DistPartitionRun& run, const std::vector<int64_t>& dist, const std::vector<int64_t>& next,
             std::vector<int64_t>* cluster) {
  std::vector<int64_t> keys = *cluster;
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  const std::vector<int64_t> to = AskOwners<1>(run, dist, keys, [&](int64_t v, int64_t* out) { *out = next[Z(v)]; });
  for (int64_t& c : *cluster) c = to[Z(std::lower_bound(keys.begin(), keys.end(), c) - keys.begin())];
}

}  // namespace

std::vector<int64_t> Ghosts(const DistPartitionRun& run, std::vector<int32_t>* slot) {
  return GhostsOf(run.symmetry.adj, run.b.lo, run.b.hi, slot);
}

void CoarsenAssign(DistPartitionRun& run, const std::vector<int64_t>& vwgt) {
  std::vector<int64_t> sums{std::accumulate(vwgt.begin(), vwgt.end(), int64_t{0}),
                            static_cast<int64_t>(run.symmetry.adj.size())};
  SumOverRanks(run.comm, &sums);
  // The cluster graph rank 0 partitions should hold at most this many entries (about 100 bytes each with METIS's
  // own): a share of the block's entries, or a million where that is more.
  const int64_t budget = sums[1] / (8 * run.K) + (int64_t{1} << 20);
  // Level 0: the rows (the symmetric adjacency lent to the level and given back).
  Level fine;
  fine.dist = run.vtxdist;
  fine.ptr = std::move(run.symmetry.adj_ptr);
  fine.adj = std::move(run.symmetry.adj);
  fine.vw = vwgt;
  fine.ghosts = GhostsOf(fine.adj, run.b.lo, run.b.hi, &fine.slot);
  std::vector<int64_t> cluster(Z(run.b.rows()));  // each row's vertex at the current level
  std::iota(cluster.begin(), cluster.end(), run.b.lo);
  Level coarse;
  int level = 0;
  for (int64_t per_part = kClustersPerPart; level < kMaxLevels;
       ++level, per_part = std::max(kMinClustersPerPart, per_part / 4)) {
    const Level& g = level == 0 ? fine : coarse;
    const int64_t max_w = std::max<int64_t>(1, sums[0] / (run.P * per_part));
    const int64_t max_n = std::max<int64_t>(1, run.n / (run.P * per_part));
    Coarse c = Cluster(run, g, max_w, max_n, level);
    const int64_t before = g.dist.back();
    if (level == 0) {
      cluster = c.row;
    } else {
      Project(run, g.dist, c.row, &cluster);
    }
    Level next = Contract(run, g, c);
    std::vector<int64_t> entries{static_cast<int64_t>(next.adj.size())};
    SumOverRanks(run.comm, &entries);
    log::Debug("partition: level {}: {} -> {} vertices, {} entries (budget {})", level, before, next.dist.back(),
               entries[0], budget);
    coarse = std::move(next);
    run.result.coarse_vertices = coarse.dist.back();
    run.result.coarse_entries = entries[0];
    if (entries[0] <= budget || coarse.dist.back() > before - before / 10 || per_part == kMinClustersPerPart) {
      ++level;
      break;
    }
  }
  if (run.me == 0 && run.result.coarse_entries > budget) {
    log::Warn(
        "partition: label propagation shrank the graph only to {} clusters ({} entries, more than the {} "
        "planned); rank 0 holds that cluster graph for METIS",
        run.result.coarse_vertices, run.result.coarse_entries, budget);
  }
  LogMemory(run.me, "clustering");
  {
    const std::vector<int64_t> cpart = PartitionOnRoot(run, coarse);
    Project(run, coarse.dist, cpart, &cluster);
  }
  run.assignment.part.resize(cluster.size());
  for (size_t i = 0; i < cluster.size(); ++i) run.assignment.part[i] = static_cast<int32_t>(cluster[i]);
  Free(cluster);
  coarse = Level();
  run.symmetry.adj_ptr = std::move(fine.ptr);
  run.symmetry.adj = std::move(fine.adj);
  const int rounds = Refine(run, vwgt, fine.ghosts, fine.slot);
  run.result.refinement_rounds = rounds;
  log::Info("partition: rank {}: {} rows, {} coarsening levels; refinement took {} rounds", run.me, run.b.rows(), level,
            rounds);
}

}  // namespace tessel::partition::detail
