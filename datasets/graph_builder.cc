// GraphBuilder: counting sort of edges into rows (atomic degree counts, prefix sum, atomic scatter), then
// per-row sort + unique in parallel, then compaction. O(E log d) work, two passes over the edge arrays.
#include "datasets/graph_builder.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <numeric>

#include <tbb/parallel_reduce.h>
#include <tbb/parallel_scan.h>

#include "core/error.h"
#include "core/memory_budget.h"
#include "core/parallel.h"

namespace tessel::datasets {
namespace {

constexpr int64_t kGrain = 1 << 15;

// Exclusive prefix sum of counts[0..n) into offsets[0..n] (offsets[n] = total).
void ExclusiveScan(std::span<const int64_t> counts, std::span<int64_t> offsets) {
  const auto n = static_cast<int64_t>(counts.size());
  offsets[0] = 0;
  tbb::parallel_scan(
      tbb::blocked_range<int64_t>(0, n, kGrain), int64_t{0},
      [&](const tbb::blocked_range<int64_t>& r, int64_t sum, bool is_final) {
        for (int64_t i = r.begin(); i < r.end(); ++i) {
          sum += counts[i];
          if (is_final) offsets[i + 1] = sum;
        }
        return sum;
      },
      [](int64_t a, int64_t b) { return a + b; });
}

}  // namespace

template <typename IdT>
CsrGraph<IdT> GraphBuilder::Build(const EdgeList& edges, BuildStats* stats) const {
  const auto m = static_cast<int64_t>(edges.src.size());
  TESSEL_CHECK(edges.dst.size() == edges.src.size(), "edge list: {} sources but {} targets", edges.src.size(),
               edges.dst.size());
  const bool weighted = !edges.weights.empty();
  TESSEL_CHECK(!weighted || static_cast<int64_t>(edges.weights.size()) == m, "edge list: {} weights for {} edges",
               edges.weights.size(), m);

  const auto [min_id, max_id] = tbb::parallel_reduce(
      tbb::blocked_range<int64_t>(0, m, kGrain), std::pair<int64_t, int64_t>{std::numeric_limits<int64_t>::max(), -1},
      [&](const tbb::blocked_range<int64_t>& r, std::pair<int64_t, int64_t> acc) {
        for (int64_t e = r.begin(); e < r.end(); ++e) {
          acc.first = std::min({acc.first, edges.src[e], edges.dst[e]});
          acc.second = std::max({acc.second, edges.src[e], edges.dst[e]});
        }
        return acc;
      },
      [](auto a, auto b) {
        return std::pair{std::min(a.first, b.first), std::max(a.second, b.second)};
      });
  TESSEL_CHECK(m == 0 || min_id >= 0, "edge list: negative node id {}", min_id);
  const int64_t n = edges.num_nodes >= 0 ? edges.num_nodes : max_id + 1;
  TESSEL_CHECK(max_id < n, "edge list: node id {} is outside [0, {}) (the declared node count)", max_id, n);
  TESSEL_CHECK(n - 1 <= static_cast<int64_t>(std::numeric_limits<IdT>::max()),
               "graph with {} nodes does not fit {}-bit ids", n, sizeof(IdT) * 8);

  const bool drop_loops = options_.remove_self_loops;
  const bool sym = options_.symmetrize;

  // The node count may come from a header ("# nodes N", METIS "n m") rather than from the edges: four int64 per node
  // (counts, offsets, cursors, the final indptr) are compared with the memory budget before any is allocated.
  memory::CheckArray(n + 1, 4 * static_cast<int64_t>(sizeof(int64_t)),
                     fmt::format("the row index of a {}-node graph", n),
                     "check the node count the input declares (a '# nodes' comment, a METIS header or --nodes)");

  // 1. Degrees (entries per row before dedupe).
  std::vector<int64_t> counts(static_cast<size_t>(n), 0);
  std::atomic<int64_t> loops{0};
  parallel_for_chunks<int64_t>(0, m, kGrain, [&](int64_t b, int64_t e) {
    int64_t local_loops = 0;
    for (int64_t i = b; i < e; ++i) {
      const int64_t u = edges.src[i];
      const int64_t v = edges.dst[i];
      if (u == v) {
        ++local_loops;
        if (drop_loops) continue;
      }
      std::atomic_ref<int64_t>(counts[u]).fetch_add(1, std::memory_order_relaxed);
      if (sym && u != v) std::atomic_ref<int64_t>(counts[v]).fetch_add(1, std::memory_order_relaxed);
    }
    loops += local_loops;
  });
  std::vector<int64_t> offsets(static_cast<size_t>(n) + 1);
  ExclusiveScan(counts, offsets);
  const int64_t raw_entries = offsets[n];

  // Unsorted and final adjacency (ids and weights) both exist at the end of step 3.
  memory::CheckArray(raw_entries, 2 * static_cast<int64_t>(sizeof(IdT) + (weighted ? sizeof(float) : 0)),
                     fmt::format("the adjacency of {} entries", raw_entries));

  // 2. Scatter (positions claimed atomically, so rows are unordered until step 3).
  std::vector<IdT> adj(static_cast<size_t>(raw_entries));
  std::vector<float> wts(weighted ? static_cast<size_t>(raw_entries) : 0);
  std::vector<int64_t> cursor(offsets.begin(), offsets.end() - 1);
  parallel_for<int64_t>(0, m, kGrain, [&](int64_t i) {
    const int64_t u = edges.src[i];
    const int64_t v = edges.dst[i];
    if (drop_loops && u == v) return;
    const int64_t pu = std::atomic_ref<int64_t>(cursor[u]).fetch_add(1, std::memory_order_relaxed);
    adj[pu] = static_cast<IdT>(v);
    if (weighted) wts[pu] = edges.weights[i];
    if (sym && u != v) {
      const int64_t pv = std::atomic_ref<int64_t>(cursor[v]).fetch_add(1, std::memory_order_relaxed);
      adj[pv] = static_cast<IdT>(u);
      if (weighted) wts[pv] = edges.weights[i];
    }
  });

  // 3. Sort each row; dedupe in place; record the kept count.
  parallel_for<int64_t>(0, n, 256, [&](int64_t u) {
    const int64_t b = offsets[u];
    const int64_t e = offsets[u + 1];
    if (!weighted) {
      std::sort(adj.begin() + b, adj.begin() + e);
      counts[u] = options_.dedupe ? std::unique(adj.begin() + b, adj.begin() + e) - (adj.begin() + b) : e - b;
      return;
    }
    std::vector<std::pair<IdT, float>> row(static_cast<size_t>(e - b));
    for (int64_t i = b; i < e; ++i) row[i - b] = {adj[i], wts[i]};
    std::sort(row.begin(), row.end(), [](const auto& x, const auto& y) {
      return x.first != y.first ? x.first < y.first : x.second > y.second;
    });
    int64_t kept = 0;
    for (size_t i = 0; i < row.size(); ++i) {
      if (options_.dedupe && kept > 0 && adj[b + kept - 1] == row[i].first) continue;
      adj[b + kept] = row[i].first;
      wts[b + kept] = row[i].second;
      ++kept;
    }
    counts[u] = kept;
  });

  // 4. Compact into the final arrays.
  Buffer<int64_t> indptr(static_cast<size_t>(n) + 1);
  auto out_ptr = indptr.MutableHost();
  ExclusiveScan(counts, out_ptr);
  const int64_t entries = out_ptr[n];
  Buffer<IdT> indices(static_cast<size_t>(entries));
  Buffer<float> weights(weighted ? static_cast<size_t>(entries) : 0);
  auto out_idx = indices.MutableHost();
  auto out_w = weights.MutableHost();
  parallel_for<int64_t>(0, n, 1024, [&](int64_t u) {
    std::copy_n(adj.begin() + offsets[u], counts[u], out_idx.begin() + out_ptr[u]);
    if (weighted) std::copy_n(wts.begin() + offsets[u], counts[u], out_w.begin() + out_ptr[u]);
  });

  if (stats != nullptr) {
    stats->input_edges = m;
    stats->self_loops_removed = drop_loops ? loops.load() : 0;
    stats->duplicates_removed = raw_entries - entries;
    stats->entries = entries;
  }
  return CsrGraph<IdT>(std::move(indptr), std::move(indices), std::move(weights));
}

AnyGraph GraphBuilder::BuildAny(const EdgeList& edges, BuildStats* stats) const {
  int64_t n = edges.num_nodes;
  if (n < 0) {
    n = 0;
    for (size_t i = 0; i < edges.size(); ++i) n = std::max({n, edges.src[i] + 1, edges.dst[i] + 1});
  }
  if (n - 1 <= std::numeric_limits<int32_t>::max()) return Build<int32_t>(edges, stats);
  return Build<int64_t>(edges, stats);
}

template CsrGraph<int32_t> GraphBuilder::Build<int32_t>(const EdgeList&, BuildStats*) const;
template CsrGraph<int64_t> GraphBuilder::Build<int64_t>(const EdgeList&, BuildStats*) const;

}  // namespace tessel::datasets
