// Kernel-row cache with a byte budget: least-recently-used rows of float Q values, indexed by solver
// position, so a row holds the prefix [0, len) of the current active order (LIBSVM's Cache).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace tessel::svm {

class KernelCache {
 public:
  // `l` positions; `bytes` the budget for rows and bookkeeping; at least two full rows always fit. The storage of
  // one dropped row is kept for the next miss (beyond the budget: one row at most).
  KernelCache(int64_t l, int64_t bytes);

  // The row at `pos` grown to at least `len` entries. Returns the row and the first entry the caller must
  // fill (== len when the whole prefix was cached). May evict other rows, never the two most recent.
  std::pair<float*, int64_t> Get(int64_t pos, int64_t len);

  // The cached prefix of the row at `pos` (nullptr and 0 when none), without touching the LRU order.
  std::pair<const float*, int64_t> Peek(int64_t pos) const {
    const Head& h = heads_[pos];
    return {h.len > 0 ? h.data.data() : nullptr, h.len};
  }

  // Makes the cached row at `pos` (if any) the most recently used, so the next Get evicts it last: a caller that
  // reads it while filling another row (the regressions' twin rows) keeps it valid through that Get.
  void Touch(int64_t pos) {
    if (heads_[pos].len == 0) return;
    Unlink(static_cast<int32_t>(pos));
    PushBack(static_cast<int32_t>(pos));
  }

  // Applies position swaps (a, b) in order, as if the solver's positions a and b had exchanged their samples:
  // the rows of a and b change places, and every cached row swaps its entries a and b (or is dropped when
  // it holds a but not b).
  void ApplySwaps(std::span<const std::pair<int32_t, int32_t>> swaps);

  // Only the entries: every cached row swaps its entries a and b (or is dropped when it holds a but not b), the
  // rows stay where they are. For a cache whose rows are keyed by something other than the positions they span
  // (the distributed solver: rows of global samples over this rank's positions).
  void ApplyColumnSwaps(std::span<const std::pair<int32_t, int32_t>> swaps);

  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }
  int64_t budget_floats() const { return budget_; }
  // How many rows of `len` entries the budget holds at once (at least two): that many rows fetched one after the
  // other are all still cached after the last.
  int64_t RowsThatFit(int64_t len) const { return std::max<int64_t>(2, capacity_ / std::max<int64_t>(len, 1)); }

 private:
  struct Head {
    std::vector<float> data;
    int32_t prev = -1;
    int32_t next = -1;
    int64_t len = 0;
  };
  void Unlink(int32_t pos);
  void PushBack(int32_t pos);
  void Drop(int32_t pos);

  std::vector<Head> heads_;
  std::vector<float> spare_;  // the storage of a dropped row, reused by the next miss it can hold
  int32_t lru_first_ = -1;    // least recently used
  int32_t lru_last_ = -1;
  int64_t budget_ = 0;    // floats still free
  int64_t capacity_ = 0;  // floats in all
  int64_t hits_ = 0;
  int64_t misses_ = 0;
};

}  // namespace tessel::svm
