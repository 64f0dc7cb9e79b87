// The batched working-set C-SVC solver on CUDA (ThunderSVM, Wen et al., JMLR 2018), the device twin of
// train/svm/batch_solver.cc: selection by sorting -y G, rows by one SpMM, the subproblem in one block, elimination.
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/host_vector.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/system_error.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/cuda_check.h"
#include "core/log.h"
#include "train/svm/batch_step.h"
#include "train/svm/cuda/batch_solver_cuda.h"
#include "train/svm/elimination.h"

namespace tessel::train::svm::cuda {
namespace {

using batch::InLow;
using batch::InUp;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kMaxQ = 1024;
constexpr int kThreads = 256;

template <typename T>
T* Raw(thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}
int Blocks(int64_t n) { return static_cast<int>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 65535 * 32)); }

// ---- selection: per active position, -y G as the key of I_up / I_low ----
struct IsUp {
  const int8_t* y;
  const int8_t* st;
  const int32_t* act;
  __device__ bool operator()(int32_t k) const { return InUp(y[act[k]], st[act[k]]); }
};
struct IsLow {
  const int8_t* y;
  const int8_t* st;
  const int32_t* act;
  __device__ bool operator()(int32_t k) const { return InLow(y[act[k]], st[act[k]]); }
};
__global__ void Keys(const int32_t* pos, int64_t n, const int32_t* act, const int8_t* y, const double* g, double* key) {
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int32_t s = act[pos[k]];
    key[k] = -y[s] * g[s];
  }
}

// ---- the subproblem: one block, thread t owns working-set entry t ----
struct Pick {
  double v;
  int i;
};
// Ties go to the larger index, as the host's ">=" / "<=" scans.
__device__ inline Pick Better(Pick a, Pick b, bool max) {
  if (b.i < 0) return a;
  if (a.i < 0) return b;
  if (max ? b.v > a.v : b.v < a.v) return b;
  if (b.v == a.v && b.i > a.i) return b;
  return a;
}

__global__ void LocalSmo(int m, int64_t n, const float* __restrict__ rows, const int32_t* __restrict__ ws,
                         const int32_t* __restrict__ ws_pos, const int8_t* __restrict__ y_all,
                         const double* __restrict__ qd_all, const double* __restrict__ alpha_all,
                         const double* __restrict__ g_all, double cp, double cn, double eps, double factor,
                         int64_t limit, double* __restrict__ new_alpha, int64_t* __restrict__ steps_out) {
  __shared__ double a[kMaxQ];
  __shared__ double g[kMaxQ];
  __shared__ int32_t pos[kMaxQ];
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
    yy[t] = y_all[s];
    st[t] = batch::StatusOf(a[t], yy[t] > 0 ? cp : cn);
  }
  __syncthreads();
  int64_t steps = 0;
  for (; steps < limit; ++steps) {
    Pick p{-kInf, -1};
    if (t < m && InUp(yy[t], st[t])) p = {-yy[t] * g[t], t};
    red_v[t] = p.v;
    red_i[t] = p.i;
    __syncthreads();
    for (int w = nt / 2; w > 0; w /= 2) {
      if (t < w) {
        const Pick r = Better({red_v[t], red_i[t]}, {red_v[t + w], red_i[t + w]}, true);
        red_v[t] = r.v;
        red_i[t] = r.i;
      }
      __syncthreads();
    }
    const int i = red_i[0];
    const double gmax = red_v[0];
    __syncthreads();
    if (i < 0) break;
    Pick q{kInf, -1};
    double v2 = -kInf;
    if (t < m && InLow(yy[t], st[t])) {
      const double v = yy[t] * g[t];
      v2 = v;
      const double grad_diff = gmax + v;
      if (grad_diff > 0) q = {batch::PairGain(yy[i], yy[t], qd_all[ws[i]], qd_t, rows[i * n + pos[t]], grad_diff), t};
    }
    red_v[t] = q.v;
    red_i[t] = q.i;
    red_m[t] = v2;
    __syncthreads();
    for (int w = nt / 2; w > 0; w /= 2) {
      if (t < w) {
        const Pick r = Better({red_v[t], red_i[t]}, {red_v[t + w], red_i[t + w]}, false);
        red_v[t] = r.v;
        red_i[t] = r.i;
        red_m[t] = fmax(red_m[t], red_m[t + w]);
      }
      __syncthreads();
    }
    if (t == 0) {
      const int j = red_i[0];
      const double gap = gmax + red_m[0];
      if (steps == 0) local_eps = fmax(eps, factor * gap);
      stop = gap < local_eps || j < 0;
      if (!stop) {
        const double ci = yy[i] > 0 ? cp : cn;
        const double cj = yy[j] > 0 ? cp : cn;
        const double old_i = a[i];
        const double old_j = a[j];
        batch::UpdatePair(yy[i], yy[j], qd_all[ws[i]], qd_all[ws[j]], rows[i * n + pos[j]], g[i], g[j], ci, cj, &a[i],
                          &a[j]);
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
    if (t < m) g[t] += rows[pick_i * n + pos[t]] * d_i + rows[pick_j * n + pos[t]] * d_j;
    __syncthreads();
  }
  if (t < m) new_alpha[t] = a[t];
  if (t == 0) *steps_out = steps;
}

// G[act[k]] += sum_t delta[t] rows[t][k], t in working-set order, skipping unmoved entries.
__global__ void UpdateGradient(int64_t n, int m, const float* __restrict__ rows, const double* __restrict__ delta,
                               const int32_t* __restrict__ act, double* __restrict__ g) {
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double v = g[act[k]];
    for (int t = 0; t < m; ++t)
      if (delta[t] != 0) v += delta[t] * rows[t * n + k];
    g[act[k]] = v;
  }
}

