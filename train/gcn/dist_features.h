// Distributed input features for GCN training on one partition per rank: owned rows kept locally, a cache of
// halo rows filled once, every other row fetched from its owner by one batched all-to-all per step; and halo exchange.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "comm/communicator.h"
#include "comm/compress.h"
#include "core/context.h"
#include "core/pinned_memory.h"
#include "kernels/matrix.h"
#include "partition/partition_build.h"
#include "train/gcn/data.h"

namespace tessel::train::gcn {

// Global ids below are the partition's new global ids: part k owns [offsets[k], offsets[k+1]) (partitions.json
// "node_ranges"); a halo node's global id is offsets[halo_owner[j]] + halo_remote[j].

struct FeatureCacheOptions {
  static constexpr int64_t kFromBudget = -2;
  // Halo rows kept: -1 = every halo node, 0 = no cache, N = the N with the most owned neighbours, kFromBudget = as
  // many as budget_bytes holds.
  int64_t capacity = -1;
  // With kFromBudget: bytes of cached rows; -1 = the machine's share (MachineCacheBudget: the node's available
  // memory now, after the part is loaded, over kMachineShare x the ranks on this host).
  int64_t budget_bytes = -1;
  int64_t fill_round_bytes = int64_t{32} << 20;  // the fill's rounds: row bytes one rank serves a round, at most
};

// The cache budget of one rank when none is given: `available_bytes` (the node's available memory, MemAvailable or
// the cgroup's or --max-memory's room, whichever is least) over kMachineShare x `local_ranks` (the ranks on this
// host), so the cache takes the whole halo whenever the halo fits that share and shrinks only when it does not. The
// other 3/4 of the share stay for what training allocates after the cache (sampled blocks, activations, evaluation).
// `available_bytes` < 0 (unknown): half of `owned_bytes` (the rank's own feature bytes), the rule before.
inline constexpr int64_t kMachineShare = 4;
int64_t MachineCacheBudget(int64_t available_bytes, int local_ranks, int64_t owned_bytes);
// The node's available memory for MachineCacheBudget: memory::AvailableBytes(), lowered to --max-memory minus the
// resident set when --max-memory is set; -1 when unknown.
int64_t AvailableForCache();
// Rows a cache of `budget_bytes` holds at `row_bytes` a row (at least 1), at most `num_halo`.
int64_t CacheRowsForBudget(int64_t budget_bytes, int64_t row_bytes, int64_t num_halo);
// Bytes of one row of `f` for the cache budget: dense cols x 4; sparse the mean row (8 + 8 a stored entry), rounded
// up.
int64_t RowBytesForBudget(const FeatureMatrix& f);

// Counts of Fetch calls; Fetch adds to them, so one struct can sum a whole epoch.
struct FetchStats {
  int64_t requested_rows = 0;  // ids asked for, repeats included
  int64_t local_rows = 0;      // ids served from the owned rows
  int64_t cache_hits = 0;      // ids served from the halo cache
  int64_t fetched_rows = 0;    // distinct rows received from other ranks (a repeated remote id is fetched once)
  int64_t fetched_bytes = 0;   // row payload bytes this rank received (dense: rows x cols x 4; sparse: CSR rows)
  // With compression (SetCompression): row payload this rank sent to other ranks, uncompressed (what the plain
  // format would have sent: dense rows x cols x 4; sparse rows x 8 + nnz x 8) and on the wire; seconds spent
  // encoding the rows it served and decoding the rows it received.
  int64_t sent_raw_bytes = 0;
  int64_t sent_wire_bytes = 0;
  double encode_seconds = 0;
  double decode_seconds = 0;
};

// How fetched rows are compressed: a codec whose block is one row (so int8 keeps a scale per row), and the seed of
// this exchange's stochastic rounding.
struct RowCompression {
  const comm::Codec* codec = nullptr;
  uint64_t seed = 0;
};

// The row codec of --feature-compress for rows of `cols` values (one block per row: int8 keeps one scale per row,
// QSGD one norm); null for none. Throws for the codecs rows do not take (top-k and the allreduce-only methods).
std::unique_ptr<comm::Codec> MakeRowCodec(const comm::CompressSpec& spec, int64_t cols);

class DistFeatureStore {
 public:
  // Prepares the owned rows (PrepareFeatures with `norm`; standard scaling is fitted on the rows of every rank, so
  // a row comes out as the single-process trainer's up to the order of the float64 column sums; without scaling the
  // owned rows are read in place from part.features, no copy, so `part` must outlive the store) and, when the cache
  // has rows, fills the halo cache by batched requests (ids to the owners, rows back, in rounds of at most
  // cache.fill_round_bytes served per rank, so no buffer of the fill is as large as the cache; bytes counted under
  // purpose "feature_cache"). Collective: every rank of `comm` constructs its store together. `offsets` has
  // num_parts + 1 entries and must agree with `part`; `comm` must outlive the store.
  DistFeatureStore(const Context& ctx, const partition::LocalPart& part, std::vector<int64_t> offsets,
                   comm::Communicator& comm, FeatureNorm norm, FeatureCacheOptions cache);
  ~DistFeatureStore();
  DistFeatureStore(const DistFeatureStore&) = delete;
  DistFeatureStore& operator=(const DistFeatureStore&) = delete;

