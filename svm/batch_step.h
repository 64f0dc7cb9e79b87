// The per-variable and per-pair arithmetic of the C-SVC dual solvers (LIBSVM's Solver), shared by the SMO solver
// (smo_solver.cc), the batched host reference (batch_solver.cc) and the device loop (device_loop_math.h,
// cuda/loop_device.cu).
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace tessel::svm::batch {

enum BoundStatus : int8_t { kLower = 0, kUpper = 1, kFree = 2 };

inline constexpr double kTau = 1e-12;  // LIBSVM's TAU: the curvature used when a_ij <= 0

TESSEL_HOST_DEVICE inline int8_t StatusOf(double alpha, double c) {
  return alpha >= c ? kUpper : (alpha <= 0 ? kLower : kFree);
}
// I_up: y a can still grow (y = +1 below C, y = -1 above 0); I_low: y a can still shrink.
TESSEL_HOST_DEVICE inline bool InUp(int8_t y, int8_t status) { return y > 0 ? status != kUpper : status != kLower; }
TESSEL_HOST_DEVICE inline bool InLow(int8_t y, int8_t status) { return y > 0 ? status != kLower : status != kUpper; }

// LIBSVM's be_shrunk: a bound variable that cannot join a violating pair while gmax1 = max_{I_up} -y G and
// gmax2 = max_{I_low} y G hold.
TESSEL_HOST_DEVICE inline bool BeShrunk(int8_t y, int8_t status, double g, double gmax1, double gmax2) {
  if (status == kUpper) return y > 0 ? -g > gmax1 : -g > gmax2;
  if (status == kLower) return y > 0 ? g > gmax2 : g > gmax1;
  return false;
}

// One of the y_i == y_j clips of UpdatePair with a + b = sum held: when sum exceeds c, a above c goes back to c
// (b takes the rest); otherwise b below 0 goes back to 0 (a takes the sum). UpdatePair calls it for (a_i, a_j) with
// C_i, then for (a_j, a_i) with C_j, LIBSVM's two written-out blocks.
TESSEL_HOST_DEVICE inline void ClipToSum(double sum, double c, double* a, double* b) {
  if (sum > c) {
    if (*a > c) {
      *a = c;
      *b = sum - c;
    }
  } else if (*b < 0) {
    *b = 0;
    *a = sum;
  }
}

// LIBSVM's two-variable update of (a_i, a_j) with its clipping, in its order of operations. q_ij is the float
// Q entry (y_i y_j K_ij); qd_i, qd_j the diagonal; g_i, g_j the gradients; c_i, c_j the upper bounds.
TESSEL_HOST_DEVICE inline void UpdatePair(int8_t y_i, int8_t y_j, double qd_i, double qd_j, float q_ij, double g_i,
                                          double g_j, double c_i, double c_j, double* a_i, double* a_j) {
  double ai = *a_i;
  double aj = *a_j;
  if (y_i != y_j) {
    double quad_coef = qd_i + qd_j + 2 * static_cast<double>(q_ij);
    if (quad_coef <= 0) quad_coef = kTau;
    const double delta = (-g_i - g_j) / quad_coef;
    const double diff = ai - aj;
    ai += delta;
    aj += delta;
    if (diff > 0) {
      if (aj < 0) {
        aj = 0;
        ai = diff;
      }
    } else if (ai < 0) {
      ai = 0;
      aj = -diff;
    }
    if (diff > c_i - c_j) {
      if (ai > c_i) {
        ai = c_i;
        aj = c_i - diff;
      }
    } else if (aj > c_j) {
      aj = c_j;
      ai = c_j + diff;
    }
  } else {
    double quad_coef = qd_i + qd_j - 2 * static_cast<double>(q_ij);
    if (quad_coef <= 0) quad_coef = kTau;
    const double delta = (g_i - g_j) / quad_coef;
    const double sum = ai + aj;
    ai -= delta;
    aj += delta;
    ClipToSum(sum, c_i, &ai, &aj);
    ClipToSum(sum, c_j, &aj, &ai);
  }
  *a_i = ai;
  *a_j = aj;
}

// The second-order gain -(b_ij^2) / a_ij of a pair (Fan, Chen, Lin 2005), TAU standing in when a_ij <= 0.
TESSEL_HOST_DEVICE inline double SecondOrderGain(double grad_diff, double quad_coef) {
  return -(grad_diff * grad_diff) / (quad_coef > 0 ? quad_coef : kTau);
}

// The gain of the pair (i, j) with a_ij = K_ii + K_jj - 2 K_ij written through the float Q entry
// (q_ij = y_i y_j K_ij). grad_diff = b_ij > 0.
TESSEL_HOST_DEVICE inline double PairGain(int8_t y_i, int8_t y_j, double qd_i, double qd_j, float q_ij,
                                          double grad_diff) {
  return SecondOrderGain(grad_diff, qd_i + qd_j - 2.0 * y_i * y_j * static_cast<double>(q_ij));
}

}  // namespace tessel::svm::batch
