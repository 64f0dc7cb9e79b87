// Adam update on oneTBB or CUDA (kernels/cuda/dense.cu): g += wd·w for decayed parameters, m and v updated in
// place, bias-corrected step. Float32 with float64 bias corrections, element-wise and in the same operation
// order on both devices, so the result is thread-count independent; on CUDA everything stays on the device.
#include "train/gcn/optimizer.h"

#include <cmath>

#include "core/build_config.h"
#include "core/parallel.h"
#include "kernels/cuda/dense_cuda.h"

namespace tessel::train::gcn {

void AdamConfig::Validate() const {
  TESSEL_CHECK(lr > 0.0F && std::isfinite(lr), "--lr must be > 0, got {}", lr);
  TESSEL_CHECK(weight_decay >= 0.0F && std::isfinite(weight_decay), "--weight-decay must be >= 0, got {}",
               weight_decay);
  TESSEL_CHECK(beta1 >= 0.0F && beta1 < 1.0F && beta2 >= 0.0F && beta2 < 1.0F, "Adam betas must be in [0, 1)");
}

void Adam::Step(const Context& ctx, std::vector<Param>& params) {
  if (moments_.empty()) {
    for (const Param& p : params) {
      moments_.emplace_back(p.value.rows, p.value.cols);
      moments_.emplace_back(p.value.rows, p.value.cols);
    }
  }
  TESSEL_CHECK(moments_.size() == 2 * params.size(), "Adam: {} moments for {} parameters", moments_.size(),
               params.size());
  ++step_;
  const double c1 = 1.0 - std::pow(static_cast<double>(config_.beta1), static_cast<double>(step_));
  const double c2 = 1.0 - std::pow(static_cast<double>(config_.beta2), static_cast<double>(step_));
  const auto step_size = static_cast<float>(static_cast<double>(config_.lr) / c1);
  const auto inv_sqrt_c2 = static_cast<float>(1.0 / std::sqrt(c2));
  ctx.Dispatch(
      [&] {
        for (size_t k = 0; k < params.size(); ++k) {
          Param& p = params[k];
          auto w = p.value.Mut();
          auto g = p.grad.View();
          TESSEL_CHECK(g.size() == w.size(), "Adam: parameter {} has {} values but {} gradients", p.name, w.size(),
                       g.size());
          auto m = moments_[2 * k].Mut();
          auto v = moments_[2 * k + 1].Mut();
          const float wd = p.decay ? config_.weight_decay : 0.0F;
          parallel_for<int64_t>(0, static_cast<int64_t>(w.size()), 8192, [&](int64_t i) {
            const float grad = g[i] + wd * w[i];
            m[i] = config_.beta1 * m[i] + (1.0F - config_.beta1) * grad;
            v[i] = config_.beta2 * v[i] + (1.0F - config_.beta2) * grad * grad;
            w[i] -= step_size * m[i] / (std::sqrt(v[i]) * inv_sqrt_c2 + config_.eps);
          });
        }
      },
      [&] {
#if TESSEL_HAVE_CUDA
        for (size_t k = 0; k < params.size(); ++k) {
          Param& p = params[k];
          TESSEL_CHECK(p.grad.size() == p.value.size(), "Adam: parameter {} has {} values but {} gradients", p.name,
                       p.value.size(), p.grad.size());
          const float wd = p.decay ? config_.weight_decay : 0.0F;
          kernels::cuda::AdamStep(p.value.data.MutableDevice(), p.grad.data.Device(),
                                  moments_[2 * k].data.MutableDevice(), moments_[2 * k + 1].data.MutableDevice(),
                                  p.value.size(), wd, config_.beta1, config_.beta2, step_size, inv_sqrt_c2,
                                  config_.eps);
        }
#else
        kernels::NotOnCuda("Adam");
#endif
      });
}

}  // namespace tessel::train::gcn
