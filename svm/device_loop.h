// The batched C-SVC solver's device loop (ThunderSVM, Wen et al., JMLR 2018, with LIBSVM's stopping rule,
// elimination and G_bar), written once in host C++ over a table of raw device operations (LoopDevice): the CUDA
// kernels (svm/cuda/loop_device.cu) or their host twins on the simulated device (svm/loop_twin.cc).
// What the simulated device counts (allocations, copies, synchronisations) is therefore the CUDA path's own data
// flow, and the twin's answer is the host batched solver's (batch_solver.cc), step for step.
//
// Per solve, every array is allocated once from the device pool, sized from the problem (no allocation after the
// setup). Per round:
//   - kernel rows from a device row cache (LRU over slots of a byte budget, keyed by sample): only the missing rows
//     are computed, and one upload gives every entry's slot and the missing list;
//   - the subproblem in one thread block, then the bookkeeping and the gradient update on the device;
//   - the next selection on the state the round left: a device top-k of each side (no sort of the whole set; both
//     sides in each launch), the working set formed on the device;
//   - one download of (steps, the entries that reached or left C) and the next selection's (gap, m, ids).
// So a steady-state round makes no allocation, one download (its one synchronisation) and one upload; a selection
// of its own (the first, and after an elimination check changed the active set) adds a download, and an
// elimination check one of the two extremes and one of each compaction's count (and of each column set's entry
// count), plus the cache's compaction to the new columns.
// C++17 (the .cu files include it), no spans.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/device.h"
#include "svm/device_loop_math.h"
#include "svm/elimination.h"
#include "svm/round_counts.h"

namespace tessel::kernels {
class SvmKernelRows;
namespace cuda {
struct HostCsr;
struct KernelSpec;
}  // namespace cuda
}  // namespace tessel::kernels

namespace tessel::svm::devloop {

// The raw operations of the loop. Every pointer is a device pointer; every call is ordered on one stream.
class LoopDevice {
 public:
  virtual ~LoopDevice() = default;

  // ---- kernel rows (kernels::cuda::SvmKernelRowsCuda's contract): slot 0 the active columns, 1 the eliminated
  virtual void SetColumns(int slot, const int32_t* ids, int64_t n) = 0;
  // out[t * n + k] = float(sign[t] col_sign[k] K(ws[t], column k)), n the slot's column count.
  virtual void QRows(int slot, const int32_t* ws, const int8_t* sign, int64_t q, const int8_t* col_sign,
                     float* out) = 0;
  virtual void Diagonal(const int32_t* ids, int64_t n, double* diag) = 0;
  virtual int64_t Evaluations() const = 0;
  // Sizes the row computation's work arrays for up to q rows at once over up to n columns, so no later QRows
  // allocates.
  virtual void ReserveRows(int64_t q, int64_t n) = 0;

  // ---- selection
  // Scratch bytes TopK and TopKBoth need for n candidates, k kept.
  virtual size_t TopKScratchBytes(int64_t n, int64_t k) const = 0;
  // keys/ids[0..k): the k best candidates (CandidateKey of `side` and `label`: 0 any, +1 or -1 only that label's
  // samples) among the samples act[0..n), in Before's order; entries past the candidates have id -1.
  virtual void TopK(int side, int label, int64_t n, const int32_t* act, const int8_t* y, const int8_t* st,
                    const double* g, int64_t k, double* keys, int32_t* ids, void* scratch) = 0;
  // TopK of side 0 into up_keys/up_ids and of side 1 into low_keys/low_ids (both of `label`), both sides in every
  // launch: the two calls' values in half their launches (a selection's).
  virtual void TopKBoth(int label, int64_t n, const int32_t* act, const int8_t* y, const int8_t* st, const double* g,
                        int64_t k, double* up_keys, int32_t* up_ids, double* low_keys, int32_t* low_ids,
                        void* scratch) = 0;
  // FormWorkingSet (device_loop_math.h) of `part` in one thread.
  virtual void FormWorkingSet(const double* up_key, const int32_t* up_id, const double* low_key, const int32_t* low_id,
                              int64_t k, int64_t q, int part, uint8_t* chosen, const int32_t* pos, const int32_t* rows,
                              const int8_t* y, SelectInfo* info, int32_t* ws_pos, int32_t* ws_rows, int8_t* ws_y) = 0;

