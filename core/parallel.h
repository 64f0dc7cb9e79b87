// parallel_for over oneTBB (every CPU kernel uses it) and a scoped cap on the number of worker threads.
// Exceptions thrown by workers propagate to the caller (TBB cancels the remaining chunks). On a thread with a
// SpinTeam installed (core/spin_team.h: an SMO solve) the regions run on the team instead, each member the same
// share of every region; inside a team's task they run serially.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "core/spin_team.h"

namespace tessel {
namespace detail {
// [begin, end) as one run per team member (fewer when there are fewer than `grain` iterations a member):
// fn(run_begin, run_end) on the team, so member m always gets the m-th part of a range.
template <typename Index, typename Fn>
void TeamChunks(SpinTeam& team, Index begin, Index end, Index grain, Fn&& fn) {
  const auto n = static_cast<int64_t>(end - begin);
  const auto g = static_cast<int64_t>(grain);
  const int64_t chunks = std::min<int64_t>((n + g - 1) / g, team.size());
  team.Run(chunks, [&](int64_t k) {
    fn(static_cast<Index>(begin + static_cast<Index>(n * k / chunks)),
       static_cast<Index>(begin + static_cast<Index>(n * (k + 1) / chunks)));
  });
}
}  // namespace detail

// Calls fn(i) for i in [begin, end), in chunks of at least `grain` iterations.
template <typename Index, typename Fn>
void parallel_for(Index begin, Index end, Index grain, Fn&& fn) {
  if (end <= begin) return;
  if (grain < 1) grain = 1;
  if (end - begin <= grain || SpinTeam::InTask()) {
    for (Index i = begin; i < end; ++i) fn(i);
    return;
  }
  if (SpinTeam* team = SpinTeam::Current()) {
    detail::TeamChunks(*team, begin, end, grain, [&](Index b, Index e) {
      for (Index i = b; i < e; ++i) fn(i);
    });
    return;
  }
  tbb::parallel_for(tbb::blocked_range<Index>(begin, end, grain), [&](const tbb::blocked_range<Index>& r) {
    const detail::TbbBodyMark mark;
    for (Index i = r.begin(); i != r.end(); ++i) fn(i);
  });
}

// Calls fn(chunk_begin, chunk_end) on disjoint chunks covering [begin, end); for kernels that keep per-chunk state.
template <typename Index, typename Fn>
void parallel_for_chunks(Index begin, Index end, Index grain, Fn&& fn) {
  if (end <= begin) return;
  if (grain < 1) grain = 1;
  if (end - begin <= grain || SpinTeam::InTask()) {
    fn(begin, end);
    return;
  }
  if (SpinTeam* team = SpinTeam::Current()) {
    detail::TeamChunks(*team, begin, end, grain, fn);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<Index>(begin, end, grain), [&](const tbb::blocked_range<Index>& r) {
    const detail::TbbBodyMark mark;
    fn(r.begin(), r.end());
  });
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
