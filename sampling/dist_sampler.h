// Distributed node-wise neighbour sampling over a partitioned graph: each rank samples the rows it owns and asks
// the owners of the other rows in one batched exchange per layer, giving exactly NeighborSampler's blocks.
//
// Design (the trainer and docs/sampling.md build on it):
//
// * Layers. The sampler knows neither the communicator nor the partition format: it reads the part it owns as
//   data (OwnedGraph: spans over the local CSR and the halo map) and exchanges through SampleExchange, an
//   all-to-all of raw bytes. train/gcn/sample_exchange.h builds both from a partition::LocalPart and a
//   comm::Communicator (MakeDistSampler), counting every exchange under kSamplingPurpose.
// * Ids. Blocks carry the partition's NEW global ids: part k owns [offsets[k], offsets[k+1]) (partitions.json
//   "node_ranges"; OwnedGraph::global_offset is this part's start). A halo node's global id is
//   offsets[halo_owner] + halo_remote. Rank r serves part r (exchange.Rank() == part.part, exchange.Size() == K).
// * Rows in global order. A part's rows may come in any order (partition::LocalPart sorts them by LOCAL id:
//   owned first, then halo by original id); the sampler keeps one copy of the owned rows' columns (4 bytes an
//   entry) sorted by GLOBAL id; the owner of an entry is looked up (SkewedPolicy::FromColumns), not stored. Row-wise
//   picks are offsets into a row, so this order is what makes the draws equal to those on the whole relabelled
//   graph. After construction the part's own column array is not read again (the caller may release its pages).
// * Memory is sized by the part and the blocks, never by the global graph: global ids are translated on the fly
//   (owned: global_offset + u; halo j: offsets[halo_owner[j]] + halo_remote[j]) and the block being built maps
//   global ids to block ids in a hash table sized by the block (BlockIdMap); MemoryBytes() reports the total.
// * Degrees. At construction one exchange (purpose "sampling") fetches the degree (entries other than the node
//   itself) of every halo node from its owner, so the GCN weight 1/sqrt((d_u+1)(d_v+1)) of every neighbour of an
//   owned node is known locally.
// * Sample(seeds, key), layer by layer from the seeds backwards: destination rows owned here are sampled here;
//   the other rows are sent as global ids to their owners in one alltoallv per layer (plus one for the counts);
//   the owner samples them and returns, per row, a header (the row's GCN self weight and the number of picks) and
//   the picks as (global neighbour id, float weight = aggregation weight x estimator factor), in one alltoallv
//   (plus counts). The requester then relabels exactly as NeighborSampler does (destination rows first, new
//   source nodes in order of appearance). Four collectives per layer, also when a rank has nothing to send.
// * Streams. The row stream is NeighborSampler's: base = Rng(k)() with k = key, k.purpose += layer, and the row
//   of global id u draws from Rng(Mix64(base ^ Mix64(u))). k.rank is the REQUESTER's rank: an owner serving rank
//   j's rows uses its own key with rank = j. Nothing but the ids travels, so every rank must pass the same key
//   except for `rank`, which must equal exchange.Rank() (checked) -- all ranks are at the same seed, epoch, batch.
// * Skew. Skewed sampling (SkewedPolicy) prefers neighbours owned by the REQUESTER, not by the rank that happens
//   to sample the row: the owner serving rank j uses SkewedPolicy::WithLocalPart(j).
// * Oracle. For rank r, Sample(seeds, key) returns blocks identical (same source order, same float weights) to
//   NeighborSampler on the whole graph in new global ids (each row sorted by global id) with a SkewedPolicy whose
//   edge_owner is the part of each neighbour and local_part = r, called with the same key (key.rank = r).
// * Virtual ranks (VirtualParts; docs/distributed.md, "Fewer ranks than parts"): R ranks hold the K parts of a folder
//   in contiguous runs, rank r parts first[r] .. first[r + 1] - 1, each run as one part of an R-part partition. Each
//   call samples for one part of each rank, the i-th of its run (i = key.rank - first[exchange.Rank()]; a rank with
//   fewer parts passes no seeds), and every draw is the K-rank run's for that part: rank j's rows draw from the key
//   with rank = first[j] + i, and the skew prefers neighbours in that PART (not on the rank). So the blocks equal
//   those that rank first[j] + i of a K-rank run samples for the same seeds and key.
// * Collective: every rank calls Sample the same number of times per step, in the same order; an empty seed
//   list is allowed. One Sample at a time per sampler (it keeps scratch); the sampler is tied to its exchange.
//   After Sample throws (or a peer fails) the ranks are out of step: discard the sampler.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "core/csr_view.h"
#include "core/rng.h"
#include "sampling/block.h"
#include "sampling/neighbor_sampler.h"
#include "sampling/sample_wire.h"
#include "sampling/skewed_policy.h"

