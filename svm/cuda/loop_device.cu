// The device SVM loop's raw operations on CUDA (svm/device_loop.h's LoopDevice): a tournament top-k (bitonic
// sorts of tiles in shared memory, then pairwise bitonic merges; no sort of the whole set), the working set formed
// in one thread, the subproblem in one block reading its rows from the row cache, the bookkeeping in one block, the
// gradient update over the active set, and CUB's stable selection for the active-set compactions, its temporary
// storage sized once. The host twins (svm/loop_twin.cc) are the reference; device_loop_math.h is shared.
// size: every kernel of one LoopDevice with its dispatch; the launch sequence reads top to bottom as the host twin's.
#include <thrust/iterator/counting_iterator.h>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "core/cuda_check.h"
#include "kernels/cuda/launch_cuda.h"
#include "kernels/cuda/svm_kernel_cuda.h"
#include "svm/batch_step.h"
#include "svm/device_loop.h"
#include "svm/device_loop_math.h"

namespace tessel::svm::devloop {
namespace {

using kernels::cuda::Blocks;
using kernels::cuda::GlobalIndex;
using kernels::cuda::GlobalStride;
using kernels::cuda::kThreads;

// ---- top-k: tiles of K (a power of two >= k) sorted in shared memory, then merged in pairs

constexpr int kMaxTile = 2 * kMaxQ;  // a merge holds two lists of K <= kMaxQ
constexpr int kSortThreads = 512;

// The bitonic network's stages from `first_size` (a sort runs size = 2..n; a merge of a bitonic sequence only
// size = n), a stage's compare-exchanges spread over the block's threads.
__device__ inline void Bitonic(double* key, int32_t* id, int n, int first_size) {
  for (int size = first_size; size <= n; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = static_cast<int>(threadIdx.x); t < n / 2; t += static_cast<int>(blockDim.x))
        BitonicStep(key, id, size, stride, t);
      __syncthreads();
    }
  }
}

// Side side0 + blockIdx.y (one side, or both in one launch), its lists at out + blockIdx.y * side_entries.
__global__ void __launch_bounds__(kSortThreads)
    TopKTiles(int side0, int label, int64_t n, const int32_t* __restrict__ act, const int8_t* __restrict__ y,
              const int8_t* __restrict__ st, const double* __restrict__ g, int tile, int64_t side_entries,
              double* __restrict__ out_key, int32_t* __restrict__ out_id) {
  __shared__ double key[kMaxTile];
  __shared__ int32_t id[kMaxTile];
  const int side = side0 + static_cast<int>(blockIdx.y);
  out_key += blockIdx.y * side_entries;
  out_id += blockIdx.y * side_entries;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * tile;
  for (int t = static_cast<int>(threadIdx.x); t < tile; t += static_cast<int>(blockDim.x)) {
    double v = -HUGE_VAL;
    int32_t s = -1;
    if (base + t < n) {
      const int32_t c = act[base + t];
      if (CandidateKey(side, label, y[c], st[c], g[c], &v)) s = c;
    }
    key[t] = v;
    id[t] = s;
  }
  __syncthreads();
  Bitonic(key, id, tile, 2);
  for (int t = static_cast<int>(threadIdx.x); t < tile; t += static_cast<int>(blockDim.x)) {
    out_key[base + t] = key[t];
    out_id[base + t] = id[t];
  }
}

