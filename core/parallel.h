// parallel_for over oneTBB (every CPU kernel uses it) and a scoped cap on the number of worker threads.
// Exceptions thrown by workers propagate to the caller (TBB cancels the remaining chunks).
#pragma once

#include <cstdint>
#include <memory>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace tessel {

// Calls fn(i) for i in [begin, end), in chunks of at least `grain` iterations.
template <typename Index, typename Fn>
void parallel_for(Index begin, Index end, Index grain, Fn&& fn) {
  if (end <= begin) return;
  if (grain < 1) grain = 1;
  if (end - begin <= grain) {
    for (Index i = begin; i < end; ++i) fn(i);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<Index>(begin, end, grain), [&](const tbb::blocked_range<Index>& r) {
    for (Index i = r.begin(); i != r.end(); ++i) fn(i);
  });
}

// Calls fn(chunk_begin, chunk_end) on disjoint chunks covering [begin, end); for kernels that keep per-chunk state.
template <typename Index, typename Fn>
void parallel_for_chunks(Index begin, Index end, Index grain, Fn&& fn) {
  if (end <= begin) return;
  if (grain < 1) grain = 1;
  if (end - begin <= grain) {
    fn(begin, end);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<Index>(begin, end, grain),
                    [&](const tbb::blocked_range<Index>& r) { fn(r.begin(), r.end()); });
}

// Limits oneTBB to `threads` workers while alive (0 = all hardware threads). Not copyable.
class ThreadLimit {
 public:
  explicit ThreadLimit(int threads);
  ~ThreadLimit();
  ThreadLimit(const ThreadLimit&) = delete;
  ThreadLimit& operator=(const ThreadLimit&) = delete;
  static int HardwareThreads();  // the CPUs this process may run on (its affinity)
  // The workers oneTBB may use now: the innermost limit alive, at most HardwareThreads().
  static int Current();
  // The cores each of `local_ranks` processes on this machine can count on: the fewer of this process's CPUs and
  // the machine's CPUs / local_ranks (ranks bound to a core each see 1; unbound ranks share the machine).
  static double CoresPerRank(int local_ranks);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessel
