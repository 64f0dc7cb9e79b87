// LRU kernel-row cache (LIBSVM's Cache semantics: a float budget, rows grown on demand, positions swapped
// when the solver reorders its active set); swaps are applied in one parallel pass per shrinking step.
#include "svm/kernel_cache.h"

#include <algorithm>

#include "core/error.h"
#include "core/parallel.h"

namespace tessel::svm {

KernelCache::KernelCache(int64_t l, int64_t bytes) : heads_(static_cast<size_t>(l)) {
  TESSEL_CHECK(l >= 0 && l < (int64_t{1} << 31), "kernel cache: {} rows do not fit 32-bit positions", l);
  const int64_t floats = bytes / static_cast<int64_t>(sizeof(float)) -
                         l * static_cast<int64_t>(sizeof(Head)) / static_cast<int64_t>(sizeof(float));
  budget_ = std::max(floats, 2 * l);
  capacity_ = budget_;
}

void KernelCache::Unlink(int32_t pos) {
  Head& h = heads_[pos];
  if (h.prev >= 0)
    heads_[h.prev].next = h.next;
  else
    lru_first_ = h.next;
  if (h.next >= 0)
    heads_[h.next].prev = h.prev;
  else
    lru_last_ = h.prev;
  h.prev = h.next = -1;
}

void KernelCache::PushBack(int32_t pos) {
  Head& h = heads_[pos];
  h.prev = lru_last_;
  h.next = -1;
  if (lru_last_ >= 0)
    heads_[lru_last_].next = pos;
  else
    lru_first_ = pos;
  lru_last_ = pos;
}

void KernelCache::Drop(int32_t pos) {
  Head& h = heads_[pos];
  Unlink(pos);
  budget_ += h.len;
  h.len = 0;
  // The largest dropped row's storage serves the next miss: no allocation, zero fill or fresh pages per row.
  if (h.data.size() > spare_.size()) h.data.swap(spare_);
  std::vector<float>().swap(h.data);
}

std::pair<float*, int64_t> KernelCache::Get(int64_t pos, int64_t len) {
  const auto p = static_cast<int32_t>(pos);
  Head& h = heads_[p];
  if (h.len > 0) Unlink(p);
  const int64_t have = h.len;
  const int64_t more = len - have;
  if (more > 0) {
    ++misses_;
    while (budget_ < more) Drop(lru_first_);
    std::vector<float> grown;
    if (spare_.size() >= static_cast<size_t>(len)) grown.swap(spare_);
    grown.resize(static_cast<size_t>(len));  // shrinking a spare row writes nothing
    std::copy_n(h.data.begin(), have, grown.begin());
    h.data.swap(grown);
    budget_ -= more;
    h.len = len;
  } else {
    ++hits_;
  }
  PushBack(p);
  return {h.data.data(), std::min(have, len)};
}

void KernelCache::ApplySwaps(std::span<const std::pair<int32_t, int32_t>> swaps) {
  if (swaps.empty()) return;
  for (const auto& [a, b] : swaps) {
    if (a == b) continue;
    const bool la = heads_[a].len > 0;
    const bool lb = heads_[b].len > 0;
    if (la) Unlink(a);
    if (lb) Unlink(b);
    std::swap(heads_[a].data, heads_[b].data);
    std::swap(heads_[a].len, heads_[b].len);
    if (heads_[a].len > 0) PushBack(a);
    if (heads_[b].len > 0) PushBack(b);
  }
  ApplyColumnSwaps(swaps);
}

void KernelCache::ApplyColumnSwaps(std::span<const std::pair<int32_t, int32_t>> swaps) {
  if (swaps.empty()) return;
  std::vector<int32_t> cached;
  for (int32_t p = lru_first_; p >= 0; p = heads_[p].next) cached.push_back(p);
  std::vector<char> dropped(cached.size(), 0);
  parallel_for<int64_t>(0, static_cast<int64_t>(cached.size()), 4, [&](int64_t r) {
    Head& h = heads_[cached[r]];
    float* d = h.data.data();
    for (const auto& [x, y] : swaps) {
      const int64_t a = std::min(x, y);
      const int64_t b = std::max(x, y);
      if (a == b) continue;
      if (h.len > b) {
        std::swap(d[a], d[b]);
      } else if (h.len > a) {
        dropped[r] = 1;
        return;
      }
    }
  });
  for (size_t r = 0; r < cached.size(); ++r)
    if (dropped[r]) Drop(cached[r]);
}

}  // namespace tessel::svm