  // ---- the round
  // The subproblem (SolveBatchSubproblem of solver_common.h) on the m entries, entry t's row at
  // arena + slot[t] * stride (its entry for active position p at p); `nu`: Solver_NU's pair. new_alpha[0..m),
  // info->steps.
  virtual void LocalSmo(int64_t m, const float* arena, int64_t stride, const int32_t* slot, const int32_t* ws,
                        const int32_t* ws_pos, const int8_t* y, const double* qd, const double* alpha, const double* g,
                        double cp, double cn, double eps, double factor, int64_t limit, bool nu, double* new_alpha,
                        RoundInfo* info) = 0;
  // ApplyEntry for every entry; info->changed and info->list (increasing), and for the listed entries their
  // dataset rows, labels and coefficients packed in list order.
  virtual void ApplyRound(int64_t m, const int32_t* ws, const int32_t* ws_rows, const int8_t* ws_y,
                          const double* new_alpha, double cp, double cn, bool track_gbar, const int8_t* y,
                          double* alpha, int8_t* st, double* delta, double* coef, RoundInfo* info,
                          int32_t* changed_rows, int8_t* changed_y, double* changed_coef) = 0;
  // For every active position k: g[act[k]] += sum_t delta[t] row_t[k] over moved entries, and, when track_gbar,
  // g_bar[act[k]] += sum_t coef[t] row_t[k] over entries with coef != 0, t increasing.
  virtual void UpdateActive(int64_t n, int64_t m, const float* arena, int64_t stride, const int32_t* slot,
                            const double* delta, const double* coef, bool track_gbar, const int32_t* act, double* g,
                            double* g_bar) = 0;
  // dst[list[k]] += sum_t c_t rows[t * n + k] for k < n, t < m increasing, c_t = coef[coef_idx[t]] (coef[t] when
  // coef_idx is null).
  virtual void AddRows(int64_t n, int64_t m, const float* rows, const double* coef, const int32_t* coef_idx,
                       const int32_t* list, double* dst) = 0;
  // dst[slot[t] * stride + k] = src[t * n + k] for t < m, k < n.
  virtual void StoreRows(int64_t m, int64_t n, const float* src, const int32_t* slot, float* arena, int64_t stride) = 0;
  // The cached rows slot[0..m) to new columns: row[k] = old row[remap[k]] for k < n (remap increasing, remap[k]
  // >= k); tmp holds m * n floats.
  virtual void CompactRows(int64_t m, const int32_t* slot, float* arena, int64_t stride, const int32_t* remap,
                           int64_t n, float* tmp) = 0;

