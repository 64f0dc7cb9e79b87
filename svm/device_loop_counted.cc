// The device SVM loop's table with its kernel launches counted (svm/device_loop.h CountingLaunches): the one layer
// the CUDA kernels and their host twins both pass through, so a run on the simulated device counts the launches a
// GPU would make.
#include <algorithm>
#include <memory>

#include "core/device.h"
#include "svm/device_loop.h"

namespace tessel::svm::devloop {
namespace {
// The loop's device table with its kernel launches counted (core/device.h CountLaunches), once for the CUDA kernels
// and their host twins: as many per call as svm/cuda/loop_device.cu (and kernels/cuda/svm_kernel.cu's rows) launch
// for those sizes. A CUB pass counts two (its init and its sweep).
class CountedDevice final : public LoopDevice {
 public:
  explicit CountedDevice(LoopDevice& d) : d_(d) {}

  void SetColumns(int slot, const int32_t* ids, int64_t n) override {
    Count(n > 0, 4);  // lengths, a CUB scan, the copy
    cols_[slot == 0 ? 0 : 1] = n;
    d_.SetColumns(slot, ids, n);
  }
  void QRows(int slot, const int32_t* ws, const int8_t* sign, int64_t q, const int8_t* col_sign, float* out) override {
    Count(q > 0 && cols_[slot == 0 ? 0 : 1] > 0, 4);  // a memset, the scatter, cuSPARSE's SpMM, the kernel map
    d_.QRows(slot, ws, sign, q, col_sign, out);
  }
  void Diagonal(const int32_t* ids, int64_t n, double* diag) override {
    Count(n > 0);
    d_.Diagonal(ids, n, diag);
  }
  int64_t Evaluations() const override { return d_.Evaluations(); }
  void ReserveRows(int64_t q, int64_t n) override { d_.ReserveRows(q, n); }
  size_t TopKScratchBytes(int64_t n, int64_t k) const override { return d_.TopKScratchBytes(n, k); }
  void TopK(int side, int label, int64_t n, const int32_t* act, const int8_t* y, const int8_t* st, const double* g,
            int64_t k, double* keys, int32_t* ids, void* scratch) override {
    Count(true, TopKLaunches(n, k));
    d_.TopK(side, label, n, act, y, st, g, k, keys, ids, scratch);
  }
  void TopKBoth(int label, int64_t n, const int32_t* act, const int8_t* y, const int8_t* st, const double* g, int64_t k,
                double* up_keys, int32_t* up_ids, double* low_keys, int32_t* low_ids, void* scratch) override {
    Count(true, TopKLaunches(n, k));  // TopK's, each launch over both sides
    d_.TopKBoth(label, n, act, y, st, g, k, up_keys, up_ids, low_keys, low_ids, scratch);
  }
  void FormWorkingSet(const double* up_key, const int32_t* up_id, const double* low_key, const int32_t* low_id,
                      int64_t k, int64_t q, int part, uint8_t* chosen, const int32_t* pos, const int32_t* rows,
                      const int8_t* y, SelectInfo* info, int32_t* ws_pos, int32_t* ws_rows, int8_t* ws_y) override {
    Count(true);
    d_.FormWorkingSet(up_key, up_id, low_key, low_id, k, q, part, chosen, pos, rows, y, info, ws_pos, ws_rows, ws_y);
  }
  void LocalSmo(int64_t m, const float* arena, int64_t stride, const int32_t* slot, const int32_t* ws,
                const int32_t* ws_pos, const int8_t* y, const double* qd, const double* alpha, const double* g,
                double cp, double cn, double eps, double factor, int64_t limit, bool nu, double* new_alpha,
                RoundInfo* info) override {
    Count(true);
    d_.LocalSmo(m, arena, stride, slot, ws, ws_pos, y, qd, alpha, g, cp, cn, eps, factor, limit, nu, new_alpha, info);
  }
  void ApplyRound(int64_t m, const int32_t* ws, const int32_t* ws_rows, const int8_t* ws_y, const double* new_alpha,
                  double cp, double cn, bool track_gbar, const int8_t* y, double* alpha, int8_t* st, double* delta,
                  double* coef, RoundInfo* info, int32_t* changed_rows, int8_t* changed_y,
                  double* changed_coef) override {
    Count(true);
    d_.ApplyRound(m, ws, ws_rows, ws_y, new_alpha, cp, cn, track_gbar, y, alpha, st, delta, coef, info, changed_rows,
                  changed_y, changed_coef);
  }
  void UpdateActive(int64_t n, int64_t m, const float* arena, int64_t stride, const int32_t* slot, const double* delta,
                    const double* coef, bool track_gbar, const int32_t* act, double* g, double* g_bar) override {
    Count(n > 0 && m > 0);
    d_.UpdateActive(n, m, arena, stride, slot, delta, coef, track_gbar, act, g, g_bar);
  }
  void AddRows(int64_t n, int64_t m, const float* rows, const double* coef, const int32_t* coef_idx,
               const int32_t* list, double* dst) override {
    Count(n > 0 && m > 0);
    d_.AddRows(n, m, rows, coef, coef_idx, list, dst);
  }
  void StoreRows(int64_t m, int64_t n, const float* src, const int32_t* slot, float* arena, int64_t stride) override {
    Count(n > 0 && m > 0);
    d_.StoreRows(m, n, src, slot, arena, stride);
  }
  void CompactRows(int64_t m, const int32_t* slot, float* arena, int64_t stride, const int32_t* remap, int64_t n,
                   float* tmp) override {
    Count(n > 0 && m > 0, 2);  // the gather, then StoreRows
    d_.CompactRows(m, slot, arena, stride, remap, n, tmp);
  }
  void Iota(int64_t n, int32_t* out) override {
    Count(true);
    d_.Iota(n, out);
  }
  void SetActive(int64_t l, int64_t n, const int32_t* act, const int32_t* rows, const int8_t* y, int32_t* pos,
                 int32_t* act_rows, int8_t* act_y) override {
    Count(true, n > 0 ? 2 : 1);  // the fill, the marks
    d_.SetActive(l, n, act, rows, y, pos, act_rows, act_y);
  }
  void GatherI32(int64_t n, const int32_t* idx, const int32_t* src, int32_t* out) override {
    Count(n > 0);
    d_.GatherI32(n, idx, src, out);
  }
  void GatherI8(int64_t n, const int32_t* idx, const int8_t* src, int8_t* out) override {
    Count(n > 0);
    d_.GatherI8(n, idx, src, out);
  }
  size_t CompactScratchBytes(int64_t n) const override { return d_.CompactScratchBytes(n); }
  void Compact(Keep keep, int64_t n, const int32_t* in, const int8_t* y, const int8_t* st, const double* g,
               const int32_t* pos, const Extremes4& ext, int32_t* out, int64_t* count, void* scratch) override {
    Count(true, 2);  // a CUB selection
    d_.Compact(keep, n, in, y, st, g, pos, ext, out, count, scratch);
  }
  void Extremes(int64_t n, const int32_t* act, const int8_t* y, const int8_t* st, const double* g, int label,
                double* out) override {
    Count(true);
    d_.Extremes(n, act, y, st, g, label, out);
  }
  void ResetFromGBar(int64_t n, const int32_t* inact, const double* g_bar, const double* p, double* g) override {
    Count(n > 0);
    d_.ResetFromGBar(n, inact, g_bar, p, g);
  }

 private:
  // The tiles' sorts, one merge a level and the copy of the head.
  static int64_t TopKLaunches(int64_t n, int64_t k) {
    int64_t lists = std::max<int64_t>(1, (n + TopKTile(k) - 1) / TopKTile(k));
    int64_t launches = 2;
    for (; lists > 1; lists = (lists + 1) / 2) ++launches;
    return launches;
  }
  static void Count(bool work, int64_t n = 1) {
    if (work) device::CountLaunches(n);
  }

  LoopDevice& d_;
  int64_t cols_[2] = {0, 0};
};

}  // namespace

std::unique_ptr<LoopDevice> CountingLaunches(LoopDevice& dev) { return std::make_unique<CountedDevice>(dev); }

}  // namespace tessel::svm::devloop
