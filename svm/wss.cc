// Working-set selection scans (wss.h): the block kernels written without branches, and their parallel folds.
//
// Ties. Without a key, a scan keeps the last position of the best value (LIBSVM's serial ">=" and "<="); with a key
// (the distributed solver's global ids), the position of the larger key. Positions scan upwards, so the key-less
// rule is the keyed one with key = position; the kernels are written once over a Ties policy.
#include "svm/wss.h"

#include <algorithm>
#include <cstring>

#include "core/target_clones.h"
#include "svm/batch_step.h"

namespace tessel::svm {
namespace {

// Four doubles and four int64 lane masks (GCC/Clang vector extensions) for the branch-free scans below, and
// mask ? a : c lane by lane (a macro: a function taking 32-byte vectors would change the baseline's ABI).
using V4d = double __attribute__((vector_size(32)));
using V4l = int64_t __attribute__((vector_size(32)));
#define TESSEL_SELECT(mask, a, c) \
  reinterpret_cast<V4d>(((mask) & reinterpret_cast<V4l>(a)) | (~(mask) & reinterpret_cast<V4l>(c)))

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
  void Lanes(int64_t j, V4l* out) const { *out = V4l{key[j], key[j + 1], key[j + 2], key[j + 3]}; }
};

// Whether candidate (value, pos) replaces the best so far (best_value, best_pos; best_pos -1 for none), `less`
// for the smallest value, else the largest.
template <bool kLess, class Ties>
bool Better(const Ties& ties, double value, int64_t pos, double best_value, int64_t best_pos) {
  if (best_pos < 0) return true;
  if (kLess ? value < best_value : value > best_value) return true;
  return value == best_value && ties.Of(pos) > ties.Of(best_pos);
}

// The second-index scan over positions [b, e): LIBSVM's second-order gain -(b_ij^2) / a_ij of the pair (i, j) for
// every j in I_low with b_ij > 0, the smallest gain (ties by `ties`) into *best, and the largest y G over I_low,
// returned. Four positions per vector operation (the AVX2 clone: one vdivpd for four divisions); each lane keeps
// its own best and the lanes are combined by value, then by the tie rule: the sequential scan's answer. Each value
// is LIBSVM's expression rounded the same way: for y = -1, gmax - G becomes gmax + (-G) and qd_i + qd_j + yi2 q
// becomes (qd_i + qd_j) - (-yi2) q, exact sign changes; no multiply-add is contracted (core/target_clones.h).
template <class Ties>
[[gnu::always_inline]] inline double SecondOrderBody(const Ties& ties, const double* g, const double* qd,
                                                     const int8_t* y, const int8_t* st, const float* q_i, double gmax,
                                                     double qd_i, double yi2, int64_t b, int64_t e, Candidate* best) {
  const V4d inf = {kInf, kInf, kInf, kInf};
  const V4d tau = {batch::kTau, batch::kTau, batch::kTau, batch::kTau};
  const V4d zero = {0, 0, 0, 0};
  const V4d gmax_v = {gmax, gmax, gmax, gmax};
  const V4d qd_i_v = {qd_i, qd_i, qd_i, qd_i};
  const V4d yi2_v = {yi2, yi2, yi2, yi2};
  const V4l lower = {kLower, kLower, kLower, kLower};
  const V4l upper = {kUpper, kUpper, kUpper, kUpper};
  V4d gmax2_v = -inf;
  V4d min_v = inf;
  V4l min_at = {-1, -1, -1, -1};
  V4l min_tie = {-1, -1, -1, -1};
  int64_t j = b;
  for (; j + 4 <= e; j += 4) {
    V4d gv;
    V4d qdv;
    std::memcpy(&gv, g + j, sizeof(gv));
    std::memcpy(&qdv, qd + j, sizeof(qdv));
    const V4l yv = {y[j], y[j + 1], y[j + 2], y[j + 3]};
    const V4l sv = {st[j], st[j + 1], st[j + 2], st[j + 3]};
    const V4d qv = {q_i[j], q_i[j + 1], q_i[j + 2], q_i[j + 3]};
    const V4l up = yv > 0;
    const V4d yg = TESSEL_SELECT(up, gv, -gv);
    const V4l low = (up & (sv != lower)) | (~up & (sv != upper));  // batch::InLow
    const V4d cand = TESSEL_SELECT(low, yg, -inf);
    gmax2_v = TESSEL_SELECT(gmax2_v < cand, cand, gmax2_v);
    const V4d grad_diff = gmax_v + yg;
    const V4d quad = (qd_i_v + qdv) - TESSEL_SELECT(up, yi2_v, -yi2_v) * qv;
    const V4d obj = -(grad_diff * grad_diff) / TESSEL_SELECT(quad > zero, quad, tau);
    const V4l at = {j, j + 1, j + 2, j + 3};
    V4l take;
    if constexpr (Ties::kPositions) {
      take = low & (grad_diff > zero) & (obj <= min_v);
    } else {
      V4l tie;
      ties.Lanes(j, &tie);
      take = low & (grad_diff > zero) & ((obj < min_v) | ((obj == min_v) & (tie > min_tie)));
      min_tie = (take & tie) | (~take & min_tie);
    }
    min_v = TESSEL_SELECT(take, obj, min_v);
    min_at = (take & at) | (~take & min_at);
  }
  double gmax2 = -kInf;
  Candidate c{kInf, -1};
  for (int k = 0; k < 4; ++k) {
    gmax2 = gmax2 < gmax2_v[k] ? gmax2_v[k] : gmax2;
    if (min_at[k] >= 0 && Better<true>(ties, min_v[k], min_at[k], c.value, c.index)) c = {min_v[k], min_at[k]};
  }
  for (; j < e; ++j) {
    if (!batch::InLow(y[j], st[j])) continue;
    const bool up = y[j] > 0;
    const double yg = up ? g[j] : -g[j];
    if (gmax2 < yg) gmax2 = yg;
    const double grad_diff = gmax + yg;
    if (grad_diff <= 0) continue;
    const double quad = (qd_i + qd[j]) - (up ? yi2 : -yi2) * static_cast<double>(q_i[j]);
    const double obj = -(grad_diff * grad_diff) / (quad > 0 ? quad : batch::kTau);
    if (Better<true>(ties, obj, j, c.value, c.index)) c = {obj, j};
  }
  *best = c;
  return gmax2;
}

// G[k] += Q_ik d_i + Q_jk d_j over positions [b, e) (LIBSVM's gradient update, in its order of operations), and
// the max violator of the new G there: the t in I_up of the largest -y G (ties by `ties`). Four positions per
// vector operation; each lane keeps its own best, and the lanes are combined by value, then by the tie rule: the
// sequential scan's answer.
template <class Ties>
[[gnu::always_inline]] inline Candidate UpdateGradientBody(const Ties& ties, double* g, const float* q_i,
                                                           const float* q_j, double d_i, double d_j, const int8_t* y,
                                                           const int8_t* st, int64_t b, int64_t e) {
  const V4d di = {d_i, d_i, d_i, d_i};
  const V4d dj = {d_j, d_j, d_j, d_j};
  const V4l lower = {kLower, kLower, kLower, kLower};
  const V4l upper = {kUpper, kUpper, kUpper, kUpper};
  V4d best = {-kInf, -kInf, -kInf, -kInf};
  V4l best_at = {-1, -1, -1, -1};
  V4l best_tie = {-1, -1, -1, -1};
  int64_t t = b;
  for (; t + 4 <= e; t += 4) {
    V4d gv;
    std::memcpy(&gv, g + t, sizeof(gv));
    const V4d qi = {q_i[t], q_i[t + 1], q_i[t + 2], q_i[t + 3]};
    const V4d qj = {q_j[t], q_j[t + 1], q_j[t + 2], q_j[t + 3]};
    gv += qi * di + qj * dj;
    std::memcpy(g + t, &gv, sizeof(gv));
    const V4l yv = {y[t], y[t + 1], y[t + 2], y[t + 3]};
    const V4l sv = {st[t], st[t + 1], st[t + 2], st[t + 3]};
    const V4l up = yv > 0;
    const V4l in_up = (up & (sv != upper)) | (~up & (sv != lower));  // batch::InUp
    const V4d v = TESSEL_SELECT(up, -gv, gv);                        // -y G
    const V4l at = {t, t + 1, t + 2, t + 3};
    V4l take;
    if constexpr (Ties::kPositions) {
      take = in_up & (v >= best);
    } else {
      V4l tie;
      ties.Lanes(t, &tie);
      take = in_up & ((v > best) | ((v == best) & (tie > best_tie)));
      best_tie = (take & tie) | (~take & best_tie);
    }
    best = TESSEL_SELECT(take, v, best);
    best_at = (take & at) | (~take & best_at);
  }
  Candidate c{-kInf, -1};
  for (int k = 0; k < 4; ++k)
    if (best_at[k] >= 0 && Better<false>(ties, best[k], best_at[k], c.value, c.index)) c = {best[k], best_at[k]};
  for (; t < e; ++t) {
    g[t] += q_i[t] * d_i + q_j[t] * d_j;
    if (!batch::InUp(y[t], st[t])) continue;
    const double v = y[t] == 1 ? -g[t] : g[t];
    if (Better<false>(ties, v, t, c.value, c.index)) c = {v, t};
  }
  return c;
}
#undef TESSEL_SELECT

// The clones: one per tie rule (the rule inlined, so the position rule costs nothing).
TESSEL_CLONE_AVX2 double SecondOrderScan(const double* g, const double* qd, const int8_t* y, const int8_t* st,
                                         const float* q_i, double gmax, double qd_i, double yi2, int64_t b, int64_t e,
                                         Candidate* best) {
  return SecondOrderBody(ByPosition{}, g, qd, y, st, q_i, gmax, qd_i, yi2, b, e, best);
}
TESSEL_CLONE_AVX2 double SecondOrderScanByKey(const int64_t* key, const double* g, const double* qd, const int8_t* y,
                                              const int8_t* st, const float* q_i, double gmax, double qd_i, double yi2,
                                              int64_t b, int64_t e, Candidate* best) {
  return SecondOrderBody(ByKey{key}, g, qd, y, st, q_i, gmax, qd_i, yi2, b, e, best);
}
TESSEL_CLONE_AVX2 Candidate UpdateGradient(double* g, const float* q_i, const float* q_j, double d_i, double d_j,
                                           const int8_t* y, const int8_t* st, int64_t b, int64_t e) {
  return UpdateGradientBody(ByPosition{}, g, q_i, q_j, d_i, d_j, y, st, b, e);
}
TESSEL_CLONE_AVX2 Candidate UpdateGradientByKey(const int64_t* key, double* g, const float* q_i, const float* q_j,
                                                double d_i, double d_j, const int8_t* y, const int8_t* st, int64_t b,
                                                int64_t e) {
  return UpdateGradientBody(ByKey{key}, g, q_i, q_j, d_i, d_j, y, st, b, e);
}

// MaxViolatorOver's block kernel over positions [b, e).
template <class Ties>
Candidate MaxViolator(const Ties& ties, const double* g, const int8_t* y, const int8_t* st, int64_t b, int64_t e) {
  Candidate c{-kInf, -1};
  for (int64_t t = b; t < e; ++t) {
    if (!batch::InUp(y[t], st[t])) continue;
    const double v = y[t] == 1 ? -g[t] : g[t];  // -y G
    if (Better<false>(ties, v, t, c.value, c.index)) c = {v, t};
  }
  return c;
}

// Blocks fold in order (a later block holds later positions) by value, then by the tie rule.
template <bool kLess, class Ties>
Candidate Fold(const Ties& ties, const Candidate& r, const Candidate& p) {
  return p.index >= 0 && Better<kLess>(ties, p.value, p.index, r.value, r.index) ? p : r;
}

// Solver_NU's first scan over positions [b, e).
template <class Ties>
NuFirsts NuMaxViolators(const Ties& ties, const SampleState& s, int64_t b, int64_t e) {
  NuFirsts f;
  for (int64_t t = b; t < e; ++t) {
    const double g = s.g[t];
    if (s.y[t] == 1) {
      if (s.status[t] != kUpper && Better<false>(ties, -g, t, f.p.value, f.p.index)) f.p = {-g, t};
    } else if (s.status[t] != kLower && Better<false>(ties, g, t, f.n.value, f.n.index)) {
      f.n = {g, t};
    }
  }
  return f;
}

// Solver_NU's second scan over positions [b, e).
template <class Ties>
NuSecondChoice NuSecondOrder(const Ties& ties, const SampleState& s, const NuFirsts& firsts, const float* q_ip,
                             double qd_ip, const float* q_in, double qd_in, int64_t b, int64_t e) {
  NuSecondChoice c;
  for (int64_t j = b; j < e; ++j) {
    const double g = s.g[j];
    double grad_diff;
    double quad_coef;
    if (s.y[j] == 1) {
      if (s.status[j] == kLower) continue;
      grad_diff = firsts.p.value + g;
      if (g >= c.gmaxp2) c.gmaxp2 = g;
      if (grad_diff <= 0) continue;
      quad_coef = qd_ip + s.qd[j] - 2.0 * q_ip[j];
    } else {
      if (s.status[j] == kUpper) continue;
      grad_diff = firsts.n.value - g;
      if (-g >= c.gmaxn2) c.gmaxn2 = -g;
      if (grad_diff <= 0) continue;
      quad_coef = qd_in + s.qd[j] - 2.0 * q_in[j];
    }
    const double obj_diff = batch::SecondOrderGain(grad_diff, quad_coef);
    if (Better<true>(ties, obj_diff, j, c.best.value, c.best.index)) c.best = {obj_diff, j};
  }
  return c;
}

}  // namespace

