// The GPU sampler's per-layer pipeline over device arrays, written once for its two executors: the CUDA kernels
// (cuda/gpu_sampler.cu: each step of gpu_sample_steps.h a kernel, scans by CUB or one fused block-scan kernel) and
// their host twins on the simulated device (gpu_sampler_twin.cc: each step a serial loop, scans by
// std::exclusive_scan). Both run this same sequence of allocations, launches, scans and copies, so a test on the
// simulated device counts exactly what a GPU run launches, copies and allocates. Only C++17 (nvcc compiles it).
//
// An executor Exec provides, as static functions:
//   template <typename IdT> void Launch(gpu_steps::Step, const gpu_steps::Graph<IdT>&, const gpu_steps::Layer&, n)
//   template <typename T> void Fill(T* a, int64_t n, T value)
//   void ExclusiveScan(int64_t* a, int64_t n)
//   void MarkScan(const gpu_steps::Layer&, int64_t new_n, int64_t rows_n)   (one launch: kMarkNew over [0, new_n)
//        with the exclusive scans of new_rank (new_n) and out_indptr (rows_n) and the staging of their totals)
//   void CopyOnDevice(void* dst, const void* src, size_t bytes)   (device to device, stream-ordered)
//   void SetDevice(int device_id)
//
// Launches are counted here, once for both executors (core/device.h CountLaunches): a step kernel, a fill, a
// device-to-device copy, the fused scan one each, a CUB scan two; Finish is a synchronisation (device::Synchronize).
//
// A sample whose layers all have fixed slots (uniform rows, every fanout >= 0; `Bounded`) is bounded: every array is
// sized before its first launch by the fanout bound (a layer of m rows has at most m k slots, m (k + 1) sources and
// m (k + [gcn]) entries), each layer's real sizes stay on the device (the layer above writes its row count there,
// every step reads it, the launches cover the bounds), and one download at the sample's end reads every layer's
// sizes and flags: one wait for the device a sample. Its launches: the top layer's PlanRow, then per layer the
// picks, the fused scan, AssignWrite and ResetMaps (which also marks the next layer's destinations): 1 + 4 a layer.
// Other samples (a skewed policy, fanout -1) read each layer's sizes when its scans end, and a skewed layer (slot
// counts vary with the weights) or one taking every neighbour also reads its slot and scratch totals before its
// picks. The layer's arrays are written to the caller's device arrays (LayerSink), never through the host. The
// seeds are the one upload of a Sample.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/device.h"
#include "core/error.h"
#include "sampling/cuda/gpu_sampler_cuda.h"
#include "sampling/gpu_sample_steps.h"

namespace tessel::sampling::cuda {

template <typename Exec>
class SamplerPipeline {
 public:
  static constexpr unsigned long long kNoSlot = gpu_steps::kNone;

  SamplerPipeline(int device_id, const GraphArrays& g) : device_id_(device_id) {
    Exec::SetDevice(device_id_);
    const auto n = static_cast<size_t>(g.num_nodes);
    const auto e = static_cast<size_t>(g.num_entries);
    num_nodes_ = g.num_nodes;
    indptr_.Upload(g.indptr, n + 1);
    ids64_ = g.indices64 != nullptr;
    if (ids64_) {
      indices64_.Upload(g.indices64, e);
    } else {
      indices32_.Upload(g.indices32, e);
    }
    norm_degree_.Upload(g.norm_degree, n);
    if (g.row_skew != nullptr) {
      row_skew_.Upload(g.row_skew, n);
      skewed_ = true;
      edge_owner_.Upload(g.edge_owner, e);
      local_part_ = g.local_part;
    }
    local_id_.Reserve(n > 0 ? n : 1);
    first_.Reserve(n > 0 ? n : 1);
    Fill(local_id_.data(), g.num_nodes, int32_t{-1});
    Fill(first_.data(), g.num_nodes, kNoSlot);
    Fill(flags_.Reserve(2), 2, kNoSlot);  // kNone from here between layers (reset where they are staged)
    Finish();
  }

  void Sample(const int64_t* seeds, int64_t num_seeds, const std::vector<int>& fanouts,
              const std::vector<uint64_t>& bases, bool replace, bool gcn, const LayerSink& sink) {
    Exec::SetDevice(device_id_);
    if (Bounded(fanouts)) {
      SampleBounded(seeds, num_seeds, fanouts, bases, replace, gcn, sink);
      return;
    }
    dst_.Upload(seeds, static_cast<size_t>(num_seeds));
    int64_t m = num_seeds;
    for (size_t l = fanouts.size(); l-- > 0;) {
      m = ids64_ ? Layer(View<int64_t>(indices64_.data()), l, m, fanouts[l], bases[l], replace, gcn, sink)
                 : Layer(View<int32_t>(indices32_.data()), l, m, fanouts[l], bases[l], replace, gcn, sink);
      dst_.Swap(src_);
    }
  }

