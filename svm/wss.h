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
SecondChoice SecondOrderOver(int64_t n, const SampleState& s, const float* q_i, double gmax, double qd_i, double yi2,
                             const int64_t* key = nullptr);

// G[k] += Q_ik d_i + Q_jk d_j for k in [0, n) (LIBSVM's gradient update, in its order of operations), then the max
// violator of the new G, as MaxViolatorOver.
Candidate UpdateGradientOver(int64_t n, SampleState* s, const float* q_i, const float* q_j, double d_i, double d_j,
                             const int64_t* key = nullptr);

}  // namespace tessel::svm