  // ---- the active set
  virtual void Iota(int64_t n, int32_t* out) = 0;
  // pos[0..l) = -1, then pos[act[k]] = k; act_rows[k] = rows[act[k]], act_y[k] = y[act[k]].
  virtual void SetActive(int64_t l, int64_t n, const int32_t* act, const int32_t* rows, const int8_t* y, int32_t* pos,
                         int32_t* act_rows, int8_t* act_y) = 0;
  // out[k] = src[idx[k]] for k < n.
  virtual void GatherI32(int64_t n, const int32_t* idx, const int32_t* src, int32_t* out) = 0;
  virtual void GatherI8(int64_t n, const int32_t* idx, const int8_t* src, int8_t* out) = 0;
  // Stream compaction, in order, into out; *count (device) gets the number kept. kNotShrunk and kFree read in[0..n)
  // (samples); kInactive reads the samples 0..n with pos < 0 (in is unused). kNotShrunk keeps what BeShrunk does not
  // shrink with the extremes (ext[0], ext[1]) for y = +1 and (ext[2], ext[3]) for y = -1 (Solver's: the same pair).
  enum class Keep { kNotShrunk, kFree, kInactive };
  virtual size_t CompactScratchBytes(int64_t n) const = 0;
  virtual void Compact(Keep keep, int64_t n, const int32_t* in, const int8_t* y, const int8_t* st, const double* g,
                       const int32_t* pos, const Extremes4& ext, int32_t* out, int64_t* count, void* scratch) = 0;
  // out[0] = max_{I_up} -y G, out[1] = max_{I_low} y G over the samples act[0..n) of `label` (0: all; -inf when
  // empty).
  virtual void Extremes(int64_t n, const int32_t* act, const int8_t* y, const int8_t* st, const double* g, int label,
                        double* out) = 0;
  // g[inact[k]] = g_bar[inact[k]] + p[inact[k]].
  virtual void ResetFromGBar(int64_t n, const int32_t* inact, const double* g_bar, const double* p, double* g) = 0;
};

// The CUDA table over the rows uploaded once (svm/cuda/loop_device.cu, CUDA builds only; callers outside
// svm/cuda/ reach it through SvmOps(ctx).loop_device, svm/svm_ops.h).
std::unique_ptr<LoopDevice> MakeCudaLoopDevice(const kernels::cuda::HostCsr& rows,
                                               const kernels::cuda::KernelSpec& kernel);
// The host twins over a host kernel (the simulated device: device pointers are host memory).
std::unique_ptr<LoopDevice> MakeTwinLoopDevice(kernels::SvmKernelRows& kernel);

// `dev` with its kernel launches counted (core/device.h CountLaunches): as many per call as the CUDA table launches
// for those sizes, whichever table `dev` is (svm/device_loop_counted.cc). RunDeviceLoop runs through it.
std::unique_ptr<LoopDevice> CountingLaunches(LoopDevice& dev);

struct LoopProblem {
  const int32_t* sample_rows = nullptr;  // host: sample s is dataset row sample_rows[s]
  const int8_t* y = nullptr;             // host: +1 / -1 per sample
  int64_t l = 0;
  double cp = 1;
  double cn = 1;
  // The formulation (BinaryProblem's, smo_solver.h), host arrays per sample: the linear term (null: -1, C-SVC's),
  // the starting a (null: 0), and Solver_NU's selection, elimination and rho.
  const double* p = nullptr;
  const double* alpha0 = nullptr;
  bool nu = false;
  double eps = 1e-3;
  ShrinkingPolicy shrinking = ShrinkingPolicy::kPeriodic;
  int64_t max_iterations = -1;
  int working_set = 1024;  // q <= kMaxQ
  int64_t inner_limit = -1;
  double inner_factor = 0.1;
  int64_t cache_bytes = int64_t{100} << 20;  // the row cache's budget (at least q rows are kept whatever it says)
};

// The loop's device work (RoundCounts: totals between the end of the setup and the final downloads, of that after
// the first round, and the most one round made) and its own counts.
struct LoopResult : RoundCounts {
  // The final state per sample, in sample order: a_i (unsigned), G_i and the bound status.
  std::vector<double> a;
  std::vector<double> g;
  std::vector<int8_t> status;
  double gap = 0;
  int64_t iterations = 0;
  int64_t selections = 0;  // top-k selections (rounds, plus the final checks and re-selections after restoring)
  int64_t kernel_evaluations = 0;
  int64_t shrink_checks = 0;
  int64_t active_changes = 0;  // elimination checks that changed the active set (cache compactions)
  int64_t reconstructions = 0;
  int64_t bound_changes = 0;
  int64_t min_active = 0;
  int64_t cache_hits = 0;  // working-set rows found in the row cache
  int64_t cache_misses = 0;
  int64_t cache_slots = 0;
  bool hit_iteration_limit = false;
};

LoopResult RunDeviceLoop(LoopDevice& dev, const LoopProblem& problem);

// The row cache's bookkeeping on the host (the rows live on the device): `slots` rows, keyed by sample, least
// recently used evicted first, never a row of the current working set.
class RowCache {
 public:
  RowCache(int64_t l, int64_t slots);
  // Slots for the m samples of a working set (distinct): slot[t] per entry, and the entries whose rows must be
  // computed (missing, in entry order). m <= slots.
  void Assign(const int32_t* ws, int64_t m, int32_t* slot, std::vector<int32_t>* missing);
  void Clear();  // every row invalid (the columns grew)
  // The slots holding rows, for compaction.
  std::vector<int32_t> Used() const;
  int64_t slots() const { return static_cast<int64_t>(sample_.size()); }
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }

 private:
  void Unlink(int32_t slot);
  void PushBack(int32_t slot);  // most recent

  std::vector<int32_t> slot_of_;  // per sample, -1 when not cached
  std::vector<int32_t> sample_;   // per slot, -1 when free
  std::vector<int32_t> prev_;
  std::vector<int32_t> next_;
  std::vector<int64_t> stamp_;  // the round a slot was last used in (pinned when it is the current one)
  int32_t first_ = -1;          // least recently used
  int32_t last_ = -1;
  int64_t round_ = 0;
  int64_t hits_ = 0;
  int64_t misses_ = 0;
};

}  // namespace tessel::svm::devloop