  // Whether a sample with these fanouts is bounded (every layer's slots fixed, see above).
  bool Bounded(const std::vector<int>& fanouts) const {
    if (skewed_) return false;
    for (int k : fanouts) {
      if (k < 0) return false;
    }
    return true;
  }

 private:
  // Values at device addresses (8-byte counts or flags), gathered into one staging array by stream-ordered device
  // copies and read back with one download: one wait for the device instead of one per value.
  template <size_t N>
  std::array<unsigned long long, N> Read(const std::array<const void*, N>& at) {
    unsigned long long* stage = stage_.Reserve(N);
    for (size_t i = 0; i < N; ++i) Copy(stage + i, at[i], sizeof(unsigned long long));
    std::array<unsigned long long, N> values{};
    device::CopyToHost(values.data(), stage, N * sizeof(unsigned long long));
    return values;
  }

  static void CheckDuplicate(unsigned long long duplicate) {
    if (duplicate != kNoSlot) throw Error(fmt::format("sampling: destination node {} is listed twice", duplicate));
  }

  template <typename IdT>
  gpu_steps::Graph<IdT> View(const IdT* indices) const {
    return gpu_steps::Graph<IdT>{indptr_.data(),     indices,    norm_degree_.data(), row_skew_.data(),
                                 edge_owner_.data(), local_part_};
  }

  // The executor's operations, each counted as the CUDA executor launches it.
  template <typename IdT>
  static void Launch(gpu_steps::Step step, const gpu_steps::Graph<IdT>& g, const gpu_steps::Layer& l, int64_t n) {
    if (n <= 0) return;
    device::CountLaunches(1);
    Exec::Launch(step, g, l, n);
  }
  template <typename T>
  static void Fill(T* a, int64_t n, T value) {
    if (n <= 0) return;
    device::CountLaunches(1);
    Exec::Fill(a, n, value);
  }
  static void Scan(int64_t* a, int64_t n) {
    if (n <= 0) return;
    device::CountLaunches(2);
    Exec::ExclusiveScan(a, n);
  }
  // kMarkNew with the scans of new_rank and out_indptr and the staging of their totals: one fused launch (a single
  // block per array: for mini-batch layers, where launches cost more than the scan) up to kFusedScanMax elements,
  // else kMarkNew, two CUB scans and kStage.
  static constexpr int64_t kFusedScanMax = int64_t{1} << 17;
  // A bounded sample reads the input layer's sources with its sizes up to this bound (1 MiB): the bound is read, not
  // the real count, so beyond it a second download costs less than the bytes.
  static constexpr int64_t kMergedIdsMax = int64_t{1} << 17;
  template <typename IdT>
  static void MarkScan(const gpu_steps::Graph<IdT>& g, const gpu_steps::Layer& l, int64_t new_n, int64_t rows_n) {
    if (new_n <= kFusedScanMax && rows_n <= kFusedScanMax) {
      device::CountLaunches(1);
      Exec::MarkScan(l, new_n, rows_n);
      return;
    }
    Launch(gpu_steps::Step::kMarkNew, g, l, new_n);
    Scan(l.new_rank, new_n);
    Scan(l.out_indptr, rows_n);
    Launch(gpu_steps::Step::kStage, g, l, 1);
  }
  static void Copy(void* dst, const void* src, size_t bytes) {
    if (bytes == 0) return;
    device::CountLaunches(1);
    Exec::CopyOnDevice(dst, src, bytes);
  }
  static void Finish() { device::Synchronize(); }