// out_list[k] gets c * row[k] added at out_list[k] (G_bar updates).
__global__ void AddRow(int64_t n, double c, const float* __restrict__ row, const int32_t* __restrict__ list,
                       double* __restrict__ dst) {
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dst[list[k]] += c * row[k];
}

// Reconstruction: g[inact[k]] += sum_t alpha[free[t]] rows[t][k].
__global__ void AddFree(int64_t n, int m, const float* __restrict__ rows, const int32_t* __restrict__ free_s,
                        const double* __restrict__ alpha, const int32_t* __restrict__ inact, double* __restrict__ g) {
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double v = g[inact[k]];
    for (int t = 0; t < m; ++t) v += alpha[free_s[t]] * rows[t * n + k];
    g[inact[k]] = v;
  }
}

__global__ void ResetFromGBar(int64_t n, const int32_t* __restrict__ inact, const double* __restrict__ g_bar,
                              double* __restrict__ g) {
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x)
    g[inact[k]] = g_bar[inact[k]] - 1.0;
}

template <typename T>
__global__ void GatherBy(int64_t n, const int32_t* __restrict__ idx, const T* __restrict__ src, T* __restrict__ dst) {
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dst[k] = src[idx[k]];
}

struct NotShrunk {
  const int8_t* y;
  const int8_t* st;
  const double* g;
  double gmax1;
  double gmax2;
  __device__ bool operator()(int32_t s) const { return !batch::BeShrunk(y[s], st[s], g[s], gmax1, gmax2); }
};
struct IsFree {
  const int8_t* st;
  __device__ bool operator()(int32_t s) const { return st[s] == batch::kFree; }
};
struct NotIn {
  const int32_t* pos;
  __device__ bool operator()(int32_t s) const { return pos[s] < 0; }
};
__global__ void MarkPositions(int64_t n, const int32_t* __restrict__ act, int32_t* __restrict__ pos) {
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x)
    pos[act[k]] = static_cast<int32_t>(k);
}

class DeviceSolver {
 public:
  explicit DeviceSolver(const BatchCudaProblem& p);
  BatchCudaResult Run();

 private:
  double C(int8_t y) const { return y > 0 ? p_.cp : p_.cn; }
  void SetActive(int64_t n);  // act_ holds the first n entries; rebuilds positions, rows, labels, inactive list
  void SetAllActive();
  double Select(std::vector<int32_t>* ws);
  void Reconstruct();
  void DoShrinking();
  std::pair<double, double> Extremes();

