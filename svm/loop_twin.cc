// Host twins of the device SVM loop's raw operations (svm/device_loop.h), for the simulated device, where
// device pointers are host memory: the CUDA kernels' contracts (svm/cuda/loop_device.cu) computed serially or
// with the host's parallel loops, each the host batched solver's own arithmetic (batch_solver.cc), so the loop on
// the twin answers as SolveBinaryBatched does.
#include <algorithm>
#include <limits>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "core/device.h"
#include "core/error.h"
#include "core/parallel.h"
#include "kernels/svm_kernel.h"
#include "svm/device_loop.h"
#include "svm/solver_common.h"

namespace tessel::svm::devloop {
namespace {

constexpr int64_t kGrain = 2048;

class TwinDevice final : public LoopDevice {
 public:
  explicit TwinDevice(kernels::SvmKernelRows& kernel) : kernel_(kernel), start_(kernel.evaluations()) {}

  void SetColumns(int slot, const int32_t* ids, int64_t n) override {
    TESSEL_CHECK(slot == 0 || slot == 1, "device SVM twin: column slot {}", slot);
    cols_[slot] = std::span<const int32_t>(ids, static_cast<size_t>(n));
    if (n == 0) return;
    // The CUDA rows read the columns' entry count back (cuSPARSE's matrix descriptor takes it on the host): the
    // same one download here.
    if (nnz_.capacity() == 0) {  // at the first columns (the loop's setup); tests of other entries need no device
      nnz_.Reserve(1);
      *nnz_.data() = 0;  // simulated device memory is host memory
    }
    int32_t nnz = 0;
    nnz_.Download(&nnz, 1);
  }
  void QRows(int slot, const int32_t* ws, const int8_t* sign, int64_t q, const int8_t* col_sign, float* out) override {
    const std::span<const int32_t> cols = cols_[slot];
    const size_t n = cols.size();
    const std::span<const int8_t> signs(col_sign, col_sign == nullptr ? 0 : n);
    for (int64_t t = 0; t < q; ++t)
      kernel_.QRow(ws[t], sign == nullptr ? 1 : sign[t], cols, signs, {out + static_cast<size_t>(t) * n, n});
  }
  void Diagonal(const int32_t* ids, int64_t n, double* diag) override {
    parallel_for<int64_t>(0, n, 1024, [&](int64_t k) { diag[k] = kernel_.Diagonal(ids[k]); });
  }
  int64_t Evaluations() const override { return kernel_.evaluations() - start_; }
  void ReserveRows(int64_t, int64_t) override {}

  size_t TopKScratchBytes(int64_t, int64_t) const override { return 0; }
  // The CUDA kernels' tournament (loop_device.cu: TopKTiles, TopKMerge, CopyHead) stage by stage.
  void TopK(int side, int label, int64_t n, const int32_t* act, const int8_t* y, const int8_t* st, const double* g,
            int64_t k, double* keys, int32_t* ids, void*) override {
    const int tile = static_cast<int>(TopKTile(k));
    int64_t lists = std::max<int64_t>(1, (n + tile - 1) / tile);
    key_.assign(static_cast<size_t>(lists * tile), -kInf);
    id_.assign(key_.size(), -1);
    for (int64_t p = 0; p < n; ++p) {
      const int32_t s = act[p];
      double v = 0;
      if (!CandidateKey(side, label, y[s], st[s], g[s], &v)) continue;
      key_[static_cast<size_t>(p)] = v;
      id_[static_cast<size_t>(p)] = s;
    }
    for (int64_t b = 0; b < lists; ++b) Network(key_.data() + b * tile, id_.data() + b * tile, tile, 2);
    std::vector<double> mk(2 * static_cast<size_t>(tile));
    std::vector<int32_t> mi(mk.size());
    while (lists > 1) {
      const int64_t next = (lists + 1) / 2;
      for (int64_t b = 0; b < next; ++b) {
        const int64_t a = 2 * b;
        const bool pair = a + 1 < lists;
        for (int t = 0; t < tile; ++t) {
          mk[static_cast<size_t>(t)] = key_[static_cast<size_t>(a * tile + t)];
          mi[static_cast<size_t>(t)] = id_[static_cast<size_t>(a * tile + t)];
          mk[static_cast<size_t>(2 * tile - 1 - t)] = pair ? key_[static_cast<size_t>((a + 1) * tile + t)] : -kInf;
          mi[static_cast<size_t>(2 * tile - 1 - t)] = pair ? id_[static_cast<size_t>((a + 1) * tile + t)] : -1;
        }
        if (pair) Network(mk.data(), mi.data(), 2 * tile, 2 * tile);
        // In place is safe: list b is written after lists 2b and 2b + 1 (>= b) were read.
        std::copy(mk.begin(), mk.begin() + tile, key_.begin() + b * tile);
        std::copy(mi.begin(), mi.begin() + tile, id_.begin() + b * tile);
      }
      lists = next;
    }
    std::copy(key_.begin(), key_.begin() + k, keys);
    std::copy(id_.begin(), id_.begin() + k, ids);
  }
  void TopKBoth(int label, int64_t n, const int32_t* act, const int8_t* y, const int8_t* st, const double* g, int64_t k,
                double* up_keys, int32_t* up_ids, double* low_keys, int32_t* low_ids, void* scratch) override {
    TopK(0, label, n, act, y, st, g, k, up_keys, up_ids, scratch);
    TopK(1, label, n, act, y, st, g, k, low_keys, low_ids, scratch);
  }
  void FormWorkingSet(const double* up_key, const int32_t* up_id, const double* low_key, const int32_t* low_id,
                      int64_t k, int64_t q, int part, uint8_t* chosen, const int32_t* pos, const int32_t* rows,
                      const int8_t* y, SelectInfo* info, int32_t* ws_pos, int32_t* ws_rows, int8_t* ws_y) override {
    devloop::FormWorkingSet(up_key, up_id, low_key, low_id, k, q, part, chosen, pos, rows, y, info, ws_pos, ws_rows,
                            ws_y);
  }