namespace tessel::sampling {

// The byte-counter purpose of every sampling exchange (requests, responses, their counts, the degree fetch).
inline constexpr std::string_view kSamplingPurpose = "sampling";

// The part of the graph one rank owns, as the sampler reads it: views (the arrays must outlive the sampler).
// Local ids: owned nodes 0 .. num_owned-1 (new global ids global_offset + u), then halo j at num_owned + j.
struct OwnedGraph {
  int32_t part = 0;  // this part's index; rank `part` serves it
  int32_t num_parts = 1;
  int64_t global_offset = 0;  // new global id of local node 0
  int64_t num_owned = 0;
  int64_t num_halo = 0;
  CsrView<int32_t> adj;                  // num_owned + num_halo rows (halo rows empty), columns in local ids
  std::span<const int32_t> halo_owner;   // part that owns halo j (never this part)
  std::span<const int64_t> halo_remote;  // local id of halo j inside its owner part

  int64_t num_local() const { return num_owned + num_halo; }
};

// The collective the sampler runs on, among the ranks that serve the parts (rank k serves part k).
class SampleExchange {
 public:
  virtual ~SampleExchange() = default;
  virtual int32_t Rank() const = 0;
  virtual int32_t Size() const = 0;
  // COLLECTIVE all-to-all of raw bytes: sends send_bytes[j] bytes (consecutive in `send`, in rank order) to rank
  // j and receives recv_bytes[j] bytes from rank j (consecutive in `recv`, in rank order). Throws on failure;
  // the ranks are then out of step.
  virtual void Alltoallv(const void* send, std::span<const int64_t> send_bytes, void* recv,
                         std::span<const int64_t> recv_bytes) = 0;
  // Bytes this rank has sent to other ranks through Alltoallv so far (SampleStats reports differences).
  virtual uint64_t SentBytes() const = 0;
};

// What one Sample call did, seen from the calling rank (the requester).
struct SampleStats {
  int64_t seeds = 0;
  // Neighbour picks kept in all blocks (the entries of adj other than the GCN self terms; picks of a node's own
  // self-loop are dropped, as in NeighborSampler).
  int64_t sampled_edges = 0;
  // Of those, picks whose neighbour is owned by another rank; remote_pick_share = remote_picks / sampled_edges
  // (0 when nothing was picked). This is the quantity skewed sampling lowers: P_R / (s·P_L + P_R) per draw.
  int64_t remote_picks = 0;
  double remote_pick_share = 0;
  // Source nodes of the input layer (blocks[0]), and how many of them are owned by another rank: the rows whose
  // features the step must fetch.
  int64_t input_nodes = 0;
  int64_t remote_input_nodes = 0;
  int64_t remote_rows = 0;  // destination rows this rank sent to their owners (all layers)
  int64_t served_rows = 0;  // rows this rank sampled on behalf of other ranks (all layers)
  // Bytes this rank sent to other ranks under kSamplingPurpose during the call: the id requests (with their
  // counts) and the pick responses (with their counts), as SampleExchange::SentBytes counts them.
  uint64_t request_bytes = 0;
  uint64_t response_bytes = 0;
  // What request_bytes + response_bytes would have been with 8-byte ids and 16-byte entries (the compact wire
  // format's gain; the counts are the same either way).
  uint64_t raw_bytes = 0;
};

// Global id -> block id of the block being built: open addressing (linear probing), sized by the ids inserted
// since the last Clear (at most half full), not by the graph.
class BlockIdMap {
 public:
  // The value stored for `key` (>= 0), or -1 after storing `value` for it.
  int32_t FindOrInsert(int64_t key, int32_t value);
  // Forgets every key; keeps the table unless it is much larger than what was inserted.
  void Clear();
  int64_t size() const { return size_; }
  int64_t MemoryBytes() const {
    return static_cast<int64_t>(keys_.capacity() * sizeof(int64_t) + values_.capacity() * sizeof(int32_t));
  }