  const BatchCudaProblem& p_;
  kernels::cuda::SvmKernelRowsCuda kernel_;
  int64_t l_;
  EliminationSchedule schedule_;
  int64_t q_;
  int64_t max_iter_;
  int64_t inner_limit_;
  thrust::device_vector<int32_t> rows_;  // dataset row per sample
  thrust::device_vector<int8_t> y_;
  thrust::device_vector<double> qd_, alpha_, g_, g_bar_;
  thrust::device_vector<int8_t> st_;
  thrust::device_vector<int32_t> act_, act_rows_, pos_, inact_, inact_rows_;
  thrust::device_vector<int8_t> act_y_, inact_y_;
  thrust::device_vector<int32_t> cand_;  // selection scratch: positions
  thrust::device_vector<double> key_;
  thrust::device_vector<int32_t> ws_, ws_pos_, ws_rows_;
  thrust::device_vector<int8_t> ws_y_;
  thrust::device_vector<float> krows_;
  thrust::device_vector<float> scratch_;
  thrust::device_vector<double> new_alpha_, delta_;
  thrust::device_vector<int64_t> steps_;
  std::vector<int8_t> h_y_;
  int64_t n_act_ = 0;
  int64_t n_inact_ = 0;
  bool unshrink_ = false;
  int64_t shrink_checks_ = 0, reconstructions_ = 0, bound_changes_ = 0, min_active_ = 0;
};

DeviceSolver::DeviceSolver(const BatchCudaProblem& p)
    : p_(p),
      kernel_(p.rows, p.kernel),
      l_(p.l),
      schedule_(p.shrinking, p.l, p.eps),
      q_(p.working_set),
      max_iter_(p.max_iterations < 0 ? std::max<int64_t>(10000000, 100 * p.l) : p.max_iterations),
      inner_limit_(p.inner_limit < 0 ? int64_t{10} * p.working_set : p.inner_limit) {
  TESSEL_CHECK(q_ >= 2 && q_ <= kMaxQ && q_ % 2 == 0, "CUDA batch solver: working set {} must be even, 2..{}", q_,
               kMaxQ);
  rows_.assign(p.sample_rows, p.sample_rows + l_);
  y_.assign(p.y, p.y + l_);
  h_y_.assign(p.y, p.y + l_);
  qd_.resize(l_);
  kernel_.Diagonal(Raw(rows_), l_, Raw(qd_));
  alpha_.assign(l_, 0.0);
  g_.assign(l_, -1.0);
  g_bar_.assign(l_, 0.0);
  st_.assign(l_, batch::kLower);
  new_alpha_.resize(q_);
  delta_.resize(q_);
  steps_.resize(1);
  SetAllActive();
  min_active_ = l_;
}

void DeviceSolver::SetAllActive() {
  act_.resize(l_);
  thrust::sequence(thrust::device, act_.begin(), act_.end(), 0);
  SetActive(l_);
}

void DeviceSolver::SetActive(int64_t n) {
  n_act_ = n;
  act_.resize(n);
  pos_.assign(l_, -1);
  act_rows_.resize(n);
  act_y_.resize(n);
  if (n > 0) {
    MarkPositions<<<Blocks(n), kThreads>>>(n, Raw(act_), Raw(pos_));
    TESSEL_CUDA_CHECK_LAUNCH();
    GatherBy<int32_t><<<Blocks(n), kThreads>>>(n, Raw(act_), Raw(rows_), Raw(act_rows_));
    TESSEL_CUDA_CHECK_LAUNCH();
    GatherBy<int8_t><<<Blocks(n), kThreads>>>(n, Raw(act_), Raw(y_), Raw(act_y_));
    TESSEL_CUDA_CHECK_LAUNCH();
  }
  inact_.resize(l_);
  n_inact_ =
      thrust::copy_if(thrust::device, thrust::counting_iterator<int32_t>(0),
                      thrust::counting_iterator<int32_t>(static_cast<int32_t>(l_)), inact_.begin(), NotIn{Raw(pos_)}) -
      inact_.begin();
  inact_.resize(n_inact_);
  inact_rows_.resize(n_inact_);
  inact_y_.resize(n_inact_);
  if (n_inact_ > 0) {
    GatherBy<int32_t><<<Blocks(n_inact_), kThreads>>>(n_inact_, Raw(inact_), Raw(rows_), Raw(inact_rows_));
    TESSEL_CUDA_CHECK_LAUNCH();
    GatherBy<int8_t><<<Blocks(n_inact_), kThreads>>>(n_inact_, Raw(inact_), Raw(y_), Raw(inact_y_));
    TESSEL_CUDA_CHECK_LAUNCH();
  }
  kernel_.SetColumns(0, Raw(act_rows_), n_act_);
  kernel_.SetColumns(1, Raw(inact_rows_), n_inact_);
}

