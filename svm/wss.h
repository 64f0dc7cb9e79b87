// Working-set selection for the SMO solvers (one process, and each rank of the distributed one): LIBSVM's
// first-order max violator, the second-order partner (Fan, Chen, Lin, "Working Set Selection Using Second Order
// Information for Training SVM", JMLR 2005, with TAU = 1e-12), and the gradient update fused with the next max
// violator. Each runs over positions [0, n) of a SampleState in parallel blocks, with four positions per vector
// operation (an AVX2 clone where the CPU has it, core/target_clones.h), and gives the serial scan's answer, every
// value rounded as LIBSVM rounds it. Ties go to the larger position (LIBSVM's ">=" and "<="), or, given `key` (one
// per position: the distributed solver's global ids), to the larger key. The index returned is a position.
#pragma once

#include <cstdint>

#include "svm/solver_common.h"

namespace tessel::svm {

// A first index's Q row as the scans read it: q[t] at position t, or, with `uid` (the regressions' 2 l variables
// over l data rows, LIBSVM's SVR_Q), (y_i y_t) q[uid[t]] from the data row's kernel row q: the value of the signed
// row SVR_Q gathers (a sign change, exact), read in place, so no row of positions is written and read again.
struct QRowView {
  const float* q = nullptr;
  const int32_t* uid = nullptr;
  int8_t y = 1;  // y_i, with uid
  QRowView() = default;
  QRowView(const float* row) : q(row) {}  // NOLINT(google-explicit-constructor): a plain row is a QRowView
  QRowView(const float* k, const int32_t* uids, int8_t yi) : q(k), uid(uids), y(yi) {}
  // Q_it, as a float (ys: the labels by position).
  float At(const int8_t* ys, int64_t t) const {
    return uid == nullptr ? q[t] : (static_cast<float>(y) * static_cast<float>(ys[t])) * q[uid[t]];
  }
};

// The max violator: the last position in I_up of the largest -y G (index -1 and value -inf when I_up is empty).
Candidate MaxViolatorOver(int64_t n, const SampleState& s, const int64_t* key = nullptr);

// The second index of LIBSVM's WSS 2: the position j in I_low with b_ij = gmax + y_j G_j > 0 of the smallest gain
// -(b_ij^2) / a_ij, a_ij = qd_i + qd_j - 2 y_i y_j Q_ij (TAU when not positive), the last such position on ties
// (index -1 when none); and gmax2, the largest y G over I_low. q_i is i's float Q row over positions [0, n), qd_i
// its Q_ii and yi2 = 2 y_i.
struct SecondChoice {
  Candidate best;
  double gmax2;
};
SecondChoice SecondOrderOver(int64_t n, const SampleState& s, const QRowView& q_i, double gmax, double qd_i, double yi2,
                             const int64_t* key = nullptr);

// G[k] += Q_ik d_i + Q_jk d_j for k in [0, n) (LIBSVM's gradient update, in its order of operations), then the max
// violator of the new G, as MaxViolatorOver.
Candidate UpdateGradientOver(int64_t n, SampleState* s, const QRowView& q_i, const QRowView& q_j, double d_i,
                             double d_j, const int64_t* key = nullptr);

// Solver_NU's selection (nu-SVC, nu-SVR: LIBSVM's Solver_NU::select_working_set), per label. The first scan: the
// max violator among the y = +1 positions below C (largest -G) and among the y = -1 positions above 0 (largest G).
struct NuFirsts {
  Candidate p{-kInf, -1};
  Candidate n{-kInf, -1};
};
NuFirsts NuMaxViolatorsOver(int64_t n, const SampleState& s, const int64_t* key = nullptr);

// UpdateGradientOver's update, then Solver_NU's first scan of the new G (NuMaxViolatorsOver) in the same pass.
NuFirsts UpdateGradientNuOver(int64_t n, SampleState* s, const QRowView& q_i, const QRowView& q_j, double d_i,
                              double d_j);

// The second scan: for every position j of either label that may move towards the violator of its label (ip's row
// q_ip and Q_ii qd_ip for y = +1, in's for y = -1), the smallest second-order gain (as SecondOrderOver), and
// gmaxp2 (largest G over the y = +1 positions above 0) and gmaxn2 (largest -G over the y = -1 positions below C).
// A label without a violator (its gmax -inf) reads no entry of its row, which may then be null.
struct NuSecondChoice {
  Candidate best{kInf, -1};
  double gmaxp2 = -kInf;
  double gmaxn2 = -kInf;
};
NuSecondChoice NuSecondOrderOver(int64_t n, const SampleState& s, const NuFirsts& firsts, const QRowView& q_ip,
                                 double qd_ip, const QRowView& q_in, double qd_in, const int64_t* key = nullptr);

}  // namespace tessel::svm
