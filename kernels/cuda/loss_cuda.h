// Host-side declarations of the CUDA loss kernels (kernels/cuda/loss.cu): softmax cross-entropy, row softmax
// and row arg-max, one warp per row. No CUDA headers; every pointer is a device pointer.
#pragma once

#include <cstdint>

namespace tessel::kernels::cuda {

// For k in [0, m): r = rows[k], row_loss[k] = log sum_j exp(z[r, j] - max) - (z[r, labels[r]] - max) (float64).
// When grad is not null it is zeroed ([n_rows x c]) and the selected rows get (softmax - onehot) * inv_m.
// Rows and labels are checked by the caller.
void SoftmaxCrossEntropy(const float* logits, int64_t n_rows, int64_t c, const int32_t* labels, const int64_t* rows,
                         int64_t m, double inv_m, double* row_loss, float* grad);
// probs[i] = softmax(logits[i]); probs may equal logits.
// total[0] = (first ? 0 : total[0]) + (sum of t[0 .. m) in chunks of `chunk`, the chunks in order) * inv_m * weight:
// the host's float64 operations in the host's order, without a download. One launch up to kLossOneLaunchChunks
// chunks (one block: its threads the chunks, then one thread their total, the same order), else two (the chunks'
// sums, then their total).
inline constexpr int64_t kLossOneLaunchChunks = 1024;
void LossTotal(const double* t, int64_t m, int64_t chunk, double inv_m, double weight, bool first, double* total);
void RowSoftmax(const float* logits, int64_t n_rows, int64_t c, float* probs);
// out[i] = index of the largest value of row i (first on ties).
void RowArgmax(const float* x, int64_t n_rows, int64_t c, int32_t* out);

// Consecutive segments of a row list: segment s is [end[s - 1], end[s]) (end[-1] = 0), count of them in use.
constexpr int kConfusionSegments = 4;
struct ConfusionSegments {
  int count = 0;
  int64_t end[kConfusionSegments] = {};
};
// counts (seg.count x (3 c + 1), zeroed here) += for k in segment s, r = rows[k], y = labels[r], p = RowArgmax's
// index of row r: y == p: tp [s (3c + 1) + y]; else fp [.. + c + p] and fn [.. + 2c + y]; a row outside [0, n_rows)
// or a label outside [0, c): [.. + 3c]. Integer counts: the same whatever the order of the additions.
void ArgmaxConfusion(const float* x, int64_t n_rows, int64_t c, const int32_t* labels, const int64_t* rows,
                     const ConfusionSegments& seg, int64_t* counts);

}  // namespace tessel::kernels::cuda