// The host solver's Select: up to q/2 of I_up by largest -y G, then I_low by smallest -y G (ties: smaller
// sample, which stable sorts of ascending positions give), merged on the host from the two sorted heads.
double DeviceSolver::Select(std::vector<int32_t>* ws) {
  ws->clear();
  const auto head = [&](bool up, std::vector<int32_t>* out_s, double* first) {
    cand_.resize(n_act_);
    key_.resize(n_act_);
    const auto all = thrust::counting_iterator<int32_t>(0);
    const auto end =
        up ? thrust::copy_if(thrust::device, all, all + n_act_, cand_.begin(), IsUp{Raw(y_), Raw(st_), Raw(act_)})
           : thrust::copy_if(thrust::device, all, all + n_act_, cand_.begin(), IsLow{Raw(y_), Raw(st_), Raw(act_)});
    const int64_t c = end - cand_.begin();
    out_s->clear();
    if (c == 0) return;
    Keys<<<Blocks(c), kThreads>>>(Raw(cand_), c, Raw(act_), Raw(y_), Raw(g_), Raw(key_));
    TESSEL_CUDA_CHECK_LAUNCH();
    if (up)
      thrust::stable_sort_by_key(thrust::device, key_.begin(), key_.begin() + c, cand_.begin(),
                                 thrust::greater<double>());
    else
      thrust::stable_sort_by_key(thrust::device, key_.begin(), key_.begin() + c, cand_.begin());
    const int64_t take = std::min<int64_t>(c, q_);
    std::vector<int32_t> h_pos(static_cast<size_t>(take));
    TESSEL_CUDA_CHECK(cudaMemcpy(h_pos.data(), Raw(cand_), sizeof(int32_t) * take, cudaMemcpyDeviceToHost));
    TESSEL_CUDA_CHECK(cudaMemcpy(first, Raw(key_), sizeof(double), cudaMemcpyDeviceToHost));
    out_s->resize(h_pos.size());
    thrust::device_vector<int32_t> d_pos(h_pos.begin(), h_pos.end());
    thrust::device_vector<int32_t> d_s(h_pos.size());
    GatherBy<int32_t><<<Blocks(take), kThreads>>>(take, Raw(d_pos), Raw(act_), Raw(d_s));
    TESSEL_CUDA_CHECK_LAUNCH();
    thrust::copy(d_s.begin(), d_s.end(), out_s->begin());
  };
  std::vector<int32_t> up;
  std::vector<int32_t> low;
  double up_first = 0;
  double low_first = 0;
  head(true, &up, &up_first);
  head(false, &low, &low_first);
  if (up.empty() || low.empty()) return -kInf;
  std::vector<char> chosen(static_cast<size_t>(l_), 0);
  const auto q = static_cast<size_t>(q_);
  size_t u = 0;
  for (; u < up.size() && ws->size() < q / 2; ++u) ws->push_back(up[u]), chosen[up[u]] = 1;
  for (size_t w = 0; w < low.size() && ws->size() < q; ++w)
    if (!chosen[low[w]]) ws->push_back(low[w]), chosen[low[w]] = 1;
  for (; u < up.size() && ws->size() < q; ++u)
    if (!chosen[up[u]]) ws->push_back(up[u]), chosen[up[u]] = 1;
  return up_first - low_first;
}

