// The GPU sampler's per-layer pipeline over device arrays, written once for its two executors: the CUDA kernels
// (cuda/gpu_sampler.cu: each step of gpu_sample_steps.h a kernel, scans by CUB) and their host twins on the
// simulated device (gpu_sampler_twin.cc: each step a serial loop, scans by std::exclusive_scan). Both run this same
// sequence of allocations, launches, scans and copies, so a test on the simulated device counts exactly what a GPU
// run copies and allocates. Only C++17 (nvcc compiles it).
//
// An executor Exec provides, as static functions:
//   template <typename IdT> void Launch(gpu_steps::Step, const gpu_steps::Graph<IdT>&, const gpu_steps::Layer&, n)
//   template <typename T> void Fill(T* a, int64_t n, T value)
//   void ExclusiveScan(int64_t* a, int64_t n)
//   void CopyOnDevice(void* dst, const void* src, size_t bytes)   (device to device, stream-ordered)
//   void SetDevice(int device_id)
//
// Launches are counted here, once for both executors (core/device.h CountLaunches): a step kernel, a fill, a
// device-to-device copy one each, a CUB scan two; Finish is a synchronisation (device::Synchronize). A uniform layer
// makes 10: 6 step kernels and 2 scans (steps whose threads read only what earlier kernels wrote are fused into one:
// the picks with their first-seen marks, row lengths and the destinations' copy; the staging of the sizes with the
// new ids; the flags reset by the thread that stages them instead of a fill).
//
// Copies per layer (counted by core/device.h): one small download, a wait for the device that reads the layer's
// sizes and error flags at its end (the new-node count, the entry count, the duplicate and bad-row flags); a skewed
// layer (slot counts vary with the weights) or one taking every neighbour (fanout -1) adds one before its picks (the
// slot and scratch totals with the duplicate flag). The layer's arrays are written to the caller's device arrays
// (LayerSink), never through the host. The seeds are the one upload of a Sample.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
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
    dst_.Upload(seeds, static_cast<size_t>(num_seeds));
    int64_t m = num_seeds;
    for (size_t l = fanouts.size(); l-- > 0;) {
      m = ids64_ ? Layer(View<int64_t>(indices64_.data()), l, m, fanouts[l], bases[l], replace, gcn, sink)
                 : Layer(View<int32_t>(indices32_.data()), l, m, fanouts[l], bases[l], replace, gcn, sink);
      dst_.Swap(src_);
    }
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
  static void Copy(void* dst, const void* src, size_t bytes) {
    if (bytes == 0) return;
    device::CountLaunches(1);
    Exec::CopyOnDevice(dst, src, bytes);
  }
  static void Finish() { device::Synchronize(); }

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
    l.out_indptr = out_indptr_.Reserve(rows + 1);  // its last entry written by PlanRow
    // Uniform rows with a fanout take at most k picks each: the rows own k slots apiece, sized before the picks
    // without a scan or a read of the totals (the layer's one wait for the device is its final read).
    l.fixed = fanout >= 0 && !skewed_;
    l.slot = slot_.Reserve(rows + 1);
    l.scratch_begin = scratch_begin_.Reserve(rows + 1);
    Launch(Step::kPlanRow, g, l, m + 1);
    // From here the node maps hold this layer's marks; an error must leave them clean for the next call. Every
    // allocation comes before the picks, while PlanRow's marks of the destinations are the only ones (undone by
    // kClearDestination); after kAssignNew, kResetMaps undoes every mark.
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
      Launch(Step::kPickRow, g, l, m);  // with FirstSeen, the row lengths and src[0, m) = dst
      Launch(Step::kMarkNew, g, l, l.slots + 1);
      Scan(l.new_rank, l.slots + 1);
      Scan(l.out_indptr, m + 1);
      // One read for the new source count, the entry count and the flags (a duplicate destination, with fixed
      // slots found only now; a bad row, set by the picks), staged side by side by AssignNew's thread 0.
      Launch(Step::kAssignNew, g, l, l.slots > 0 ? l.slots : 1);
      maps_full = true;
      std::array<unsigned long long, 4> written{};
      device::CopyToHost(written.data(), l.stage, sizeof(written));
      l.num_src = m + static_cast<int64_t>(written[0]);  // before a throw: kResetMaps reads it
      const auto nnz = static_cast<int64_t>(written[1]);
      CheckDuplicate(written[2]);
      const auto bad_row = written[3];
      TESSEL_CHECK(bad_row == kNoSlot, "sampling: row {} has a negative or non-finite probability", bad_row);
      // The block's arrays, now that its sizes are known: the entries are written there directly.
      const LayerTargets t = sink.targets(sink.context, layer, m, l.num_src, nnz);
      l.out_indices = t.indices;
      l.out_values = t.values;
      l.out_offsets = t.indptr;
      Launch(Step::kWriteRow, g, l, m + 1);  // the rows, and the offsets into the block
      l.out_src = t.src_nodes;
      Launch(Step::kResetMaps, g, l, l.num_src > l.slots ? l.num_src : l.slots);  // and the sources into the block
      maps_full = false;
    } catch (...) {
      try {
        Fill(flags_.data(), 2, kNoSlot);  // a layer stopped before its staging leaves them set
        if (maps_full) {
          Launch(Step::kResetMaps, g, l, l.num_src > l.slots ? l.num_src : l.slots);
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
  device::Array<unsigned long long> stage_;  // values staged for one read (Read)
  device::Array<int64_t> dst_, src_, slot_, scratch_begin_, slot_node_, new_rank_, out_indptr_, scratch_order_;
  device::Array<double> slot_factor_, scratch_q_, scratch_a_;
  device::Array<uint8_t> scratch_capped_;
};

}  // namespace tessel::sampling::cuda
