// Adam: the bias corrections in float64, then kernels::AdamStepMany over the parameters (weight decay on decayed
// ones; one launch on a device), element-wise in the same operation order on every device, so the result is
// thread-count independent.
#include "train/gcn/optimizer.h"

#include <cmath>

#include "kernels/dense.h"

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
  const kernels::AdamStepParams base{0.0F, config_.beta1, config_.beta2, step_size, inv_sqrt_c2, config_.eps};
  tensors_.clear();
  for (size_t k = 0; k < params.size(); ++k) {
    Param& p = params[k];
    TESSEL_CHECK(p.grad.size() == p.value.size(), "Adam: parameter {} has {} values but {} gradients", p.name,
                 p.value.size(), p.grad.size());
    tensors_.push_back(kernels::AdamTensor{&p.grad, &p.value, &moments_[2 * k], &moments_[2 * k + 1],
                                           p.decay ? config_.weight_decay : 0.0F});
  }
  kernels::AdamStepMany(ctx, base, tensors_);
}

}  // namespace tessel::train::gcn
