// CsrGraph<IdT>: an immutable compressed-sparse-row graph with int64 offsets and 32- or 64-bit node ids
// (GAP Benchmark Suite src/graph.h, DGL CSRMatrix). The same arrays go to files, METIS and cuSPARSE unchanged.
#pragma once

#include <cstdint>
#include <span>
#include <variant>

#include "core/buffer.h"
#include "core/csr_view.h"

namespace tessel::datasets {

template <typename IdT>
class CsrGraph {
 public:
  using Id = IdT;

  CsrGraph() : indptr_(Buffer<int64_t>(1)) {}
  // Takes the arrays; call Validate() when they come from outside the library.
  CsrGraph(Buffer<int64_t> indptr, Buffer<IdT> indices, Buffer<float> weights = {});

  int64_t num_nodes() const { return static_cast<int64_t>(indptr_.size()) - 1; }
  // Number of stored (directed) adjacency entries; an undirected edge stored both ways counts twice.
  int64_t num_entries() const { return static_cast<int64_t>(indices_.size()); }
  bool has_weights() const { return !weights_.empty(); }

  // The rows as the one CSR view (core/csr_view.h): columns are node ids, values the weights (empty when none).
  CsrView<IdT, float> View() const { return {indptr_.Host(), indices_.Host(), weights_.Host(), num_nodes()}; }
  int64_t Degree(int64_t u) const { return View().Degree(u); }
  std::span<const IdT> Neighbors(int64_t u) const { return View().RowIndices(u); }
  std::span<const float> NeighborWeights(int64_t u) const { return View().RowValues(u); }  // empty when unweighted

  const Buffer<int64_t>& indptr() const { return indptr_; }
  const Buffer<IdT>& indices() const { return indices_; }
  const Buffer<float>& weights() const { return weights_; }

  // Throws tessel::Error unless: indptr[0] = 0, offsets monotone, last offset = number of entries,
  // every id in [0, num_nodes), weights empty or one per entry and finite. `what` prefixes the message.
  void Validate(std::string_view what = "graph") const;
  // True when every row is sorted strictly ascending (no duplicates).
  bool RowsSortedUnique() const;
  // The first row whose neighbours are not strictly ascending (out of order or duplicated), or -1.
  int64_t FirstUnsortedRow() const;
  // True when (u, v) present implies (v, u) present, with equal weights.
  bool IsSymmetric() const;
  int64_t CountSelfLoops() const;

  CsrGraph Clone() const { return CsrGraph(indptr_.Clone(), indices_.Clone(), weights_.Clone()); }

 private:
  Buffer<int64_t> indptr_;
  Buffer<IdT> indices_;
  Buffer<float> weights_;
};

extern template class CsrGraph<int32_t>;
extern template class CsrGraph<int64_t>;

using CsrGraph32 = CsrGraph<int32_t>;
using CsrGraph64 = CsrGraph<int64_t>;
// A graph whose id width is chosen at run time (int32 while the node count fits).
using AnyGraph = std::variant<CsrGraph32, CsrGraph64>;

inline int64_t NumNodes(const AnyGraph& g) {
  return std::visit([](const auto& x) { return x.num_nodes(); }, g);
}
inline int64_t NumEntries(const AnyGraph& g) {
  return std::visit([](const auto& x) { return x.num_entries(); }, g);
}

}  // namespace tessel::datasets
