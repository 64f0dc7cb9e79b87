// PickRow: uniform and weighted draws with and without replacement for one row (see rowwise_pick.h), running the
// algorithms of sampling/pick_math.h that the CUDA sampler runs too. Weighted draws without replacement cap
// inclusion probabilities at 1 and use systematic sampling; weighted rows whose probabilities are all equal and
// positive take the uniform path (the same draws as UniformPolicy).
#include "sampling/rowwise_pick.h"

#include "core/error.h"
#include "sampling/pick_math.h"

namespace tessel::sampling {

void PickRow(int64_t row, int64_t row_begin, int64_t deg, int64_t k, bool replace, const PickPolicy& policy, Rng& rng,
             std::vector<double>* scratch, std::vector<Pick>* out) {
  if (deg <= 0 || k == 0) return;
  const bool uniform = k < 0 || policy.Uniform();
  // Per-thread arrays reused between calls: the picks (offsets, factors) and a weighted row's scratch.
  thread_local std::vector<int64_t> offsets;
  thread_local std::vector<double> factors;
  thread_local std::vector<double> a;
  thread_local std::vector<uint8_t> capped;
  thread_local std::vector<int64_t> order;
  const auto cap = static_cast<size_t>(pick_math::MaxPicks(deg, k, replace, uniform));
  if (offsets.size() < cap) {
    offsets.resize(cap);
    factors.resize(cap);
  }
  const double* q = nullptr;
  pick_math::Scratch work;
  if (!uniform) {
    const auto n = static_cast<size_t>(deg);
    scratch->assign(n, 0.0);
    policy.Probabilities(row, row_begin, *scratch);
    q = scratch->data();
    if (a.size() < n) {
      a.resize(n);
      capped.resize(n);
      order.resize(n);
    }
    work = pick_math::Scratch{a.data(), capped.data(), order.data()};
  }
  const int64_t picks = pick_math::PickRowArrays(deg, k, replace, q, rng, work, offsets.data(), factors.data());
  if (picks < 0) {
    const int64_t j = pick_math::kBadWeight - picks;
    throw Error(fmt::format("sampling: row {} has a negative or non-finite probability {}", row, q[j]));
  }
  for (int64_t i = 0; i < picks; ++i) out->push_back({offsets[i], factors[i]});
}

}  // namespace tessel::sampling
