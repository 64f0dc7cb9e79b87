#include "svm/class_rows.h"

#include "core/error.h"
#include "core/memory_budget.h"

namespace tessel::svm {

int64_t ClassRowCache::Bytes(const std::vector<std::vector<int32_t>>& members) {
  int64_t floats = 0;
  for (const auto& m : members) floats += static_cast<int64_t>(m.size()) * static_cast<int64_t>(m.size());
  return floats * static_cast<int64_t>(sizeof(float));
}

ClassRowCache::ClassRowCache(int64_t num_rows, const std::vector<std::vector<int32_t>>& members)
    : members_(members),
      row_class_(static_cast<size_t>(num_rows), -1),
      index_(static_cast<size_t>(num_rows), -1),
      offset_(static_cast<size_t>(num_rows), -1) {
  const int64_t floats = Bytes(members) / static_cast<int64_t>(sizeof(float));
  memory::CheckArray(floats, static_cast<int64_t>(sizeof(float)), "the one-vs-one pairs' shared own-class rows",
                     "lower -m (the cache size), which decides whether these rows are shared");
  int64_t at = 0;
  for (size_t c = 0; c < members_.size(); ++c) {
    const auto n = static_cast<int64_t>(members_[c].size());
    for (int64_t k = 0; k < n; ++k) {
      const int32_t r = members_[c][static_cast<size_t>(k)];
      TESSEL_CHECK(r >= 0 && r < num_rows && row_class_[static_cast<size_t>(r)] < 0,
                   "ClassRowCache: row {} is out of range or in two classes", r);
      row_class_[static_cast<size_t>(r)] = static_cast<int32_t>(c);
      index_[static_cast<size_t>(r)] = static_cast<int32_t>(k);
      offset_[static_cast<size_t>(r)] = at;
      at += n;
    }
  }
  values_.reset(new float[static_cast<size_t>(floats)]);  // written before it is read (state_)
  state_.reset(new std::atomic<uint8_t>[static_cast<size_t>(num_rows)]);
  for (int64_t r = 0; r < num_rows; ++r) state_[static_cast<size_t>(r)].store(0, std::memory_order_relaxed);
}

const float* ClassRowCache::OwnClassRow(int32_t r, kernels::SvmKernelRows& kernel) {
  const auto ur = static_cast<size_t>(r);
  TESSEL_CHECK(r >= 0 && ur < row_class_.size() && row_class_[ur] >= 0, "ClassRowCache: row {} has no class", r);
  std::atomic<uint8_t>& state = state_[ur];
  float* row = values_.get() + offset_[ur];
  uint8_t seen = state.load(std::memory_order_acquire);
  if (seen == 2) {
    hits_.fetch_add(1, std::memory_order_relaxed);
    return row;
  }
  if (seen != 0 || !state.compare_exchange_strong(seen, 1, std::memory_order_acq_rel)) return nullptr;
  const std::vector<int32_t>& cols = members_[static_cast<size_t>(row_class_[ur])];
  try {
    kernel.QRow(r, 1, cols, {}, std::span<float>(row, cols.size()));
  } catch (...) {
    state.store(0, std::memory_order_release);
    throw;
  }
  state.store(2, std::memory_order_release);
  fills_.fetch_add(1, std::memory_order_relaxed);
  return row;
}

}  // namespace tessel::svm