  // A bounded sample's sizes per layer (index 0 = input layer): rows, sources and entries at most, from the seeds
  // down (a layer's sources are the next one's rows).
  struct Bounds {
    std::vector<int64_t> rows, srcs, entries;
    int64_t most_rows = 0, most_srcs = 0, most_slots = 0;
  };
  Bounds BoundsOf(int64_t num_seeds, const std::vector<int>& fanouts, bool gcn) const {
    const size_t layers = fanouts.size();
    Bounds b{std::vector<int64_t>(layers), std::vector<int64_t>(layers), std::vector<int64_t>(layers), 0, num_seeds, 0};
    int64_t m = num_seeds;
    for (size_t l = layers; l-- > 0;) {
      const int64_t k = fanouts[l];
      TESSEL_CHECK(m <= (std::numeric_limits<int64_t>::max() - m) / (k + 1),
                   "sampling: {} rows with fanout {} overflow the sample's bounds (use smaller batches or fanouts)", m,
                   k);
      // One new source at most a slot, and never more than the graph's nodes.
      const int64_t added = k == 0 ? 0 : (m > num_nodes_ / k ? num_nodes_ : std::min(m * k, num_nodes_));
      b.rows[l] = m;
      b.srcs[l] = m + added;
      b.entries[l] = m * k + (gcn ? m : 0);
      b.most_rows = std::max(b.most_rows, m);
      b.most_srcs = std::max(b.most_srcs, b.srcs[l]);
      b.most_slots = std::max(b.most_slots, m * k);
      m = b.srcs[l];
    }
    return b;
  }

  // A bounded sample: every array sized by the bounds before the first launch, the layers launched without a wait,
  // then one read of every layer's staged sizes and flags, and the sink told the real sizes.
  void SampleBounded(const int64_t* seeds, int64_t num_seeds, const std::vector<int>& fanouts,
                     const std::vector<uint64_t>& bases, bool replace, bool gcn, const LayerSink& sink) {
    const size_t layers = fanouts.size();
    const Bounds b = BoundsOf(num_seeds, fanouts, gcn);
    dst_.Reserve(static_cast<size_t>(b.most_srcs));
    src_.Reserve(static_cast<size_t>(b.most_srcs));
    const auto slots = static_cast<size_t>(b.most_slots) + 1;
    slot_node_.Reserve(slots);
    slot_factor_.Reserve(slots);
    new_rank_.Reserve(slots);
    out_indptr_.Reserve(static_cast<size_t>(b.most_rows) + 1);
    for (auto* a : {&slot_, &scratch_begin_, &scratch_order_}) a->Reserve(1);  // fixed slots: unused
    for (auto* a : {&scratch_q_, &scratch_a_}) a->Reserve(1);
    scratch_capped_.Reserve(1);
    // The staged sizes, and after them (when asked and small enough) a copy of the input layer's sources: one read.
    const bool with_ids = sink.input_sources && layers > 0 && b.srcs[0] <= kMergedIdsMax;
    const size_t read = 4 * layers + (with_ids ? static_cast<size_t>(b.srcs[0]) : 0);
    stage_.Reserve(read > 0 ? read : 1);
    counts_.Reserve(layers > 0 ? layers : 1);
    std::vector<LayerTargets> targets(layers);
    for (size_t l = 0; l < layers; ++l) targets[l] = sink.targets(sink.context, l, b.rows[l], b.srcs[l], b.entries[l]);
    dst_.Upload(seeds, static_cast<size_t>(num_seeds));
    if (ids64_) {
      LaunchBounded(View<int64_t>(indices64_.data()), b, fanouts, bases, replace, gcn, targets, with_ids);
    } else {
      LaunchBounded(View<int32_t>(indices32_.data()), b, fanouts, bases, replace, gcn, targets, with_ids);
    }
    std::vector<unsigned long long> staged(read);
    if (read > 0) device::CopyToHost(staged.data(), stage_.data(), read * sizeof(unsigned long long));
    std::vector<int64_t> ids;
    int64_t m = num_seeds;
    for (size_t l = layers; l-- > 0;) {
      const unsigned long long* s = &staged[4 * l];
      CheckDuplicate(s[2]);
      TESSEL_CHECK(s[3] == kNoSlot, "sampling: row {} has a negative or non-finite probability", s[3]);
      const int64_t num_src = m + static_cast<int64_t>(s[0]);
      if (l == 0 && with_ids) {
        const unsigned long long* from = staged.data() + 4 * layers;
        ids.assign(from, from + num_src);
      }
      if (sink.sized != nullptr) {
        sink.sized(sink.context, l, m, num_src, static_cast<int64_t>(s[1]), l == 0 && with_ids ? ids.data() : nullptr);
      }
      m = num_src;
    }
  }