// Block b: the best `tile` of lists 2b and 2b + 1 (each sorted), or list 2b alone when it is the last; of the side
// blockIdx.y, whose lists are at + blockIdx.y * side_entries.
__global__ void __launch_bounds__(kSortThreads)
    TopKMerge(int64_t lists, int tile, int64_t side_entries, const double* __restrict__ in_key,
              const int32_t* __restrict__ in_id, double* __restrict__ out_key, int32_t* __restrict__ out_id) {
  __shared__ double key[kMaxTile];
  __shared__ int32_t id[kMaxTile];
  in_key += blockIdx.y * side_entries;
  in_id += blockIdx.y * side_entries;
  out_key += blockIdx.y * side_entries;
  out_id += blockIdx.y * side_entries;
  const int64_t a = 2 * static_cast<int64_t>(blockIdx.x);
  const bool pair = a + 1 < lists;
  for (int t = static_cast<int>(threadIdx.x); t < tile; t += static_cast<int>(blockDim.x)) {
    key[t] = in_key[a * tile + t];
    id[t] = in_id[a * tile + t];
    // The second list reversed: the two form a bitonic sequence.
    key[2 * tile - 1 - t] = pair ? in_key[(a + 1) * tile + t] : -HUGE_VAL;
    id[2 * tile - 1 - t] = pair ? in_id[(a + 1) * tile + t] : -1;
  }
  __syncthreads();
  if (pair) Bitonic(key, id, 2 * tile, 2 * tile);
  for (int t = static_cast<int>(threadIdx.x); t < tile; t += static_cast<int>(blockDim.x)) {
    out_key[static_cast<int64_t>(blockIdx.x) * tile + t] = key[t];
    out_id[static_cast<int64_t>(blockIdx.x) * tile + t] = id[t];
  }
}

// The first k of side blockIdx.y's list (at + blockIdx.y * side_entries) into key_y / id_y.
__global__ void CopyHead(int64_t k, int64_t side_entries, const double* __restrict__ in_key,
                         const int32_t* __restrict__ in_id, double* __restrict__ key0, int32_t* __restrict__ id0,
                         double* __restrict__ key1, int32_t* __restrict__ id1) {
  in_key += blockIdx.y * side_entries;
  in_id += blockIdx.y * side_entries;
  double* key = blockIdx.y == 0 ? key0 : key1;
  int32_t* id = blockIdx.y == 0 ? id0 : id1;
  for (int64_t t = GlobalIndex(); t < k; t += GlobalStride()) {
    key[t] = in_key[t];
    id[t] = in_id[t];
  }
}

__global__ void FormWorkingSetKernel(const double* up_key, const int32_t* up_id, const double* low_key,
                                     const int32_t* low_id, int64_t k, int64_t q, int part, uint8_t* chosen,
                                     const int32_t* pos, const int32_t* rows, const int8_t* y, SelectInfo* info,
                                     int32_t* ws_pos, int32_t* ws_rows, int8_t* ws_y) {
  FormWorkingSet(up_key, up_id, low_key, low_id, k, q, part, chosen, pos, rows, y, info, ws_pos, ws_rows, ws_y);
}

// ---- the subproblem: one block, thread t owns working-set entry t; rows from the cache arena

constexpr double kInf = HUGE_VAL;

struct Pick {
  double v;
  int i;
};
// Ties go to the larger index, as the host's ">=" / "<=" scans (SolveBatchSubproblem).
__device__ inline Pick BetterPick(Pick a, Pick b, bool max) {
  if (b.i < 0) return a;
  if (a.i < 0) return b;
  if (max ? b.v > a.v : b.v < a.v) return b;
  if (b.v == a.v && b.i > a.i) return b;
  return a;
}
// A block-wide tree reduction over the nt threads (a power of two) of the picks in red_v / red_i (BetterPick with
// `max`) and, when red_m is given, of the largest red_m; the results land in entry 0. Every thread of the block calls
// it after writing its own entries (it synchronises before and after each level).
__device__ inline void ReducePicks(double* red_v, int* red_i, double* red_m, int nt, int t, bool max) {
  __syncthreads();
  for (int w = nt / 2; w > 0; w /= 2) {
    if (t < w) {
      const Pick r = BetterPick({red_v[t], red_i[t]}, {red_v[t + w], red_i[t + w]}, max);
      red_v[t] = r.v;
      red_i[t] = r.i;
      if (red_m != nullptr) red_m[t] = fmax(red_m[t], red_m[t + w]);
    }
    __syncthreads();
  }
}