void DeviceSolver::Reconstruct() {
  if (n_inact_ == 0) return;
  ++reconstructions_;
  ResetFromGBar<<<Blocks(n_inact_), kThreads>>>(n_inact_, Raw(inact_), Raw(g_bar_), Raw(g_));
  TESSEL_CUDA_CHECK_LAUNCH();
  thrust::device_vector<int32_t> free_s(n_act_);
  const int64_t nf =
      thrust::copy_if(thrust::device, act_.begin(), act_.end(), free_s.begin(), IsFree{Raw(st_)}) - free_s.begin();
  thrust::device_vector<int32_t> free_rows(std::max<int64_t>(nf, 1));
  thrust::device_vector<int8_t> free_y(std::max<int64_t>(nf, 1));
  if (nf > 0) {
    GatherBy<int32_t><<<Blocks(nf), kThreads>>>(nf, Raw(free_s), Raw(rows_), Raw(free_rows));
    TESSEL_CUDA_CHECK_LAUNCH();
    GatherBy<int8_t><<<Blocks(nf), kThreads>>>(nf, Raw(free_s), Raw(y_), Raw(free_y));
    TESSEL_CUDA_CHECK_LAUNCH();
  }
  scratch_.resize(static_cast<size_t>(q_ * n_inact_));
  for (int64_t b = 0; b < nf; b += q_) {
    const int64_t m = std::min(q_, nf - b);
    kernel_.QRows(1, Raw(free_rows) + b, Raw(free_y) + b, m, Raw(inact_y_), Raw(scratch_));
    AddFree<<<Blocks(n_inact_), kThreads>>>(n_inact_, static_cast<int>(m), Raw(scratch_), Raw(free_s) + b, Raw(alpha_),
                                            Raw(inact_), Raw(g_));
    TESSEL_CUDA_CHECK_LAUNCH();
  }
}

// (max_{I_up} -y G, max_{I_low} y G) over the active set, from the sorted heads' keys.
std::pair<double, double> DeviceSolver::Extremes() {
  std::vector<int32_t> ws;
  double gmax1 = -kInf;
  double gmax2 = -kInf;
  thrust::host_vector<int8_t> st = st_;
  thrust::host_vector<double> g = g_;
  thrust::host_vector<int32_t> act = act_;
  for (const int32_t s : act) {
    if (InUp(h_y_[s], st[s])) gmax1 = std::max(gmax1, -h_y_[s] * g[s]);
    if (InLow(h_y_[s], st[s])) gmax2 = std::max(gmax2, h_y_[s] * g[s]);
  }
  return {gmax1, gmax2};
}

void DeviceSolver::DoShrinking() {
  ++shrink_checks_;
  const auto [gmax1, gmax2] = Extremes();
  if (schedule_.Unshrink(unshrink_, gmax1 + gmax2)) {
    unshrink_ = true;
    Reconstruct();
    SetAllActive();
  }
  thrust::device_vector<int32_t> keep(n_act_);
  const int64_t n = thrust::copy_if(thrust::device, act_.begin(), act_.end(), keep.begin(),
                                    NotShrunk{Raw(y_), Raw(st_), Raw(g_), gmax1, gmax2}) -
                    keep.begin();
  if (n != n_act_) {
    keep.resize(n);
    act_.swap(keep);
    SetActive(n);
  }
  min_active_ = std::min(min_active_, n_act_);
}

