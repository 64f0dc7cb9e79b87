// Moving feature rows between ranks for DistFeatureStore and HaloExchanger (train/gcn/row_exchange.h): served rows
// shipped by one alltoallv (dense rows as floats, sparse rows as CSR blocks, either compressed by a row codec), a
// batched request (ids to the owners, rows back), and output rows assembled from several sources.
#include "train/gcn/row_exchange.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string_view>
#include <utility>

#include "core/clock.h"
#include "core/csr_view.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "core/varint.h"

#include <fmt/format.h>

namespace tessel::train::gcn::row_exchange {
namespace {

size_t Index(int64_t i) { return static_cast<size_t>(i); }

kernels::SparseMatrix EmptySparse(int64_t cols) {
  return kernels::SparseMatrix{0, cols, Buffer<int64_t>(1), Buffer<int32_t>(), Buffer<float>()};
}

// Counts of rows scaled to counts of `per_row` elements (or bytes) a row.
std::vector<int64_t> Scaled(std::span<const int64_t> counts, int64_t per_row) {
  std::vector<int64_t> out(counts.begin(), counts.end());
  for (int64_t& x : out) x *= per_row;
  return out;
}

// Where `rows` received dense rows of `cols` values go: caller memory `into` when given (out stays empty), else *out
// sized for them.
std::span<float> Destination(kernels::Matrix* out, float* into, int64_t rows, int64_t cols) {
  if (into != nullptr) return std::span<float>(into, Index(rows * cols));
  *out = kernels::Matrix(rows, cols);
  return out->Mut();
}

// Each block (one per destination) is [row nnz: int64 x rows][column ids: int32 x nnz][values: float x nnz], so the
// receiver rebuilds CSR rows with one copy per block. Block sizes travel in a count exchange first.
kernels::SparseMatrix ShipSparse(comm::Communicator& comm, const kernels::SparseMatrix& mine,
                                 std::span<const int64_t> serve, std::span<const int64_t> serve_counts,
                                 std::span<const int64_t> want_counts, std::string_view purpose,
                                 int64_t* received_bytes) {
  const auto num_ranks = static_cast<size_t>(comm.Size());
  const CsrView<int32_t, float> csr = mine.HostView();
  const auto n = static_cast<int64_t>(serve.size());

  std::vector<int64_t> nnz_prefix(Index(n) + 1, 0);
  for (int64_t i = 0; i < n; ++i) nnz_prefix[Index(i) + 1] = nnz_prefix[Index(i)] + csr.Degree(serve[Index(i)]);
  std::vector<int64_t> row_begin(num_ranks + 1, 0);
  std::vector<int64_t> send_bytes(num_ranks, 0);
  std::vector<int64_t> byte_begin(num_ranks + 1, 0);
  std::vector<int32_t> dest(Index(n));
  for (size_t k = 0; k < num_ranks; ++k) {
    row_begin[k + 1] = row_begin[k] + serve_counts[k];
    const int64_t nnz = nnz_prefix[Index(row_begin[k + 1])] - nnz_prefix[Index(row_begin[k])];
    send_bytes[k] = serve_counts[k] * 8 + nnz * 8;
    byte_begin[k + 1] = byte_begin[k] + send_bytes[k];
    for (int64_t i = row_begin[k]; i < row_begin[k + 1]; ++i) dest[Index(i)] = static_cast<int32_t>(k);
  }
  std::vector<uint8_t> send(Index(byte_begin[num_ranks]));
  parallel_for<int64_t>(0, n, kGrain, [&](int64_t i) {
    const auto k = Index(dest[Index(i)]);
    const int64_t rows_k = serve_counts[k];
    const int64_t nnz_k = nnz_prefix[Index(row_begin[k + 1])] - nnz_prefix[Index(row_begin[k])];
    const int64_t e = nnz_prefix[Index(i)] - nnz_prefix[Index(row_begin[k])];
    const int64_t r = serve[Index(i)];
    const int64_t len = csr.Degree(r);
    uint8_t* base = send.data() + byte_begin[k];
    std::memcpy(base + (i - row_begin[k]) * 8, &len, 8);
    if (len == 0) return;
    std::memcpy(base + rows_k * 8 + e * 4, csr.RowIndices(r).data(), Index(len) * 4);
    uint8_t* values = base + rows_k * 8 + nnz_k * 4 + e * 4;
    if (csr.has_values()) {
      std::memcpy(values, csr.RowValues(r).data(), Index(len) * 4);
    } else {
      const float one = 1.0F;
      for (int64_t t = 0; t < len; ++t) std::memcpy(values + t * 4, &one, 4);
    }
  });

  std::vector<uint8_t> recv;
  std::vector<int64_t> recv_bytes;
  comm.AlltoallvWithCounts<uint8_t>(send, send_bytes, &recv, &recv_bytes, purpose).ThrowIfError();
  *received_bytes += static_cast<int64_t>(recv.size());

  const int64_t rows = Sum(want_counts);
  std::vector<int64_t> indptr(Index(rows) + 1, 0);
  std::vector<int64_t> block_nnz(num_ranks, 0);
  int64_t row = 0;
  int64_t offset = 0;
  for (size_t k = 0; k < num_ranks; ++k) {
    const int64_t rows_k = want_counts[k];
    TESSEL_CHECK(recv_bytes[k] >= rows_k * 8, "features: rank {} sent {} bytes for {} rows", k, recv_bytes[k], rows_k);
    for (int64_t i = 0; i < rows_k; ++i, ++row) {
      int64_t len = 0;
      std::memcpy(&len, recv.data() + offset + i * 8, 8);
      TESSEL_CHECK(len >= 0, "features: rank {} sent a row of {} entries", k, len);
      indptr[Index(row) + 1] = indptr[Index(row)] + len;
      block_nnz[k] += len;
    }
    TESSEL_CHECK(recv_bytes[k] == rows_k * 8 + block_nnz[k] * 8,
                 "features: rank {} sent {} bytes for {} rows of {} entries", k, recv_bytes[k], rows_k, block_nnz[k]);
    offset += recv_bytes[k];
  }
  std::vector<int32_t> out_idx(Index(indptr.back()));
  std::vector<float> out_val(Index(indptr.back()));
  offset = 0;
  int64_t e = 0;
  for (size_t k = 0; k < num_ranks; ++k) {
    if (block_nnz[k] > 0) {
      const uint8_t* block = recv.data() + offset;
      const int64_t head = want_counts[k] * 8;
      std::memcpy(out_idx.data() + e, block + head, Index(block_nnz[k]) * 4);
      std::memcpy(out_val.data() + e, block + head + block_nnz[k] * 4, Index(block_nnz[k]) * 4);
      e += block_nnz[k];
    }
    offset += recv_bytes[k];
  }
  kernels::SparseMatrix out{rows, mine.cols, Buffer<int64_t>(std::move(indptr)), Buffer<int32_t>(std::move(out_idx)),
                            Buffer<float>(std::move(out_val))};
  out.Validate("features received from other ranks");
  return out;
}

// ---- Compressed rows (--feature-compress): each row encoded on its own by the codec (a block is one row, so int8
// keeps one scale per row). Dense: every row takes the codec's size for `cols` elements, so the receiver knows the
// block sizes. Sparse: [row length: varint][column ids: zigzag varint deltas][values: the codec's encoding of the
// row's values], rows back to back; block sizes travel in a count exchange first.

using Clock = std::chrono::steady_clock;

uint64_t RowSeed(uint64_t seed, int64_t i) { return Mix64(seed ^ Mix64(static_cast<uint64_t>(i))); }

// Reads a varint at *pos, bounded by end; throws on a truncated or over-long one.
uint64_t GetVarint(const std::byte* data, int64_t* pos, int64_t end, int rank) {
  uint64_t v = 0;
  if (!tessel::GetVarint(data, pos, end, &v)) {
    throw Error(fmt::format("features: rank {} sent a truncated or malformed varint in a compressed row block", rank));
  }
  return v;
}

// A row whose values are all exactly 1 (binary features; no values: a matrix without values) travels without
// values: a flag in its length word.
bool AllOnes(std::span<const float> row_values) {
  return std::all_of(row_values.begin(), row_values.end(), [](float v) { return v == 1.0F; });
}

kernels::SparseMatrix ShipSparseCompressed(comm::Communicator& comm, const kernels::SparseMatrix& mine,
                                           std::span<const int64_t> serve, std::span<const int64_t> serve_counts,
                                           std::span<const int64_t> want_counts, std::string_view purpose,
                                           const RowCompression& z, int64_t* received_bytes, FetchStats* st) {
  const auto num_ranks = static_cast<size_t>(comm.Size());
  const CsrView<int32_t, float> csr = mine.HostView();
  const auto n = static_cast<int64_t>(serve.size());
  auto t0 = Clock::now();
  // Pass 1: every row's encoded size; pass 2: write the rows at their offsets.
  std::vector<int64_t> offset(Index(n) + 1, 0);
  std::vector<uint8_t> unit(Index(n));  // row i is all ones: sent without values
  parallel_for<int64_t>(0, n, kGrain, [&](int64_t i) {
    const int64_t r = serve[Index(i)];
    const int64_t len = csr.Degree(r);
    unit[Index(i)] = AllOnes(csr.RowValues(r)) ? 1 : 0;
    int64_t bytes = VarintSize(static_cast<uint64_t>(len) * 2) + (unit[Index(i)] != 0 ? 0 : z.codec->EncodedBytes(len));
    int64_t prev = 0;
    for (const int32_t col : csr.RowIndices(r)) {
      bytes += VarintSize(ZigZag(col - prev));
      prev = col;
    }
    offset[Index(i) + 1] = bytes;
  });
  for (int64_t i = 0; i < n; ++i) offset[Index(i) + 1] += offset[Index(i)];
  std::vector<std::byte> send(Index(offset.back()));
  parallel_for<int64_t>(0, n, kGrain, [&](int64_t i) {
    const int64_t r = serve[Index(i)];
    const int64_t len = csr.Degree(r);
    std::byte* w = PutVarint(send.data() + offset[Index(i)], static_cast<uint64_t>(len) * 2 + unit[Index(i)]);
    int64_t prev = 0;
    for (const int32_t col : csr.RowIndices(r)) {
      w = PutVarint(w, ZigZag(col - prev));
      prev = col;
    }
    if (unit[Index(i)] == 0) {
      z.codec->Encode(csr.RowValues(r), RowSeed(z.seed, i), std::span<std::byte>(w, Index(z.codec->EncodedBytes(len))));
    }
  });
  std::vector<int64_t> send_bytes(num_ranks, 0);
  int64_t row = 0;
  int64_t raw_nnz = 0;
  for (size_t k = 0; k < num_ranks; ++k) {
    send_bytes[k] = offset[Index(row + serve_counts[k])] - offset[Index(row)];
    if (static_cast<int>(k) != comm.Rank()) {
      st->sent_wire_bytes += send_bytes[k];
      for (int64_t i = row; i < row + serve_counts[k]; ++i) raw_nnz += csr.Degree(serve[Index(i)]);
      st->sent_raw_bytes += serve_counts[k] * 8;
    }
    row += serve_counts[k];
  }
  st->sent_raw_bytes += raw_nnz * 8;
  st->encode_seconds += SecondsSince(t0);

  std::vector<std::byte> recv;
  std::vector<int64_t> recv_bytes;
  comm.AlltoallvWithCounts<std::byte>(send, send_bytes, &recv, &recv_bytes, purpose).ThrowIfError();
  *received_bytes += static_cast<int64_t>(recv.size());

  t0 = Clock::now();
  const int64_t rows = Sum(want_counts);
  std::vector<int64_t> indptr(Index(rows) + 1, 0);
  std::vector<int32_t> out_idx;
  std::vector<float> out_val;
  int64_t pos = 0;
  row = 0;
  for (size_t k = 0; k < num_ranks; ++k) {
    const int64_t end = pos + recv_bytes[k];
    for (int64_t i = 0; i < want_counts[k]; ++i, ++row) {
      const uint64_t head = GetVarint(recv.data(), &pos, end, static_cast<int>(k));
      const uint64_t len = head >> 1;
      const bool ones_row = (head & 1) != 0;
      TESSEL_CHECK(len <= static_cast<uint64_t>(mine.cols), "features: rank {} sent a row of {} entries ({} columns)",
                   k, len, mine.cols);
      int64_t prev = 0;
      for (uint64_t e = 0; e < len; ++e) {
        prev += UnZigZag(GetVarint(recv.data(), &pos, end, static_cast<int>(k)));
        TESSEL_CHECK(prev >= 0 && prev < mine.cols, "features: rank {} sent column {} ({} columns)", k, prev,
                     mine.cols);
        out_idx.push_back(static_cast<int32_t>(prev));
      }
      const size_t v0 = out_val.size();
      if (ones_row) {
        out_val.resize(v0 + len, 1.0F);
      } else {
        const int64_t vb = z.codec->EncodedBytes(static_cast<int64_t>(len));
        TESSEL_CHECK(pos + vb <= end, "features: rank {} sent a truncated compressed row block", k);
        out_val.resize(v0 + len);
        z.codec->Decode(std::span<const std::byte>(recv.data() + pos, Index(vb)),
                        std::span<float>(out_val.data() + v0, len), false);
        pos += vb;
      }
      indptr[Index(row) + 1] = indptr[Index(row)] + static_cast<int64_t>(len);
    }
    TESSEL_CHECK(pos == end, "features: rank {} sent {} bytes more than its {} rows", k, end - pos, want_counts[k]);
  }
  st->decode_seconds += SecondsSince(t0);
  kernels::SparseMatrix out{rows, mine.cols, Buffer<int64_t>(std::move(indptr)), Buffer<int32_t>(std::move(out_idx)),
                            Buffer<float>(std::move(out_val))};
  out.Validate("compressed features received from other ranks");
  return out;
}

// The row ids of a compressed request as zigzag varint deltas per destination (ids ascend within an owner, so most
// deltas take one or two bytes instead of eight).
void RequestIdsCompressed(comm::Communicator& comm, std::span<const int64_t> want, std::span<const int64_t> want_counts,
                          std::vector<int64_t>* serve, std::vector<int64_t>* serve_counts, std::string_view purpose,
                          FetchStats* st) {
  const auto num_ranks = static_cast<size_t>(comm.Size());
  std::vector<std::byte> send(want.size() * 10);
  std::vector<int64_t> send_bytes(num_ranks, 0);
  std::byte* w = send.data();
  size_t i = 0;
  for (size_t k = 0; k < num_ranks; ++k) {
    std::byte* start = w;
    int64_t prev = 0;
    for (int64_t j = 0; j < want_counts[k]; ++j, ++i) {
      w = PutVarint(w, ZigZag(want[i] - prev));
      prev = want[i];
    }
    send_bytes[k] = w - start;
    if (static_cast<int>(k) != comm.Rank()) {
      st->sent_raw_bytes += want_counts[k] * 8;
      st->sent_wire_bytes += send_bytes[k];
    }
  }
  send.resize(static_cast<size_t>(w - send.data()));
  std::vector<std::byte> recv;
  std::vector<int64_t> recv_bytes;
  comm.AlltoallvWithCounts<std::byte>(send, send_bytes, &recv, &recv_bytes, purpose).ThrowIfError();
  serve->clear();
  serve_counts->assign(num_ranks, 0);
  int64_t pos = 0;
  for (size_t k = 0; k < num_ranks; ++k) {
    const int64_t end = pos + recv_bytes[k];
    int64_t prev = 0;
    while (pos < end) {
      prev += UnZigZag(GetVarint(recv.data(), &pos, end, static_cast<int>(k)));
      serve->push_back(prev);
      ++(*serve_counts)[k];
    }
  }
}

kernels::SparseMatrix AssembleSparse(std::span<const kernels::SparseMatrix* const> sources,
                                     std::span<const RowRef> refs, int64_t cols) {
  std::vector<CsrView<int32_t, float>> views;  // values empty: every value is 1
  for (const kernels::SparseMatrix* m : sources) views.push_back(m->HostView());
  const auto n = static_cast<int64_t>(refs.size());
  std::vector<int64_t> indptr(Index(n) + 1, 0);
  for (int64_t i = 0; i < n; ++i) {
    const RowRef r = refs[Index(i)];
    indptr[Index(i) + 1] = indptr[Index(i)] + views[Index(r.source)].Degree(r.row);
  }
  std::vector<int32_t> idx(Index(indptr.back()));
  std::vector<float> val(Index(indptr.back()));
  parallel_for<int64_t>(0, n, kGrain, [&](int64_t i) {
    const RowRef r = refs[Index(i)];
    const CsrView<int32_t, float>& v = views[Index(r.source)];
    const std::span<const int32_t> row = v.RowIndices(r.row);
    const int64_t at = indptr[Index(i)];
    std::copy(row.begin(), row.end(), idx.data() + at);
    if (v.has_values()) {
      const std::span<const float> values = v.RowValues(r.row);
      std::copy(values.begin(), values.end(), val.data() + at);
    } else {
      std::fill_n(val.data() + at, row.size(), 1.0F);
    }
  });
  return kernels::SparseMatrix{n, cols, Buffer<int64_t>(std::move(indptr)), Buffer<int32_t>(std::move(idx)),
                               Buffer<float>(std::move(val))};
}

}  // namespace

int64_t Sum(std::span<const int64_t> v) {
  int64_t s = 0;
  for (int64_t x : v) s += x;
  return s;
}

FeatureMatrix EmptyRows(int64_t cols, bool sparse) {
  FeatureMatrix m;
  m.is_sparse = sparse;
  if (sparse) {
    m.sparse = EmptySparse(cols);
  } else {
    m.dense = kernels::Matrix(0, cols);
  }
  return m;
}

void CheckServed(std::span<const int64_t> ids, int64_t num_owned, int rank) {
  for (int64_t id : ids) {
    TESSEL_CHECK(id >= 0 && id < num_owned,
                 "features: rank {} was asked for its owned row {} but owns {} rows (did every rank load the same "
                 "partition folder, rank r loading part r?)",
                 rank, id, num_owned);
  }
}

kernels::Matrix ShipDense(comm::Communicator& comm, const kernels::Matrix& mine, std::span<const int64_t> serve,
                          std::span<const int64_t> serve_counts, std::span<const int64_t> want_counts,
                          std::string_view purpose, int64_t* received_bytes, float* into) {
  const int64_t c = mine.cols;
  auto src = mine.View();
  const auto n = static_cast<int64_t>(serve.size());
  std::vector<float> send(Index(n * c));
  parallel_for<int64_t>(0, c > 0 ? n : 0, kGrain,
                        [&](int64_t i) { std::copy_n(src.data() + serve[Index(i)] * c, c, send.data() + i * c); });
  const int64_t rows = Sum(want_counts);
  kernels::Matrix out;
  const std::span<float> dst = Destination(&out, into, rows, c);
  comm.Alltoallv<float>(send, Scaled(serve_counts, c), dst, Scaled(want_counts, c), purpose).ThrowIfError();
  *received_bytes += rows * c * static_cast<int64_t>(sizeof(float));
  return out;
}

kernels::Matrix ShipDenseCompressed(comm::Communicator& comm, const kernels::Matrix& mine,
                                    std::span<const int64_t> serve, std::span<const int64_t> serve_counts,
                                    std::span<const int64_t> want_counts, std::string_view purpose,
                                    const RowCompression& z, int64_t* received_bytes, FetchStats* st, float* into) {
  const int64_t c = mine.cols;
  const int64_t rb = z.codec->EncodedBytes(c);
  auto src = mine.View();
  const auto n = static_cast<int64_t>(serve.size());
  auto t0 = Clock::now();
  std::vector<std::byte> send(Index(n * rb));
  parallel_for<int64_t>(0, rb > 0 ? n : 0, kGrain / 4, [&](int64_t i) {
    z.codec->Encode(std::span<const float>(src.data() + serve[Index(i)] * c, Index(c)), RowSeed(z.seed, i),
                    std::span<std::byte>(send.data() + i * rb, Index(rb)));
  });
  st->encode_seconds += SecondsSince(t0);
  const int64_t rows = Sum(want_counts);
  std::vector<std::byte> recv(Index(rows * rb));
  comm.Alltoallv<std::byte>(send, Scaled(serve_counts, rb), recv, Scaled(want_counts, rb), purpose).ThrowIfError();
  t0 = Clock::now();
  kernels::Matrix out;
  const std::span<float> dst = Destination(&out, into, rows, c);
  parallel_for<int64_t>(0, rb > 0 ? rows : 0, kGrain / 4, [&](int64_t i) {
    z.codec->Decode(std::span<const std::byte>(recv.data() + i * rb, Index(rb)),
                    std::span<float>(dst.data() + i * c, Index(c)), false);
  });
  st->decode_seconds += SecondsSince(t0);
  const auto me = Index(comm.Rank());
  st->sent_raw_bytes += (n - serve_counts[me]) * c * 4;
  st->sent_wire_bytes += (n - serve_counts[me]) * rb;
  *received_bytes += static_cast<int64_t>(recv.size());
  return out;
}

FeatureMatrix ShipRows(comm::Communicator& comm, const FeatureMatrix& mine, std::span<const int64_t> serve,
                       std::span<const int64_t> serve_counts, std::span<const int64_t> want_counts,
                       std::string_view purpose, int64_t* received_bytes, const RowCompression* z, FetchStats* st,
                       float* into) {
  TESSEL_CHECK(into == nullptr || !mine.is_sparse, "sparse rows cannot be received into a dense array");
  FeatureMatrix out;
  out.is_sparse = mine.is_sparse;
  if (z != nullptr) {  // st receives the encoding's bytes and seconds
    if (mine.is_sparse) {
      out.sparse =
          ShipSparseCompressed(comm, mine.sparse, serve, serve_counts, want_counts, purpose, *z, received_bytes, st);
    } else {
      out.dense = ShipDenseCompressed(comm, mine.dense, serve, serve_counts, want_counts, purpose, *z, received_bytes,
                                      st, into);
    }
    return out;
  }
  if (mine.is_sparse) {
    out.sparse = ShipSparse(comm, mine.sparse, serve, serve_counts, want_counts, purpose, received_bytes);
  } else {
    out.dense = ShipDense(comm, mine.dense, serve, serve_counts, want_counts, purpose, received_bytes, into);
  }
  return out;
}

FeatureMatrix RequestRows(comm::Communicator& comm, const FeatureMatrix& mine, std::span<const int64_t> want,
                          std::span<const int64_t> want_counts, std::string_view purpose, int64_t* received_bytes,
                          const RowCompression* z, FetchStats* st, float* into) {
  std::vector<int64_t> serve;
  std::vector<int64_t> serve_counts;
  if (z == nullptr) {
    comm.AlltoallvWithCounts<int64_t>(want, want_counts, &serve, &serve_counts, purpose).ThrowIfError();
  } else {
    RequestIdsCompressed(comm, want, want_counts, &serve, &serve_counts, purpose, st);
  }
  CheckServed(serve, mine.rows(), comm.Rank());
  return ShipRows(comm, mine, serve, serve_counts, want_counts, purpose, received_bytes, z, st, into);
}

kernels::Matrix AssembleDense(std::span<const kernels::Matrix* const> sources, std::span<const RowRef> refs,
                              int64_t cols) {
  std::vector<const float*> base;
  for (const kernels::Matrix* m : sources) base.push_back(m->View().data());
  const auto n = static_cast<int64_t>(refs.size());
  kernels::Matrix out(n, cols);
  float* o = out.Mut().data();
  parallel_for<int64_t>(0, cols > 0 ? n : 0, kGrain, [&](int64_t i) {
    const RowRef r = refs[Index(i)];
    std::copy_n(base[Index(r.source)] + r.row * cols, cols, o + i * cols);
  });
  return out;
}

FeatureMatrix Assemble(std::span<const FeatureMatrix* const> sources, std::span<const RowRef> refs, int64_t cols,
                       bool sparse) {
  FeatureMatrix out;
  out.is_sparse = sparse;
  if (sparse) {
    std::vector<const kernels::SparseMatrix*> s;
    for (const FeatureMatrix* m : sources) s.push_back(&m->sparse);
    out.sparse = AssembleSparse(s, refs, cols);
  } else {
    std::vector<const kernels::Matrix*> s;
    for (const FeatureMatrix* m : sources) s.push_back(&m->dense);
    out.dense = AssembleDense(s, refs, cols);
  }
  return out;
}

kernels::SparseMatrix ConcatRows(std::vector<kernels::SparseMatrix>& pieces, int64_t cols) {
  int64_t rows = 0;
  int64_t nnz = 0;
  for (const auto& m : pieces) {
    rows += m.rows;
    nnz += static_cast<int64_t>(m.indices.size());
  }
  std::vector<int64_t> indptr(Index(rows) + 1, 0);
  std::vector<int32_t> indices(Index(nnz));
  std::vector<float> values(Index(nnz));
  int64_t row = 0;
  int64_t at = 0;
  for (auto& m : pieces) {
    const auto p = m.indptr.Host();
    for (int64_t i = 0; i < m.rows; ++i) indptr[Index(row + i) + 1] = at + p[Index(i) + 1];
    const auto idx = m.indices.Host();
    std::copy(idx.begin(), idx.end(), indices.begin() + at);
    if (m.has_values()) {
      const auto v = m.values.Host();
      std::copy(v.begin(), v.end(), values.begin() + at);
    } else {
      std::fill_n(values.begin() + at, idx.size(), 1.0F);
    }
    row += m.rows;
    at += static_cast<int64_t>(idx.size());
    m = kernels::SparseMatrix();
  }
  return kernels::SparseMatrix{rows, cols, Buffer<int64_t>(std::move(indptr)), Buffer<int32_t>(std::move(indices)),
                               Buffer<float>(std::move(values))};
}

}  // namespace tessel::train::gcn::row_exchange
