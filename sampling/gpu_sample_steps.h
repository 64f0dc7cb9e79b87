// The steps of one sampled layer of the GPU sampler on raw arrays, one call per row or per pick slot, as
// TESSEL_HOST_DEVICE code: cuda/gpu_sampler.cu runs each step as a kernel, gpu_sampler_twin.cc (the simulated device)
// in serial loops; gpu_sampler_pipeline.h is the per-layer sequence both run.
//
// Layout: row i of the layer owns pick slots [slot[i], slot[i+1]) (pick_math::MaxPicks of them); a slot holds the
// picked node (-1: empty or a self-loop) and its estimator factor. New source nodes are numbered in order of first
// appearance over the slots (NeighborSampler's order) via first[v] = the smallest slot holding v (an atomic minimum,
// so the result does not depend on thread order) and an exclusive scan of "slot p is first[v]" flags. Only C++17.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"
#include "core/rng.h"
#include "sampling/pick_math.h"

namespace tessel::sampling::gpu_steps {

constexpr int64_t kLocalDegree = 32;  // weighted rows up to this degree keep their scratch in per-thread arrays
constexpr unsigned long long kNone = ~0ULL;

// The atomics the kernels need; plain operations when run serially on the host.
TESSEL_HOST_DEVICE inline int32_t CompareAndSwap(int32_t* p, int32_t expected, int32_t desired) {
#if defined(__CUDA_ARCH__)
  return atomicCAS(p, expected, desired);
#else
  const int32_t old = *p;
  if (old == expected) *p = desired;
  return old;
#endif
}
TESSEL_HOST_DEVICE inline void StoreMin(unsigned long long* p, unsigned long long value) {
#if defined(__CUDA_ARCH__)
  atomicMin(p, value);
#else
  if (value < *p) *p = value;
#endif
}
TESSEL_HOST_DEVICE inline void Report(unsigned long long* flag, unsigned long long value) {
#if defined(__CUDA_ARCH__)
  atomicExch(flag, value);
#else
  *flag = value;
#endif
}

template <typename IdT>
struct Graph {
  const int64_t* indptr;
  const IdT* indices;
  const double* norm_degree;  // per node: NeighborSampler's aggregation degree
  const double* row_skew;     // per node: the skewed policy's s (1 = uniform row); nullptr: uniform sampling
  const int32_t* edge_owner;  // with row_skew
  int32_t local_part;
};

// One layer's arrays (filled step by step: slots, new_rank and the outputs are sized from the scans, or, in a
// bounded layer, by the fanout bound: its real sizes then live on the device only and every step reads them there).
struct Layer {
  const int64_t* dst;   // m destination nodes
  int64_t m;            // rows, or (with m_at) their bound: the launches' sizes
  const int64_t* m_at;  // a bounded layer: the real row count, on the device (the layer above wrote it); else null
  int64_t k;            // fanout (-1 = all)
  bool replace;
  bool gcn;
  bool fixed;                 // row i owns slots [i k, (i + 1) k) (k >= 0, uniform rows): no scan, no size to read
  uint64_t base;              // row u draws from Rng(Mix64(base ^ Mix64(u)))
  int32_t* local_id;          // per node: id in this block, -1 elsewhere (all -1 between layers)
  unsigned long long* first;  // per node: first slot of a new source node, kNone elsewhere (idem)
  unsigned long long* flags;  // [duplicated destination node, row with a bad probability], kNone = none (reset to
                              // kNone by the thread that stages them, so each layer starts clean without a fill)
  int64_t* slot;              // m + 1: slot counts, then (scanned) slot offsets
  int64_t* scratch_begin;     // m + 1: global scratch counts, then offsets
  double* scratch_q;          // global scratch of weighted rows above kLocalDegree
  double* scratch_a;
  uint8_t* scratch_capped;
  int64_t* scratch_order;
  int64_t slots;        // total slots (after the scan)
  int64_t* slot_node;   // slots
  double* slot_factor;  // slots
  int64_t* new_rank;    // slots + 1: "first appearance" flags, then their exclusive scan
  int64_t* src;         // m + new nodes: destinations, then new source nodes
  int64_t* out_indptr;  // m + 1: row lengths (written by PickRow, 0 from the real m on), then offsets
  int32_t* out_indices;
  float* out_values;
  int64_t num_src;      // m + new source nodes (read after the scans), or (with num_src_at) its bound
  int64_t* num_src_at;  // a bounded layer: where the staging writes m + new source nodes (the next m_at); or null
  bool mark_next;       // ResetMaps gives the sources their ids as the next (bounded) layer's destinations
  // The caller's arrays of the block's sources and offsets (written by kResetMaps and kAssignWrite), or null.
  int64_t* out_src;
  int64_t* out_offsets;
  unsigned long long* out_src_copy;  // or null: a second copy of the sources (kResetMaps), read with the sizes
  unsigned long long* stage;         // 4 values for one read: new sources, entries, the two flags (the scans' end)
};

// The layer's real sizes: host values, or in a bounded layer read from the device (its launches cover the bounds
// and the threads past the real sizes do nothing, or write the zeros the scans need).
TESSEL_HOST_DEVICE inline int64_t Rows(const Layer& l) { return l.m_at != nullptr ? *l.m_at : l.m; }
TESSEL_HOST_DEVICE inline int64_t Slots(const Layer& l) { return l.fixed ? Rows(l) * l.k : l.slots; }
TESSEL_HOST_DEVICE inline int64_t NumSrc(const Layer& l) { return l.num_src_at != nullptr ? *l.num_src_at : l.num_src; }
// Row i's first slot.
TESSEL_HOST_DEVICE inline int64_t SlotBegin(const Layer& l, int64_t i) { return l.fixed ? i * l.k : l.slot[i]; }

template <typename IdT>
TESSEL_HOST_DEVICE inline bool UniformRow(const Graph<IdT>& g, int64_t u) {
  return g.row_skew == nullptr || g.row_skew[u] == 1.0;
}

// i in [0, m]: slot and scratch counts of row i (0 at i = m, so the scans end with the totals; with fixed slots,
// row i owns [i k, (i + 1) k): no counts, no scan, m threads suffice); marks dst[i].
template <typename IdT>
TESSEL_HOST_DEVICE inline void PlanRow(const Graph<IdT>& g, const Layer& l, int64_t i) {
  if (i >= Rows(l)) {
    if (!l.fixed && i == l.m) {
      l.slot[i] = 0;
      l.scratch_begin[i] = 0;
    }
    return;
  }
  const int64_t u = l.dst[i];
  if (!l.fixed) {
    const int64_t deg = g.indptr[u + 1] - g.indptr[u];
    const bool uniform = UniformRow(g, u);
    l.slot[i] = pick_math::MaxPicks(deg, l.k, l.replace, uniform);
    l.scratch_begin[i] = pick_math::NeedsScratch(deg, l.k, uniform) && deg > kLocalDegree ? deg : 0;
  }
  if (CompareAndSwap(&l.local_id[u], -1, static_cast<int32_t>(i)) != -1) {
    Report(&l.flags[0], static_cast<unsigned long long>(u));
  }
}

// p in [0, slots): first[v] = min over the slots holding v, for v not a destination.
TESSEL_HOST_DEVICE inline void FirstSeen(const Layer& l, int64_t p) {
  const int64_t v = l.slot_node[p];
  if (v >= 0 && l.local_id[v] < 0) StoreMin(&l.first[v], static_cast<unsigned long long>(p));
}

// i in [0, m]: the picks of row i into its slots, as node ids (self-loops and unused slots -1); then, fused into the
// same thread (each reads only row i's slots and the destinations' marks, all made by PlanRow or, in a bounded layer
// below the top, by the layer above's ResetMaps): FirstSeen of its slots, its output row length (the GCN self term plus
// the kept picks) and src[i] = dst[i] (the block's sources begin with its destinations). Threads past the real rows (i
// = m, and a bounded layer's padding) write the zero row lengths the scan sums.
template <typename IdT>
TESSEL_HOST_DEVICE inline void PickRow(const Graph<IdT>& g, const Layer& l, int64_t i) {
  if (i >= Rows(l)) {
    l.out_indptr[i] = 0;
    return;
  }
  const int64_t u = l.dst[i];
  l.src[i] = u;
  const int64_t row_begin = g.indptr[u];
  const int64_t deg = g.indptr[u + 1] - row_begin;
  const bool uniform = UniformRow(g, u);
  Rng rng(Mix64(l.base ^ Mix64(static_cast<uint64_t>(u))));
  int64_t* offsets = l.slot_node + SlotBegin(l, i);
  double* factors = l.slot_factor + SlotBegin(l, i);
  const int64_t slots = SlotBegin(l, i + 1) - SlotBegin(l, i);
  int64_t n = 0;
  if (pick_math::NeedsScratch(deg, l.k, uniform)) {
    double local_q[kLocalDegree];
    double local_a[kLocalDegree];
    uint8_t local_capped[kLocalDegree];
    int64_t local_order[kLocalDegree];
    double* q = local_q;
    pick_math::Scratch scratch{local_a, local_capped, local_order};
    if (deg > kLocalDegree) {
      const int64_t s = l.scratch_begin[i];
      q = l.scratch_q + s;
      scratch = pick_math::Scratch{l.scratch_a + s, l.scratch_capped + s, l.scratch_order + s};
    }
    const double skew = g.row_skew[u];  // SkewedPolicy::Probabilities: s for owned neighbours, 1 for the rest
    for (int64_t j = 0; j < deg; ++j) q[j] = g.edge_owner[row_begin + j] == g.local_part ? skew : 1.0;
    n = pick_math::PickRowArrays(deg, l.k, l.replace, q, rng, scratch, offsets, factors);
  } else {
    n = pick_math::PickRowArrays(deg, l.k, l.replace, nullptr, rng, pick_math::Scratch{}, offsets, factors);
  }
  if (n < 0) {
    Report(&l.flags[1], static_cast<unsigned long long>(u));
    n = 0;
  }
  int64_t kept = l.gcn ? 1 : 0;
  for (int64_t p = 0; p < n; ++p) {
    const auto v = static_cast<int64_t>(g.indices[row_begin + offsets[p]]);
    offsets[p] = v == u ? -1 : v;  // self-loops are not neighbours (the GCN self term is exact)
    kept += v == u ? 0 : 1;
  }
  for (int64_t p = n; p < slots; ++p) offsets[p] = -1;
  for (int64_t p = 0; p < n; ++p) FirstSeen(l, SlotBegin(l, i) + p);
  l.out_indptr[i] = kept;
}

// p in [0, slots] (or the bound): 1 when slot p is the first appearance of a new source node, else 0 (0 past the
// real slots, so a scan over the bound ends with the same total).
TESSEL_HOST_DEVICE inline int64_t NewFlag(const Layer& l, int64_t p) {
  const int64_t v = p < Slots(l) ? l.slot_node[p] : -1;
  return v >= 0 && l.local_id[v] < 0 && l.first[v] == static_cast<unsigned long long>(p) ? 1 : 0;
}
TESSEL_HOST_DEVICE inline void MarkNew(const Layer& l, int64_t p) { l.new_rank[p] = NewFlag(l, p); }

// After the scans of new_rank and out_indptr, with their totals (the new source count, the entry count): the
// layer's sizes and flags staged side by side for the one read of them (the flags reset for the next layer), and a
// bounded layer's source count written where the next layer reads its rows. Run once, by the fused scan's blocks
// (StageNew by the one scanning new_rank, StageEntries by the other) or by a one-thread kStage.
TESSEL_HOST_DEVICE inline void StageNew(const Layer& l, int64_t added) {
  l.stage[0] = static_cast<unsigned long long>(added);
  for (int f = 0; f < 2; ++f) {
    l.stage[2 + f] = l.flags[f];
    l.flags[f] = kNone;
  }
  if (l.num_src_at != nullptr) *l.num_src_at = Rows(l) + added;
}
TESSEL_HOST_DEVICE inline void StageEntries(const Layer& l, int64_t entries) {
  l.stage[1] = static_cast<unsigned long long>(entries);
}

// The block id of source node v (a destination's own id, or m + the rank of its first slot), without reading the
// ids AssignNew writes, so both run in one launch.
TESSEL_HOST_DEVICE inline int32_t SourceId(const Layer& l, int64_t v) {
  const int32_t own = l.local_id[v];
  return own >= 0 ? own : static_cast<int32_t>(Rows(l) + l.new_rank[l.first[v]]);
}

// p in [0, slots): new source nodes into src[m + rank] (src[0, m) = destinations).
TESSEL_HOST_DEVICE inline void AssignNew(const Layer& l, int64_t p) {
  if (p >= Slots(l) || l.new_rank[p + 1] == l.new_rank[p]) return;
  l.src[Rows(l) + l.new_rank[p]] = l.slot_node[p];
}

// i in [0, m]: row i of the block with NeighborSampler's weights and double arithmetic, and its offset into the
// caller's array (i = m: the last offset only).
template <typename IdT>
TESSEL_HOST_DEVICE inline void WriteRow(const Graph<IdT>& g, const Layer& l, int64_t i) {
  const int64_t m = Rows(l);
  if (i > m) return;
  l.out_offsets[i] = l.out_indptr[i];
  if (i == m) return;
  const double du = g.norm_degree[l.dst[i]];
  int64_t e = l.out_indptr[i];
  if (l.gcn) {
    l.out_indices[e] = static_cast<int32_t>(i);
    l.out_values[e] = static_cast<float>(1.0 / du);
    ++e;
  }
  for (int64_t p = SlotBegin(l, i); p < SlotBegin(l, i + 1); ++p) {
    const int64_t v = l.slot_node[p];
    if (v < 0) continue;
    const double a = l.gcn ? 1.0 / std::sqrt(du * g.norm_degree[v]) : 1.0 / du;
    l.out_indices[e] = SourceId(l, v);
    l.out_values[e] = static_cast<float>(a * l.slot_factor[p]);
    ++e;
  }
}

// p in [0, max(num_src, slots)): clears local_id of the block's nodes (or, with mark_next, gives them their ids as
// the next layer's destinations: the next layer's PlanRow marks, fused here) and first of the picked nodes, and
// copies the block's sources to the caller's array (when given).
TESSEL_HOST_DEVICE inline void ResetMaps(const Layer& l, int64_t p) {
  if (p < NumSrc(l)) {
    if (l.out_src != nullptr) l.out_src[p] = l.src[p];
    if (l.out_src_copy != nullptr) l.out_src_copy[p] = static_cast<unsigned long long>(l.src[p]);
    l.local_id[l.src[p]] = l.mark_next ? static_cast<int32_t>(p) : -1;
  }
  if (p < Slots(l) && l.slot_node[p] >= 0) l.first[l.slot_node[p]] = kNone;
}

// i in [0, m): undoes PlanRow's mark of dst[i] (after a duplicated destination stopped the layer).
TESSEL_HOST_DEVICE inline void ClearDestination(const Layer& l, int64_t i) { l.local_id[l.dst[i]] = -1; }

// The steps in pipeline order, with the index range each runs over.
enum class Step : int {
  kPlanRow,           // [0, m] (fixed slots: [0, m)); then (unless fixed) scan slot and scratch_begin
  kPickRow,           // [0, m] (with FirstSeen, the row lengths and the destinations' copy)
  kMarkNew,           // [0, slots]; then scan new_rank and out_indptr, and kStage (or all four as one fused scan)
  kStage,             // [0, 1)
  kAssignWrite,       // [0, max(slots, m + 1)): AssignNew and WriteRow, one thread each index
  kResetMaps,         // [0, max(num_src, slots))
  kClearDestination,  // [0, m), only after a duplicated destination
};

// Runs `step` for index i (one kernel thread, or one iteration of a host loop).
template <typename IdT>
TESSEL_HOST_DEVICE inline void Run(Step step, const Graph<IdT>& g, const Layer& l, int64_t i) {
  switch (step) {
    case Step::kPlanRow:
      PlanRow(g, l, i);
      break;
    case Step::kPickRow:
      PickRow(g, l, i);
      break;
    case Step::kMarkNew:
      MarkNew(l, i);
      break;
    case Step::kStage:
      StageNew(l, l.new_rank[Slots(l)]);
      StageEntries(l, l.out_indptr[Rows(l)]);
      break;
    case Step::kAssignWrite:
      AssignNew(l, i);
      WriteRow(g, l, i);
      break;
    case Step::kResetMaps:
      ResetMaps(l, i);
      break;
    case Step::kClearDestination:
      ClearDestination(l, i);
      break;
  }
}

}  // namespace tessel::sampling::gpu_steps
