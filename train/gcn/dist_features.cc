// DistFeatureStore and HaloExchanger: owned feature rows, a static halo cache chosen by in-part degree, batched
// row requests to the owners and halo exchange. How rows travel (ids by one alltoallv, rows back by another; sparse
// rows as CSR; compressed rows) is train/gcn/row_exchange.cc.
#include "train/gcn/dist_features.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/device.h"
#include "core/error.h"
#include "core/memory_budget.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "train/gcn/row_exchange.h"

namespace tessel::train::gcn {
namespace {

constexpr std::string_view kCachePurpose = "feature_cache";
constexpr std::string_view kFetchPurpose = "features";
constexpr std::string_view kHaloPurpose = "halo_exchange";

size_t Index(int64_t i) { return static_cast<size_t>(i); }

void CheckRanks(const partition::LocalPart& part, const comm::Communicator& comm, std::string_view what) {
  TESSEL_CHECK(comm.Size() == part.num_parts,
               "{}: {} ranks for a partition of {} parts (run one rank per part: mpirun -np {})", what, comm.Size(),
               part.num_parts, part.num_parts);
  TESSEL_CHECK(comm.Rank() == part.part, "{}: rank {} holds part {} (rank r must load part r)", what, comm.Rank(),
               part.part);
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

int64_t MachineCacheBudget(int64_t available_bytes, int local_ranks, int64_t owned_bytes) {
  if (available_bytes < 0) return std::max<int64_t>(0, owned_bytes) / 2;
  return available_bytes / (kMachineShare * std::max(1, local_ranks));
}

int64_t AvailableForCache() {
  int64_t available = memory::AvailableBytes();
  if (const int64_t limit = memory::Limit(); limit > 0) {
    const int64_t room = std::max<int64_t>(0, limit - memory::ResidentBytes());
    available = available < 0 ? room : std::min(available, room);
  }
  return available;
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
  cache_ = row_exchange::EmptyRows(owned_.cols(), owned_.is_sparse);
  const int64_t row_bytes = RowBytesForBudget(owned_);
  int64_t capacity = cache.capacity;
  if (capacity == FeatureCacheOptions::kFromBudget) {
    const int64_t budget = cache.budget_bytes >= 0
                               ? cache.budget_bytes
                               : MachineCacheBudget(AvailableForCache(), comm.LocalSize(), FeatureBytes(owned_));
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
      (void)row_exchange::RequestRows(comm, owned_, slice, counts, kCachePurpose, &received, nullptr, nullptr,
                                      cache_.dense.Mut().data() + b * c);
    } else {
      pieces.push_back(row_exchange::RequestRows(comm, owned_, slice, counts, kCachePurpose, &received).sparse);
    }
  }
  if (owned_.is_sparse) cache_.sparse = row_exchange::ConcatRows(pieces, c);
  setup_bytes_ = static_cast<int64_t>(comm.Bytes().Bytes(kCachePurpose) - before);
}

std::unique_ptr<comm::Codec> MakeRowCodec(const comm::CompressSpec& spec, int64_t cols) {
  if (spec.method == comm::CompressMethod::kNone) return nullptr;
  TESSEL_CHECK(comm::TakesRows(spec.method), "--feature-compress {}: feature rows take {} (one scale per row)",
               spec.ToString(), comm::RowCodecForms());
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
  std::vector<row_exchange::RowRef> refs;
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
  parallel_for<int64_t>(0, n, row_exchange::kGrain, [&](int64_t i) {
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
  parallel_for<int64_t>(0, n, row_exchange::kGrain, [&](int64_t i) {
    row_exchange::RowRef& r = plan.refs[Index(i)];
    if (r.source == kRemote) {
      r.row = std::lower_bound(remote.begin(), remote.end(), global_ids[Index(i)]) - remote.begin();
    }
  });
  return plan;
}

// Adds the rows fetched from other ranks, their payload bytes and the compression's figures (z) to *stats.
void AddReceived(int64_t fetched_rows, int64_t received, const FetchStats& z, FetchStats* stats) {
  stats->fetched_rows += fetched_rows;
  stats->fetched_bytes += received;
  stats->sent_raw_bytes += z.sent_raw_bytes;
  stats->sent_wire_bytes += z.sent_wire_bytes;
  stats->encode_seconds += z.encode_seconds;
  stats->decode_seconds += z.decode_seconds;
}

void AddFetchStats(const FetchPlan& plan, int64_t requested, int64_t received, const FetchStats& z, FetchStats* stats) {
  if (stats == nullptr) return;
  stats->requested_rows += requested;
  stats->local_rows += plan.local_rows;
  stats->cache_hits += plan.cache_hits;
  AddReceived(static_cast<int64_t>(plan.remote.size()), received, z, stats);
}

}  // namespace

FeatureMatrix DistFeatureStore::Fetch(std::span<const int64_t> global_ids, FetchStats* stats, uint64_t step) {
  const FetchPlan plan = PlanFetch(global_ids, offsets_, global_offset_, num_owned(), cached_ids_);
  int64_t received = 0;
  FetchStats z_stats;
  const RowCompression z = StepCompression(step);
  const FeatureMatrix fetched = row_exchange::RequestRows(*comm_, owned_, plan.want, plan.want_counts, kFetchPurpose,
                                                          &received, codec_ ? &z : nullptr, &z_stats);
  const FeatureMatrix* sources[] = {&owned_, &cache_, &fetched};
  FeatureMatrix out = row_exchange::Assemble(sources, plan.refs, cols(), is_sparse());
  AddFetchStats(plan, static_cast<int64_t>(global_ids.size()), received, z_stats, stats);
  return out;
}

FeatureMatrix DistFeatureStore::FetchIndexed(std::span<const int64_t> global_ids, std::vector<int64_t>* rows,
                                             FetchStats* stats, uint64_t step) {
  TESSEL_CHECK(!is_sparse(), "features: an indexed fetch takes dense rows (sparse rows go through Fetch)");
  const FetchPlan plan = PlanFetch(global_ids, offsets_, global_offset_, num_owned(), cached_ids_);
  const int64_t c = cols();
  const auto n = static_cast<int64_t>(global_ids.size());
  const int64_t local = plan.local_rows + plan.cache_hits;
  FeatureMatrix out;
  out.dense = kernels::Matrix(local + static_cast<int64_t>(plan.remote.size()), c);
  float* o = out.dense.Mut().data();
  rows->resize(Index(n));
  int64_t next = 0;
  const float* base[] = {owned_.dense.View().data(), cache_.dense.View().data()};
  for (int64_t i = 0; i < n; ++i) {
    const row_exchange::RowRef r = plan.refs[Index(i)];
    if (r.source == kRemote) {
      (*rows)[Index(i)] = local + r.row;
    } else {
      (*rows)[Index(i)] = next;
      std::copy_n(base[r.source] + r.row * c, c, o + next * c);
      ++next;
    }
  }
  int64_t received = 0;
  FetchStats z_stats;
  const RowCompression z = StepCompression(step);
  (void)row_exchange::RequestRows(*comm_, owned_, plan.want, plan.want_counts, kFetchPurpose, &received,
                                  codec_ ? &z : nullptr, &z_stats, o + local * c);
  AddFetchStats(plan, n, received, z_stats, stats);
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
  (void)row_exchange::RequestRows(*comm_, owned_, plan.want, plan.want_counts, kFetchPurpose, &received,
                                  codec_ ? &z : nullptr, &z_stats, staging);
  float* on_device = table_.dense.data.MutableDevice();  // uploads only a new table
  if (m > 0) device::CopyToDevice(on_device + resident * c, staging, Index(m * c) * sizeof(float));
  table_rows_.resize(Index(n));
  for (int64_t i = 0; i < n; ++i) {
    const row_exchange::RowRef r = plan.refs[Index(i)];
    table_rows_[Index(i)] = r.source == kOwned ? r.row : r.source == kCached ? num_owned() + r.row : resident + r.row;
  }
  AddFetchStats(plan, n, received, z_stats, stats);
  return DeviceRows{&table_, table_rows_};
}

// ---- HaloExchanger

HaloExchanger::HaloExchanger(const partition::LocalPart& part, comm::Communicator& comm, int64_t round_bytes)
    : part_(&part), comm_(&comm), round_bytes_(std::max<int64_t>(1, round_bytes)) {
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
  row_exchange::CheckServed(serve_ids_, part.num_owned, comm.Rank());
  for (int64_t c : want_counts_) max_pair_rows_ = std::max(max_pair_rows_, c);
  for (int64_t c : serve_counts_) max_pair_rows_ = std::max(max_pair_rows_, c);
  comm.Allreduce<int64_t>(std::span<int64_t>(&max_pair_rows_, 1), comm::ReduceOp::kMax, "setup").ThrowIfError();
}

int64_t HaloExchanger::Rounds(int64_t cols) const {
  const int64_t row_bytes = std::max<int64_t>(1, cols) * static_cast<int64_t>(sizeof(float));
  const int64_t per_pair = std::max<int64_t>(1, round_bytes_ / (row_bytes * part_->num_parts));
  return std::max<int64_t>(1, (max_pair_rows_ + per_pair - 1) / per_pair);  // one call even without a halo
}

namespace {

// Output row l < num_owned is owned row l; halo row j is received row i where halo_order[i] = j.
std::vector<row_exchange::RowRef> HaloRefs(const partition::LocalPart& part, std::span<const int64_t> halo_order) {
  std::vector<row_exchange::RowRef> refs(Index(part.num_local()));
  for (int64_t l = 0; l < part.num_owned; ++l) refs[Index(l)] = {0, l};
  for (size_t i = 0; i < halo_order.size(); ++i)
    refs[Index(part.num_owned + halo_order[i])] = {1, static_cast<int64_t>(i)};
  return refs;
}

}  // namespace

kernels::Matrix HaloExchanger::Exchange(const kernels::Matrix& owned) const {
  TESSEL_CHECK(owned.rows == part_->num_owned, "halo exchange: {} rows given for the {} owned nodes of part {}",
               owned.rows, part_->num_owned, part_->part);
  const int64_t c = owned.cols;
  kernels::Matrix out(part_->num_local(), c);
  float* o = out.Mut().data();
  std::copy_n(owned.View().data(), owned.rows * c, o);
  const int64_t rounds = Rounds(c);
  const int64_t per_pair = (max_pair_rows_ + rounds - 1) / rounds;
  const auto parts = Index(part_->num_parts);
  // Round r moves rows [r * per_pair, (r + 1) * per_pair) of every pair's list: the ids served and the halo rows
  // received, each in rank order, into one round's buffers; received rows go to their halo rows of the result.
  std::vector<int64_t> serve_start(parts + 1, 0), want_start(parts + 1, 0);
  for (size_t k = 0; k < parts; ++k) {
    serve_start[k + 1] = serve_start[k] + serve_counts_[k];
    want_start[k + 1] = want_start[k] + want_counts_[k];
  }
  std::vector<int64_t> serve, serve_n(parts), want_n(parts), at;
  std::vector<float> halo;
  int64_t received = 0;
  for (int64_t r = 0; r < rounds; ++r) {
    serve.clear();
    at.clear();
    for (size_t k = 0; k < parts; ++k) {
      const int64_t b = r * per_pair;
      serve_n[k] = std::clamp<int64_t>(serve_counts_[k] - b, 0, per_pair);
      want_n[k] = std::clamp<int64_t>(want_counts_[k] - b, 0, per_pair);
      serve.insert(serve.end(), serve_ids_.begin() + serve_start[k] + b,
                   serve_ids_.begin() + serve_start[k] + b + serve_n[k]);
      for (int64_t i = 0; i < want_n[k]; ++i) at.push_back(want_start[k] + b + i);
    }
    halo.resize(at.size() * Index(c));
    (void)row_exchange::ShipDense(*comm_, owned, serve, serve_n, want_n, kHaloPurpose, &received, halo.data());
    parallel_for<int64_t>(0, c > 0 ? static_cast<int64_t>(at.size()) : 0, row_exchange::kGrain, [&](int64_t i) {
      const int64_t j = halo_order_[Index(at[Index(i)])];
      std::copy_n(halo.data() + i * c, c, o + (part_->num_owned + j) * c);
    });
  }
  return out;
}

FeatureMatrix HaloExchanger::Exchange(const FeatureMatrix& owned) const {
  TESSEL_CHECK(owned.rows() == part_->num_owned, "halo exchange: {} rows given for the {} owned nodes of part {}",
               owned.rows(), part_->num_owned, part_->part);
  int64_t received = 0;
  const FeatureMatrix halo =
      row_exchange::ShipRows(*comm_, owned, serve_ids_, serve_counts_, want_counts_, kHaloPurpose, &received);
  const FeatureMatrix* sources[] = {&owned, &halo};
  return row_exchange::Assemble(sources, HaloRefs(*part_, halo_order_), owned.cols(), owned.is_sparse);
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
  const kernels::Matrix halo = row_exchange::ShipDenseCompressed(*comm_, owned, serve_ids_, serve_counts_, want_counts_,
                                                                 kHaloPurpose, z, &received, &z_stats);
  if (stats != nullptr) AddReceived(row_exchange::Sum(want_counts_), received, z_stats, stats);
  const kernels::Matrix* sources[] = {&owned, &halo};
  return row_exchange::AssembleDense(sources, HaloRefs(*part_, halo_order_), owned.cols);
}

kernels::Matrix HaloExchange(const partition::LocalPart& part, comm::Communicator& comm, const kernels::Matrix& owned) {
  return HaloExchanger(part, comm).Exchange(owned);
}

FeatureMatrix HaloExchange(const partition::LocalPart& part, comm::Communicator& comm, const FeatureMatrix& owned) {
  return HaloExchanger(part, comm).Exchange(owned);
}

}  // namespace tessel::train::gcn