  // The bounded sample's launches (the seeds in dst_). Its maps are clean again at the end, errors included (a
  // duplicated seed is reported by the read after it); a launch that fails resets them whole.
  template <typename IdT>
  void LaunchBounded(const gpu_steps::Graph<IdT>& g, const Bounds& b, const std::vector<int>& fanouts,
                     const std::vector<uint64_t>& bases, bool replace, bool gcn,
                     const std::vector<LayerTargets>& targets, bool with_ids) {
    using gpu_steps::Step;
    const size_t layers = fanouts.size();
    try {
      for (size_t layer = layers; layer-- > 0;) {
        gpu_steps::Layer l{};
        l.dst = dst_.data();
        l.m = b.rows[layer];
        l.m_at = layer + 1 < layers ? counts_.data() + layer + 1 : nullptr;  // the top layer's rows are the seeds
        l.k = fanouts[layer];
        l.replace = replace;
        l.gcn = gcn;
        l.fixed = true;
        l.base = bases[layer];
        l.local_id = local_id_.data();
        l.first = first_.data();
        l.flags = flags_.data();
        l.slot = slot_.data();
        l.scratch_begin = scratch_begin_.data();
        l.scratch_q = scratch_q_.data();
        l.scratch_a = scratch_a_.data();
        l.scratch_capped = scratch_capped_.data();
        l.scratch_order = scratch_order_.data();
        l.slots = l.m * l.k;
        l.slot_node = slot_node_.data();
        l.slot_factor = slot_factor_.data();
        l.new_rank = new_rank_.data();
        l.src = src_.data();
        l.out_indptr = out_indptr_.data();
        l.out_indices = targets[layer].indices;
        l.out_values = targets[layer].values;
        l.num_src = b.srcs[layer];
        l.num_src_at = counts_.data() + layer;
        l.mark_next = layer > 0;
        l.out_src = targets[layer].src_nodes;
        l.out_offsets = targets[layer].indptr;
        l.out_src_copy = layer == 0 && with_ids ? stage_.data() + 4 * layers : nullptr;
        l.stage = stage_.data() + 4 * layer;
        if (layer + 1 == layers) Launch(Step::kPlanRow, g, l, l.m);  // below, ResetMaps marks the destinations
        Launch(Step::kPickRow, g, l, l.m + 1);
        MarkScan(g, l, l.slots + 1, l.m + 1);
        Launch(Step::kAssignWrite, g, l, std::max(l.slots, l.m + 1));
        Launch(Step::kResetMaps, g, l, std::max(l.num_src, l.slots));
        dst_.Swap(src_);
      }
    } catch (...) {
      try {
        Fill(local_id_.data(), num_nodes_, int32_t{-1});
        Fill(first_.data(), num_nodes_, kNoSlot);
        Fill(flags_.data(), 2, kNoSlot);
        Finish();
      } catch (...) {  // the device itself failed: its error is the one to report
      }
      throw;
    }
  }