__global__ void __launch_bounds__(kMaxQ)
    LocalSmoKernel(int m, const float* __restrict__ arena, int64_t stride, const int32_t* __restrict__ slot,
                   const int32_t* __restrict__ ws, const int32_t* __restrict__ ws_pos, const int8_t* __restrict__ y_all,
                   const double* __restrict__ qd_all, const double* __restrict__ alpha_all,
                   const double* __restrict__ g_all, double cp, double cn, double eps, double factor, int64_t limit,
                   bool nu, double* __restrict__ new_alpha, RoundInfo* __restrict__ info) {
  __shared__ double a[kMaxQ];
  __shared__ double g[kMaxQ];
  __shared__ int32_t pos[kMaxQ];
  __shared__ int32_t row_slot[kMaxQ];
  __shared__ int8_t yy[kMaxQ];
  __shared__ int8_t st[kMaxQ];
  __shared__ double red_v[kMaxQ];
  __shared__ int red_i[kMaxQ];
  __shared__ double red_m[kMaxQ];
  __shared__ double d_i;
  __shared__ double d_j;
  __shared__ int pick_i;
  __shared__ int pick_j;
  __shared__ bool stop;
  __shared__ double local_eps;
  const int t = static_cast<int>(threadIdx.x);
  const int nt = static_cast<int>(blockDim.x);      // a power of two >= m
  const double qd_t = t < m ? qd_all[ws[t]] : 0.0;  // 48 KB of static shared memory: the diagonal stays global
  if (t < m) {
    const int32_t s = ws[t];
    a[t] = alpha_all[s];
    g[t] = g_all[s];
    pos[t] = ws_pos[t];
    row_slot[t] = slot[t];
    yy[t] = y_all[s];
    st[t] = batch::StatusOf(a[t], yy[t] > 0 ? cp : cn);
  }
  __syncthreads();
  const auto row = [&](int e) { return arena + static_cast<int64_t>(row_slot[e]) * stride; };
  int64_t steps = 0;
  // SelectBatchPair, or with `nu` SelectBatchNuPair (solver_common.h): a side's reductions run once over every
  // entry, or once per label (y = +1, then y = -1).
  const int sides = nu ? 2 : 1;
  const auto on_side = [&](int side) { return !nu || (yy[t] > 0) == (side == 0); };
  for (; steps < limit; ++steps) {
    int first[2] = {-1, -1};  // I_up's largest -y G
    double gmax[2] = {-kInf, -kInf};
    for (int side = 0; side < sides; ++side) {
      Pick p{-kInf, -1};
      if (t < m && on_side(side) && batch::InUp(yy[t], st[t])) p = {-yy[t] * g[t], t};
      red_v[t] = p.v;
      red_i[t] = p.i;
      ReducePicks(red_v, red_i, nullptr, nt, t, true);
      first[side] = red_i[0];
      gmax[side] = red_v[0];
      __syncthreads();
    }
    int i = first[0] >= 0 ? first[0] : first[1];
    if (i < 0) break;
    // Over I_low: the largest y G, and the second-order partner of its own side's first.
    Pick best[2] = {{kInf, -1}, {kInf, -1}};
    double gmax2[2] = {-kInf, -kInf};
    for (int side = 0; side < sides; ++side) {
      Pick q{kInf, -1};
      double v2 = -kInf;
      const int f = first[side];
      if (t < m && on_side(side) && batch::InLow(yy[t], st[t])) {
        const double v = yy[t] * g[t];
        v2 = v;
        const double grad_diff = gmax[side] + v;
        if (f >= 0 && grad_diff > 0)
          q = {batch::PairGain(yy[f], yy[t], qd_all[ws[f]], qd_t, row(f)[pos[t]], grad_diff), t};
      }
      red_v[t] = q.v;
      red_i[t] = q.i;
      red_m[t] = v2;
      ReducePicks(red_v, red_i, red_m, nt, t, false);
      best[side] = {red_v[0], red_i[0]};
      gmax2[side] = red_m[0];
      __syncthreads();
    }
    const int j = BetterPick(best[0], best[1], false).i;
    if (nu && j >= 0) i = first[yy[j] > 0 ? 0 : 1];
    if (t == 0) {
      const double gap = nu ? fmax(gmax[0] + gmax2[0], gmax[1] + gmax2[1]) : gmax[0] + gmax2[0];
      if (steps == 0) local_eps = fmax(eps, factor * gap);
      stop = gap < local_eps || j < 0;
      if (!stop) {
        const double ci = yy[i] > 0 ? cp : cn;
        const double cj = yy[j] > 0 ? cp : cn;
        const double old_i = a[i];
        const double old_j = a[j];
        batch::UpdatePair(yy[i], yy[j], qd_all[ws[i]], qd_all[ws[j]], row(i)[pos[j]], g[i], g[j], ci, cj, &a[i], &a[j]);
        d_i = a[i] - old_i;
        d_j = a[j] - old_j;
        st[i] = batch::StatusOf(a[i], ci);
        st[j] = batch::StatusOf(a[j], cj);
        pick_i = i;
        pick_j = j;
      }
    }
    __syncthreads();
    if (stop) break;
    if (t < m) g[t] += row(pick_i)[pos[t]] * d_i + row(pick_j)[pos[t]] * d_j;
    __syncthreads();
  }
  if (t < m) new_alpha[t] = a[t];
  if (t == 0) info->steps = steps;
}