 private:
  void Rehash(size_t capacity);

  std::vector<int64_t> keys_;  // -1 = empty slot
  std::vector<int32_t> values_;
  int64_t size_ = 0;
};

// Where the K parts of a folder lie on R < K ranks (virtual ranks, above): part_offsets are the parts' node ranges
// (K + 1), first (R + 1 entries) the runs of partition::GroupParts. Empty: one part per rank.
struct VirtualParts {
  std::vector<int64_t> part_offsets;
  std::vector<int32_t> first;

  bool Active() const { return !first.empty(); }
  int32_t Parts() const { return static_cast<int32_t>(part_offsets.size()) - 1; }
  // The parts rank r holds, and the most any rank holds (the sub-steps of a step).
  int32_t Count(int32_t rank) const { return first[static_cast<size_t>(rank) + 1] - first[static_cast<size_t>(rank)]; }
  int32_t SubSteps() const;
  // The part of a global id.
  int32_t PartOf(int64_t global_id) const;
};

class DistNeighborSampler {
 public:
  // Keeps the views of `part` (its arrays must outlive the sampler) and owns `exchange`. `offsets` are the parts'
  // node ranges (K + 1 entries, partitions.json "node_ranges"). COLLECTIVE: exchanges the halo degrees. `skew`
  // inactive (the default) samples uniformly; evaluation should pass SkewOptions{}.
  DistNeighborSampler(const OwnedGraph& part, std::vector<int64_t> offsets, std::unique_ptr<SampleExchange> exchange,
                      SamplerOptions options, SkewOptions skew = {}, VirtualParts virtual_parts = {});

  // Blocks for layers 0 .. L-1 (blocks.back().num_dst == seeds.size(), in seed order); src_nodes are global ids.
  // Seeds are distinct global ids owned by this rank; key.rank must equal exchange.Rank() (with virtual parts: the
  // part sampled for, first[exchange.Rank()] + the sub-step). COLLECTIVE (see above).
  std::vector<Block> Sample(std::span<const int64_t> seeds, const StreamKey& key);
  // The same with the skew switched off for this call (every rank passes the same `skewed`): an unbiased uniform
  // sample, as NeighborSampler with UniformPolicy draws it; for sampled evaluation of a skewed run.
  // `fanouts` (one per layer; empty = the options') replaces the options' fanouts for this call.
  std::vector<Block> Sample(std::span<const int64_t> seeds, const StreamKey& key, bool skewed,
                            std::span<const int> fanouts = {});

  // Bytes this sampler holds (columns, degrees, scratch map, policies): sized by the part and the largest block,
  // independent of the global node count.
  int64_t MemoryBytes() const;

  const SampleStats& last_stats() const { return stats_; }
  const SamplerOptions& options() const { return options_; }
  const SkewOptions& skew() const { return skew_; }
  const std::vector<int64_t>& offsets() const { return offsets_; }
  int32_t OwnerOf(int64_t global_id) const;  // the part owning a global id (throws when out of range)
  const VirtualParts& virtual_parts() const { return virtual_; }

