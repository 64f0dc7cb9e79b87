// SpinTeam: a fixed team of threads for a loop made of many short parallel regions (an SMO solve runs 3-5 regions
// of 5-50 microseconds an iteration, tens of thousands of iterations).
//
// Why not oneTBB there: its parallel_for hands a region's chunks to whichever thread steals them, so the blocks of
// the solver's arrays (gradient, labels, kernel rows) move between the cores' caches from one region to the next,
// and it pays a task spawn and a steal per region. A team gives member m of S the same share of every region
// (tasks [T m / S, T (m + 1) / S)), so a block of positions is read by the core that wrote it, and a region starts
// when the members see one atomic word change. On the 2-core machine of docs/benchmarks.md, epsilon- and nu-SVR on
// 20,000 rows took 10% less wall time than with oneTBB (the same models).
//
// A worker that sees no region for kSpinNanoseconds sleeps on that word (C++20 atomic wait, a futex), so a team
// left idle costs no CPU; while a solve runs, its workers spin between regions. Teams are therefore opt-in per
// process (Enable): `tessel train svm` in one process enables them; under mpirun, where ranks may share cores,
// they stay off.
//
// SpinTeamScope installs a team for the calling thread: while it lives, parallel_for and parallel_for_chunks called
// on that thread (core/parallel.h) run on the team instead of oneTBB. Inside a team's task they run serially (no
// nesting); a scope opened inside a oneTBB region (another parallel_for's body: concurrent folds or pairs) or on a
// thread that already has a team installs nothing. Run returns when every task has finished; the first exception a
// task throws is rethrown by Run (the other tasks still run).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace tessel {

class SpinTeam {
 public:
  // `threads` counts the caller: threads - 1 workers are started (none for threads <= 1).
  explicit SpinTeam(int threads);
  ~SpinTeam();
  SpinTeam(const SpinTeam&) = delete;
  SpinTeam& operator=(const SpinTeam&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(k) for k in [0, tasks) on the team, member m taking [tasks m / size, tasks (m + 1) / size) (the caller
  // is member 0), and returns when all have returned. At most kMaxTasks tasks.
  template <typename Fn>
  void Run(int64_t tasks, Fn&& fn) {
    RunTasks(
        tasks, [](void* f, int64_t k) { (*static_cast<std::remove_reference_t<Fn>*>(f))(k); },
        const_cast<void*>(static_cast<const void*>(&fn)));
  }

  static constexpr int64_t kMaxTasks = int64_t{1} << 30;

  // The team installed on this thread by a SpinTeamScope, or null (also inside a task).
  static SpinTeam* Current();
  // Whether this thread is running a team's task (parallel_for then runs serially).
  static bool InTask();
  // Allows SpinTeamScope to start teams in this process (off by default).
  static void Enable(bool on);
  // Teams SpinTeamScope has started in this process (for tests).
  static int64_t Started();

 private:
  using Call = void (*)(void*, int64_t);
  void RunTasks(int64_t tasks, Call call, void* ctx);
  void WorkerLoop(int member);
  // Runs member's share of the region published as `word`.
  void RunShare(uint64_t word, int member);

  // The region's number (bits 32-63; all ones in bits 0-31 is the stop word) and task count (bits 0-31).
  std::atomic<uint64_t> state_{0};
  std::atomic<int64_t> done_{0};  // tasks of the current region that have returned
  std::atomic<int> sleepers_{0};  // workers blocked in state_.wait
  Call call_ = nullptr;           // the current region's function (written before its state word)
  void* ctx_ = nullptr;
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::vector<std::thread> workers_;
};

// Installs a team of `threads` (ThreadLimit::Current() when 0) on the calling thread for its lifetime, where teams
// are enabled and the thread is free to own cores (see above); otherwise nothing.
class SpinTeamScope {
 public:
  explicit SpinTeamScope(int threads = 0);
  ~SpinTeamScope();
  SpinTeamScope(const SpinTeamScope&) = delete;
  SpinTeamScope& operator=(const SpinTeamScope&) = delete;
  bool active() const { return team_ != nullptr; }

 private:
  std::unique_ptr<SpinTeam> team_;
};

namespace detail {
// Marks the body of a oneTBB region on this thread (core/parallel.h), so that no team starts inside one.
class TbbBodyMark {
 public:
  TbbBodyMark();
  ~TbbBodyMark();
  TbbBodyMark(const TbbBodyMark&) = delete;
  TbbBodyMark& operator=(const TbbBodyMark&) = delete;
};
}  // namespace detail

}  // namespace tessel
