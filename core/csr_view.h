// CsrView<Idx, Val>: the one read-only view of compressed sparse rows (int64 offsets, column ids of type Idx,
// optional values of type Val). Every CSR-shaped owner hands one out: a dataset's graph (CsrGraph::View), a kernel
// operand or sampled block (SparseMatrix::HostView), sparse node features (Features::SparseRows), LIBSVM rows
// (SparseRowDataset::Rows), a rank's part as the distributed sampler reads it (OwnedGraph::adj). Code that only
// reads rows takes a view and so works on any of them; the owners differ only in what they own (Buffer<T> arrays on
// host or device, id width, value type), not in how a row is found.
#pragma once

#include <cstdint>
#include <span>

namespace tessel {

template <typename Idx, typename Val = float>
struct CsrView {
  std::span<const int64_t> indptr;  // num_rows + 1 offsets, from 0 to the number of entries
  std::span<const Idx> indices;     // column ids of every row, row after row
  std::span<const Val> values;      // one per entry, or empty: every entry is 1 (an unweighted graph)
  int64_t num_cols = 0;             // columns (nodes, for a graph)

  int64_t num_rows() const { return indptr.empty() ? 0 : static_cast<int64_t>(indptr.size()) - 1; }
  int64_t nnz() const { return static_cast<int64_t>(indices.size()); }
  bool has_values() const { return !values.empty(); }
  int64_t Degree(int64_t r) const { return indptr[static_cast<size_t>(r) + 1] - indptr[static_cast<size_t>(r)]; }
  std::span<const Idx> RowIndices(int64_t r) const {
    return indices.subspan(static_cast<size_t>(indptr[static_cast<size_t>(r)]), static_cast<size_t>(Degree(r)));
  }
  // The row's values; empty when the view has none.
  std::span<const Val> RowValues(int64_t r) const {
    if (values.empty()) return {};
    return values.subspan(static_cast<size_t>(indptr[static_cast<size_t>(r)]), static_cast<size_t>(Degree(r)));
  }
};

}  // namespace tessel