BatchCudaResult DeviceSolver::Run() {
  int64_t since = 0;  // iterations since the last check point of the elimination schedule
  int64_t steps = 0;
  int64_t rounds = 0;
  double gap = kInf;
  bool hit_limit = false;
  std::vector<int32_t> ws;
  while (true) {
    if (steps >= max_iter_) {
      hit_limit = true;
      break;
    }
    if (schedule_.Due(since)) {
      since = 0;
      if (schedule_.CheckNow(gap)) DoShrinking();
    }
    gap = Select(&ws);
    if (gap < p_.eps) {
      if (n_inact_ == 0) break;
      Reconstruct();
      SetAllActive();
      gap = Select(&ws);
      if (gap < p_.eps) break;
      since = schedule_.period();  // eliminate again at the next round
    }
    ++rounds;
    const auto m = static_cast<int64_t>(ws.size());
    ws_.assign(ws.begin(), ws.end());
    ws_pos_.resize(m);
    ws_rows_.resize(m);
    ws_y_.resize(m);
    GatherBy<int32_t><<<Blocks(m), kThreads>>>(m, Raw(ws_), Raw(pos_), Raw(ws_pos_));
    GatherBy<int32_t><<<Blocks(m), kThreads>>>(m, Raw(ws_), Raw(rows_), Raw(ws_rows_));
    GatherBy<int8_t><<<Blocks(m), kThreads>>>(m, Raw(ws_), Raw(y_), Raw(ws_y_));
    TESSEL_CUDA_CHECK_LAUNCH();
    krows_.resize(static_cast<size_t>(m * n_act_));
    kernel_.QRows(0, Raw(ws_rows_), Raw(ws_y_), m, Raw(act_y_), Raw(krows_));
    int block = 32;
    while (block < m) block *= 2;
    LocalSmo<<<1, block>>>(static_cast<int>(m), n_act_, Raw(krows_), Raw(ws_), Raw(ws_pos_), Raw(y_), Raw(qd_),
                           Raw(alpha_), Raw(g_), p_.cp, p_.cn, p_.eps, p_.inner_factor,
                           std::min(inner_limit_, max_iter_ - steps), Raw(new_alpha_), Raw(steps_));
    TESSEL_CUDA_CHECK_LAUNCH();
    int64_t taken = 0;
    TESSEL_CUDA_CHECK(cudaMemcpy(&taken, Raw(steps_), sizeof(int64_t), cudaMemcpyDeviceToHost));
    steps += taken;
    since += taken;
    std::vector<double> h_new(static_cast<size_t>(m));
    std::vector<double> h_old(static_cast<size_t>(m));
    TESSEL_CUDA_CHECK(cudaMemcpy(h_new.data(), Raw(new_alpha_), sizeof(double) * m, cudaMemcpyDeviceToHost));
    thrust::device_vector<double> old(m);
    GatherBy<double><<<Blocks(m), kThreads>>>(m, Raw(ws_), Raw(alpha_), Raw(old));
    TESSEL_CUDA_CHECK_LAUNCH();
    thrust::copy(old.begin(), old.end(), h_old.begin());
    std::vector<double> h_delta(static_cast<size_t>(m));
    for (int64_t t = 0; t < m; ++t) h_delta[t] = h_new[t] != h_old[t] ? h_new[t] - h_old[t] : 0.0;
    thrust::copy(h_delta.begin(), h_delta.end(), delta_.begin());
    UpdateGradient<<<Blocks(n_act_), kThreads>>>(n_act_, static_cast<int>(m), Raw(krows_), Raw(delta_), Raw(act_),
                                                 Raw(g_));
    TESSEL_CUDA_CHECK_LAUNCH();
    thrust::host_vector<int8_t> h_st(m);
    for (int64_t t = 0; t < m; ++t) {
      if (h_delta[t] == 0) continue;
      const int32_t s = ws[t];
      const double c = C(h_y_[s]);
      const int8_t before = batch::StatusOf(h_old[t], c);
      const int8_t after = batch::StatusOf(h_new[t], c);
      alpha_[s] = h_new[t];
      st_[s] = after;
      if (!schedule_.eliminates() || (before == batch::kUpper) == (after == batch::kUpper)) continue;
      ++bound_changes_;
      const double sc = before == batch::kUpper ? -c : c;
      AddRow<<<Blocks(n_act_), kThreads>>>(n_act_, sc, Raw(krows_) + t * n_act_, Raw(act_), Raw(g_bar_));
      TESSEL_CUDA_CHECK_LAUNCH();
      if (n_inact_ > 0) {
        scratch_.resize(static_cast<size_t>(std::max(n_inact_, q_ * n_inact_)));
        kernel_.QRows(1, Raw(ws_rows_) + t, Raw(ws_y_) + t, 1, Raw(inact_y_), Raw(scratch_));
        AddRow<<<Blocks(n_inact_), kThreads>>>(n_inact_, sc, Raw(scratch_), Raw(inact_), Raw(g_bar_));
        TESSEL_CUDA_CHECK_LAUNCH();
      }
    }
  }
  if (hit_limit && n_inact_ > 0) {
    Reconstruct();
    SetAllActive();
  }
  if (hit_limit) log::Warn("svm cuda: reached the iteration limit ({}) before the gap fell under eps", max_iter_);
  TESSEL_CUDA_CHECK(cudaDeviceSynchronize());

  // The final state goes back to the host; rho, the objective and the counts are computed there by
  // FillSolution (train/svm/solver_common.h), the same code as the host solvers.
  BatchCudaResult r;
  const thrust::host_vector<double> a = alpha_;
  const thrust::host_vector<double> g = g_;
  const thrust::host_vector<int8_t> st = st_;
  r.a.assign(a.begin(), a.end());
  r.g.assign(g.begin(), g.end());
  r.status.assign(st.begin(), st.end());
  r.gap = gap;
  r.iterations = steps;
  r.rounds = rounds;
  r.kernel_evaluations = kernel_.evaluations();
  r.shrink_checks = shrink_checks_;
  r.reconstructions = reconstructions_;
  r.bound_changes = bound_changes_;
  r.min_active = min_active_;
  r.hit_iteration_limit = hit_limit;
  return r;
}