  void LocalSmo(int64_t m, const float* arena, int64_t stride, const int32_t* slot, const int32_t* ws,
                const int32_t* ws_pos, const int8_t* y, const double* qd, const double* alpha, const double* g,
                double cp, double cn, double eps, double factor, int64_t limit, bool nu, double* new_alpha,
                RoundInfo* info) override {
    BatchVars v;
    v.Reserve(static_cast<size_t>(m));
    for (int64_t t = 0; t < m; ++t) {
      const int32_t s = ws[t];
      v.Add(y[s], qd[s], y[s] > 0 ? cp : cn, alpha[s], g[s]);
    }
    const auto q = [&](int64_t t, int64_t u) { return arena[static_cast<int64_t>(slot[t]) * stride + ws_pos[u]]; };
    info->steps = SolveBatchSubproblem(v, q, eps, factor, limit, nu);
    std::copy(v.alpha.begin(), v.alpha.end(), new_alpha);
  }
  void ApplyRound(int64_t m, const int32_t* ws, const int32_t* ws_rows, const int8_t* ws_y, const double* new_alpha,
                  double cp, double cn, bool track_gbar, const int8_t* y, double* alpha, int8_t* st, double* delta,
                  double* coef, RoundInfo* info, int32_t* changed_rows, int8_t* changed_y,
                  double* changed_coef) override {
    int64_t n = 0;
    for (int64_t t = 0; t < m; ++t) {
      if (!ApplyEntry(t, ws, new_alpha, cp, cn, track_gbar, y, alpha, st, delta, coef)) continue;
      info->list[n] = static_cast<int32_t>(t);
      changed_rows[n] = ws_rows[t];
      changed_y[n] = ws_y[t];
      changed_coef[n] = coef[t];
      ++n;
    }
    info->changed = n;
  }
  void UpdateActive(int64_t n, int64_t m, const float* arena, int64_t stride, const int32_t* slot, const double* delta,
                    const double* coef, bool track_gbar, const int32_t* act, double* g, double* g_bar) override {
    parallel_for<int64_t>(0, n, kGrain, [&](int64_t k) {
      double v = g[act[k]];
      double b = track_gbar ? g_bar[act[k]] : 0.0;
      for (int64_t t = 0; t < m; ++t) {
        const float r = arena[static_cast<int64_t>(slot[t]) * stride + k];
        if (delta[t] != 0) v += delta[t] * r;
        if (track_gbar && coef[t] != 0) b += coef[t] * r;
      }
      g[act[k]] = v;
      if (track_gbar) g_bar[act[k]] = b;
    });
  }
  void AddRows(int64_t n, int64_t m, const float* rows, const double* coef, const int32_t* coef_idx,
               const int32_t* list, double* dst) override {
    parallel_for<int64_t>(0, n, kGrain, [&](int64_t k) {
      double v = dst[list[k]];
      for (int64_t t = 0; t < m; ++t) v += coef[coef_idx == nullptr ? t : coef_idx[t]] * rows[t * n + k];
      dst[list[k]] = v;
    });
  }
  void StoreRows(int64_t m, int64_t n, const float* src, const int32_t* slot, float* arena, int64_t stride) override {
    for (int64_t t = 0; t < m; ++t)
      std::copy(src + t * n, src + (t + 1) * n, arena + static_cast<int64_t>(slot[t]) * stride);
  }
  void CompactRows(int64_t m, const int32_t* slot, float* arena, int64_t stride, const int32_t* remap, int64_t n,
                   float* tmp) override {
    for (int64_t t = 0; t < m; ++t) {
      const float* row = arena + static_cast<int64_t>(slot[t]) * stride;
      for (int64_t k = 0; k < n; ++k) tmp[t * n + k] = row[remap[k]];
    }
    StoreRows(m, n, tmp, slot, arena, stride);
  }

