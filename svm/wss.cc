// Working-set selection scans (wss.h): the block kernels written without branches, and their parallel folds.
//
// Ties. Without a key, a scan keeps the last position of the best value (LIBSVM's serial ">=" and "<="); with a key
// (the distributed solver's global ids), the position of the larger key. Positions scan upwards, so the key-less
// rule is the keyed one with key = position; the kernels are written once over a Ties policy.
#include "svm/wss.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <utility>

#include "core/simd4.h"
#include "svm/batch_step.h"

namespace tessel::svm {
namespace {

// The branch-free scans below are templates over a family of four-lane vectors (core/simd4.h: F::D four doubles,
// F::L four int64 lane masks; 32-byte vectors under AVX2, pairs of 16-byte ones on the baseline), each kernel naming
// them V4d and V4l. mask ? a : c lane by lane (a macro: a function taking 32-byte vectors would change the
// baseline's ABI, and could not be inlined into both instantiations):
#define TESSEL_SELECT(mask, a, c) \
  __builtin_bit_cast(V4d, ((mask) & __builtin_bit_cast(V4l, a)) | (~(mask) & __builtin_bit_cast(V4l, c)))

// Ties to the later position.
struct ByPosition {
  static constexpr bool kPositions = true;  // the scans keep the last best (`<=`, `>=`): no keys to compare
  int64_t Of(int64_t pos) const { return pos; }
};
// Ties to the larger key[pos]. Lanes writes four positions' keys through a pointer (a 32-byte vector returned by
// value would change the baseline's ABI).
struct ByKey {
  static constexpr bool kPositions = false;
  const int64_t* key;
  int64_t Of(int64_t pos) const { return key[pos]; }
  template <class V4l>
  void Lanes(int64_t j, V4l* out) const {
    *out = V4l{key[j], key[j + 1], key[j + 2], key[j + 3]};
  }
};

// Whether candidate (value, pos) replaces the best so far (best_value, best_pos; best_pos -1 for none), `less`
// for the smallest value, else the largest.
template <bool kLess, class Ties>
bool Better(const Ties& ties, double value, int64_t pos, double best_value, int64_t best_pos) {
  if (best_pos < 0) return true;
  if (kLess ? value < best_value : value > best_value) return true;
  return value == best_value && ties.Of(pos) > ties.Of(best_pos);
}

// What the second-index scan reads per label (y = +1 "up" lanes, y = -1 "down" lanes): the first index's Q row, its
// violation gmax, its Q_ii and the coefficient c of a_ij = (qd_i + qd_j) - c Q_ij. LIBSVM's Solver: one i for both
// labels, c = 2 y_i for y = +1 and -2 y_i for y = -1. Solver_NU: each label its own i (ip, in), c = 2; a label
// without a violator has gmax -inf (its row, which may be null, is not read).
struct PairSide {
  QRowView q;
  double gmax = -kInf;
  double qd = 0;
  double c = 2;
};

// Four lanes t .. t + 3 of a Q row read through the data rows' ids (QRowView with uid): (y_i y_t) K[uid[t]], as
// doubles (the sign exact either way). Written through a pointer (a 32-byte vector returned by value would change
// the baseline's ABI).
template <class V4d, class V4l>
[[gnu::always_inline]] inline void SignedKernelLanes(const QRowView& row, const V4l& yv, int64_t t, V4d* out) {
  const float* k = row.q;
  const int32_t* uid = row.uid;
  const V4l yi = {row.y, row.y, row.y, row.y};
  const V4l sign_bit = {INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN};
  const V4d kv = {k[uid[t]], k[uid[t + 1]], k[uid[t + 2]], k[uid[t + 3]]};
  *out = __builtin_bit_cast(V4d, __builtin_bit_cast(V4l, kv) ^ ((yv != yi) & sign_bit));  // negated where y_t != y_i
}

// A lane's test that a gain -(num / den) (num >= 0, den > 0) may reach its best min_v without dividing: the gain
// does when fl(num / den) >= m = -min_v, and then den * fl(m s) <= num for s = 1 - 2^-41, in floating point too:
// fl(num / den) >= m gives num / den >= m (1 - u) (u = 2^-53, m normal), and den * fl(m s) <= den m s (1 + u) is
// below that, so its rounding stays <= num (rounding is monotone, num a double). `bound` = fl(m s); the lanes where
// the argument does not hold (m infinite, tiny, zero or negative: no best yet) are `force`d through.
template <class V4d, class V4l>
[[gnu::always_inline]] inline void GainBound(const V4d& min_v, V4d* bound, V4l* force) {
  const V4d m = -min_v;
  const V4d s = {0x1.ffffffffffp-1, 0x1.ffffffffffp-1, 0x1.ffffffffffp-1, 0x1.ffffffffffp-1};  // 1 - 2^-41
  const V4d tiny = {0x1p-960, 0x1p-960, 0x1p-960, 0x1p-960};
  const V4d inf = {kInf, kInf, kInf, kInf};
  *bound = m * s;
  *force = (m < tiny) | (m == inf);
}

// The second-index scan over positions [b, e): LIBSVM's second-order gain -(b_ij^2) / a_ij of the pair (i, j) for
// every j in I_low with b_ij = gmax + y_j G_j > 0 (i the first index of j's label), the smallest gain (ties by
// `ties`) into *best, and the largest y G over I_low of each label into gmax2[0] (y = +1) and gmax2[1]. Four
// positions per vector operation (the AVX2 clone: one vdivpd for four divisions); each lane keeps its own best
// and the lanes are combined by value, then by the tie rule: the sequential scan's answer. Each value is LIBSVM's
// expression rounded the same way: for y = -1, gmax - G becomes gmax + (-G) and qd_i + qd_j + yi2 q becomes
// (qd_i + qd_j) - (-yi2) q, exact sign changes; no multiply-add is contracted (core/target_clones.h).
//
// kIndexed (the sides' rows read through uid, QRowView): Solver's lanes read K[uid[j]] y_i y_j; Solver_NU's read
// their label's row, one load per lane, where y_i y_j = 1 (i of j's label); a side without a row reads the other's.
template <class F, bool kPerLabel, bool kIndexed, bool kUniformQd, class Ties>
[[gnu::always_inline]] inline void SecondOrderBody(const Ties& ties, const double* g, const double* qd, const int8_t* y,
                                                   const int8_t* st, const PairSide& up_side, const PairSide& down_side,
                                                   int64_t b, int64_t e, Candidate* best, double* gmax2) {
  using V4d = typename F::D;
  using V4l = typename F::L;
  const V4d inf = {kInf, kInf, kInf, kInf};
  const V4d tau = {batch::kTau, batch::kTau, batch::kTau, batch::kTau};
  const V4d zero = {0, 0, 0, 0};
  const V4d gmax_u = {up_side.gmax, up_side.gmax, up_side.gmax, up_side.gmax};
  const V4d gmax_d = {down_side.gmax, down_side.gmax, down_side.gmax, down_side.gmax};
  const V4d qd_u = {up_side.qd, up_side.qd, up_side.qd, up_side.qd};
  const V4d qd_d = {down_side.qd, down_side.qd, down_side.qd, down_side.qd};
  const V4d c_u = {up_side.c, up_side.c, up_side.c, up_side.c};
  const V4d c_d = {down_side.c, down_side.c, down_side.c, down_side.c};
  const float* q_u = up_side.q.q;
  const float* q_d = down_side.q.q;
  const int32_t* uid = up_side.q.uid != nullptr ? up_side.q.uid : down_side.q.uid;
  if constexpr (kIndexed) {
    if (q_u == nullptr) q_u = q_d;
    if (q_d == nullptr) q_d = q_u;
  }
  const auto row_base = reinterpret_cast<uintptr_t>(q_u);  // q_d = q_u + row_gap bytes (kIndexed, kPerLabel)
  const uintptr_t row_gap = reinterpret_cast<uintptr_t>(q_d) - row_base;
  const V4l lower = {kLower, kLower, kLower, kLower};
  const V4l upper = {kUpper, kUpper, kUpper, kUpper};
  V4d gmax2_u = -inf;
  V4d gmax2_d = -inf;
  V4d min_v = inf;
  V4l min_at = {-1, -1, -1, -1};
  V4l min_tie = {-1, -1, -1, -1};
  V4d bound;  // Pair only
  V4l force;
  GainBound(min_v, &bound, &force);
  int64_t j = b;
  for (; j + 4 <= e; j += 4) {
    V4d gv;
    V4d qdv;
    std::memcpy(&gv, g + j, sizeof(gv));
    if constexpr (kUniformQd) {
      qdv = V4d{qd[0], qd[0], qd[0], qd[0]};  // every Q_jj the same (SampleState::qd_uniform): no qd stream
    } else {
      std::memcpy(&qdv, qd + j, sizeof(qdv));
    }
    const V4l yv = {y[j], y[j + 1], y[j + 2], y[j + 3]};
    const V4l sv = {st[j], st[j + 1], st[j + 2], st[j + 3]};
    const V4l up = yv > 0;
    // One row for both labels (Solver: its gmax and Q_ii uniform), or each label's own (Solver_NU; a null row,
    // whose label has no violator, reads as zeros).
    V4d qv;
    if constexpr (kIndexed && kPerLabel) {
      // Each lane's entry of its label's row: an offset chosen by masking, so no branch per lane (y_j is random).
      const auto lane = [&](int64_t t) {
        const uintptr_t of = (row_gap & (uintptr_t{0} - static_cast<uintptr_t>(y[t] < 0))) +
                             sizeof(float) * static_cast<uintptr_t>(static_cast<uint32_t>(uid[t]));
        return static_cast<double>(*reinterpret_cast<const float*>(row_base + of));
      };
      qv = V4d{lane(j), lane(j + 1), lane(j + 2), lane(j + 3)};
    } else if constexpr (kIndexed) {
      SignedKernelLanes(up_side.q, yv, j, &qv);
    } else if constexpr (kPerLabel) {
      const V4d qa = q_u != nullptr ? V4d{q_u[j], q_u[j + 1], q_u[j + 2], q_u[j + 3]} : zero;
      const V4d qb = q_d != nullptr ? V4d{q_d[j], q_d[j + 1], q_d[j + 2], q_d[j + 3]} : zero;
      qv = TESSEL_SELECT(up, qa, qb);
    } else {
      qv = V4d{q_u[j], q_u[j + 1], q_u[j + 2], q_u[j + 3]};
    }
    const V4d yg = TESSEL_SELECT(up, gv, -gv);
    const V4l low = (up & (sv != lower)) | (~up & (sv != upper));  // batch::InLow
    if constexpr (kPerLabel) {
      gmax2_u = TESSEL_SELECT(low & up & (gmax2_u < yg), yg, gmax2_u);
      gmax2_d = TESSEL_SELECT(low & ~up & (gmax2_d < yg), yg, gmax2_d);
    } else {  // one maximum over both labels (gmax2_d stays -inf)
      const V4d cand = TESSEL_SELECT(low, yg, -inf);
      gmax2_u = TESSEL_SELECT(gmax2_u < cand, cand, gmax2_u);
    }
    const V4d grad_diff = (kPerLabel ? TESSEL_SELECT(up, gmax_u, gmax_d) : gmax_u) + yg;
    const V4d quad = ((kPerLabel ? TESSEL_SELECT(up, qd_u, qd_d) : qd_u) + qdv) - TESSEL_SELECT(up, c_u, c_d) * qv;
    const V4d num = grad_diff * grad_diff;
    const V4d den = TESSEL_SELECT(quad > zero, quad, tau);
    V4l maybe = low & (grad_diff > zero);
    if constexpr (!F::kNative) {
      // Pairs of 16-byte divisions cost more than the rest of a vector's work: only vectors with a lane whose gain
      // may reach its best divide (GainBound), a few per scan. (With AVX2 one vdivpd costs less than the branch.)
      maybe = maybe & ((den * bound <= num) | force);
      if (!F::Any(maybe)) continue;
    }
    const V4d obj = -num / den;
    const V4l at = {j, j + 1, j + 2, j + 3};
    V4l take;
    if constexpr (Ties::kPositions) {
      take = maybe & (obj <= min_v);
    } else {
      V4l tie;
      ties.Lanes(j, &tie);
      take = maybe & ((obj < min_v) | ((obj == min_v) & (tie > min_tie)));
      min_tie = (take & tie) | (~take & min_tie);
    }
    min_v = TESSEL_SELECT(take, obj, min_v);
    min_at = (take & at) | (~take & min_at);
    if constexpr (!F::kNative) GainBound(min_v, &bound, &force);
  }
  gmax2[0] = -kInf;
  gmax2[1] = -kInf;
  Candidate c{kInf, -1};
  for (int k = 0; k < 4; ++k) {
    gmax2[0] = gmax2[0] < gmax2_u[k] ? gmax2_u[k] : gmax2[0];
    gmax2[1] = gmax2[1] < gmax2_d[k] ? gmax2_d[k] : gmax2[1];
    if (min_at[k] >= 0 && Better<true>(ties, min_v[k], min_at[k], c.value, c.index)) c = {min_v[k], min_at[k]};
  }
  for (; j < e; ++j) {
    if (!batch::InLow(y[j], st[j])) continue;
    const bool up = y[j] > 0;
    const PairSide& side = up ? up_side : down_side;
    const double yg = up ? g[j] : -g[j];
    if (gmax2[up ? 0 : 1] < yg) gmax2[up ? 0 : 1] = yg;
    const double grad_diff = side.gmax + yg;
    if (grad_diff <= 0) continue;
    const double quad = (side.qd + qd[j]) - side.c * static_cast<double>(side.q.At(y, j));
    const double obj = -(grad_diff * grad_diff) / (quad > 0 ? quad : batch::kTau);
    if (Better<true>(ties, obj, j, c.value, c.index)) c = {obj, j};
  }
  *best = c;
}

// The four-lane running best of -y G over I_up (the first index of LIBSVM's selection), per label (kLabels 2:
// [y = +1, y = -1], Solver_NU's ip and in) or over both labels (1): each lane keeps its own best and Finish combines
// the lanes by value, then by the tie rule: the sequential scan's answer (`>=`, the last position).
template <class F, int kLabels, class Ties>
struct UpLanes {
  using V4d = typename F::D;
  using V4l = typename F::L;
  const Ties& ties;
  V4d top[kLabels];
  V4l top_at[kLabels];
  V4l top_tie[kLabels];

