// CsrGraph validation and structural queries, instantiated for 32- and 64-bit ids.
// Validation runs in parallel: it is on the load path of every dataset and partition.
#include "datasets/csr_graph.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"
#include "core/parallel.h"

namespace tessel::datasets {

template <typename IdT>
CsrGraph<IdT>::CsrGraph(Buffer<int64_t> indptr, Buffer<IdT> indices, Buffer<float> weights)
    : indptr_(std::move(indptr)), indices_(std::move(indices)), weights_(std::move(weights)) {
  TESSEL_CHECK(indptr_.size() >= 1, "CSR graph: indptr must have num_nodes + 1 >= 1 entries");
}

template <typename IdT>
void CsrGraph<IdT>::Validate(std::string_view what) const {
  auto p = indptr_.Host();
  auto idx = indices_.Host();
  const int64_t n = num_nodes();
  const auto nnz = static_cast<int64_t>(idx.size());
  TESSEL_CHECK(p[0] == 0, "{}: indptr[0] is {}, must be 0", what, p[0]);
  TESSEL_CHECK(p[n] == nnz, "{}: last offset indptr[{}] = {} but there are {} adjacency entries", what, n, p[n], nnz);
  std::atomic<int64_t> bad_row{-1};
  parallel_for<int64_t>(0, n, 4096, [&](int64_t u) {
    if (p[u + 1] < p[u]) bad_row.store(u);
  });
  TESSEL_CHECK(bad_row.load() < 0, "{}: offsets decrease at row {}", what, bad_row.load());
  std::atomic<int64_t> bad_entry{-1};
  parallel_for<int64_t>(0, nnz, 1 << 16, [&](int64_t e) {
    const auto v = static_cast<int64_t>(idx[e]);
    if (v < 0 || v >= n) bad_entry.store(e);
  });
  if (bad_entry.load() >= 0) {
    const int64_t e = bad_entry.load();
    throw Error(fmt::format("{}: adjacency entry {} has node id {}, outside [0, {})", what, e,
                            static_cast<int64_t>(idx[e]), n));
  }
  if (!weights_.empty()) {
    TESSEL_CHECK(static_cast<int64_t>(weights_.size()) == nnz, "{}: {} edge weights for {} entries", what,
                 weights_.size(), nnz);
    auto w = weights_.Host();
    std::atomic<int64_t> bad_w{-1};
    parallel_for<int64_t>(0, nnz, 1 << 16, [&](int64_t e) {
      if (!std::isfinite(w[e])) bad_w.store(e);
    });
    TESSEL_CHECK(bad_w.load() < 0, "{}: edge weight {} is not finite", what, bad_w.load());
  }
}

template <typename IdT>
int64_t CsrGraph<IdT>::FirstUnsortedRow() const {
  std::atomic<int64_t> first{std::numeric_limits<int64_t>::max()};
  parallel_for<int64_t>(0, num_nodes(), 1024, [&](int64_t u) {
    auto nb = Neighbors(u);
    for (size_t i = 1; i < nb.size(); ++i) {
      if (nb[i - 1] >= nb[i]) {
        int64_t seen = first.load();
        while (u < seen && !first.compare_exchange_weak(seen, u)) {
        }
        return;
      }
    }
  });
  return first.load() == std::numeric_limits<int64_t>::max() ? -1 : first.load();
}

template <typename IdT>
bool CsrGraph<IdT>::RowsSortedUnique() const {
  std::atomic<bool> ok{true};
  parallel_for<int64_t>(0, num_nodes(), 1024, [&](int64_t u) {
    auto nb = Neighbors(u);
    for (size_t i = 1; i < nb.size(); ++i) {
      if (nb[i - 1] >= nb[i]) ok.store(false);
    }
  });
  return ok.load();
}

template <typename IdT>
bool CsrGraph<IdT>::IsSymmetric() const {
  std::atomic<bool> ok{true};
  const bool sorted = RowsSortedUnique();
  parallel_for<int64_t>(0, num_nodes(), 256, [&](int64_t u) {
    auto nb = Neighbors(u);
    for (size_t i = 0; i < nb.size() && ok.load(std::memory_order_relaxed); ++i) {
      const int64_t v = nb[i];
      auto back = Neighbors(v);
      const auto target = static_cast<IdT>(u);
      const auto it =
          sorted ? std::lower_bound(back.begin(), back.end(), target) : std::find(back.begin(), back.end(), target);
      if (it == back.end() || *it != target) {
        ok.store(false);
      } else if (has_weights()) {
        const float w_uv = NeighborWeights(u)[i];
        const float w_vu = NeighborWeights(v)[static_cast<size_t>(it - back.begin())];
        if (w_uv != w_vu) ok.store(false);
      }
    }
  });
  return ok.load();
}

template <typename IdT>
int64_t CsrGraph<IdT>::CountSelfLoops() const {
  std::atomic<int64_t> count{0};
  parallel_for_chunks<int64_t>(0, num_nodes(), 1024, [&](int64_t b, int64_t e) {
    int64_t local = 0;
    for (int64_t u = b; u < e; ++u) {
      for (IdT v : Neighbors(u)) local += (static_cast<int64_t>(v) == u);
    }
    count += local;
  });
  return count.load();
}

template class CsrGraph<int32_t>;
template class CsrGraph<int64_t>;

}  // namespace tessel::datasets
