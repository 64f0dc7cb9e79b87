// CPU softmax cross-entropy, row softmax and arg-max, and their dispatch to CUDA (kernels/cuda/loss.cu). The loss
// is accumulated in float64 per chunk of rows and combined in chunk order on both devices (the CUDA kernel
// returns per-row terms that the host adds in the same order), so it does not depend on the thread count.
#include "kernels/loss.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/build_config.h"
#include "core/parallel.h"
#include "kernels/cuda/loss_cuda.h"

namespace tessel::kernels {
namespace {

constexpr int64_t kLossChunk = 256;  // rows per partial sum of the loss

#if TESSEL_HAVE_CUDA
double SoftmaxCrossEntropyCuda(const Matrix& logits, std::span<const int32_t> labels, std::span<const int64_t> rows,
                               Matrix* grad) {
  const int64_t c = logits.cols;
  for (int64_t r : rows) {
    TESSEL_CHECK(r >= 0 && r < logits.rows, "SoftmaxCrossEntropy: row {} outside [0, {})", r, logits.rows);
    const int32_t y = labels[static_cast<size_t>(r)];
    TESSEL_CHECK(y >= 0 && y < c, "SoftmaxCrossEntropy: row {} has label {} outside [0, {})", r, y, c);
  }
  const auto m = static_cast<int64_t>(rows.size());
  const double inv_m = m > 0 ? 1.0 / static_cast<double>(m) : 0.0;
  const Buffer<int32_t> label_buf = Buffer<int32_t>::CopyOf(labels);
  const Buffer<int64_t> row_buf = Buffer<int64_t>::CopyOf(rows);
  Buffer<double> row_loss(static_cast<size_t>(m));
  float* g = nullptr;
  if (grad != nullptr) {
    TESSEL_CHECK(grad != &logits, "SoftmaxCrossEntropy: grad must not alias logits");
    grad->Resize(logits.rows, c);
    g = grad->data.MutableDevice();
  }
  cuda::SoftmaxCrossEntropy(logits.data.Device(), logits.rows, c, label_buf.Device(), row_buf.Device(), m, inv_m,
                            row_loss.MutableDevice(), g);
  if (m == 0) return 0.0;
  auto terms = row_loss.Host();
  double total = 0;
  for (int64_t begin = 0; begin < m; begin += kLossChunk) {  // the CPU's chunk order
    double sum = 0;
    for (int64_t k = begin; k < std::min(m, begin + kLossChunk); ++k) sum += terms[static_cast<size_t>(k)];
    total += sum;
  }
  return total * inv_m;
}
#endif

}  // namespace

double SoftmaxCrossEntropy(const Context& ctx, const Matrix& logits, std::span<const int32_t> labels,
                           std::span<const int64_t> rows, Matrix* grad) {
  TESSEL_CHECK(static_cast<int64_t>(labels.size()) == logits.rows, "SoftmaxCrossEntropy: {} labels for {} rows",
               labels.size(), logits.rows);
  return ctx.Dispatch(
      [&]() -> double {
        const int64_t c = logits.cols;
        auto lv = logits.View();
        std::span<float> gv;
        if (grad != nullptr) {
          TESSEL_CHECK(grad != &logits, "SoftmaxCrossEntropy: grad must not alias logits");
          *grad = Matrix(logits.rows, c);  // zeros on rows not selected
          gv = grad->Mut();
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
      },
      [&]() -> double {
#if TESSEL_HAVE_CUDA
        return SoftmaxCrossEntropyCuda(logits, labels, rows, grad);
#else
        NotOnCuda("SoftmaxCrossEntropy");
#endif
      });
}

void RowSoftmax(const Context& ctx, const Matrix& logits, Matrix* probs) {
  ctx.Dispatch(
      [&] {
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
      },
      [&] {
#if TESSEL_HAVE_CUDA
        if (probs != &logits) probs->Resize(logits.rows, logits.cols);
        const float* in = logits.data.Device();  // before MutableDevice: probs may be logits
        cuda::RowSoftmax(in, logits.rows, logits.cols, probs->data.MutableDevice());
#else
        NotOnCuda("RowSoftmax");
#endif
      });
}

void RowArgmax(const Context& ctx, const Matrix& x, std::span<int32_t> out) {
  TESSEL_CHECK(static_cast<int64_t>(out.size()) == x.rows, "RowArgmax: output has {} entries for {} rows", out.size(),
               x.rows);
  ctx.Dispatch(
      [&] {
        const int64_t c = x.cols;
        auto xv = x.View();
        parallel_for<int64_t>(0, x.rows, 1024, [&](int64_t r) {
          const float* z = xv.data() + r * c;
          out[r] = static_cast<int32_t>(std::max_element(z, z + c) - z);
        });
      },
      [&] {
#if TESSEL_HAVE_CUDA
        Buffer<int32_t> result(out.size());
        cuda::RowArgmax(x.data.Device(), x.rows, x.cols, result.MutableDevice());
        auto host = result.Host();
        std::copy(host.begin(), host.end(), out.begin());
#else
        NotOnCuda("RowArgmax");
#endif
      });
}

}  // namespace tessel::kernels
