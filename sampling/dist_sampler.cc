// DistNeighborSampler (dist_sampler.h): owned rows re-sorted by global id, the halo degree fetch, per-layer
// request/serve/respond exchanges, and NeighborSampler's relabelling on the requester.
#include "sampling/dist_sampler.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <utility>

#include "core/error.h"
#include "core/parallel.h"
#include "core/varint.h"
#include "sampling/sample_wire.h"

namespace tessel::sampling {

namespace {

template <typename T>
std::vector<int64_t> Prefix(const std::vector<T>& counts) {
  std::vector<int64_t> p(counts.size() + 1, 0);
  for (size_t j = 0; j < counts.size(); ++j) p[j + 1] = p[j] + static_cast<int64_t>(counts[j]);
  return p;
}

// Typed all-to-alls over the byte exchange (counts in elements, one per rank), on the wire exactly as
// comm::Communicator::Alltoallv and AlltoallvWithCounts send them: the counts as one int64 per rank pair, then the
// elements.
template <typename T>
void Alltoallv(SampleExchange& ex, std::span<const T> send, std::span<const int64_t> send_counts, std::span<T> recv,
               std::span<const int64_t> recv_counts) {
  static_assert(std::is_trivially_copyable_v<T>, "sent as raw bytes");
  const auto parts = static_cast<size_t>(ex.Size());
  TESSEL_CHECK(send_counts.size() == parts && recv_counts.size() == parts,
               "sampling: an exchange needs one count per rank ({}), got {} and {}", parts, send_counts.size(),
               recv_counts.size());
  std::vector<int64_t> send_bytes(parts);
  std::vector<int64_t> recv_bytes(parts);
  for (size_t j = 0; j < parts; ++j) {
    send_bytes[j] = send_counts[j] * static_cast<int64_t>(sizeof(T));
    recv_bytes[j] = recv_counts[j] * static_cast<int64_t>(sizeof(T));
  }
  ex.Alltoallv(send.data(), send_bytes, recv.data(), recv_bytes);
}

template <typename T>
void AlltoallvWithCounts(SampleExchange& ex, std::span<const T> send, std::span<const int64_t> send_counts,
                         std::vector<T>* recv, std::vector<int64_t>* recv_counts) {
  const auto parts = static_cast<size_t>(ex.Size());
  const std::vector<int64_t> one(parts, 1);
  recv_counts->assign(parts, 0);
  Alltoallv<int64_t>(ex, send_counts, one, *recv_counts, one);
  int64_t total = 0;
  for (int64_t c : *recv_counts) total += c;
  recv->resize(static_cast<size_t>(total));
  Alltoallv<T>(ex, send, send_counts, *recv, *recv_counts);
}

}  // namespace

int32_t VirtualParts::SubSteps() const {
  int32_t most = 0;
  for (size_t r = 0; r + 1 < first.size(); ++r) most = std::max(most, first[r + 1] - first[r]);
  return most;
}

int32_t VirtualParts::PartOf(int64_t global_id) const {
  return static_cast<int32_t>(std::upper_bound(part_offsets.begin(), part_offsets.end(), global_id) -
                              part_offsets.begin() - 1);
}

int32_t BlockIdMap::FindOrInsert(int64_t key, int32_t value) {
  if (static_cast<size_t>(size_ + 1) * 2 > keys_.size()) Rehash(std::max<size_t>(64, keys_.size() * 2));
  const size_t mask = keys_.size() - 1;
  for (size_t i = Mix64(static_cast<uint64_t>(key)) & mask;; i = (i + 1) & mask) {
    if (keys_[i] == key) return values_[i];
    if (keys_[i] < 0) {
      keys_[i] = key;
      values_[i] = value;
      ++size_;
      return -1;
    }
  }
}

void BlockIdMap::Clear() {
  if (size_ == 0) return;
  // A table more than 16 times what the last block inserted shrinks back; otherwise one pass over it (at most 4 slots
  // per id inserted, as the table is at least a quarter full after growing).
  if (keys_.size() > 16 * static_cast<size_t>(size_) && keys_.size() > 64) {
    keys_ = std::vector<int64_t>();
    values_ = std::vector<int32_t>();
  } else {
    std::fill(keys_.begin(), keys_.end(), -1);
  }
  size_ = 0;
}

void BlockIdMap::Rehash(size_t capacity) {
  std::vector<int64_t> keys(capacity, -1);
  std::vector<int32_t> values(capacity, 0);
  const size_t mask = capacity - 1;
  for (size_t j = 0; j < keys_.size(); ++j) {
    if (keys_[j] < 0) continue;
    size_t i = Mix64(static_cast<uint64_t>(keys_[j])) & mask;
    while (keys[i] >= 0) i = (i + 1) & mask;
    keys[i] = keys_[j];
    values[i] = values_[j];
  }
  keys_ = std::move(keys);
  values_ = std::move(values);
}

DistNeighborSampler::DistNeighborSampler(const OwnedGraph& part, std::vector<int64_t> offsets,
                                         std::unique_ptr<SampleExchange> exchange, SamplerOptions options,
                                         SkewOptions skew, VirtualParts virtual_parts)
    : part_(part),
      offsets_(std::move(offsets)),
      exchange_(std::move(exchange)),
      options_(std::move(options)),
      skew_(skew),
      virtual_(std::move(virtual_parts)) {
  static_assert(sizeof(WireEntry) == 16 && std::is_trivially_copyable_v<WireEntry>, "sent as raw bytes");
  TESSEL_CHECK(exchange_ != nullptr, "sampling: no exchange given");
  rank_ = exchange_->Rank();
  options_.Validate();
  skew_.Validate();
  const int parts = exchange_->Size();
  TESSEL_CHECK(part_.num_parts == parts && part_.part == rank_,
               "sampling: rank {} of {} holds part {} of {} (run one rank per part, rank k loading part k)", rank_,
               parts, part_.part, part_.num_parts);
  TESSEL_CHECK(static_cast<int>(offsets_.size()) == parts + 1 && offsets_.front() == 0,
               "sampling: {} node range offsets for {} parts (give partitions.json's node_ranges: K + 1 offsets "
               "from 0)",
               offsets_.size(), parts);
  for (size_t k = 0; k + 1 < offsets_.size(); ++k) {
    TESSEL_CHECK(offsets_[k] <= offsets_[k + 1], "sampling: node range offsets decrease at part {}", k);
  }
  TESSEL_CHECK(offsets_[static_cast<size_t>(rank_)] == part_.global_offset &&
                   offsets_[static_cast<size_t>(rank_) + 1] - part_.global_offset == part_.num_owned,
               "sampling: part {} owns [{}, {}) but the node ranges say [{}, {}) (offsets from another partition?)",
               rank_, part_.global_offset, part_.global_offset + part_.num_owned, offsets_[static_cast<size_t>(rank_)],
               offsets_[static_cast<size_t>(rank_) + 1]);
  TESSEL_CHECK(offsets_.back() <= INT32_MAX, "sampling: {} nodes do not fit 32-bit block ids", offsets_.back());
  const int64_t num_local = part_.num_local();
  const std::span<const int64_t> indptr = part_.adj.indptr;
  const std::span<const int32_t> indices = part_.adj.indices;
  const std::span<const int32_t> halo_owner = part_.halo_owner;
  TESSEL_CHECK(static_cast<int64_t>(indptr.size()) == num_local + 1 &&
                   static_cast<int64_t>(indices.size()) == indptr.back() &&
                   static_cast<int64_t>(halo_owner.size()) == part_.num_halo &&
                   static_cast<int64_t>(part_.halo_remote.size()) == part_.num_halo,
               "sampling: part {} has inconsistent sizes (load it with LoadPart, which validates it)", rank_);

  // Halo entries checked once, so GlobalOf needs no checks; owned rows with columns sorted by global id.
  const std::span<const int64_t> halo_remote = part_.halo_remote;
  for (int64_t h = 0; h < part_.num_halo; ++h) {
    const int32_t o = halo_owner[static_cast<size_t>(h)];
    const int64_t r = halo_remote[static_cast<size_t>(h)];
    TESSEL_CHECK(o >= 0 && o < parts && o != rank_ && r >= 0 &&
                     r < offsets_[static_cast<size_t>(o) + 1] - offsets_[static_cast<size_t>(o)],
                 "sampling: halo node {} of part {} names owner {} and remote id {}, outside the node ranges "
                 "(offsets from another partition?)",
                 h, rank_, o, r);
  }
  const int64_t owned_entries = indptr[part_.num_owned];
  cols_.resize(static_cast<size_t>(owned_entries));
  degree_.assign(static_cast<size_t>(num_local), 0);
  parallel_for<int64_t>(0, part_.num_owned, 1024, [&](int64_t u) {
    const auto begin = static_cast<size_t>(indptr[u]);
    const auto end = static_cast<size_t>(indptr[u + 1]);
    const auto first = cols_.begin() + static_cast<std::ptrdiff_t>(begin);
    const auto last = cols_.begin() + static_cast<std::ptrdiff_t>(end);
    std::copy(indices.begin() + static_cast<std::ptrdiff_t>(begin), indices.begin() + static_cast<std::ptrdiff_t>(end),
              first);
    // Owned columns keep their order (global = offset + local); only rows with halo columns need the translation.
    if (std::any_of(first, last, [&](int32_t c) { return c >= part_.num_owned; })) {
      std::sort(first, last, [&](int32_t a, int32_t b) { return GlobalOf(a) < GlobalOf(b); });
    } else {
      std::sort(first, last);
    }
    int64_t d = 0;
    for (size_t e = begin; e < end; ++e) d += cols_[e] != u ? 1 : 0;
    TESSEL_CHECK(d <= INT32_MAX, "sampling: node {} has {} neighbours", u, d);
    degree_[static_cast<size_t>(u)] = static_cast<int32_t>(d);
  });
  FetchHaloDegrees();
  if (virtual_.Active()) {
    SetUpVirtualParts();
    return;
  }
  const SkewedPolicy mine = SkewedPolicy::FromColumns(cols_, part_.num_owned, rank_, part_.halo_owner, rank_, skew_);
  for (int32_t j = 0; j < parts; ++j) policies_.push_back(mine.WithLocalPart(j));
}

void DistNeighborSampler::SetUpVirtualParts() {
  const std::vector<int64_t>& po = virtual_.part_offsets;
  const std::vector<int32_t>& first = virtual_.first;
  const int32_t k = virtual_.Parts();
  bool ok = static_cast<int>(first.size()) == exchange_->Size() + 1 && k >= exchange_->Size() && first.front() == 0 &&
            first.back() == k && po.front() == 0 && po.back() == offsets_.back();
  for (size_t r = 0; ok && r + 1 < first.size(); ++r) {
    ok = first[r] < first[r + 1] && po[static_cast<size_t>(first[r])] == offsets_[r];
  }
  for (size_t p = 0; ok && p + 1 < po.size(); ++p) ok = po[p] <= po[p + 1];
  TESSEL_CHECK(ok,
               "sampling: virtual parts ({} parts in {} runs) do not fit the {} ranks' node ranges (give the folder's "
               "node_ranges and partition::GroupParts' runs)",
               k, first.size() - 1, exchange_->Size());
  node_part_.resize(static_cast<size_t>(part_.num_local()));
  for (int64_t c = 0; c < part_.num_local(); ++c) node_part_[static_cast<size_t>(c)] = virtual_.PartOf(GlobalOf(c));
  const SkewedPolicy mine = SkewedPolicy::FromNodeParts(cols_, node_part_, 0, skew_);
  for (int32_t p = 0; p < k; ++p) policies_.push_back(mine.WithLocalPart(p));
}

int64_t DistNeighborSampler::GlobalOf(int64_t local) const {
  if (local < part_.num_owned) return part_.global_offset + local;
  const auto h = static_cast<size_t>(local - part_.num_owned);
  return offsets_[static_cast<size_t>(part_.halo_owner[h])] + part_.halo_remote[h];
}

int64_t DistNeighborSampler::MemoryBytes() const {
  return static_cast<int64_t>(cols_.capacity() * sizeof(int32_t) + degree_.capacity() * sizeof(int32_t) +
                              policies_.capacity() * sizeof(SkewedPolicy) + offsets_.capacity() * sizeof(int64_t) +
                              node_part_.capacity() * sizeof(int32_t)) +
         block_id_.MemoryBytes();
}

int32_t DistNeighborSampler::OwnerOf(int64_t global_id) const {
  TESSEL_CHECK(global_id >= 0 && global_id < offsets_.back(), "sampling: node {} outside [0, {})", global_id,
               offsets_.back());
  return static_cast<int32_t>(std::upper_bound(offsets_.begin(), offsets_.end(), global_id) - offsets_.begin() - 1);
}

void DistNeighborSampler::FetchHaloDegrees() {
  const auto parts = static_cast<size_t>(exchange_->Size());
  const std::span<const int32_t> halo_owner = part_.halo_owner;
  const std::span<const int64_t> halo_remote = part_.halo_remote;
  std::vector<int64_t> counts(parts, 0);
  for (int32_t o : halo_owner) ++counts[static_cast<size_t>(o)];  // checked in the constructor
  const std::vector<int64_t> start = Prefix(counts);
  std::vector<int64_t> request(halo_owner.size());
  std::vector<int64_t> slot(halo_owner.size());  // halo j -> position in request (grouped by owner)
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
  for (size_t j = 0; j < halo_owner.size(); ++j) {
    const auto pos = static_cast<size_t>(fill[static_cast<size_t>(halo_owner[j])]++);
    request[pos] = halo_remote[j];
    slot[j] = static_cast<int64_t>(pos);
  }
  std::vector<int64_t> asked;
  std::vector<int64_t> asked_counts;
  AlltoallvWithCounts<int64_t>(*exchange_, request, counts, &asked, &asked_counts);
  std::vector<int64_t> degrees(asked.size());
  for (size_t i = 0; i < asked.size(); ++i) {
    TESSEL_CHECK(asked[i] >= 0 && asked[i] < part_.num_owned,
                 "sampling: a peer asked part {} for local node {} of {} (the parts come from different partitions)",
                 rank_, asked[i], part_.num_owned);
    degrees[i] = degree_[static_cast<size_t>(asked[i])];
  }
  std::vector<int64_t> answers(request.size());
  Alltoallv<int64_t>(*exchange_, degrees, asked_counts, answers, counts);
  for (size_t j = 0; j < halo_owner.size(); ++j) {
    const int64_t d = answers[static_cast<size_t>(slot[j])];
    TESSEL_CHECK(d >= 0 && d <= INT32_MAX, "sampling: the owner of halo node {} sent degree {}", j, d);
    degree_[static_cast<size_t>(part_.num_owned) + j] = static_cast<int32_t>(d);
  }
}

void DistNeighborSampler::Serve(std::span<const int64_t> rows, int32_t requester, const StreamKey& layer_key,
                                int fanout, bool skewed, std::vector<WireEntry>* out) const {
  const auto m = static_cast<int64_t>(rows.size());
  if (m == 0) return;
  TESSEL_CHECK(requester >= 0 && static_cast<size_t>(requester) < policies_.size(),
               "sampling: {} rows asked in an empty virtual sub-step (ranks out of step?)", m);
  const bool gcn = options_.aggregation == Aggregation::kGcn;
  const std::span<const int64_t> indptr = part_.adj.indptr;
  StreamKey k = layer_key;
  k.rank = static_cast<uint64_t>(requester);
  const uint64_t base = Rng(k)();
  static const UniformPolicy kUniform;
  const PickPolicy& policy =
      skewed ? static_cast<const PickPolicy&>(policies_[static_cast<size_t>(requester)]) : kUniform;
  constexpr int64_t kChunk = 64;
  const int64_t chunks = (m + kChunk - 1) / kChunk;
  std::vector<std::vector<WireEntry>> parts(static_cast<size_t>(chunks));
  parallel_for<int64_t>(0, chunks, 1, [&](int64_t c) {
    std::vector<double> scratch;
    std::vector<Pick> picks;
    std::vector<WireEntry>& dst = parts[static_cast<size_t>(c)];
    for (int64_t i = c * kChunk; i < std::min(m, (c + 1) * kChunk); ++i) {
      const int64_t u = rows[static_cast<size_t>(i)];
      const int64_t gu = part_.global_offset + u;
      Rng rng(Mix64(base ^ Mix64(static_cast<uint64_t>(gu))));
      picks.clear();
      PickRow(u, indptr[u], indptr[u + 1] - indptr[u], fanout, options_.replace, policy, rng, &scratch, &picks);
      const double du = NormDegree(u);
      const size_t header = dst.size();
      dst.push_back({gu, gcn ? static_cast<float>(1.0 / du) : 0.0F, 0});
      for (const Pick& p : picks) {
        const int32_t v = cols_[static_cast<size_t>(indptr[u] + p.offset)];
        if (v == u) continue;  // self-loops are not neighbours (the GCN self term is exact)
        const double a = gcn ? 1.0 / std::sqrt(du * NormDegree(v)) : 1.0 / du;
        dst.push_back({GlobalOf(v), static_cast<float>(a * p.factor), 0});
      }
      dst[header].count = static_cast<int32_t>(dst.size() - header - 1);
    }
  });
  size_t total = out->size();
  for (const auto& p : parts) total += p.size();
  out->reserve(total);
  for (const auto& p : parts) out->insert(out->end(), p.begin(), p.end());
}

std::vector<Block> DistNeighborSampler::Sample(std::span<const int64_t> seeds, const StreamKey& key) {
  return Sample(seeds, key, true);
}

std::vector<Block> DistNeighborSampler::Sample(std::span<const int64_t> seeds, const StreamKey& key, bool skewed,
                                               std::span<const int> fanouts) {
  if (fanouts.empty()) fanouts = options_.fanouts;
  TESSEL_CHECK(fanouts.size() == options_.fanouts.size(), "sampling: {} fanouts for a sampler of {} layers",
               fanouts.size(), options_.fanouts.size());
  for (int f : fanouts) TESSEL_CHECK(f == -1 || f >= 1, "sampling: {} is not a fanout", f);
  if (virtual_.Active()) {
    const int64_t sub = static_cast<int64_t>(key.rank) - virtual_.first[static_cast<size_t>(rank_)];
    TESSEL_CHECK(sub >= 0 && sub < virtual_.SubSteps() && (seeds.empty() || sub < virtual_.Count(rank_)),
                 "sampling: the stream key names part {} but rank {} holds parts {} to {} (key.rank = its first part + "
                 "the sub-step, seeds only for a part it holds)",
                 key.rank, rank_, virtual_.first[static_cast<size_t>(rank_)],
                 virtual_.first[static_cast<size_t>(rank_) + 1] - 1);
    sub_ = static_cast<int32_t>(sub);
  } else {
    TESSEL_CHECK(key.rank == static_cast<uint64_t>(rank_),
                 "sampling: the stream key names rank {} but this is rank {} (owners sample a requester's rows with "
                 "the requester's rank in the key: set key.rank = comm.Rank())",
                 key.rank, rank_);
  }
  const int64_t end = part_.global_offset + part_.num_owned;
  for (int64_t s : seeds) {
    TESSEL_CHECK(s >= part_.global_offset && s < end, "sampling: seed node {} is not owned by rank {} ([{}, {}))", s,
                 rank_, part_.global_offset, end);
  }
  stats_ = SampleStats{};
  stats_.seeds = static_cast<int64_t>(seeds.size());
  const int layers = static_cast<int>(fanouts.size());
  std::vector<Block> blocks(static_cast<size_t>(layers));
  std::vector<int64_t> dst(seeds.begin(), seeds.end());
  for (int l = layers - 1; l >= 0; --l) {
    StreamKey k = key;
    k.purpose += static_cast<uint64_t>(l);
    blocks[static_cast<size_t>(l)] = SampleLayer(dst, fanouts[static_cast<size_t>(l)], k, skewed);
    dst = blocks[static_cast<size_t>(l)].src_nodes;
  }
  const Block& input = blocks.front();
  stats_.input_nodes = input.num_src();
  for (int64_t v : input.src_nodes) stats_.remote_input_nodes += v >= part_.global_offset && v < end ? 0 : 1;
  stats_.remote_pick_share = stats_.sampled_edges > 0
                                 ? static_cast<double>(stats_.remote_picks) / static_cast<double>(stats_.sampled_edges)
                                 : 0.0;
  return blocks;
}

DistNeighborSampler::LayerRequests DistNeighborSampler::GroupByOwner(std::span<const int64_t> dst) {
  const auto m = static_cast<int64_t>(dst.size());
  const auto parts = static_cast<size_t>(exchange_->Size());
  LayerRequests r;
  r.owner.resize(static_cast<size_t>(m));
  r.counts.assign(parts, 0);
  block_id_.Clear();
  for (int64_t i = 0; i < m; ++i) {
    r.owner[static_cast<size_t>(i)] = OwnerOf(dst[static_cast<size_t>(i)]);
    if (block_id_.FindOrInsert(dst[static_cast<size_t>(i)], static_cast<int32_t>(i)) >= 0) {
      block_id_.Clear();
      throw Error(fmt::format("sampling: destination node {} is listed twice", dst[static_cast<size_t>(i)]));
    }
    ++r.counts[static_cast<size_t>(r.owner[static_cast<size_t>(i)])];
  }
  r.own_rows.reserve(static_cast<size_t>(r.counts[static_cast<size_t>(rank_)]));
  std::vector<int64_t> fill = Prefix(r.counts);
  r.request.resize(static_cast<size_t>(fill.back() - r.counts[static_cast<size_t>(rank_)]));
  for (size_t j = static_cast<size_t>(rank_) + 1; j < fill.size(); ++j) fill[j] -= r.counts[static_cast<size_t>(rank_)];
  for (int64_t i = 0; i < m; ++i) {
    const int32_t o = r.owner[static_cast<size_t>(i)];
    if (o == rank_) {
      r.own_rows.push_back(dst[static_cast<size_t>(i)] - part_.global_offset);
    } else {
      r.request[static_cast<size_t>(fill[static_cast<size_t>(o)]++)] = dst[static_cast<size_t>(i)];
    }
  }
  r.counts[static_cast<size_t>(rank_)] = 0;
  stats_.remote_rows += static_cast<int64_t>(r.request.size());
  return r;
}

DistNeighborSampler::LayerAnswers DistNeighborSampler::ExchangeRequests(const LayerRequests& r, int fanout,
                                                                        const StreamKey& layer_key, bool skewed) {
  const auto parts = static_cast<size_t>(exchange_->Size());
  const bool gcn = options_.aggregation == Aggregation::kGcn;
  const std::vector<int64_t> group = Prefix(r.counts);  // owner j's requests: request[group[j], group[j + 1])
  const auto requests_to = [&](size_t j) {
    return std::span<const int64_t>(r.request).subspan(static_cast<size_t>(group[j]), static_cast<size_t>(r.counts[j]));
  };
  std::vector<std::byte> request_wire;
  std::vector<int64_t> request_wire_counts(parts, 0);
  for (size_t j = 0; j < parts; ++j) {
    const size_t before = request_wire.size();
    EncodeIds(requests_to(j), offsets_[j], &request_wire);
    request_wire_counts[j] = static_cast<int64_t>(request_wire.size() - before);
  }
  const uint64_t bytes0 = exchange_->SentBytes();
  std::vector<std::byte> asked_wire;
  std::vector<int64_t> asked_wire_counts;
  AlltoallvWithCounts<std::byte>(*exchange_, request_wire, request_wire_counts, &asked_wire, &asked_wire_counts);
  const uint64_t bytes1 = exchange_->SentBytes();
  std::vector<std::byte> answer_wire;
  std::vector<int64_t> answer_wire_counts(parts, 0);
  std::vector<int64_t> rows;
  std::vector<WireEntry> served;
  size_t served_entries = 0;
  int64_t wire_at = 0;
  for (size_t j = 0; j < parts; ++j) {
    rows.clear();
    DecodeIds(asked_wire.data(), wire_at, wire_at + asked_wire_counts[j], part_.global_offset, static_cast<int>(j),
              &rows);
    wire_at += asked_wire_counts[j];
    for (int64_t& g : rows) {
      TESSEL_CHECK(g >= part_.global_offset && g < part_.global_offset + part_.num_owned,
                   "sampling: rank {} asked rank {} for node {}, which it does not own", j, rank_, g);
      g -= part_.global_offset;
    }
    served.clear();
    Serve(rows, RequesterPart(static_cast<int32_t>(j)), layer_key, fanout, skewed, &served);
    served_entries += served.size();
    const size_t before = answer_wire.size();
    EncodeAnswer(served, gcn, &answer_wire);
    answer_wire_counts[j] = static_cast<int64_t>(answer_wire.size() - before);
    stats_.served_rows += static_cast<int64_t>(rows.size());
  }
  std::vector<std::byte> received_wire;
  std::vector<int64_t> received_wire_counts;
  AlltoallvWithCounts<std::byte>(*exchange_, answer_wire, answer_wire_counts, &received_wire, &received_wire_counts);
  stats_.request_bytes += bytes1 - bytes0;
  stats_.response_bytes += exchange_->SentBytes() - bytes1;
  stats_.raw_bytes += (exchange_->SentBytes() - bytes0) - request_wire.size() - answer_wire.size() +
                      sizeof(int64_t) * r.request.size() + sizeof(WireEntry) * served_entries;
  // Back to entries per owner, in request order (what the relabelling reads).
  LayerAnswers a;
  a.counts.assign(parts, 0);
  wire_at = 0;
  for (size_t j = 0; j < parts; ++j) {
    const size_t before = a.received.size();
    DecodeAnswer(received_wire.data(), wire_at, wire_at + received_wire_counts[j], requests_to(j), gcn,
                 static_cast<int>(j), &a.received);
    wire_at += received_wire_counts[j];
    a.counts[j] = static_cast<int64_t>(a.received.size() - before);
  }
  return a;
}

Block DistNeighborSampler::Relabel(std::span<const int64_t> dst, const LayerRequests& r, const LayerAnswers& a,
                                   std::span<const WireEntry> own) {
  const auto m = static_cast<int64_t>(dst.size());
  const bool gcn = options_.aggregation == Aggregation::kGcn;
  const std::vector<WireEntry>& received = a.received;
  const std::vector<int64_t> ends = Prefix(a.counts);
  std::vector<int64_t> cursor(ends.begin(), ends.end() - 1);
  size_t own_cursor = 0;
  Block block;
  block.num_dst = m;
  block.src_nodes.assign(dst.begin(), dst.end());
  std::vector<int64_t> out_p(static_cast<size_t>(m + 1), 0);
  std::vector<int32_t> out_i;
  std::vector<float> out_v;
  out_i.reserve(received.size() + own.size());
  out_v.reserve(out_i.capacity());
  // A pick is remote when another part owns it: another rank's, or with virtual parts another part than the one
  // sampled for (what the K-rank run counts).
  int64_t own_begin = part_.global_offset;
  int64_t own_end = own_begin + part_.num_owned;
  if (virtual_.Active()) {
    const int32_t p = RequesterPart(rank_);  // -1: an empty sub-step (m == 0), nothing is owned
    own_begin = p < 0 ? 0 : virtual_.part_offsets[static_cast<size_t>(p)];
    own_end = p < 0 ? 0 : virtual_.part_offsets[static_cast<size_t>(p) + 1];
  }
  for (int64_t i = 0; i < m; ++i) {
    const int32_t o = r.owner[static_cast<size_t>(i)];
    const size_t at = o == rank_ ? own_cursor : static_cast<size_t>(cursor[static_cast<size_t>(o)]);
    const size_t avail = o == rank_ ? own.size() - at : static_cast<size_t>(ends[static_cast<size_t>(o) + 1]) - at;
    const WireEntry* e = avail > 0 ? (o == rank_ ? own.data() : received.data()) + at : nullptr;
    TESSEL_CHECK(e != nullptr && e->node == dst[static_cast<size_t>(i)] && e->count >= 0 &&
                     static_cast<size_t>(e->count) < avail,
                 "sampling: rank {} sent a malformed answer for node {} (ranks out of step?)", o,
                 dst[static_cast<size_t>(i)]);
    const auto n = static_cast<size_t>(e->count) + 1;
    if (o == rank_) {
      own_cursor += n;
    } else {
      cursor[static_cast<size_t>(o)] += static_cast<int64_t>(n);
    }
    if (gcn) {
      out_i.push_back(static_cast<int32_t>(i));
      out_v.push_back(e->weight);
    }
    for (size_t q = 1; q < n; ++q) {
      const int64_t v = e[q].node;
      TESSEL_CHECK(v >= 0 && v < offsets_.back(), "sampling: rank {} returned node {} outside [0, {})", o, v,
                   offsets_.back());
      int32_t lid = block_id_.FindOrInsert(v, static_cast<int32_t>(block.src_nodes.size()));
      if (lid < 0) {
        lid = static_cast<int32_t>(block.src_nodes.size());
        block.src_nodes.push_back(v);
      }
      out_i.push_back(lid);
      out_v.push_back(e[q].weight);
      stats_.remote_picks += v >= own_begin && v < own_end ? 0 : 1;
    }
    stats_.sampled_edges += e->count;
    out_p[static_cast<size_t>(i) + 1] = static_cast<int64_t>(out_i.size());
  }
  block_id_.Clear();
  block.adj = kernels::SparseMatrix{m, block.num_src(), Buffer<int64_t>(std::move(out_p)),
                                    Buffer<int32_t>(std::move(out_i)), Buffer<float>(std::move(out_v))};
  return block;
}

Block DistNeighborSampler::SampleLayer(std::span<const int64_t> dst, int fanout, const StreamKey& layer_key,
                                       bool skewed) {
  const LayerRequests requests = GroupByOwner(dst);
  const LayerAnswers answers = ExchangeRequests(requests, fanout, layer_key, skewed);
  std::vector<WireEntry> own;
  Serve(requests.own_rows, RequesterPart(rank_), layer_key, fanout, skewed, &own);
  return Relabel(dst, requests, answers, own);
}

}  // namespace tessel::sampling