  // One layer (index `layer`, m destination rows in dst_); its arrays go to the sink's device arrays. Returns the
  // layer's source count (the next layer's destinations, left in src_).
  template <typename IdT>
  int64_t Layer(const gpu_steps::Graph<IdT>& g, size_t layer, int64_t m, int fanout, uint64_t base, bool replace,
                bool gcn, const LayerSink& sink) {
    using gpu_steps::Step;
    const auto rows = static_cast<size_t>(m);
    gpu_steps::Layer l{};
    l.dst = dst_.data();
    l.m = m;
    l.k = fanout;
    l.replace = replace;
    l.gcn = gcn;
    l.base = base;
    l.local_id = local_id_.data();
    l.first = first_.data();
    l.flags = flags_.Reserve(2);
    l.out_indptr = out_indptr_.Reserve(rows + 1);  // its last entry written by PickRow
    // Uniform rows with a fanout take at most k picks each: the rows own k slots apiece, sized before the picks
    // without a scan or a read of the totals (the layer's one wait for the device is its final read).
    l.fixed = fanout >= 0 && !skewed_;
    l.slot = slot_.Reserve(rows + 1);
    l.scratch_begin = scratch_begin_.Reserve(rows + 1);
    Launch(Step::kPlanRow, g, l, l.fixed ? m : m + 1);
    // From here the node maps hold this layer's marks; an error must leave them clean for the next call. Every
    // allocation comes before the picks, while PlanRow's marks of the destinations are the only ones (undone by
    // kClearDestination); after the picks (their first-seen marks), kResetMaps over the destinations undoes every
    // mark (new sources get no local id: SourceId).
    bool maps_full = false;
    try {
      int64_t scratch = 0;
      if (l.fixed) {
        l.slots = m * fanout;
      } else {
        Scan(l.slot, m + 1);
        Scan(l.scratch_begin, m + 1);
        // One read for the slot and scratch totals and the duplicate flag (staged on the device, then one copy).
        const auto plan = Read<3>({l.slot + m, l.scratch_begin + m, l.flags});
        l.slots = static_cast<int64_t>(plan[0]);
        scratch = static_cast<int64_t>(plan[1]);
        CheckDuplicate(plan[2]);
      }
      const auto s = static_cast<size_t>(scratch > 0 ? scratch : 1);
      l.scratch_q = scratch_q_.Reserve(s);
      l.scratch_a = scratch_a_.Reserve(s);
      l.scratch_capped = scratch_capped_.Reserve(s);
      l.scratch_order = scratch_order_.Reserve(s);
      const auto slots = static_cast<size_t>(l.slots);
      l.slot_node = slot_node_.Reserve(slots + 1);
      l.slot_factor = slot_factor_.Reserve(slots + 1);
      l.new_rank = new_rank_.Reserve(slots + 1);
      l.src = src_.Reserve(rows + slots);  // at most one new source node per slot
      l.stage = stage_.Reserve(4);
      Launch(Step::kPickRow, g, l, m + 1);  // with FirstSeen, the row lengths and src[0, m) = dst
      maps_full = true;
      // One read for the new source count, the entry count and the flags (a duplicate destination, with fixed
      // slots found only now; a bad row, set by the picks), staged side by side at the scans' end.
      MarkScan(g, l, l.slots + 1, m + 1);
      std::array<unsigned long long, 4> written{};
      device::CopyToHost(written.data(), l.stage, sizeof(written));
      const int64_t num_src = m + static_cast<int64_t>(written[0]);
      const auto nnz = static_cast<int64_t>(written[1]);
      CheckDuplicate(written[2]);
      const auto bad_row = written[3];
      TESSEL_CHECK(bad_row == kNoSlot, "sampling: row {} has a negative or non-finite probability", bad_row);
      // The block's arrays, now that its sizes are known: the entries are written there directly.
      const LayerTargets t = sink.targets(sink.context, layer, m, num_src, nnz);
      l.out_indices = t.indices;
      l.out_values = t.values;
      l.out_offsets = t.indptr;
      Launch(Step::kAssignWrite, g, l, std::max(l.slots, m + 1));  // new sources, rows, offsets into the block
      l.out_src = t.src_nodes;
      l.num_src = num_src;
      Launch(Step::kResetMaps, g, l, std::max(num_src, l.slots));  // and the sources into the block
      maps_full = false;
    } catch (...) {
      try {
        Fill(flags_.data(), 2, kNoSlot);  // a layer stopped before its staging leaves them set
        if (maps_full) {                  // the destinations' marks and the picks' first-seen marks
          l.num_src = m;
          l.out_src = nullptr;
          Launch(Step::kResetMaps, g, l, std::max(m, l.slots));
        } else {
          Launch(Step::kClearDestination, g, l, m);
        }
        Finish();
      } catch (...) {  // the device itself failed: its error is the one to report
      }
      throw;
    }
    return l.num_src;
  }

  int device_id_ = 0;
  int64_t num_nodes_ = 0;
  bool ids64_ = false;
  bool skewed_ = false;  // a skewed policy's per-row weights: slot counts vary with them, read before the picks
  int32_t local_part_ = 0;
  device::Array<int64_t> indptr_;
  device::Array<int32_t> indices32_;
  device::Array<int64_t> indices64_;
  device::Array<double> norm_degree_;
  device::Array<double> row_skew_;
  device::Array<int32_t> edge_owner_;
  device::Array<int32_t> local_id_;          // global -> local id of the block being built, -1 elsewhere
  device::Array<unsigned long long> first_;  // first slot of a new source node, kNoSlot elsewhere
  device::Array<unsigned long long> flags_;  // [duplicate destination, row with a bad probability], kNoSlot = none
  device::Array<unsigned long long> stage_;  // values staged for one read (Read; 4 a layer in a bounded sample)
  device::Array<int64_t> counts_;            // a bounded sample's source count per layer (the next layer's rows)
  device::Array<int64_t> dst_, src_, slot_, scratch_begin_, slot_node_, new_rank_, out_indptr_, scratch_order_;
  device::Array<double> slot_factor_, scratch_q_, scratch_a_;
  device::Array<uint8_t> scratch_capped_;
};

}  // namespace tessel::sampling::cuda
