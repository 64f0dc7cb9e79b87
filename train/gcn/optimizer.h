// Adam with L2 weight decay (Kingma & Ba, ICLR 2015; decay added to the gradient as in Kipf & Welling's
// GCN and PyTorch's Adam(weight_decay=...)). Moments are kept per parameter and saved in checkpoints.
#pragma once

#include <cstdint>
#include <vector>

#include "core/context.h"
#include "kernels/dense.h"
#include "train/gcn/model.h"

namespace tessel::train::gcn {

struct AdamConfig {
  float lr = 0.01F;
  float beta1 = 0.9F;
  float beta2 = 0.999F;
  float eps = 1e-8F;
  float weight_decay = 5e-4F;  // applied to parameters with Param::decay
  void Validate() const;
};

class Adam {
 public:
  explicit Adam(AdamConfig config) : config_(config) { config_.Validate(); }
  // One update of every parameter from its grad.
  void Step(const Context& ctx, std::vector<Param>& params);

  int64_t steps() const { return step_; }
  // Moments (m then v per parameter, in parameter order) for checkpoints.
  std::vector<Matrix>& moments() { return moments_; }
  void Restore(int64_t steps, std::vector<Matrix> moments) {
    step_ = steps;
    moments_ = std::move(moments);
  }

 private:
  AdamConfig config_;
  int64_t step_ = 0;
  std::vector<Matrix> moments_;
  std::vector<kernels::AdamTensor> tensors_;  // Step's list, kept (no allocation a step)
};

}  // namespace tessel::train::gcn
