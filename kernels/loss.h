// Row softmax with cross-entropy over selected rows (the GCN loss) and arg-max prediction.
// The gradient is written for every row (zero on rows not selected), ready for the backward pass.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/context.h"
#include "kernels/matrix.h"

namespace tessel::kernels {

// Mean over i in rows of -log softmax(logits[i])[labels[i]]; labels are indexed by row of logits.
// grad (resized to logits' shape) = (softmax - onehot) / rows.size() on the selected rows, 0 elsewhere.
// Throws when a selected row has a label outside [0, logits.cols). Pass grad = nullptr for the loss only.
double SoftmaxCrossEntropy(const Context& ctx, const Matrix& logits, std::span<const int32_t> labels,
                           std::span<const int64_t> rows, Matrix* grad);
// The same over Buffers: on a device, labels and rows kept in the caller's Buffers between steps stay resident
// (uploaded once, not per call).
double SoftmaxCrossEntropy(const Context& ctx, const Matrix& logits, const Buffer<int32_t>& labels,
                           const Buffer<int64_t>& rows, Matrix* grad);

// SoftmaxCrossEntropy's loss times `weight`, written (`first`) or added into (*total)[0], a one-element float64
// Buffer, where that buffer lives: on a device a step's loss never comes back to the host, and the total is read once
// (an epoch). The same float64 operations as `total = (first ? 0 : total) + loss * weight` on the host.
void SoftmaxCrossEntropyAdd(const Context& ctx, const Matrix& logits, const Buffer<int32_t>& labels,
                            const Buffer<int64_t>& rows, double weight, bool first, Matrix* grad,
                            Buffer<double>* total);

// probs[i] = softmax(logits[i]) (numerically stable). probs may be logits.
void RowSoftmax(const Context& ctx, const Matrix& logits, Matrix* probs);
// Index of the largest value per row (first on ties).
void RowArgmax(const Context& ctx, const Matrix& x, std::span<int32_t> out);

// The confusion counts of the predictions RowArgmax would make (the same index, first on ties) against `labels`
// (indexed by row of logits), over consecutive segments of `rows`: segment s is rows[ends[s - 1] .. ends[s])
// (ends[-1] = 0; at most kMaxConfusionSegments segments). Returns ends.size() x (3 C + 1) counts, C = logits.cols:
// for segment s at s (3 C + 1), per class c, true positives [c], false positives [C + c], false negatives [2 C + c],
// then the segment's rows that could not be counted (a row outside logits or a label outside [0, C)). On a device
// the rows' labels and ids are read there and only the counts come back: an evaluation downloads a few hundred
// bytes instead of a prediction per node.
inline constexpr int kMaxConfusionSegments = 4;
std::vector<int64_t> ArgmaxConfusion(const Context& ctx, const Matrix& logits, const Buffer<int32_t>& labels,
                                     const Buffer<int64_t>& rows, std::span<const int64_t> ends);

}  // namespace tessel::kernels