__global__ void AccumulateDecisions(int64_t n, int64_t m, int64_t pairs, const double* __restrict__ k,
                                    const double* __restrict__ coef, int64_t nsv, int64_t offset,
                                    double* __restrict__ out) {
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < n * pairs;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t p = idx / n;
    const int64_t x = idx - p * n;
    double v = out[idx];
    for (int64_t t = 0; t < m; ++t) v += coef[p * nsv + offset + t] * k[t * n + x];
    out[idx] = v;
  }
}

}  // namespace

BatchCudaResult SolveBatchCuda(const BatchCudaProblem& problem) {
  try {
    DeviceSolver solver(problem);
    return solver.Run();
  } catch (const thrust::system_error& e) {
    throw Error(fmt::format("CUDA batch solver: {}", e.what()));
  }
}

std::vector<double> DecisionValuesCuda(const kernels::cuda::HostCsr& data, int64_t num_queries,
                                       const kernels::cuda::KernelSpec& kernel, const double* coef, int64_t pairs,
                                       const double* rho) {
  try {
    const int64_t nsv = data.num_rows - num_queries;
    kernels::cuda::SvmKernelRowsCuda rows(data, kernel);
    thrust::device_vector<int32_t> ids(data.num_rows);
    thrust::sequence(thrust::device, ids.begin(), ids.end(), 0);
    rows.SetColumns(0, Raw(ids), num_queries);
    std::vector<double> init(static_cast<size_t>(pairs * num_queries));
    for (int64_t p = 0; p < pairs; ++p)
      std::fill(init.begin() + p * num_queries, init.begin() + (p + 1) * num_queries, -rho[p]);
    thrust::device_vector<double> out(init.begin(), init.end());
    thrust::device_vector<double> d_coef(coef, coef + pairs * nsv);
    constexpr int64_t kChunk = 1024;
    thrust::device_vector<double> k(static_cast<size_t>(std::min(kChunk, std::max<int64_t>(nsv, 1)) * num_queries));
    for (int64_t b = 0; b < nsv; b += kChunk) {
      const int64_t m = std::min(kChunk, nsv - b);
      rows.KRows(0, Raw(ids) + num_queries + b, m, Raw(k));
      AccumulateDecisions<<<Blocks(num_queries * pairs), kThreads>>>(num_queries, m, pairs, Raw(k), Raw(d_coef), nsv, b,
                                                                     Raw(out));
      TESSEL_CUDA_CHECK_LAUNCH();
    }
    std::vector<double> h(out.size());
    thrust::copy(out.begin(), out.end(), h.begin());
    return h;
  } catch (const thrust::system_error& e) {
    throw Error(fmt::format("CUDA decision values: {}", e.what()));
  }
}

}  // namespace tessel::train::svm::cuda