  void Iota(int64_t n, int32_t* out) override {
    for (int64_t k = 0; k < n; ++k) out[k] = static_cast<int32_t>(k);
  }
  void SetActive(int64_t l, int64_t n, const int32_t* act, const int32_t* rows, const int8_t* y, int32_t* pos,
                 int32_t* act_rows, int8_t* act_y) override {
    std::fill(pos, pos + l, -1);
    for (int64_t k = 0; k < n; ++k) {
      pos[act[k]] = static_cast<int32_t>(k);
      act_rows[k] = rows[act[k]];
      act_y[k] = y[act[k]];
    }
  }
  void GatherI32(int64_t n, const int32_t* idx, const int32_t* src, int32_t* out) override {
    for (int64_t k = 0; k < n; ++k) out[k] = src[idx[k]];
  }
  void GatherI8(int64_t n, const int32_t* idx, const int8_t* src, int8_t* out) override {
    for (int64_t k = 0; k < n; ++k) out[k] = src[idx[k]];
  }
  size_t CompactScratchBytes(int64_t) const override { return 0; }
  void Compact(Keep keep, int64_t n, const int32_t* in, const int8_t* y, const int8_t* st, const double* g,
               const int32_t* pos, const Extremes4& ext, int32_t* out, int64_t* count, void*) override {
    int64_t c = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int32_t s = keep == Keep::kInactive ? static_cast<int32_t>(k) : in[k];
      bool kept = false;
      switch (keep) {
        case Keep::kNotShrunk:
          kept = !ext.Shrunk(y[s], st[s], g[s]);
          break;
        case Keep::kFree:
          kept = st[s] == batch::kFree;
          break;
        case Keep::kInactive:
          kept = pos[s] < 0;
          break;
      }
      if (kept) out[c++] = s;
    }
    *count = c;
  }
  void Extremes(int64_t n, const int32_t* act, const int8_t* y, const int8_t* st, const double* g, int label,
                double* out) override {
    ViolationExtremes ext;
    for (int64_t k = 0; k < n; ++k)
      if (label == 0 || y[act[k]] == label) ext.Add(y[act[k]], st[act[k]], g[act[k]]);
    out[0] = ext.gmax1;
    out[1] = ext.gmax2;
  }
  void ResetFromGBar(int64_t n, const int32_t* inact, const double* g_bar, const double* p, double* g) override {
    for (int64_t k = 0; k < n; ++k) g[inact[k]] = g_bar[inact[k]] + p[inact[k]];
  }

 private:
  kernels::SvmKernelRows& kernel_;
  int64_t start_;
  // The bitonic network's stages from first_size (loop_device.cu's Bitonic), serially.
  static void Network(double* key, int32_t* id, int n, int first_size) {
    for (int size = first_size; size <= n; size <<= 1)
      for (int stride = size >> 1; stride > 0; stride >>= 1)
        for (int t = 0; t < n / 2; ++t) BitonicStep(key, id, size, stride, t);
  }

  std::span<const int32_t> cols_[2];
  device::Array<int32_t> nnz_;  // what SetColumns downloads
  std::vector<double> key_;
  std::vector<int32_t> id_;
};

}  // namespace

std::unique_ptr<LoopDevice> MakeTwinLoopDevice(kernels::SvmKernelRows& kernel) {
  return std::make_unique<TwinDevice>(kernel);
}

}  // namespace tessel::svm::devloop