NuFirsts NuMaxViolatorsOver(int64_t n, const SampleState& s, const int64_t* key) {
  const auto run = [&](const auto& ties) {
    return BlockReduce<NuFirsts>(
        n, NuFirsts{}, [&](int64_t b, int64_t e) { return NuMaxViolators(ties, s, b, e); },
        [&](const NuFirsts& r, const NuFirsts& p) {
          return NuFirsts{Fold<false>(ties, r.p, p.p), Fold<false>(ties, r.n, p.n)};
        });
  };
  return key == nullptr ? run(ByPosition{}) : run(ByKey{key});
}

NuSecondChoice NuSecondOrderOver(int64_t n, const SampleState& s, const NuFirsts& firsts, const float* q_ip,
                                 double qd_ip, const float* q_in, double qd_in, const int64_t* key) {
  const auto run = [&](const auto& ties) {
    return BlockReduce<NuSecondChoice>(
        n, NuSecondChoice{},
        [&](int64_t b, int64_t e) { return NuSecondOrder(ties, s, firsts, q_ip, qd_ip, q_in, qd_in, b, e); },
        [&](const NuSecondChoice& r, const NuSecondChoice& p) {
          return NuSecondChoice{Fold<true>(ties, r.best, p.best), std::max(r.gmaxp2, p.gmaxp2),
                                std::max(r.gmaxn2, p.gmaxn2)};
        });
  };
  return key == nullptr ? run(ByPosition{}) : run(ByKey{key});
}

