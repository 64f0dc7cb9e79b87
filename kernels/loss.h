// Row softmax with cross-entropy over selected rows (the GCN loss) and arg-max prediction.
// The gradient is written for every row (zero on rows not selected), ready for the backward pass.
#pragma once

#include <cstdint>
#include <span>

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

// probs[i] = softmax(logits[i]) (numerically stable). probs may be logits.
void RowSoftmax(const Context& ctx, const Matrix& logits, Matrix* probs);
// Index of the largest value per row (first on ties).
void RowArgmax(const Context& ctx, const Matrix& x, std::span<int32_t> out);

}  // namespace tessel::kernels