__global__ void __launch_bounds__(kMaxQ)
    ApplyRoundKernel(int m, const int32_t* __restrict__ ws, const int32_t* __restrict__ ws_rows,
                     const int8_t* __restrict__ ws_y, const double* __restrict__ new_alpha, double cp, double cn,
                     bool track_gbar, const int8_t* __restrict__ y, double* __restrict__ alpha, int8_t* __restrict__ st,
                     double* __restrict__ delta, double* __restrict__ coef, RoundInfo* __restrict__ info,
                     int32_t* __restrict__ changed_rows, int8_t* __restrict__ changed_y,
                     double* __restrict__ changed_coef) {
  __shared__ bool changed[kMaxQ];
  const int t = static_cast<int>(threadIdx.x);
  if (t < m) changed[t] = ApplyEntry(t, ws, new_alpha, cp, cn, track_gbar, y, alpha, st, delta, coef);
  __syncthreads();
  if (t != 0) return;
  int64_t n = 0;
  for (int e = 0; e < m; ++e) {
    if (!changed[e]) continue;
    info->list[n] = e;
    changed_rows[n] = ws_rows[e];
    changed_y[n] = ws_y[e];
    changed_coef[n] = coef[e];
    ++n;
  }
  info->changed = n;
}

__global__ void UpdateActiveKernel(int64_t n, int m, const float* __restrict__ arena, int64_t stride,
                                   const int32_t* __restrict__ slot, const double* __restrict__ delta,
                                   const double* __restrict__ coef, bool track_gbar, const int32_t* __restrict__ act,
                                   double* __restrict__ g, double* __restrict__ g_bar) {
  __shared__ double d[kMaxQ];
  __shared__ double c[kMaxQ];
  __shared__ int64_t base[kMaxQ];
  for (int t = static_cast<int>(threadIdx.x); t < m; t += static_cast<int>(blockDim.x)) {
    d[t] = delta[t];
    c[t] = track_gbar ? coef[t] : 0.0;
    base[t] = static_cast<int64_t>(slot[t]) * stride;
  }
  __syncthreads();
  for (int64_t k = GlobalIndex(); k < n; k += GlobalStride()) {
    const int32_t s = act[k];
    double v = g[s];
    double b = track_gbar ? g_bar[s] : 0.0;
    for (int t = 0; t < m; ++t) {
      if (d[t] == 0 && c[t] == 0) continue;
      const double r = arena[base[t] + k];
      if (d[t] != 0) v += d[t] * r;
      if (c[t] != 0) b += c[t] * r;
    }
    g[s] = v;
    if (track_gbar) g_bar[s] = b;
  }
}

__global__ void AddRowsKernel(int64_t n, int64_t m, const float* __restrict__ rows, const double* __restrict__ coef,
                              const int32_t* __restrict__ coef_idx, const int32_t* __restrict__ list,
                              double* __restrict__ dst) {
  for (int64_t k = GlobalIndex(); k < n; k += GlobalStride()) {
    double v = dst[list[k]];
    for (int64_t t = 0; t < m; ++t) v += coef[coef_idx == nullptr ? t : coef_idx[t]] * rows[t * n + k];
    dst[list[k]] = v;
  }
}

