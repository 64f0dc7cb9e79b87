// The per-round steps of the device SVM loop (svm/device_loop.h) that the CUDA kernels
// (svm/cuda/loop_device.cu) and their host twins (svm/loop_twin.cc) share: the candidate order of the
// top-k selection, the working set formed from the two heads, and a round's bookkeeping per working-set entry.
// Written once for both (batch_step.h's habit), so the twin is the CUDA path's own arithmetic. C++17, no spans.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "svm/batch_step.h"

namespace tessel::svm::devloop {

inline constexpr int kMaxQ = 1024;  // a working set's largest size: the subproblem runs in one thread block

// What a selection leaves for the host, in device memory, downloaded in one copy of Bytes(q).
struct SelectInfo {
  double gap;     // max_{I_up} -y G - min_{I_low} -y G over the active set (-inf when a side is empty)
  int64_t m;      // working-set size (0 when a side is empty)
  int32_t ws[1];  // m sample ids (the array runs to kMaxQ entries in the allocation)
  static constexpr size_t Bytes(int64_t q) { return 16 + sizeof(int32_t) * static_cast<size_t>(q); }
};

// What a round leaves for the host, downloaded in one copy of Bytes(q).
struct RoundInfo {
  int64_t steps;    // SMO steps of the subproblem
  int64_t changed;  // working-set entries that reached or left C (their G_bar rows)
  int32_t list[1];  // those entries' working-set indices, increasing (kMaxQ entries in the allocation)
  static constexpr size_t Bytes(int64_t q) { return 16 + sizeof(int32_t) * static_cast<size_t>(q); }
};

// The host reads the ids at byte 16 of the downloaded bytes.
static_assert(offsetof(SelectInfo, ws) == 16 && offsetof(RoundInfo, list) == 16, "SelectInfo/RoundInfo layout");

// A top-k candidate: the selection key and the sample id; id < 0 is "none" and orders after every candidate.
// Order: larger key first, then smaller id (the host solver's ties).
TESSEL_HOST_DEVICE inline bool Before(double key_a, int32_t id_a, double key_b, int32_t id_b) {
  if (id_a < 0) return false;
  if (id_b < 0) return true;
  return key_a > key_b || (key_a == key_b && id_a < id_b);
}

// ---- the tournament top-k: tiles of `tile` candidates (a power of two >= k) sorted by a bitonic network, then
// sorted lists merged in pairs (the second reversed, so the two form a bitonic sequence). The CUDA kernels run a
// stage's compare-exchanges on a block's threads between barriers; the host twin runs the same stages serially
// (the pairs of one stage are disjoint, so the order within a stage does not matter).

inline constexpr int kMinTile = 32;

TESSEL_HOST_DEVICE inline int64_t TopKTile(int64_t k) {
  int64_t t = kMinTile;
  while (t < k) t *= 2;
  return t;
}

// Afterwards position a is not after position b in Before's order.
TESSEL_HOST_DEVICE inline void CompareExchange(double* key, int32_t* id, int a, int b) {
  if (Before(key[b], id[b], key[a], id[a])) {
    const double kk = key[a];
    key[a] = key[b];
    key[b] = kk;
    const int32_t ii = id[a];
    id[a] = id[b];
    id[b] = ii;
  }
}

// Compare-exchange t (t < n / 2) of the stage (size, stride) of the bitonic network over n entries: a full sort
// runs size = 2, 4, .., n and, for each, stride = size / 2, .., 1; the merge of a bitonic sequence only size = n.
TESSEL_HOST_DEVICE inline void BitonicStep(double* key, int32_t* id, int size, int stride, int t) {
  const int lo = 2 * t - (t & (stride - 1));
  const int hi = lo + stride;
  if ((lo & size) == 0) {
    CompareExchange(key, id, lo, hi);
  } else {
    CompareExchange(key, id, hi, lo);
  }
}

// The key of sample s for side 0 (I_up: -y G) or side 1 (I_low: y G, so the smallest -y G is the largest key);
// false when s is not on that side or not of `label` (0: any; Solver_NU selects per label).
TESSEL_HOST_DEVICE inline bool CandidateKey(int side, int label, int8_t y, int8_t st, double g, double* key) {
  if (label != 0 && y != label) return false;
  if (side == 0) {
    if (!batch::InUp(y, st)) return false;
    *key = -y * g;
  } else {
    if (!batch::InLow(y, st)) return false;
    *key = y * g;
  }
  return true;
}

// The working set from the heads of both sides (best first, k entries each, id < 0 past the end): up to a part's
// quota / 2 from I_up, then I_low until the quota, then I_up again, each sample once (OrderWorkingSet of
// solver_common.h). Part 0 is the whole set (quota q); Solver_NU's are per label (the dist batched solver's Select):
// part 1 the first label's (quota q / 2), part 2 the second's, appended (quota the rest of q). The gap is the
// largest of the parts' max -y G over I_up minus min -y G over I_low (-inf when every part has an empty side).
// chosen[l] is all zero on entry and on exit. Writes info (gap, m, ws) and per entry its active position, dataset
// row and label. Serial: q <= 1024 steps.
TESSEL_HOST_DEVICE inline void FormWorkingSet(const double* up_key, const int32_t* up_id, const double* low_key,
                                              const int32_t* low_id, int64_t k, int64_t q, int part, uint8_t* chosen,
                                              const int32_t* pos, const int32_t* rows, const int8_t* y,
                                              SelectInfo* info, int32_t* ws_pos, int32_t* ws_rows, int8_t* ws_y) {
  if (part != 2) {
    info->m = 0;
    info->gap = -HUGE_VAL;
  }
  if (k == 0 || up_id[0] < 0 || low_id[0] < 0) return;
  const double gap = up_key[0] + low_key[0];
  if (gap > info->gap) info->gap = gap;
  const int64_t base = info->m;
  const int64_t quota = part == 1 ? q / 2 : q - base;
  int64_t m = 0;
  int64_t u = 0;
  const auto take = [&](int32_t s) {
    if (chosen[s] != 0) return;
    chosen[s] = 1;
    info->ws[base + m] = s;
    ws_pos[base + m] = pos[s];
    ws_rows[base + m] = rows[s];
    ws_y[base + m] = y[s];
    ++m;
  };
  for (; u < k && up_id[u] >= 0 && m < quota / 2; ++u) take(up_id[u]);
  for (int64_t w = 0; w < k && low_id[w] >= 0 && m < quota; ++w) take(low_id[w]);
  for (; u < k && up_id[u] >= 0 && m < quota; ++u) take(up_id[u]);
  for (int64_t t = base; t < base + m; ++t) chosen[info->ws[t]] = 0;
  info->m = base + m;
}

// An elimination check's extremes (max_{I_up} -y G, max_{I_low} y G) for the y = +1 samples (v[0], v[1]) and the
// y = -1 ones (v[2], v[3]): Solver_NU's four (NuViolationExtremes' gmax1, gmax2, gmax3, gmax4), or Solver's two
// twice. Shrunk is be_shrunk with the sample's own label's pair (BeShrunk; NuViolationExtremes::BeShrunk).
struct Extremes4 {
  double v[4];
  TESSEL_HOST_DEVICE bool Shrunk(int8_t y, int8_t st, double g) const {
    return batch::BeShrunk(y, st, g, y > 0 ? v[0] : v[2], y > 0 ? v[1] : v[3]);
  }
  // The unshrink test's gap: the larger label's (Solver's one gap when both pairs are the same).
  TESSEL_HOST_DEVICE double Gap() const { return v[0] + v[1] > v[2] + v[3] ? v[0] + v[1] : v[2] + v[3]; }
};

// A round's bookkeeping for working-set entry t after the subproblem: the move delta[t] (0 when unmoved), the new
// alpha and status of its sample, and the G_bar coefficient coef[t] (+C on reaching C, -C on leaving it, 0 else;
// always 0 when nothing is ever eliminated). Returns whether the entry changed sides of C.
TESSEL_HOST_DEVICE inline bool ApplyEntry(int64_t t, const int32_t* ws, const double* new_alpha, double cp, double cn,
                                          bool track_gbar, const int8_t* y, double* alpha, int8_t* st, double* delta,
                                          double* coef) {
  const int32_t s = ws[t];
  const double c = y[s] > 0 ? cp : cn;
  const double before = alpha[s];
  const double after = new_alpha[t];
  delta[t] = after != before ? after - before : 0.0;
  coef[t] = 0.0;
  if (after == before) return false;
  const bool was_upper = batch::StatusOf(before, c) == batch::kUpper;
  alpha[s] = after;
  st[s] = batch::StatusOf(after, c);
  if (!track_gbar || was_upper == (st[s] == batch::kUpper)) return false;
  coef[t] = was_upper ? -c : c;
  return true;
}

}  // namespace tessel::svm::devloop
