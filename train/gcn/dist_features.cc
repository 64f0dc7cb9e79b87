// DistFeatureStore and HaloExchanger: owned feature rows, a static halo cache chosen by in-part degree, batched
// row requests to the owners (ids by one alltoallv, rows back by another; sparse rows travel as CSR) and halo exchange.
#include "train/gcn/dist_features.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/clock.h"
#include "core/device.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "core/varint.h"

#include <fmt/format.h>

namespace tessel::train::gcn {
namespace {

constexpr std::string_view kCachePurpose = "feature_cache";
constexpr std::string_view kFetchPurpose = "features";
constexpr std::string_view kHaloPurpose = "halo_exchange";
constexpr int64_t kGrain = 512;

// Where one output row comes from: row `row` of source matrix `source`.
struct RowRef {
  int32_t source = 0;
  int64_t row = 0;
};

int64_t Sum(std::span<const int64_t> v) {
  int64_t s = 0;
  for (int64_t x : v) s += x;
  return s;
}

size_t Index(int64_t i) { return static_cast<size_t>(i); }

kernels::SparseMatrix EmptySparse(int64_t cols) {
  return kernels::SparseMatrix{0, cols, Buffer<int64_t>(1), Buffer<int32_t>(), Buffer<float>()};
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

// Throws unless every id a peer asked this rank for is one of its owned rows.
void CheckServed(std::span<const int64_t> ids, int64_t num_owned, int rank) {
  for (int64_t id : ids) {
    TESSEL_CHECK(id >= 0 && id < num_owned,
                 "features: rank {} was asked for its owned row {} but owns {} rows (did every rank load the same "
                 "partition folder, rank r loading part r?)",
                 rank, id, num_owned);
  }
}

// ---- Shipping rows: `serve` holds owned row ids grouped by requesting rank (serve_counts[k] for rank k); this rank
// receives want_counts[k] rows from rank k. The result holds the received rows, sending ranks in order. Dense rows
// may be received `into` caller memory instead (room for every received row; the result is then empty): the
// pinned staging array of a device fetch.

kernels::Matrix ShipDense(comm::Communicator& comm, const kernels::Matrix& mine, std::span<const int64_t> serve,
                          std::span<const int64_t> serve_counts, std::span<const int64_t> want_counts,
                          std::string_view purpose, int64_t* received_bytes, float* into = nullptr) {
  const int64_t c = mine.cols;
  auto src = mine.View();
  const auto n = static_cast<int64_t>(serve.size());
  std::vector<float> send(Index(n * c));
  parallel_for<int64_t>(0, c > 0 ? n : 0, kGrain,
                        [&](int64_t i) { std::copy_n(src.data() + serve[Index(i)] * c, c, send.data() + i * c); });
  std::vector<int64_t> send_counts(serve_counts.begin(), serve_counts.end());
  std::vector<int64_t> recv_counts(want_counts.begin(), want_counts.end());
  for (int64_t& x : send_counts) x *= c;
  for (int64_t& x : recv_counts) x *= c;
  const int64_t rows = Sum(want_counts);
  kernels::Matrix out = into != nullptr ? kernels::Matrix() : kernels::Matrix(rows, c);
  const std::span<float> dst = into != nullptr ? std::span<float>(into, Index(rows * c)) : out.Mut();
  comm.Alltoallv<float>(send, send_counts, dst, recv_counts, purpose).ThrowIfError();
  *received_bytes += rows * c * static_cast<int64_t>(sizeof(float));
  return out;
}

// Each block (one per destination) is [row nnz: int64 x rows][column ids: int32 x nnz][values: float x nnz], so the
// receiver rebuilds CSR rows with one copy per block. Block sizes travel in a count exchange first.
kernels::SparseMatrix ShipSparse(comm::Communicator& comm, const kernels::SparseMatrix& mine,
                                 std::span<const int64_t> serve, std::span<const int64_t> serve_counts,
                                 std::span<const int64_t> want_counts, std::string_view purpose,
                                 int64_t* received_bytes) {
  const auto num_ranks = static_cast<size_t>(comm.Size());
  auto p = mine.indptr.Host();
  auto idx = mine.indices.Host();
  auto val = mine.values.Host();
  const bool ones = !mine.has_values();
  const auto n = static_cast<int64_t>(serve.size());

  std::vector<int64_t> nnz_prefix(Index(n) + 1, 0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = serve[Index(i)];
    nnz_prefix[Index(i) + 1] = nnz_prefix[Index(i)] + p[Index(r) + 1] - p[Index(r)];
  }
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
    const int64_t len = p[Index(r) + 1] - p[Index(r)];
    uint8_t* base = send.data() + byte_begin[k];
    std::memcpy(base + (i - row_begin[k]) * 8, &len, 8);
    if (len == 0) return;
    std::memcpy(base + rows_k * 8 + e * 4, idx.data() + p[Index(r)], Index(len) * 4);
    uint8_t* values = base + rows_k * 8 + nnz_k * 4 + e * 4;
    if (!ones) {
      std::memcpy(values, val.data() + p[Index(r)], Index(len) * 4);
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

kernels::Matrix ShipDenseCompressed(comm::Communicator& comm, const kernels::Matrix& mine,
                                    std::span<const int64_t> serve, std::span<const int64_t> serve_counts,
                                    std::span<const int64_t> want_counts, std::string_view purpose,
                                    const RowCompression& z, int64_t* received_bytes, FetchStats* st,
                                    float* into = nullptr) {
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
  std::vector<int64_t> send_counts(serve_counts.begin(), serve_counts.end());
  std::vector<int64_t> recv_counts(want_counts.begin(), want_counts.end());
  for (int64_t& x : send_counts) x *= rb;
  for (int64_t& x : recv_counts) x *= rb;
  const int64_t rows = Sum(want_counts);
  std::vector<std::byte> recv(Index(rows * rb));
  comm.Alltoallv<std::byte>(send, send_counts, recv, recv_counts, purpose).ThrowIfError();
  t0 = Clock::now();
  kernels::Matrix out = into != nullptr ? kernels::Matrix() : kernels::Matrix(rows, c);
  const std::span<float> dst = into != nullptr ? std::span<float>(into, Index(rows * c)) : out.Mut();
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

// Reads a varint at *pos, bounded by end; throws on a truncated or over-long one.
uint64_t GetVarint(const std::byte* data, int64_t* pos, int64_t end, int rank) {
  uint64_t v = 0;
  if (!tessel::GetVarint(data, pos, end, &v)) {
    throw Error(fmt::format("features: rank {} sent a truncated or malformed varint in a compressed row block", rank));
  }
  return v;
}

// A row whose values are all exactly 1 (binary features) travels without values: a flag in its length word.
bool AllOnes(bool no_values, std::span<const float> val, int64_t begin, int64_t len) {
  if (no_values) return true;
  for (int64_t e = begin; e < begin + len; ++e) {
    if (val[Index(e)] != 1.0F) return false;
  }
  return true;
}

kernels::SparseMatrix ShipSparseCompressed(comm::Communicator& comm, const kernels::SparseMatrix& mine,
                                           std::span<const int64_t> serve, std::span<const int64_t> serve_counts,
                                           std::span<const int64_t> want_counts, std::string_view purpose,
                                           const RowCompression& z, int64_t* received_bytes, FetchStats* st) {
  const auto num_ranks = static_cast<size_t>(comm.Size());
  auto p = mine.indptr.Host();
  auto idx = mine.indices.Host();
  auto val = mine.values.Host();
  const bool ones = !mine.has_values();
  const auto n = static_cast<int64_t>(serve.size());
  auto t0 = Clock::now();
  // Pass 1: every row's encoded size; pass 2: write the rows at their offsets.
  std::vector<int64_t> offset(Index(n) + 1, 0);
  std::vector<uint8_t> unit(Index(n));  // row i is all ones: sent without values
  parallel_for<int64_t>(0, n, kGrain, [&](int64_t i) {
    const int64_t r = serve[Index(i)];
    const int64_t len = p[Index(r) + 1] - p[Index(r)];
    unit[Index(i)] = AllOnes(ones, val, p[Index(r)], len) ? 1 : 0;
    int64_t bytes = VarintSize(static_cast<uint64_t>(len) * 2) + (unit[Index(i)] != 0 ? 0 : z.codec->EncodedBytes(len));
    int64_t prev = 0;
    for (int64_t e = p[Index(r)]; e < p[Index(r) + 1]; ++e) {
      bytes += VarintSize(ZigZag(idx[Index(e)] - prev));
      prev = idx[Index(e)];
    }
    offset[Index(i) + 1] = bytes;
  });
  for (int64_t i = 0; i < n; ++i) offset[Index(i) + 1] += offset[Index(i)];
  std::vector<std::byte> send(Index(offset.back()));
  parallel_for<int64_t>(0, n, kGrain, [&](int64_t i) {
    const int64_t r = serve[Index(i)];
    const int64_t b = p[Index(r)];
    const int64_t len = p[Index(r) + 1] - b;
    std::byte* w = PutVarint(send.data() + offset[Index(i)], static_cast<uint64_t>(len) * 2 + unit[Index(i)]);
    int64_t prev = 0;
    for (int64_t e = b; e < b + len; ++e) {
      w = PutVarint(w, ZigZag(idx[Index(e)] - prev));
      prev = idx[Index(e)];
    }
    if (unit[Index(i)] == 0) {
      z.codec->Encode(std::span<const float>(val.data() + b, Index(len)), RowSeed(z.seed, i),
                      std::span<std::byte>(w, Index(z.codec->EncodedBytes(len))));
    }
  });
  std::vector<int64_t> send_bytes(num_ranks, 0);
  int64_t row = 0;
  int64_t raw_nnz = 0;
  for (size_t k = 0; k < num_ranks; ++k) {
    send_bytes[k] = offset[Index(row + serve_counts[k])] - offset[Index(row)];
    if (static_cast<int>(k) != comm.Rank()) {
      st->sent_wire_bytes += send_bytes[k];
      for (int64_t i = row; i < row + serve_counts[k]; ++i) {
        raw_nnz += p[Index(serve[Index(i)]) + 1] - p[Index(serve[Index(i)])];
      }
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

FeatureMatrix ShipRows(comm::Communicator& comm, const FeatureMatrix& mine, std::span<const int64_t> serve,
                       std::span<const int64_t> serve_counts, std::span<const int64_t> want_counts,
                       std::string_view purpose, int64_t* received_bytes, const RowCompression* z = nullptr,
                       FetchStats* st = nullptr, float* into = nullptr) {
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

// One batched request: `want` holds owner-local row ids grouped by owner rank (want_counts[k] for rank k); the ids
// go out by one alltoallv (with its count exchange), the rows come back by one more.
FeatureMatrix RequestRows(comm::Communicator& comm, const FeatureMatrix& mine, std::span<const int64_t> want,
                          std::span<const int64_t> want_counts, std::string_view purpose, int64_t* received_bytes,
                          const RowCompression* z = nullptr, FetchStats* st = nullptr, float* into = nullptr) {
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

// ---- Assembling output rows from several sources.

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

void CheckRanks(const partition::LocalPart& part, const comm::Communicator& comm, std::string_view what) {
  TESSEL_CHECK(comm.Size() == part.num_parts,
               "{}: {} ranks for a partition of {} parts (run one rank per part: mpirun -np {})", what, comm.Size(),
               part.num_parts, part.num_parts);
  TESSEL_CHECK(comm.Rank() == part.part, "{}: rank {} holds part {} (rank r must load part r)", what, comm.Rank(),
               part.part);
}

// The rows of `pieces` one after the other (each piece is dropped once copied).
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

// Halo indices j to cache. All of them for capacity -1 (or a capacity at least the halo size). Otherwise the ones
// with the most owned neighbours (entries in the owned rows of the local graph), ties by smaller global id. Why:
// a mini-batch reaches a halo node only when an owned neighbour samples it, and each owned neighbour that lists it
// is one more chance per step, so the expected number of requests grows with this in-part degree; keeping the
// highest ones maximises expected hits per cached row (PaGraph's and DistDGL's degree-ordered static caches). A
// static choice also needs no bookkeeping per step and gives the same cache, and the same bytes, on every run.
std::vector<int64_t> ChooseCached(const partition::LocalPart& part, std::span<const int64_t> halo_gid,
                                  int64_t capacity) {
  std::vector<int64_t> chosen(Index(part.num_halo));
  for (int64_t j = 0; j < part.num_halo; ++j) chosen[Index(j)] = j;
  if (capacity < 0 || capacity >= part.num_halo) return chosen;
  std::vector<int64_t> degree(Index(part.num_halo), 0);
  for (int32_t v : part.graph.indices().Host()) {
    if (v >= part.num_owned) ++degree[Index(v - part.num_owned)];
  }
  std::partial_sort(chosen.begin(), chosen.begin() + capacity, chosen.end(), [&](int64_t a, int64_t b) {
    if (degree[Index(a)] != degree[Index(b)]) return degree[Index(a)] > degree[Index(b)];
    return halo_gid[Index(a)] < halo_gid[Index(b)];
  });
  chosen.resize(Index(capacity));
  return chosen;
}

// The owned rows read in place (no scaling): views of part.features (which must outlive them), checked finite as
// PrepareFeatures checks them.
FeatureMatrix OwnedInPlace(const datasets::Features& f) {
  const auto borrow = [](const auto& buf) {
    using T = typename std::remove_cvref_t<decltype(buf)>::value_type;
    const std::span<const T> h = buf.Host();
    return Buffer<T>::Borrow(std::shared_ptr<void>(), const_cast<T*>(h.data()), h.size());
  };
  const auto check = [](std::span<const float> v, int64_t dim, const auto& row_of) {
    parallel_for<int64_t>(0, static_cast<int64_t>(v.size()), int64_t{1} << 16, [&](int64_t i) {
      TESSEL_CHECK(std::isfinite(v[Index(i)]),
                   "features: node {} has the value {} (features must be finite; clean or impute the input)",
                   row_of(i, dim), v[Index(i)]);
    });
  };
  FeatureMatrix out;
  out.is_sparse = f.sparse;
  TESSEL_CHECK(f.dim <= INT32_MAX, "features: {} columns do not fit 32-bit column ids", f.dim);
  if (f.sparse) {
    auto p = f.indptr.Host();
    TESSEL_CHECK(static_cast<int64_t>(p.size()) == f.num_rows + 1 && f.values.size() == f.indices.size(),
                 "features: sparse arrays disagree with {} rows", f.num_rows);
    check(f.values.Host(), f.dim,
          [&](int64_t e, int64_t) { return std::upper_bound(p.begin(), p.end(), e) - p.begin() - 1; });
    out.sparse = kernels::SparseMatrix{f.num_rows, f.dim, borrow(f.indptr), borrow(f.indices), borrow(f.values)};
  } else {
    TESSEL_CHECK(static_cast<int64_t>(f.dense.size()) == f.num_rows * f.dim, "features: {} values for {}x{}",
                 f.dense.size(), f.num_rows, f.dim);
    check(f.dense.Host(), f.dim, [](int64_t i, int64_t dim) { return i / dim; });
    out.dense.rows = f.num_rows;
    out.dense.cols = f.dim;
    out.dense.data = borrow(f.dense);
  }
  return out;
}

}  // namespace

int64_t CacheRowsForBudget(int64_t budget_bytes, int64_t row_bytes, int64_t num_halo) {
  TESSEL_CHECK(budget_bytes >= 0 && num_halo >= 0, "features: cache budget {} bytes for {} halo rows", budget_bytes,
               num_halo);
  return std::min(num_halo, budget_bytes / std::max<int64_t>(1, row_bytes));
}

int64_t RowBytesForBudget(const FeatureMatrix& f) {
  if (!f.is_sparse) return std::max<int64_t>(1, f.dense.cols * static_cast<int64_t>(sizeof(float)));
  const int64_t rows = std::max<int64_t>(1, f.sparse.rows);
  const auto nnz = static_cast<int64_t>(f.sparse.indices.size());
  return 8 + (8 * nnz + rows - 1) / rows;
}

// ---- DistFeatureStore

DistFeatureStore::DistFeatureStore(const Context& /*ctx*/, const partition::LocalPart& part,
                                   std::vector<int64_t> offsets, comm::Communicator& comm, FeatureNorm norm,
                                   FeatureCacheOptions cache)
    : comm_(&comm), offsets_(std::move(offsets)), global_offset_(part.global_offset) {
  CheckRanks(part, comm, "features");
  const int32_t k = part.part;
  TESSEL_CHECK(static_cast<int64_t>(offsets_.size()) == part.num_parts + 1,
               "features: {} node-range offsets for {} parts (pass partitions.json's node_ranges: parts + 1 entries)",
               offsets_.size(), part.num_parts);
  TESSEL_CHECK(offsets_.front() == 0 && std::is_sorted(offsets_.begin(), offsets_.end()),
               "features: node-range offsets must start at 0 and never decrease");
  TESSEL_CHECK(
      offsets_[Index(k)] == part.global_offset && offsets_[Index(k) + 1] - offsets_[Index(k)] == part.num_owned,
      "features: part {} owns {} nodes from global id {}, but the offsets give [{}, {}) (offsets and part "
      "come from different partition folders?)",
      k, part.num_owned, part.global_offset, offsets_[Index(k)], offsets_[Index(k) + 1]);
  TESSEL_CHECK(cache.capacity >= FeatureCacheOptions::kFromBudget && cache.budget_bytes >= -1,
               "features: cache capacity {} (budget {} bytes) is invalid; use -2 (rows by the budget), -1 (every "
               "halo node), 0 (no cache) or a row count",
               cache.capacity, cache.budget_bytes);
  TESSEL_CHECK(part.features.dim > 0 && part.features.num_rows == part.num_owned,
               "features: part {} has {} feature rows of dimension {} for {} owned nodes (GCN training needs node "
               "features; partition a dataset that has them)",
               k, part.features.num_rows, part.features.dim, part.num_owned);
  scaling_ = FitFeatureScaling(part.features, norm, [&](std::span<double> v) {
    comm.Allreduce(v, comm::ReduceOp::kSum, "setup").ThrowIfError();
  });
  owned_in_place_ = scaling_.norm == FeatureNorm::kNone;
  owned_ = owned_in_place_ ? OwnedInPlace(part.features) : PrepareFeatures(part.features, scaling_);
  cache_ = EmptyRows(owned_.cols(), owned_.is_sparse);
  const int64_t row_bytes = RowBytesForBudget(owned_);
  int64_t capacity = cache.capacity;
  if (capacity == FeatureCacheOptions::kFromBudget) {
    const int64_t budget = cache.budget_bytes >= 0 ? cache.budget_bytes : FeatureBytes(owned_) / 2;
    capacity = CacheRowsForBudget(budget, row_bytes, part.num_halo);
  }
  // Only a setting every rank shares skips the fill's collectives (a budget may leave one rank no rows).
  if (cache.capacity == 0 || (cache.capacity == FeatureCacheOptions::kFromBudget && cache.budget_bytes == 0)) return;

  auto owner = part.halo_owner.Host();
  auto remote = part.halo_remote.Host();
  std::vector<int64_t> halo_gid(Index(part.num_halo));
  for (int64_t j = 0; j < part.num_halo; ++j) {
    halo_gid[Index(j)] = offsets_[Index(owner[Index(j)])] + remote[Index(j)];
  }
  std::vector<int64_t> chosen = ChooseCached(part, halo_gid, capacity);
  // Ascending global id groups the requests by owner rank, as RequestRows needs.
  std::sort(chosen.begin(), chosen.end(),
            [&](int64_t a, int64_t b) { return halo_gid[Index(a)] < halo_gid[Index(b)]; });
  std::vector<int64_t> want(chosen.size());
  std::vector<int32_t> want_owner(chosen.size());
  cached_ids_.resize(chosen.size());
  for (size_t i = 0; i < chosen.size(); ++i) {
    const auto j = Index(chosen[i]);
    want[i] = remote[j];
    want_owner[i] = owner[j];
    cached_ids_[i] = halo_gid[j];
  }
  chosen = std::vector<int64_t>();
  halo_gid = std::vector<int64_t>();
  // Rounds: each rank asks at most `per_round` rows a round, so an owner serves at most K x per_round rows (about
  // fill_round_bytes) a round; every rank takes as many rounds as the rank that asks for the most.
  const uint64_t before = comm.Bytes().Bytes(kCachePurpose);
  const int64_t per_round =
      std::max<int64_t>(1, std::max<int64_t>(1, cache.fill_round_bytes) / (row_bytes * part.num_parts));
  const auto n = static_cast<int64_t>(want.size());
  int64_t rounds = (n + per_round - 1) / per_round;
  comm.Allreduce<int64_t>(std::span<int64_t>(&rounds, 1), comm::ReduceOp::kMax, "setup").ThrowIfError();
  fill_rounds_ = rounds;
  const int64_t c = owned_.cols();
  std::vector<kernels::SparseMatrix> pieces;
  if (!owned_.is_sparse) {
    cache_.dense = kernels::Matrix(n, c);
  }
  int64_t received = 0;
  for (int64_t r = 0; r < rounds; ++r) {
    const int64_t b = std::min(n, r * per_round);
    const int64_t e = std::min(n, b + per_round);
    std::vector<int64_t> counts(Index(part.num_parts), 0);
    for (int64_t i = b; i < e; ++i) ++counts[Index(want_owner[Index(i)])];
    const std::span<const int64_t> slice(want.data() + b, Index(e - b));
    if (!owned_.is_sparse) {
      (void)RequestRows(comm, owned_, slice, counts, kCachePurpose, &received, nullptr, nullptr,
                        cache_.dense.Mut().data() + b * c);
    } else {
      pieces.push_back(RequestRows(comm, owned_, slice, counts, kCachePurpose, &received).sparse);
    }
  }
  if (owned_.is_sparse) cache_.sparse = ConcatRows(pieces, c);
  setup_bytes_ = static_cast<int64_t>(comm.Bytes().Bytes(kCachePurpose) - before);
}

std::unique_ptr<comm::Codec> MakeRowCodec(const comm::CompressSpec& spec, int64_t cols) {
  if (spec.method == comm::CompressMethod::kNone) return nullptr;
  TESSEL_CHECK(spec.method == comm::CompressMethod::kFp16 || spec.method == comm::CompressMethod::kBf16 ||
                   spec.method == comm::CompressMethod::kInt8 || spec.method == comm::CompressMethod::kQsgd,
               "--feature-compress {}: feature rows take none, fp16, bf16, int8 or qsgd[:LEVELS] (one scale per row)",
               spec.ToString());
  comm::CompressSpec row = spec;
  row.block = 0;  // one block per row
  return comm::MakeCodec(row, std::max<int64_t>(1, cols));
}

void DistFeatureStore::SetCompression(const comm::CompressSpec& spec, uint64_t seed) {
  codec_ = MakeRowCodec(spec, cols());
  codec_seed_ = seed;
}

DistFeatureStore::~DistFeatureStore() = default;

namespace {

constexpr int32_t kOwned = 0;
constexpr int32_t kCached = 1;
constexpr int32_t kRemote = 2;

// Where each row of a fetch comes from (refs: an owned row, a cached row, or remote row `row` of `remote`), and the
// distinct remote ids, ascending, as one batched request: owner-local ids grouped by owner rank (owners hold
// contiguous ranges in rank order).
struct FetchPlan {
  std::vector<RowRef> refs;
  std::vector<int64_t> remote;
  std::vector<int64_t> want;
  std::vector<int64_t> want_counts;
  int64_t local_rows = 0;
  int64_t cache_hits = 0;
};

FetchPlan PlanFetch(std::span<const int64_t> global_ids, std::span<const int64_t> offsets, int64_t global_offset,
                    int64_t num_owned, std::span<const int64_t> cached_ids) {
  const auto n = static_cast<int64_t>(global_ids.size());
  const int64_t total = offsets.back();
  const int64_t owned_end = global_offset + num_owned;
  FetchPlan plan;
  plan.refs.resize(Index(n));
  parallel_for<int64_t>(0, n, kGrain, [&](int64_t i) {
    const int64_t g = global_ids[Index(i)];
    TESSEL_CHECK(g >= 0 && g < total, "features: requested global id {} is outside [0, {})", g, total);
    if (g >= global_offset && g < owned_end) {
      plan.refs[Index(i)] = {kOwned, g - global_offset};
      return;
    }
    auto it = std::lower_bound(cached_ids.begin(), cached_ids.end(), g);
    if (it != cached_ids.end() && *it == g) {
      plan.refs[Index(i)] = {kCached, it - cached_ids.begin()};
    } else {
      plan.refs[Index(i)] = {kRemote, -1};
    }
  });
  for (int64_t i = 0; i < n; ++i) {
    const int32_t s = plan.refs[Index(i)].source;
    if (s == kOwned) ++plan.local_rows;
    if (s == kCached) ++plan.cache_hits;
    if (s == kRemote) plan.remote.push_back(global_ids[Index(i)]);
  }
  std::vector<int64_t>& remote = plan.remote;
  std::sort(remote.begin(), remote.end());
  remote.erase(std::unique(remote.begin(), remote.end()), remote.end());
  plan.want.resize(remote.size());
  plan.want_counts.assign(offsets.size() - 1, 0);
  for (size_t i = 0; i < remote.size(); ++i) {
    const auto owner =
        static_cast<size_t>(std::upper_bound(offsets.begin(), offsets.end(), remote[i]) - offsets.begin() - 1);
    plan.want[i] = remote[i] - offsets[owner];
    ++plan.want_counts[owner];
  }
  parallel_for<int64_t>(0, n, kGrain, [&](int64_t i) {
    RowRef& r = plan.refs[Index(i)];
    if (r.source == kRemote) {
      r.row = std::lower_bound(remote.begin(), remote.end(), global_ids[Index(i)]) - remote.begin();
    }
  });
  return plan;
}

void AddFetchStats(const FetchPlan& plan, int64_t requested, int64_t received, const FetchStats& z, FetchStats* stats) {
  if (stats == nullptr) return;
  stats->requested_rows += requested;
  stats->local_rows += plan.local_rows;
  stats->cache_hits += plan.cache_hits;
  stats->fetched_rows += static_cast<int64_t>(plan.remote.size());
  stats->fetched_bytes += received;
  stats->sent_raw_bytes += z.sent_raw_bytes;
  stats->sent_wire_bytes += z.sent_wire_bytes;
  stats->encode_seconds += z.encode_seconds;
  stats->decode_seconds += z.decode_seconds;
}

}  // namespace

FeatureMatrix DistFeatureStore::Fetch(std::span<const int64_t> global_ids, FetchStats* stats, uint64_t step) {
  const FetchPlan plan = PlanFetch(global_ids, offsets_, global_offset_, num_owned(), cached_ids_);
  int64_t received = 0;
  FetchStats z_stats;
  const RowCompression z = StepCompression(step);
  const FeatureMatrix fetched = RequestRows(*comm_, owned_, plan.want, plan.want_counts, kFetchPurpose, &received,
                                            codec_ ? &z : nullptr, &z_stats);
  const FeatureMatrix* sources[] = {&owned_, &cache_, &fetched};
  FeatureMatrix out = Assemble(sources, plan.refs, cols(), is_sparse());
  AddFetchStats(plan, static_cast<int64_t>(global_ids.size()), received, z_stats, stats);
  return out;
}

RowCompression DistFeatureStore::StepCompression(uint64_t step) const {
  // Rows are encoded with the (seed, step, rank) stream, so QSGD's draws are reproducible.
  return RowCompression{codec_.get(), Mix64(codec_seed_ ^ Mix64(step * 7919 + static_cast<uint64_t>(comm_->Rank())))};
}

DistFeatureStore::DeviceRows DistFeatureStore::FetchToDevice(std::span<const int64_t> global_ids, FetchStats* stats,
                                                             uint64_t step) {
  TESSEL_CHECK(!is_sparse(), "features: a device fetch takes dense rows (sparse rows go through Fetch)");
  const FetchPlan plan = PlanFetch(global_ids, offsets_, global_offset_, num_owned(), cached_ids_);
  const int64_t c = cols();
  const int64_t resident = num_owned() + cache_rows();
  const auto m = static_cast<int64_t>(plan.remote.size());
  const auto n = static_cast<int64_t>(global_ids.size());
  // The table: owned rows, cached rows, then room for fetched rows: as many as the step's rows (the most it could
  // fetch; the per-step input matrix the host path assembles is that large), grown by half when a step needs more,
  // never more than the rows held elsewhere. It goes up whole once, and again only when it grows.
  if (table_.dense.rows < resident + m || table_.dense.cols != c) {
    const int64_t elsewhere = offsets_.back() - resident;
    const int64_t room = std::min(elsewhere, std::max(n, (table_.dense.rows - resident) * 3 / 2));
    table_.is_sparse = false;
    table_.dense = kernels::Matrix(resident + room, c);
    float* t = table_.dense.Mut().data();
    std::copy_n(owned_.dense.View().data(), num_owned() * c, t);
    std::copy_n(cache_.dense.View().data(), cache_rows() * c, t + num_owned() * c);
  }
  // The remote rows arrive in the pinned staging array (received, or decoded, there: no pageable copy), sized to
  // twice the most rows a step has fetched and at least 4 MiB: page-locked memory is taken from the whole node, so
  // not to the table's room, but pinning is slow, so not to every new maximum either.
  constexpr size_t kMinStagingFloats = size_t{1} << 20;
  const size_t need = Index(m * c);
  float* staging = staging_.Reserve(need > staging_.capacity() ? std::max(2 * need, kMinStagingFloats) : need);
  int64_t received = 0;
  FetchStats z_stats;
  const RowCompression z = StepCompression(step);
  (void)RequestRows(*comm_, owned_, plan.want, plan.want_counts, kFetchPurpose, &received, codec_ ? &z : nullptr,
                    &z_stats, staging);
  float* on_device = table_.dense.data.MutableDevice();  // uploads only a new table
  if (m > 0) device::CopyToDevice(on_device + resident * c, staging, Index(m * c) * sizeof(float));
  table_rows_.resize(Index(n));
  for (int64_t i = 0; i < n; ++i) {
    const RowRef r = plan.refs[Index(i)];
    table_rows_[Index(i)] = r.source == kOwned ? r.row : r.source == kCached ? num_owned() + r.row : resident + r.row;
  }
  AddFetchStats(plan, n, received, z_stats, stats);
  return DeviceRows{&table_, table_rows_};
}

// ---- HaloExchanger

HaloExchanger::HaloExchanger(const partition::LocalPart& part, comm::Communicator& comm) : part_(&part), comm_(&comm) {
  CheckRanks(part, comm, "halo exchange");
  auto owner = part.halo_owner.Host();
  auto remote = part.halo_remote.Host();
  want_counts_.assign(Index(part.num_parts), 0);
  for (int32_t o : owner) ++want_counts_[Index(o)];
  // Halo indices grouped by owner rank (stable: ascending j within an owner).
  std::vector<int64_t> next(Index(part.num_parts), 0);
  for (size_t k = 1; k < next.size(); ++k) next[k] = next[k - 1] + want_counts_[k - 1];
  halo_order_.resize(Index(part.num_halo));
  std::vector<int64_t> want(Index(part.num_halo));
  for (int64_t j = 0; j < part.num_halo; ++j) {
    const int64_t at = next[Index(owner[Index(j)])]++;
    halo_order_[Index(at)] = j;
    want[Index(at)] = remote[Index(j)];
  }
  comm.AlltoallvWithCounts<int64_t>(want, want_counts_, &serve_ids_, &serve_counts_, kHaloPurpose).ThrowIfError();
  CheckServed(serve_ids_, part.num_owned, comm.Rank());
}

namespace {

// Output row l < num_owned is owned row l; halo row j is received row i where halo_order[i] = j.
std::vector<RowRef> HaloRefs(const partition::LocalPart& part, std::span<const int64_t> halo_order) {
  std::vector<RowRef> refs(Index(part.num_local()));
  for (int64_t l = 0; l < part.num_owned; ++l) refs[Index(l)] = {0, l};
  for (size_t i = 0; i < halo_order.size(); ++i)
    refs[Index(part.num_owned + halo_order[i])] = {1, static_cast<int64_t>(i)};
  return refs;
}

}  // namespace

kernels::Matrix HaloExchanger::Exchange(const kernels::Matrix& owned) const {
  TESSEL_CHECK(owned.rows == part_->num_owned, "halo exchange: {} rows given for the {} owned nodes of part {}",
               owned.rows, part_->num_owned, part_->part);
  int64_t received = 0;
  const kernels::Matrix halo =
      ShipDense(*comm_, owned, serve_ids_, serve_counts_, want_counts_, kHaloPurpose, &received);
  const kernels::Matrix* sources[] = {&owned, &halo};
  return AssembleDense(sources, HaloRefs(*part_, halo_order_), owned.cols);
}

FeatureMatrix HaloExchanger::Exchange(const FeatureMatrix& owned) const {
  TESSEL_CHECK(owned.rows() == part_->num_owned, "halo exchange: {} rows given for the {} owned nodes of part {}",
               owned.rows(), part_->num_owned, part_->part);
  int64_t received = 0;
  const FeatureMatrix halo = ShipRows(*comm_, owned, serve_ids_, serve_counts_, want_counts_, kHaloPurpose, &received);
  const FeatureMatrix* sources[] = {&owned, &halo};
  return Assemble(sources, HaloRefs(*part_, halo_order_), owned.cols(), owned.is_sparse);
}

kernels::Matrix HaloExchanger::Exchange(const kernels::Matrix& owned, const comm::CompressSpec& spec, uint64_t seed,
                                        FetchStats* stats) const {
  const std::unique_ptr<comm::Codec> codec = MakeRowCodec(spec, owned.cols);
  if (!codec) return Exchange(owned);
  TESSEL_CHECK(owned.rows == part_->num_owned, "halo exchange: {} rows given for the {} owned nodes of part {}",
               owned.rows, part_->num_owned, part_->part);
  // Keyed as DistFeatureStore's fetches are, by (seed, rank): QSGD's draws are reproducible.
  const RowCompression z{codec.get(), Mix64(seed ^ Mix64(static_cast<uint64_t>(comm_->Rank())))};
  int64_t received = 0;
  FetchStats z_stats;
  const kernels::Matrix halo =
      ShipDenseCompressed(*comm_, owned, serve_ids_, serve_counts_, want_counts_, kHaloPurpose, z, &received, &z_stats);
  if (stats != nullptr) {
    stats->fetched_rows += Sum(want_counts_);
    stats->fetched_bytes += received;
    stats->sent_raw_bytes += z_stats.sent_raw_bytes;
    stats->sent_wire_bytes += z_stats.sent_wire_bytes;
    stats->encode_seconds += z_stats.encode_seconds;
    stats->decode_seconds += z_stats.decode_seconds;
  }
  const kernels::Matrix* sources[] = {&owned, &halo};
  return AssembleDense(sources, HaloRefs(*part_, halo_order_), owned.cols);
}

kernels::Matrix HaloExchange(const partition::LocalPart& part, comm::Communicator& comm, const kernels::Matrix& owned) {
  return HaloExchanger(part, comm).Exchange(owned);
}

FeatureMatrix HaloExchange(const partition::LocalPart& part, comm::Communicator& comm, const FeatureMatrix& owned) {
  return HaloExchanger(part, comm).Exchange(owned);
}

}  // namespace tessel::train::gcn
