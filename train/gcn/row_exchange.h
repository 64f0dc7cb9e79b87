// Moving feature rows between ranks, private to train/gcn/dist_features.cc (DistFeatureStore and HaloExchanger):
// served rows shipped by one alltoallv, plain or compressed by a row codec (the feature wire format, docs/design.md),
// a batched request of rows from their owners, and output rows assembled from several sources.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "comm/communicator.h"
#include "kernels/matrix.h"
#include "train/gcn/data.h"
#include "train/gcn/dist_features.h"

namespace tessel::train::gcn::row_exchange {

constexpr int64_t kGrain = 512;  // rows a task of the parallel loops

// Where one output row comes from: row `row` of source matrix `source`.
struct RowRef {
  int32_t source = 0;
  int64_t row = 0;
};

int64_t Sum(std::span<const int64_t> v);

// No rows of `cols` columns, dense or sparse.
FeatureMatrix EmptyRows(int64_t cols, bool sparse);

// Throws unless every id a peer asked this rank for is one of its owned rows.
void CheckServed(std::span<const int64_t> ids, int64_t num_owned, int rank);

// ---- Shipping rows: `serve` holds owned row ids grouped by requesting rank (serve_counts[k] for rank k); this rank
// receives want_counts[k] rows from rank k. The result holds the received rows, sending ranks in order. Dense rows
// may be received `into` caller memory instead (room for every received row; the result is then empty): the
// pinned staging array of a device fetch. received_bytes grows by the row payload received.

kernels::Matrix ShipDense(comm::Communicator& comm, const kernels::Matrix& mine, std::span<const int64_t> serve,
                          std::span<const int64_t> serve_counts, std::span<const int64_t> want_counts,
                          std::string_view purpose, int64_t* received_bytes, float* into = nullptr);
// Each row encoded on its own by z's codec (a block is one row, so int8 keeps one scale per row); st receives the
// encoding's bytes and seconds.
kernels::Matrix ShipDenseCompressed(comm::Communicator& comm, const kernels::Matrix& mine,
                                    std::span<const int64_t> serve, std::span<const int64_t> serve_counts,
                                    std::span<const int64_t> want_counts, std::string_view purpose,
                                    const RowCompression& z, int64_t* received_bytes, FetchStats* st,
                                    float* into = nullptr);
// Dense or sparse rows as `mine` holds them, compressed when z is given (st receives the encoding's bytes and
// seconds).
FeatureMatrix ShipRows(comm::Communicator& comm, const FeatureMatrix& mine, std::span<const int64_t> serve,
                       std::span<const int64_t> serve_counts, std::span<const int64_t> want_counts,
                       std::string_view purpose, int64_t* received_bytes, const RowCompression* z = nullptr,
                       FetchStats* st = nullptr, float* into = nullptr);

// One batched request: `want` holds owner-local row ids grouped by owner rank (want_counts[k] for rank k); the ids
// go out by one alltoallv (with its count exchange), the rows come back by one more.
FeatureMatrix RequestRows(comm::Communicator& comm, const FeatureMatrix& mine, std::span<const int64_t> want,
                          std::span<const int64_t> want_counts, std::string_view purpose, int64_t* received_bytes,
                          const RowCompression* z = nullptr, FetchStats* st = nullptr, float* into = nullptr);

// ---- Assembling output rows from several sources: output row i is row refs[i].row of sources[refs[i].source].

kernels::Matrix AssembleDense(std::span<const kernels::Matrix* const> sources, std::span<const RowRef> refs,
                              int64_t cols);
FeatureMatrix Assemble(std::span<const FeatureMatrix* const> sources, std::span<const RowRef> refs, int64_t cols,
                       bool sparse);

// The rows of `pieces` one after the other (each piece is dropped once copied).
kernels::SparseMatrix ConcatRows(std::vector<kernels::SparseMatrix>& pieces, int64_t cols);

}  // namespace tessel::train::gcn::row_exchange
