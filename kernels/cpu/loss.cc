// Softmax cross-entropy, row softmax and arg-max: the public functions (checks, then the device table of
// kernels/ops.h) and the CPU entries (CUDA: kernels/cuda/ops.cc over kernels/cuda/loss.cu). The loss
// is accumulated in float64 per chunk of rows and combined in chunk order on both devices (the CUDA kernel
// returns per-row terms that the host adds in the same order), so it does not depend on the thread count.
#include "kernels/loss.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <vector>

#include "core/parallel.h"
#include "kernels/ops.h"

namespace tessel::kernels {

double SoftmaxCrossEntropy(const Context& ctx, const Matrix& logits, const Buffer<int32_t>& labels,
                           const Buffer<int64_t>& rows, Matrix* grad) {
  TESSEL_CHECK(static_cast<int64_t>(labels.size()) == logits.rows, "SoftmaxCrossEntropy: {} labels for {} rows",
               labels.size(), logits.rows);
  return Ops(ctx).softmax_cross_entropy(logits, labels, rows, grad);
}

double SoftmaxCrossEntropy(const Context& ctx, const Matrix& logits, std::span<const int32_t> labels,
                           std::span<const int64_t> rows, Matrix* grad) {
  return SoftmaxCrossEntropy(ctx, logits, Buffer<int32_t>::CopyOf(labels), Buffer<int64_t>::CopyOf(rows), grad);
}

void SoftmaxCrossEntropyAdd(const Context& ctx, const Matrix& logits, const Buffer<int32_t>& labels,
                            const Buffer<int64_t>& rows, double weight, bool first, Matrix* grad,
                            Buffer<double>* total) {
  TESSEL_CHECK(static_cast<int64_t>(labels.size()) == logits.rows, "SoftmaxCrossEntropy: {} labels for {} rows",
               labels.size(), logits.rows);
  TESSEL_CHECK(first || total->size() == 1, "SoftmaxCrossEntropyAdd: adding into a total that was never started");
  if (total->size() != 1) *total = Buffer<double>::Uninitialized(1);
  Ops(ctx).softmax_cross_entropy_add(logits, labels, rows, weight, first, grad, total);
}

void RowSoftmax(const Context& ctx, const Matrix& logits, Matrix* probs) { Ops(ctx).row_softmax(logits, probs); }

void RowArgmax(const Context& ctx, const Matrix& x, std::span<int32_t> out) {
  TESSEL_CHECK(static_cast<int64_t>(out.size()) == x.rows, "RowArgmax: output has {} entries for {} rows", out.size(),
               x.rows);
  Ops(ctx).row_argmax(x, out);
}

std::vector<int64_t> ArgmaxConfusion(const Context& ctx, const Matrix& logits, const Buffer<int32_t>& labels,
                                     const Buffer<int64_t>& rows, std::span<const int64_t> ends) {
  TESSEL_CHECK(static_cast<int64_t>(labels.size()) == logits.rows, "ArgmaxConfusion: {} labels for {} rows",
               labels.size(), logits.rows);
  TESSEL_CHECK(!ends.empty() && static_cast<int>(ends.size()) <= kMaxConfusionSegments,
               "ArgmaxConfusion: {} segments (1 to {})", ends.size(), kMaxConfusionSegments);
  int64_t begin = 0;
  for (const int64_t end : ends) {
    TESSEL_CHECK(end >= begin, "ArgmaxConfusion: segment ends {} after {}", end, begin);
    begin = end;
  }
  TESSEL_CHECK(static_cast<size_t>(ends.back()) == rows.size(), "ArgmaxConfusion: segments end at {}, {} rows given",
               ends.back(), rows.size());
  std::vector<int64_t> counts(ends.size() * static_cast<size_t>(3 * logits.cols + 1), 0);
  Ops(ctx).argmax_confusion(logits, labels, rows, ends, counts);
  return counts;
}

namespace cpu {

double SoftmaxCrossEntropy(const Matrix& logits, const Buffer<int32_t>& label_buf, const Buffer<int64_t>& row_buf,
                           Matrix* grad) {
  const std::span<const int32_t> labels = label_buf.Host();
  const std::span<const int64_t> rows = row_buf.Host();
  const int64_t c = logits.cols;
  auto lv = logits.View();
  std::span<float> gv;
  if (grad != nullptr) {
    TESSEL_CHECK(grad != &logits, "SoftmaxCrossEntropy: grad must not alias logits");
    grad->Resize(logits.rows, c);
    gv = grad->Mut();
    std::fill(gv.begin(), gv.end(), 0.0F);  // zeros on rows not selected
  }
  const auto m = static_cast<int64_t>(rows.size());
  if (m == 0) return 0.0;
  const double inv_m = 1.0 / static_cast<double>(m);
  constexpr int64_t kChunk = kLossChunk;
  const int64_t chunks = (m + kChunk - 1) / kChunk;
  std::vector<double> partial(static_cast<size_t>(chunks), 0.0);
  parallel_for<int64_t>(0, chunks, 1, [&](int64_t ch) {
    double sum = 0;
    const int64_t end = std::min(m, (ch + 1) * kChunk);
    for (int64_t k = ch * kChunk; k < end; ++k) {
      const int64_t r = rows[k];
      TESSEL_CHECK(r >= 0 && r < logits.rows, "SoftmaxCrossEntropy: row {} outside [0, {})", r, logits.rows);
      const int32_t y = labels[r];
      TESSEL_CHECK(y >= 0 && y < c, "SoftmaxCrossEntropy: row {} has label {} outside [0, {})", r, y, c);
      const float* z = lv.data() + r * c;
      const float mx = *std::max_element(z, z + c);
      double denom = 0;
      for (int64_t j = 0; j < c; ++j) denom += std::exp(static_cast<double>(z[j] - mx));
      const double log_denom = std::log(denom);
      sum += log_denom - static_cast<double>(z[y] - mx);
      if (grad != nullptr) {
        float* g = gv.data() + r * c;
        for (int64_t j = 0; j < c; ++j) {
          const double prob = std::exp(static_cast<double>(z[j] - mx) - log_denom);
          g[j] = static_cast<float>((prob - (j == y ? 1.0 : 0.0)) * inv_m);
        }
      }
    }
    partial[ch] = sum;
  });
  double total = 0;
  for (double s : partial) total += s;
  return total * inv_m;
}

void SoftmaxCrossEntropyAdd(const Matrix& logits, const Buffer<int32_t>& labels, const Buffer<int64_t>& rows,
                            double weight, bool first, Matrix* grad, Buffer<double>* total) {
  const double loss = SoftmaxCrossEntropy(logits, labels, rows, grad);
  auto t = total->MutableHost();
  t[0] = (first ? 0.0 : t[0]) + loss * weight;
}

void RowSoftmax(const Matrix& logits, Matrix* probs) {
  if (probs != &logits) probs->Resize(logits.rows, logits.cols);
  const int64_t c = logits.cols;
  auto lv = logits.View();
  auto pv = probs->Mut();
  parallel_for<int64_t>(0, logits.rows, 256, [&](int64_t r) {
    const float* z = lv.data() + r * c;
    float* out = pv.data() + r * c;
    const float mx = c > 0 ? *std::max_element(z, z + c) : 0.0F;
    double denom = 0;
    for (int64_t j = 0; j < c; ++j) denom += std::exp(static_cast<double>(z[j] - mx));
    for (int64_t j = 0; j < c; ++j) out[j] = static_cast<float>(std::exp(static_cast<double>(z[j] - mx)) / denom);
  });
}

void RowArgmax(const Matrix& x, std::span<int32_t> out) {
  const int64_t c = x.cols;
  auto xv = x.View();
  parallel_for<int64_t>(0, x.rows, 1024, [&](int64_t r) {
    const float* z = xv.data() + r * c;
    out[r] = static_cast<int32_t>(std::max_element(z, z + c) - z);
  });
}

void ArgmaxConfusion(const Matrix& logits, const Buffer<int32_t>& label_buf, const Buffer<int64_t>& row_buf,
                     std::span<const int64_t> ends, std::span<int64_t> counts) {
  const int64_t c = logits.cols;
  const int64_t stride = 3 * c + 1;  // per segment: tp[c], fp[c], fn[c], uncounted
  const std::span<const float> z = logits.View();
  const std::span<const int32_t> labels = label_buf.Host();
  const std::span<const int64_t> rows = row_buf.Host();
  std::mutex merge;
  // Chunks count apart and add under the lock: integer sums, the same whatever the chunks.
  parallel_for_chunks<int64_t>(0, static_cast<int64_t>(rows.size()), 4096, [&](int64_t first, int64_t last) {
    std::vector<int64_t> local(counts.size(), 0);
    size_t s = 0;
    for (int64_t k = first; k < last; ++k) {
      while (k >= ends[s]) ++s;
      int64_t* seg = local.data() + static_cast<int64_t>(s) * stride;
      const int64_t r = rows[static_cast<size_t>(k)];
      const int32_t y = r >= 0 && r < logits.rows ? labels[static_cast<size_t>(r)] : -1;
      if (y < 0 || y >= c) {
        ++seg[3 * c];
        continue;
      }
      const float* row = z.data() + r * c;
      const int64_t p = std::max_element(row, row + c) - row;  // RowArgmax's prediction
      if (p == y) {
        ++seg[y];
      } else {
        ++seg[c + p];
        ++seg[2 * c + y];
      }
    }
    const std::lock_guard<std::mutex> lock(merge);
    for (size_t i = 0; i < counts.size(); ++i) counts[i] += local[i];
  });
}

}  // namespace cpu
}  // namespace tessel::kernels