  explicit UpLanes(const Ties& t) : ties(t) {
    for (int side = 0; side < kLabels; ++side) {
      top[side] = V4d{-kInf, -kInf, -kInf, -kInf};
      top_at[side] = top_tie[side] = V4l{-1, -1, -1, -1};
    }
  }
  // Positions t .. t + 3 with gradients gv.
  [[gnu::always_inline]] void Add(const V4d& gv, const int8_t* y, const int8_t* st, int64_t t) {
    const V4l lower = {kLower, kLower, kLower, kLower};
    const V4l upper = {kUpper, kUpper, kUpper, kUpper};
    const V4l yv = {y[t], y[t + 1], y[t + 2], y[t + 3]};
    const V4l sv = {st[t], st[t + 1], st[t + 2], st[t + 3]};
    const V4l up = yv > 0;
    const V4l in_up = (up & (sv != upper)) | (~up & (sv != lower));  // batch::InUp
    const V4d v = TESSEL_SELECT(up, -gv, gv);                        // -y G
    const V4l at = {t, t + 1, t + 2, t + 3};
    for (int side = 0; side < kLabels; ++side) {
      const V4l mine = kLabels == 1 ? in_up : in_up & (side == 0 ? up : ~up);
      V4l take;
      if constexpr (Ties::kPositions) {
        take = mine & (v >= top[side]);
      } else {
        V4l tie;
        ties.Lanes(t, &tie);
        take = mine & ((v > top[side]) | ((v == top[side]) & (tie > top_tie[side])));
        top_tie[side] = (take & tie) | (~take & top_tie[side]);
      }
      top[side] = TESSEL_SELECT(take, v, top[side]);
      top_at[side] = (take & at) | (~take & top_at[side]);
    }
  }
  // The lanes' bests into best[0 .. kLabels).
  void Finish(Candidate* best) const {
    for (int side = 0; side < kLabels; ++side) {
      best[side] = Candidate{-kInf, -1};
      for (int k = 0; k < 4; ++k)
        if (top_at[side][k] >= 0 &&
            Better<false>(ties, top[side][k], top_at[side][k], best[side].value, best[side].index))
          best[side] = {top[side][k], top_at[side][k]};
    }
  }
  // One position of the scalar tail.
  void AddOne(double g, int8_t y, int8_t st, int64_t t, Candidate* best) const {
    if (!batch::InUp(y, st)) return;
    const int side = kLabels == 2 && y < 0 ? 1 : 0;
    const double v = y > 0 ? -g : g;
    if (Better<false>(ties, v, t, best[side].value, best[side].index)) best[side] = {v, t};
  }
};

// The first-index scan over positions [b, e): per label, the position in I_up of the largest -y G (ties by
// `ties`): best[0] among y = +1 (-G), best[1] among y = -1 (G), as Solver_NU's first loop; LIBSVM's Solver's max
// violator is the better of the two.
template <class F, class Ties>
[[gnu::always_inline]] inline void MaxViolatorsBody(const Ties& ties, const double* g, const int8_t* y,
                                                    const int8_t* st, int64_t b, int64_t e, Candidate* best) {
  using V4d = typename F::D;
  UpLanes<F, 2, Ties> lanes(ties);
  int64_t t = b;
  for (; t + 4 <= e; t += 4) {
    V4d gv;
    std::memcpy(&gv, g + t, sizeof(gv));
    lanes.Add(gv, y, st, t);
  }
  lanes.Finish(best);
  for (; t < e; ++t) lanes.AddOne(g[t], y[t], st[t], t, best);
}

// G[k] += Q_ik d_i + Q_jk d_j over positions [b, e) (LIBSVM's gradient update, in its order of operations), and
// the max violator of the new G there: the t in I_up of the largest -y G (ties by `ties`), over both labels into
// best[0] (kLabels 1) or per label into best[0] (y = +1) and best[1] (kLabels 2, Solver_NU's first scan), four
// positions per vector operation (UpLanes). kIndexed: the rows read through uid (QRowView).
template <class F, int kLabels, bool kIndexed, class Ties>
[[gnu::always_inline]] inline void UpdateGradientBody(const Ties& ties, double* g, const QRowView& row_i,
                                                      const QRowView& row_j, double d_i, double d_j, const int8_t* y,
                                                      const int8_t* st, int64_t b, int64_t e, Candidate* best) {
  using V4d = typename F::D;
  using V4l = typename F::L;
  const V4d di = {d_i, d_i, d_i, d_i};
  const V4d dj = {d_j, d_j, d_j, d_j};
  const float* q_i = row_i.q;
  const float* q_j = row_j.q;
  UpLanes<F, kLabels, Ties> lanes(ties);
  int64_t t = b;
  for (; t + 4 <= e; t += 4) {
    V4d gv;
    std::memcpy(&gv, g + t, sizeof(gv));
    V4d qi;
    V4d qj;
    if constexpr (kIndexed) {
      const V4l yv = {y[t], y[t + 1], y[t + 2], y[t + 3]};
      SignedKernelLanes(row_i, yv, t, &qi);
      SignedKernelLanes(row_j, yv, t, &qj);
    } else {
      qi = V4d{q_i[t], q_i[t + 1], q_i[t + 2], q_i[t + 3]};
      qj = V4d{q_j[t], q_j[t + 1], q_j[t + 2], q_j[t + 3]};
    }
    gv += qi * di + qj * dj;
    std::memcpy(g + t, &gv, sizeof(gv));
    lanes.Add(gv, y, st, t);
  }
  lanes.Finish(best);
  for (; t < e; ++t) {
    g[t] += static_cast<double>(row_i.At(y, t)) * d_i + static_cast<double>(row_j.At(y, t)) * d_j;
    lanes.AddOne(g[t], y[t], st[t], t, best);
  }
}
#undef TESSEL_SELECT

// The kernels per tie rule (the rule inlined, so the position rule costs nothing), instantiated for a vector family
// F (core/simd4.h); the kernels below run through simd4::Dispatch: the AVX2 instantiation where the CPU has it.
// Solver's second scan (one first index for both labels) or, per_label, Solver_NU's (one per label).
// uniform_qd: every qd the same (SampleState::qd_uniform), so the scan reads qd[0] only.
template <class F, bool kU>
[[gnu::always_inline]] inline void SecondOrderScanOf(bool per_label, const int64_t* key, const double* g,
                                                     const double* qd, const int8_t* y, const int8_t* st,
                                                     const PairSide* sides, int64_t b, int64_t e, Candidate* best,
                                                     double* gmax2) {
  const PairSide& u = sides[0];
  const PairSide& d = sides[1];
  const bool indexed = u.q.uid != nullptr || d.q.uid != nullptr;  // one process only (no key)
  if (indexed && per_label) SecondOrderBody<F, true, true, kU>(ByPosition{}, g, qd, y, st, u, d, b, e, best, gmax2);
  if (indexed && !per_label) SecondOrderBody<F, false, true, kU>(ByPosition{}, g, qd, y, st, u, d, b, e, best, gmax2);
  if (indexed) return;
  if (per_label && key == nullptr)
    SecondOrderBody<F, true, false, kU>(ByPosition{}, g, qd, y, st, u, d, b, e, best, gmax2);
  if (per_label && key != nullptr)
    SecondOrderBody<F, true, false, kU>(ByKey{key}, g, qd, y, st, u, d, b, e, best, gmax2);
  if (!per_label && key == nullptr)
    SecondOrderBody<F, false, false, kU>(ByPosition{}, g, qd, y, st, u, d, b, e, best, gmax2);
  if (!per_label && key != nullptr)
    SecondOrderBody<F, false, false, kU>(ByKey{key}, g, qd, y, st, u, d, b, e, best, gmax2);
}
// The kernels simd4::Dispatch runs (core/simd4.h), each in an AVX2 and a baseline instantiation.
struct SecondOrderScan {
  template <class F>
  [[gnu::always_inline]] static void Run(bool per_label, bool uniform_qd, const int64_t* key, const double* g,
                                         const double* qd, const int8_t* y, const int8_t* st, const PairSide* sides,
                                         int64_t b, int64_t e, Candidate* best, double* gmax2) {
    if (uniform_qd) {
      SecondOrderScanOf<F, true>(per_label, key, g, qd, y, st, sides, b, e, best, gmax2);
    } else {
      SecondOrderScanOf<F, false>(per_label, key, g, qd, y, st, sides, b, e, best, gmax2);
    }
  }
};
struct MaxViolatorsScan {
  template <class F>
  [[gnu::always_inline]] static void Run(const int64_t* key, const double* g, const int8_t* y, const int8_t* st,
                                         int64_t b, int64_t e, Candidate* best) {
    if (key == nullptr) {
      MaxViolatorsBody<F>(ByPosition{}, g, y, st, b, e, best);
    } else {
      MaxViolatorsBody<F>(ByKey{key}, g, y, st, b, e, best);
    }
  }
};
// The gradient update with the max violator over both labels (best[0]) or, per_label, Solver_NU's two (best[0, 2));
// rows[0] and rows[1] are i's and j's, both read through uid or neither. A key only with plain rows, over both labels.
struct UpdateGradient {
  template <class F>
  [[gnu::always_inline]] static void Run(bool per_label, const int64_t* key, double* g, const QRowView* rows,
                                         double d_i, double d_j, const int8_t* y, const int8_t* st, int64_t b,
                                         int64_t e, Candidate* best) {
    const QRowView& qi = rows[0];
    const QRowView& qj = rows[1];
    const bool indexed = qi.uid != nullptr;
    if (key != nullptr) {
      UpdateGradientBody<F, 1, false>(ByKey{key}, g, qi, qj, d_i, d_j, y, st, b, e, best);
    } else if (indexed && per_label) {
      UpdateGradientBody<F, 2, true>(ByPosition{}, g, qi, qj, d_i, d_j, y, st, b, e, best);
    } else if (indexed) {
      UpdateGradientBody<F, 1, true>(ByPosition{}, g, qi, qj, d_i, d_j, y, st, b, e, best);
    } else if (per_label) {
      UpdateGradientBody<F, 2, false>(ByPosition{}, g, qi, qj, d_i, d_j, y, st, b, e, best);
    } else {
      UpdateGradientBody<F, 1, false>(ByPosition{}, g, qi, qj, d_i, d_j, y, st, b, e, best);
    }
  }
};

// Blocks fold in order (a later block holds later positions) by value, then by the tie rule.
template <bool kLess, class Ties>
Candidate Fold(const Ties& ties, const Candidate& r, const Candidate& p) {
  return p.index >= 0 && Better<kLess>(ties, p.value, p.index, r.value, r.index) ? p : r;
}

}  // namespace

NuFirsts NuMaxViolatorsOver(int64_t n, const SampleState& s, const int64_t* key) {
  const auto run = [&](const auto& ties) {
    return BlockReduce<NuFirsts>(
        n, NuFirsts{},
        [&](int64_t b, int64_t e) {
          Candidate c[2];
          simd4::Dispatch<MaxViolatorsScan>(key, s.g.data(), s.y.data(), s.status.data(), b, e, c);
          return NuFirsts{c[0], c[1]};
        },
        [&](const NuFirsts& r, const NuFirsts& p) {
          return NuFirsts{Fold<false>(ties, r.p, p.p), Fold<false>(ties, r.n, p.n)};
        });
  };
  return key == nullptr ? run(ByPosition{}) : run(ByKey{key});
}

Candidate MaxViolatorOver(int64_t n, const SampleState& s, const int64_t* key) {
  const NuFirsts f = NuMaxViolatorsOver(n, s, key);  // the better of the two labels' (ties to the later position)
  const auto better = [&](const auto& ties) { return Fold<false>(ties, f.p, f.n); };
  return key == nullptr ? better(ByPosition{}) : better(ByKey{key});
}

// The second scan over both labels' sides (SecondOrderBody), folded over the blocks in order.
template <class Result, class Make>
Result SecondOrderScanOver(int64_t n, const SampleState& s, const PairSide* sides, bool per_label, const int64_t* key,
                           Make make) {
  const bool uniform = !std::isnan(s.qd_uniform) && n > 0;
  const auto run = [&](const auto& ties) {
    return BlockReduce<std::pair<Candidate, std::array<double, 2>>>(
        n, {{kInf, -1}, {-kInf, -kInf}},
        [&](int64_t b, int64_t e) {
          std::pair<Candidate, std::array<double, 2>> c;
          simd4::Dispatch<SecondOrderScan>(per_label, uniform, key, s.g.data(), s.qd.data(), s.y.data(),
                                           s.status.data(), sides, b, e, &c.first, c.second.data());
          return c;
        },
        [&](const auto& r, const auto& p) {
          return std::pair<Candidate, std::array<double, 2>>{
              Fold<true>(ties, r.first, p.first),
              {std::max(r.second[0], p.second[0]), std::max(r.second[1], p.second[1])}};
        });
  };
  const auto r = key == nullptr ? run(ByPosition{}) : run(ByKey{key});
  return make(r.first, r.second[0], r.second[1]);
}

NuSecondChoice NuSecondOrderOver(int64_t n, const SampleState& s, const NuFirsts& firsts, const QRowView& q_ip,
                                 double qd_ip, const QRowView& q_in, double qd_in, const int64_t* key) {
  // Solver_NU: j of label y pairs with its label's violator, a_ij = (qd_i + qd_j) - 2 Q_ij.
  const PairSide sides[2] = {{q_ip, firsts.p.value, qd_ip, 2.0}, {q_in, firsts.n.value, qd_in, 2.0}};
  return SecondOrderScanOver<NuSecondChoice>(n, s, sides, true, key, [](const Candidate& best, double p2, double n2) {
    return NuSecondChoice{best, p2, n2};
  });
}

SecondChoice SecondOrderOver(int64_t n, const SampleState& s, const QRowView& q_i, double gmax, double qd_i, double yi2,
                             const int64_t* key) {
  const PairSide sides[2] = {{q_i, gmax, qd_i, yi2}, {q_i, gmax, qd_i, -yi2}};
  return SecondOrderScanOver<SecondChoice>(n, s, sides, false, key,
                                           [](const Candidate& best, double up2, double down2) {
                                             return SecondChoice{best, std::max(up2, down2)};
                                           });
}

Candidate UpdateGradientOver(int64_t n, SampleState* s, const QRowView& q_i, const QRowView& q_j, double d_i,
                             double d_j, const int64_t* key) {
  const QRowView rows[2] = {q_i, q_j};
  const auto run = [&](const auto& ties) {
    return BlockReduce<Candidate>(
        n, Candidate{-kInf, -1},
        [&](int64_t b, int64_t e) {
          Candidate c;
          simd4::Dispatch<UpdateGradient>(false, key, s->g.data(), rows, d_i, d_j, s->y.data(), s->status.data(), b, e,
                                          &c);
          return c;
        },
        [&](const Candidate& r, const Candidate& p) { return Fold<false>(ties, r, p); });
  };
  return key == nullptr ? run(ByPosition{}) : run(ByKey{key});
}

NuFirsts UpdateGradientNuOver(int64_t n, SampleState* s, const QRowView& q_i, const QRowView& q_j, double d_i,
                              double d_j) {
  const QRowView rows[2] = {q_i, q_j};
  const ByPosition ties;
  return BlockReduce<NuFirsts>(
      n, NuFirsts{},
      [&](int64_t b, int64_t e) {
        Candidate c[2];
        simd4::Dispatch<UpdateGradient>(true, static_cast<const int64_t*>(nullptr), s->g.data(), rows, d_i, d_j,
                                        s->y.data(), s->status.data(), b, e, c);
        return NuFirsts{c[0], c[1]};
      },
      [&](const NuFirsts& r, const NuFirsts& p) {
        return NuFirsts{Fold<false>(ties, r.p, p.p), Fold<false>(ties, r.n, p.n)};
      });
}

}  // namespace tessel::svm