__global__ void StoreRowsKernel(int64_t m, int64_t n, const float* __restrict__ src, const int32_t* __restrict__ slot,
                                float* __restrict__ arena, int64_t stride) {
  for (int64_t idx = GlobalIndex(); idx < m * n; idx += GlobalStride()) {
    const int64_t t = idx / n;
    const int64_t k = idx - t * n;
    arena[static_cast<int64_t>(slot[t]) * stride + k] = src[idx];
  }
}

__global__ void GatherColumns(int64_t m, int64_t n, const int32_t* __restrict__ slot, const float* __restrict__ arena,
                              int64_t stride, const int32_t* __restrict__ remap, float* __restrict__ tmp) {
  for (int64_t idx = GlobalIndex(); idx < m * n; idx += GlobalStride()) {
    const int64_t t = idx / n;
    const int64_t k = idx - t * n;
    tmp[idx] = arena[static_cast<int64_t>(slot[t]) * stride + remap[k]];
  }
}

__global__ void IotaKernel(int64_t n, int32_t* out) {
  for (int64_t k = GlobalIndex(); k < n; k += GlobalStride()) out[k] = static_cast<int32_t>(k);
}
__global__ void FillKernel(int64_t n, int32_t v, int32_t* out) {
  for (int64_t k = GlobalIndex(); k < n; k += GlobalStride()) out[k] = v;
}
__global__ void MarkActive(int64_t n, const int32_t* __restrict__ act, const int32_t* __restrict__ rows,
                           const int8_t* __restrict__ y, int32_t* __restrict__ pos, int32_t* __restrict__ act_rows,
                           int8_t* __restrict__ act_y) {
  for (int64_t k = GlobalIndex(); k < n; k += GlobalStride()) {
    const int32_t s = act[k];
    pos[s] = static_cast<int32_t>(k);
    act_rows[k] = rows[s];
    act_y[k] = y[s];
  }
}
template <typename T>
__global__ void GatherKernel(int64_t n, const int32_t* __restrict__ idx, const T* __restrict__ src,
                             T* __restrict__ out) {
  for (int64_t k = GlobalIndex(); k < n; k += GlobalStride()) out[k] = src[idx[k]];
}
__global__ void ResetKernel(int64_t n, const int32_t* __restrict__ inact, const double* __restrict__ g_bar,
                            const double* __restrict__ p, double* __restrict__ g) {
  for (int64_t k = GlobalIndex(); k < n; k += GlobalStride()) g[inact[k]] = g_bar[inact[k]] + p[inact[k]];
}

// One block: max_{I_up} -y G and max_{I_low} y G over the samples of `label` (0: all).
__global__ void __launch_bounds__(1024)
    ExtremesKernel(int64_t n, const int32_t* __restrict__ act, const int8_t* __restrict__ y,
                   const int8_t* __restrict__ st, const double* __restrict__ g, int label, double* __restrict__ out) {
  __shared__ double m1[1024];
  __shared__ double m2[1024];
  double a = -kInf;
  double b = -kInf;
  for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
    const int32_t s = act[k];
    if (label != 0 && y[s] != label) continue;
    if (batch::InUp(y[s], st[s])) a = fmax(a, -y[s] * g[s]);
    if (batch::InLow(y[s], st[s])) b = fmax(b, y[s] * g[s]);
  }
  m1[threadIdx.x] = a;
  m2[threadIdx.x] = b;
  __syncthreads();
  for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) {
      m1[threadIdx.x] = fmax(m1[threadIdx.x], m1[threadIdx.x + w]);
      m2[threadIdx.x] = fmax(m2[threadIdx.x], m2[threadIdx.x + w]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    out[0] = m1[0];
    out[1] = m2[0];
  }
}

struct NotShrunk {
  const int8_t* y;
  const int8_t* st;
  const double* g;
  Extremes4 ext;
  __device__ bool operator()(int32_t s) const { return !ext.Shrunk(y[s], st[s], g[s]); }
};
struct IsFree {
  const int8_t* st;
  __device__ bool operator()(int32_t s) const { return st[s] == batch::kFree; }
};
struct NotIn {
  const int32_t* pos;
  __device__ bool operator()(int32_t s) const { return pos[s] < 0; }
};