  // Compress the rows Fetch receives from other ranks (--feature-compress): none (the default), fp16, bf16, int8
  // (one scale per row) or qsgd (one norm per row, stochastic rounding keyed by seed, step and rank). Sparse rows
  // travel as varint lengths and zigzag-delta varint column ids with the values encoded. The cache (filled at
  // construction) stays exact; the evaluation's halo exchanges take the same codec through HaloExchanger's
  // compressed Exchange. Every rank must set the same spec.
  void SetCompression(const comm::CompressSpec& spec, uint64_t seed);

  // Rows for `global_ids` in that order, repeats allowed (owned: local copy; cached halo: copy; others: one batched
  // alltoallv of ids then one of rows, purpose "features"; each distinct remote id is fetched once). Collective:
  // every rank calls it once per step, an empty list included. `stats` may be null. `step` keys the stochastic
  // rounding of a compressed fetch (the same on every rank).
  FeatureMatrix Fetch(std::span<const int64_t> global_ids, FetchStats* stats, uint64_t step = 0);

  // Fetch without the second copy (dense features, the host): the rows of `global_ids` in one matrix, the local ones
  // (owned, cached) first, one per mention in order, then the distinct remote ones, received in place (no copy);
  // input i is row (*rows)[i] of the result (Batch::x_rows, read by id inside the model). Fetch's exchange, bytes,
  // compression and statistics; a step holds its input rows once, not also the received ones beside them.
  // Collective, as Fetch.
  FeatureMatrix FetchIndexed(std::span<const int64_t> global_ids, std::vector<int64_t>* rows, FetchStats* stats,
                             uint64_t step = 0);

  // The rows of one step on a device (dense features): row i of the input is row rows[i] of *table, a matrix kept
  // on the device (owned rows, then the cached halo rows, then this step's fetched rows), so the model's first layer
  // gathers them there by id. Valid until the next call.
  struct DeviceRows {
    const FeatureMatrix* table = nullptr;
    std::span<const int64_t> rows;
  };
  // Fetch for --device cuda: the same exchange as Fetch (the same bytes, compression and statistics), but the
  // fetched rows are received into a pinned host array and go up in one copy, behind the owned and cached rows the
  // table holds on the device from the first call on. Nothing is assembled on the host, and nothing is allocated
  // once the table and the pinned array are as large as a step needs (the table's room starts at the first step's
  // row count and grows by half when a step fetches more, up to every row this rank does not hold).
  // Collective, as Fetch. Dense features only.
  DeviceRows FetchToDevice(std::span<const int64_t> global_ids, FetchStats* stats, uint64_t step = 0);

  int64_t cols() const { return owned_.cols(); }
  bool is_sparse() const { return owned_.is_sparse; }
  int64_t cache_rows() const { return static_cast<int64_t>(cached_ids_.size()); }
  // Global ids of the cached halo rows, ascending.
  std::span<const int64_t> cached_ids() const { return cached_ids_; }
  // Bytes this rank sent while filling the cache (purpose "feature_cache"); 0 without a cache.
  int64_t setup_bytes() const { return setup_bytes_; }
  // Exchange rounds the cache fill took (the same on every rank; 0 without a cache).
  int64_t fill_rounds() const { return fill_rounds_; }
  // Whether the owned rows are read in place from the part (no copy: no scaling).
  bool owned_in_place() const { return owned_in_place_; }
  int64_t num_owned() const { return owned_.rows(); }
  int64_t global_offset() const { return global_offset_; }
  // The owned rows (row i = new global id global_offset() + i).
  const FeatureMatrix& owned() const { return owned_; }
  // The evaluation's input: once FetchToDevice has built the device table, the table (its first num_owned() rows
  // are the owned rows; DistEvaluator cuts its products to them), so the owned rows are on the device once, not
  // twice; before, or on the CPU, owned().
  const FeatureMatrix& EvalInput() const { return table_.dense.rows > 0 ? table_ : owned_; }
  const FeatureScaling& scaling() const { return scaling_; }  // what the owned rows were prepared with