Candidate MaxViolatorOver(int64_t n, const SampleState& s, const int64_t* key) {
  const auto run = [&](const auto& ties) {
    return BlockReduce<Candidate>(
        n, Candidate{-kInf, -1},
        [&](int64_t b, int64_t e) { return MaxViolator(ties, s.g.data(), s.y.data(), s.status.data(), b, e); },
        [&](const Candidate& r, const Candidate& p) { return Fold<false>(ties, r, p); });
  };
  return key == nullptr ? run(ByPosition{}) : run(ByKey{key});
}

SecondChoice SecondOrderOver(int64_t n, const SampleState& s, const float* q_i, double gmax, double qd_i, double yi2,
                             const int64_t* key) {
  const auto run = [&](const auto& ties) {
    return BlockReduce<SecondChoice>(
        n, SecondChoice{{kInf, -1}, -kInf},
        [&](int64_t b, int64_t e) {
          SecondChoice c{{kInf, -1}, -kInf};
          c.gmax2 = key == nullptr ? SecondOrderScan(s.g.data(), s.qd.data(), s.y.data(), s.status.data(), q_i, gmax,
                                                     qd_i, yi2, b, e, &c.best)
                                   : SecondOrderScanByKey(key, s.g.data(), s.qd.data(), s.y.data(), s.status.data(),
                                                          q_i, gmax, qd_i, yi2, b, e, &c.best);
          return c;
        },
        [&](const SecondChoice& r, const SecondChoice& p) {
          return SecondChoice{Fold<true>(ties, r.best, p.best), std::max(r.gmax2, p.gmax2)};
        });
  };
  return key == nullptr ? run(ByPosition{}) : run(ByKey{key});
}

Candidate UpdateGradientOver(int64_t n, SampleState* s, const float* q_i, const float* q_j, double d_i, double d_j,
                             const int64_t* key) {
  const auto run = [&](const auto& ties) {
    return BlockReduce<Candidate>(
        n, Candidate{-kInf, -1},
        [&](int64_t b, int64_t e) {
          return key == nullptr
                     ? UpdateGradient(s->g.data(), q_i, q_j, d_i, d_j, s->y.data(), s->status.data(), b, e)
                     : UpdateGradientByKey(key, s->g.data(), q_i, q_j, d_i, d_j, s->y.data(), s->status.data(), b, e);
        },
        [&](const Candidate& r, const Candidate& p) { return Fold<false>(ties, r, p); });
  };
  return key == nullptr ? run(ByPosition{}) : run(ByKey{key});
}

}  // namespace tessel::svm