 private:
  using WireEntry = sampling::WireEntry;  // one header or pick of a response (sample_wire.h)

  void FetchHaloDegrees();
  // Samples owned rows (local ids) on behalf of the requester whose part is `requester` (its key rank and skew:
  // RequesterPart), appending one header + picks per row to *out.
  void Serve(std::span<const int64_t> rows, int32_t requester, const StreamKey& layer_key, int fanout, bool skewed,
             std::vector<WireEntry>* out) const;
  // One layer's step, for destination rows `dst` (global ids): GroupByOwner, ExchangeRequests, the own rows served
  // here, Relabel.
  Block SampleLayer(std::span<const int64_t> dst, int fanout, const StreamKey& layer_key, bool skewed);
  // A layer's rows by owner: each row's owner, this rank's own rows (local ids) and the requests to the other owners
  // (global ids grouped by owner, dst order within each; counts[rank] = 0).
  struct LayerRequests {
    std::vector<int32_t> owner;
    std::vector<int64_t> counts;
    std::vector<int64_t> own_rows;
    std::vector<int64_t> request;
  };
  // The owners' answers: entries grouped by owner, request order within each (counts[j] entries from owner j).
  struct LayerAnswers {
    std::vector<WireEntry> received;
    std::vector<int64_t> counts;
  };
  // Groups dst by owner and gives the destination rows block ids 0 .. m-1 (throws when one is listed twice).
  LayerRequests GroupByOwner(std::span<const int64_t> dst);
  // Requests out, rows served per requester, answers back, all in the compact wire format (EncodeIds, EncodeAnswer;
  // counts on the wire are bytes). COLLECTIVE.
  LayerAnswers ExchangeRequests(const LayerRequests& requests, int fanout, const StreamKey& layer_key, bool skewed);
  // The block in dst order, each row's header and picks read from its owner's answer (or from `own`), sources
  // numbered from m in the order they are first picked.
  Block Relabel(std::span<const int64_t> dst, const LayerRequests& requests, const LayerAnswers& answers,
                std::span<const WireEntry> own);
  int64_t GlobalOf(int64_t local) const;  // local id (owned or halo) -> global id
  // The part whose key and skew rank j's rows are sampled with in the current call (j itself without virtual parts;
  // -1 when rank j holds fewer parts than the sub-step's number: its sub-step is empty and asks for no rows).
  int32_t RequesterPart(int32_t j) const {
    if (!virtual_.Active()) return j;
    return sub_ < virtual_.Count(j) ? virtual_.first[static_cast<size_t>(j)] + sub_ : -1;
  }
  // Virtual parts: checks them against the part and the offsets, and makes node_part_ and the K policies.
  void SetUpVirtualParts();
  double NormDegree(int64_t local) const {
    return static_cast<double>(degree_[static_cast<size_t>(local)]) + (options_.aggregation == Aggregation::kGcn);
  }

  OwnedGraph part_;
  std::vector<int64_t> offsets_;
  std::unique_ptr<SampleExchange> exchange_;
  SamplerOptions options_;
  SkewOptions skew_;
  int32_t rank_ = 0;
  std::vector<int32_t> cols_;           // owned rows' columns (local ids), each row sorted by global id
  std::vector<int32_t> degree_;         // per local node: degree without self-loops
  std::vector<SkewedPolicy> policies_;  // policies_[j]: skew toward requester part j (owners looked up from cols_)
  VirtualParts virtual_;
  std::vector<int32_t> node_part_;  // virtual parts: the part of every local node (owned and halo)
  int32_t sub_ = 0;                 // virtual parts: the current call's sub-step
  BlockIdMap block_id_;             // scratch: global id -> id in the block being built
  SampleStats stats_;
};

}  // namespace tessel::sampling