 private:
  RowCompression StepCompression(uint64_t step) const;  // the codec and this step's rounding seed

  comm::Communicator* comm_;
  std::vector<int64_t> offsets_;
  int64_t global_offset_ = 0;
  FeatureScaling scaling_;
  FeatureMatrix owned_;
  FeatureMatrix cache_;              // row i = cached_ids_[i]
  std::vector<int64_t> cached_ids_;  // ascending
  int64_t setup_bytes_ = 0;
  int64_t fill_rounds_ = 0;
  bool owned_in_place_ = false;
  std::unique_ptr<comm::Codec> codec_;  // null: fetched rows travel as float32
  uint64_t codec_seed_ = 0;
  // FetchToDevice: the device table (host rows: owned and cached only; the fetched ones exist on the device), the
  // table row of each requested id, and the pinned array the fetched rows arrive in.
  FeatureMatrix table_;
  std::vector<int64_t> table_rows_;
  device::PinnedArray<float> staging_;
};

// Moves rows of per-node matrices from owners to the ranks that hold those nodes as halo (layer-wise full-graph
// inference). The request lists are exchanged once at construction (purpose "halo_exchange", collective), so each
// Exchange of a dense matrix is only its rows' alltoallv (one per round: a single one unless the largest pair's rows
// exceed a round). `part` and `comm` must outlive the exchanger.
class HaloExchanger {
 public:
  // The rows of a dense Exchange travel in rounds of at most `round_bytes` sent and received per rank (each pair of
  // ranks moves up to round_bytes / (ranks x row bytes) rows a round), so its buffers beside the result stay that
  // small whatever the halo; the round count follows from the largest pair's rows, agreed here (one allreduce,
  // purpose "setup"). Collective.
  static constexpr int64_t kRoundBytes = int64_t{8} << 20;
  HaloExchanger(const partition::LocalPart& part, comm::Communicator& comm, int64_t round_bytes = kRoundBytes);

  // owned: [num_owned x c]; returns [num_local x c] = owned rows then the halo rows from their owners, received in
  // bounded rounds straight into the result. Collective; every rank passes the same c.
  kernels::Matrix Exchange(const kernels::Matrix& owned) const;
  // Rounds a dense exchange of `cols` columns takes (the same on every rank).
  int64_t Rounds(int64_t cols) const;
  // The same with every row sent encoded by the row codec of `spec` (MakeRowCodec: one scale per row), through the
  // path of DistFeatureStore's compressed fetches; the halo rows come back decoded (lossy), owned rows are exact.
  // `seed` keys QSGD's rounding (with the rank); every rank passes the same spec and seed. `stats` (may be null)
  // receives the rows and bytes received, the bytes sent raw and on the wire, and the coding seconds. Spec none:
  // the exact Exchange.
  kernels::Matrix Exchange(const kernels::Matrix& owned, const comm::CompressSpec& spec, uint64_t seed,
                           FetchStats* stats) const;
  // The same for input features; sparse rows stay sparse (a count exchange, then one alltoallv of CSR rows).
  FeatureMatrix Exchange(const FeatureMatrix& owned) const;

 private:
  const partition::LocalPart* part_;
  comm::Communicator* comm_;
  std::vector<int64_t> serve_ids_;     // owned local ids this rank sends, grouped by the requesting rank
  std::vector<int64_t> serve_counts_;  // per requesting rank
  std::vector<int64_t> want_counts_;   // halo rows this rank receives from each owner
  std::vector<int64_t> halo_order_;    // received row i (owners in rank order) -> halo index j
  int64_t round_bytes_ = kRoundBytes;
  int64_t max_pair_rows_ = 0;  // the most rows one rank sends another, over every pair of the job
};

// One-shot forms of HaloExchanger (an id exchange, then the rows' alltoallv; purpose "halo_exchange").
// Collective. Returns [num_local x c] = owned rows then halo rows.
kernels::Matrix HaloExchange(const partition::LocalPart& part, comm::Communicator& comm, const kernels::Matrix& owned);
FeatureMatrix HaloExchange(const partition::LocalPart& part, comm::Communicator& comm, const FeatureMatrix& owned);

}  // namespace tessel::train::gcn