template <typename In, typename Op>
size_t SelectBytes(In in, int64_t n, Op op) {
  size_t bytes = 0;
  TESSEL_CUDA_CHECK(
      cub::DeviceSelect::If(nullptr, bytes, in, static_cast<int32_t*>(nullptr), static_cast<int64_t*>(nullptr), n, op));
  return bytes;
}

class CudaDevice final : public LoopDevice {
 public:
  CudaDevice(const kernels::cuda::HostCsr& rows, const kernels::cuda::KernelSpec& spec) : rows_(rows, spec) {}

  void SetColumns(int slot, const int32_t* ids, int64_t n) override { rows_.SetColumns(slot, ids, n); }
  void QRows(int slot, const int32_t* ws, const int8_t* sign, int64_t q, const int8_t* col_sign, float* out) override {
    rows_.QRows(slot, ws, sign, q, col_sign, out);
  }
  void Diagonal(const int32_t* ids, int64_t n, double* diag) override { rows_.Diagonal(ids, n, diag); }
  int64_t Evaluations() const override { return rows_.evaluations(); }
  void ReserveRows(int64_t q, int64_t n) override { rows_.ReserveRows(q, n); }

  // Two ping-pong areas of lists * tile entries per side (both sides: TopKBoth), keys, then ids.
  size_t TopKScratchBytes(int64_t n, int64_t k) const override {
    const int64_t tile = TopKTile(k);
    const int64_t lists = std::max<int64_t>(1, (n + tile - 1) / tile);
    return static_cast<size_t>(2 * 2 * lists * tile) * (sizeof(double) + sizeof(int32_t));
  }
  void TopK(int side, int label, int64_t n, const int32_t* act, const int8_t* y, const int8_t* st, const double* g,
            int64_t k, double* keys, int32_t* ids, void* scratch) override {
    TopKSides(side, 1, label, n, act, y, st, g, k, keys, ids, nullptr, nullptr, scratch);
  }
  void TopKBoth(int label, int64_t n, const int32_t* act, const int8_t* y, const int8_t* st, const double* g, int64_t k,
                double* up_keys, int32_t* up_ids, double* low_keys, int32_t* low_ids, void* scratch) override {
    TopKSides(0, 2, label, n, act, y, st, g, k, up_keys, up_ids, low_keys, low_ids, scratch);
  }
  // The tournament of sides side0 .. side0 + sides - 1 (candidates of `label`: 0 any), each launch over all of them
  // (grid y): side s's lists in its own part of each ping-pong area.
  void TopKSides(int side0, int sides, int label, int64_t n, const int32_t* act, const int8_t* y, const int8_t* st,
                 const double* g, int64_t k, double* keys0, int32_t* ids0, double* keys1, int32_t* ids1,
                 void* scratch) {
    const int64_t tile = TopKTile(k);
    int64_t lists = std::max<int64_t>(1, (n + tile - 1) / tile);
    auto* base = static_cast<char*>(scratch);
    const int64_t per_side = lists * tile;
    const size_t area = static_cast<size_t>(2 * per_side);  // entries of one ping-pong area (room for both sides)
    double* key[2] = {reinterpret_cast<double*>(base), reinterpret_cast<double*>(base) + area};
    int32_t* id[2] = {reinterpret_cast<int32_t*>(base + 2 * area * sizeof(double)),
                      reinterpret_cast<int32_t*>(base + 2 * area * sizeof(double)) + area};
    const auto ys = static_cast<unsigned>(sides);
    TopKTiles<<<dim3(static_cast<unsigned>(lists), ys), kSortThreads>>>(
        side0, label, n, act, y, st, g, static_cast<int>(tile), per_side, key[0], id[0]);
    TESSEL_CUDA_CHECK_LAUNCH();
    int cur = 0;
    while (lists > 1) {
      const int64_t next = (lists + 1) / 2;
      TopKMerge<<<dim3(static_cast<unsigned>(next), ys), kSortThreads>>>(lists, static_cast<int>(tile), per_side,
                                                                         key[cur], id[cur], key[1 - cur], id[1 - cur]);
      TESSEL_CUDA_CHECK_LAUNCH();
      cur = 1 - cur;
      lists = next;
    }
    CopyHead<<<dim3(static_cast<unsigned>(Blocks(k)), ys), kThreads>>>(k, per_side, key[cur], id[cur], keys0, ids0,
                                                                       keys1, ids1);
    TESSEL_CUDA_CHECK_LAUNCH();
  }
  void FormWorkingSet(const double* up_key, const int32_t* up_id, const double* low_key, const int32_t* low_id,
                      int64_t k, int64_t q, int part, uint8_t* chosen, const int32_t* pos, const int32_t* rows,
                      const int8_t* y, SelectInfo* info, int32_t* ws_pos, int32_t* ws_rows, int8_t* ws_y) override {
    FormWorkingSetKernel<<<1, 1>>>(up_key, up_id, low_key, low_id, k, q, part, chosen, pos, rows, y, info, ws_pos,
                                   ws_rows, ws_y);
    TESSEL_CUDA_CHECK_LAUNCH();
  }

  void LocalSmo(int64_t m, const float* arena, int64_t stride, const int32_t* slot, const int32_t* ws,
                const int32_t* ws_pos, const int8_t* y, const double* qd, const double* alpha, const double* g,
                double cp, double cn, double eps, double factor, int64_t limit, bool nu, double* new_alpha,
                RoundInfo* info) override {
    LocalSmoKernel<<<1, BlockFor(m)>>>(static_cast<int>(m), arena, stride, slot, ws, ws_pos, y, qd, alpha, g, cp, cn,
                                       eps, factor, limit, nu, new_alpha, info);
    TESSEL_CUDA_CHECK_LAUNCH();
  }
  void ApplyRound(int64_t m, const int32_t* ws, const int32_t* ws_rows, const int8_t* ws_y, const double* new_alpha,
                  double cp, double cn, bool track_gbar, const int8_t* y, double* alpha, int8_t* st, double* delta,
                  double* coef, RoundInfo* info, int32_t* changed_rows, int8_t* changed_y,
                  double* changed_coef) override {
    ApplyRoundKernel<<<1, BlockFor(m)>>>(static_cast<int>(m), ws, ws_rows, ws_y, new_alpha, cp, cn, track_gbar, y,
                                         alpha, st, delta, coef, info, changed_rows, changed_y, changed_coef);
    TESSEL_CUDA_CHECK_LAUNCH();
  }
  void UpdateActive(int64_t n, int64_t m, const float* arena, int64_t stride, const int32_t* slot, const double* delta,
                    const double* coef, bool track_gbar, const int32_t* act, double* g, double* g_bar) override {
    if (n == 0 || m == 0) return;
    UpdateActiveKernel<<<Blocks(n), kThreads>>>(n, static_cast<int>(m), arena, stride, slot, delta, coef, track_gbar,
                                                act, g, g_bar);
    TESSEL_CUDA_CHECK_LAUNCH();
  }
  void AddRows(int64_t n, int64_t m, const float* rows, const double* coef, const int32_t* coef_idx,
               const int32_t* list, double* dst) override {
    if (n == 0 || m == 0) return;
    AddRowsKernel<<<Blocks(n), kThreads>>>(n, m, rows, coef, coef_idx, list, dst);
    TESSEL_CUDA_CHECK_LAUNCH();
  }
  void StoreRows(int64_t m, int64_t n, const float* src, const int32_t* slot, float* arena, int64_t stride) override {
    if (n == 0 || m == 0) return;
    StoreRowsKernel<<<Blocks(m * n), kThreads>>>(m, n, src, slot, arena, stride);
    TESSEL_CUDA_CHECK_LAUNCH();
  }
  void CompactRows(int64_t m, const int32_t* slot, float* arena, int64_t stride, const int32_t* remap, int64_t n,
                   float* tmp) override {
    if (n == 0 || m == 0) return;
    GatherColumns<<<Blocks(m * n), kThreads>>>(m, n, slot, arena, stride, remap, tmp);
    TESSEL_CUDA_CHECK_LAUNCH();
    StoreRows(m, n, tmp, slot, arena, stride);
  }

  void Iota(int64_t n, int32_t* out) override {
    IotaKernel<<<Blocks(n), kThreads>>>(n, out);
    TESSEL_CUDA_CHECK_LAUNCH();
  }
  void SetActive(int64_t l, int64_t n, const int32_t* act, const int32_t* rows, const int8_t* y, int32_t* pos,
                 int32_t* act_rows, int8_t* act_y) override {
    FillKernel<<<Blocks(l), kThreads>>>(l, -1, pos);
    TESSEL_CUDA_CHECK_LAUNCH();
    if (n == 0) return;
    MarkActive<<<Blocks(n), kThreads>>>(n, act, rows, y, pos, act_rows, act_y);
    TESSEL_CUDA_CHECK_LAUNCH();
  }
  void GatherI32(int64_t n, const int32_t* idx, const int32_t* src, int32_t* out) override {
    if (n == 0) return;
    GatherKernel<int32_t><<<Blocks(n), kThreads>>>(n, idx, src, out);
    TESSEL_CUDA_CHECK_LAUNCH();
  }
  void GatherI8(int64_t n, const int32_t* idx, const int8_t* src, int8_t* out) override {
    if (n == 0) return;
    GatherKernel<int8_t><<<Blocks(n), kThreads>>>(n, idx, src, out);
    TESSEL_CUDA_CHECK_LAUNCH();
  }
  size_t CompactScratchBytes(int64_t n) const override {
    const thrust::counting_iterator<int32_t> all(0);
    const int32_t* in = nullptr;
    return std::max({SelectBytes(in, n, NotShrunk{}), SelectBytes(in, n, IsFree{}), SelectBytes(all, n, NotIn{})});
  }
  void Compact(Keep keep, int64_t n, const int32_t* in, const int8_t* y, const int8_t* st, const double* g,
               const int32_t* pos, const Extremes4& ext, int32_t* out, int64_t* count, void* scratch) override {
    size_t bytes = CompactScratchBytes(n);
    switch (keep) {
      case Keep::kNotShrunk:
        TESSEL_CUDA_CHECK(cub::DeviceSelect::If(scratch, bytes, in, out, count, n, NotShrunk{y, st, g, ext}));
        ::tessel::device::NoteLaunchesSeen(2);
        break;
      case Keep::kFree:
        TESSEL_CUDA_CHECK(cub::DeviceSelect::If(scratch, bytes, in, out, count, n, IsFree{st}));
        ::tessel::device::NoteLaunchesSeen(2);
        break;
      case Keep::kInactive:
        TESSEL_CUDA_CHECK(
            cub::DeviceSelect::If(scratch, bytes, thrust::counting_iterator<int32_t>(0), out, count, n, NotIn{pos}));
        ::tessel::device::NoteLaunchesSeen(2);
        break;
    }
  }
  void Extremes(int64_t n, const int32_t* act, const int8_t* y, const int8_t* st, const double* g, int label,
                double* out) override {
    ExtremesKernel<<<1, 1024>>>(n, act, y, st, g, label, out);
    TESSEL_CUDA_CHECK_LAUNCH();
  }
  void ResetFromGBar(int64_t n, const int32_t* inact, const double* g_bar, const double* p, double* g) override {
    if (n == 0) return;
    ResetKernel<<<Blocks(n), kThreads>>>(n, inact, g_bar, p, g);
    TESSEL_CUDA_CHECK_LAUNCH();
  }

 private:
  static unsigned BlockFor(int64_t m) {
    unsigned b = 32;
    while (b < m) b *= 2;
    return b;
  }

  kernels::cuda::SvmKernelRowsCuda rows_;
};

}  // namespace

std::unique_ptr<LoopDevice> MakeCudaLoopDevice(const kernels::cuda::HostCsr& rows,
                                               const kernels::cuda::KernelSpec& kernel) {
  return std::make_unique<CudaDevice>(rows, kernel);
}

}  // namespace tessel::svm::devloop
