// SpinTeam (spin_team.h): the region protocol.
//
// The caller of Run writes the region's function, resets the count of finished tasks, then publishes one word
// (region number, task count) with a sequentially consistent store, runs its own share and waits until `done_`
// reaches the task count. A worker runs its share of each region it sees; it reads the function only when its
// share is not empty, and the caller replaces the function only after every task has finished, so a worker never
// reads another region's function. A worker about to sleep first counts itself in sleepers_ and reads the word
// again (both sequentially consistent): either it sees the new region or the caller sees it counted and wakes it,
// so no wake-up is lost.
#include "core/spin_team.h"

#include <chrono>
#include <utility>

#include "core/error.h"
#include "core/parallel.h"

namespace tessel {
namespace {

thread_local SpinTeam* t_team = nullptr;  // installed by a SpinTeamScope
thread_local bool t_in_task = false;      // running a task of some team's region
thread_local int t_tbb_depth = 0;         // oneTBB region bodies running on this thread
std::atomic<bool> g_enabled{false};
std::atomic<int64_t> g_started{0};

constexpr int64_t kSpinNanoseconds = 200'000;  // a worker sleeps after this long without a region
constexpr int64_t kCallerSpins = 4096;         // the caller's pauses before it yields while workers finish
constexpr uint64_t kStopTasks = 0xffffffffULL;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr uint64_t Region(uint64_t word) { return word >> 32; }
constexpr uint64_t Tasks(uint64_t word) { return word & 0xffffffffULL; }

struct InTaskMark {
  bool saved = t_in_task;
  InTaskMark() { t_in_task = true; }
  ~InTaskMark() { t_in_task = saved; }
  InTaskMark(const InTaskMark&) = delete;
  InTaskMark& operator=(const InTaskMark&) = delete;
};

}  // namespace

SpinTeam::SpinTeam(int threads) {
  for (int t = 1; t < threads; ++t) workers_.emplace_back([this, t] { WorkerLoop(t); });
}

SpinTeam::~SpinTeam() {
  state_.store(((Region(state_.load(std::memory_order_relaxed)) + 1) << 32) | kStopTasks, std::memory_order_seq_cst);
  state_.notify_all();
  for (std::thread& w : workers_) w.join();
}

SpinTeam* SpinTeam::Current() { return t_in_task ? nullptr : t_team; }
bool SpinTeam::InTask() { return t_in_task; }
void SpinTeam::Enable(bool on) { g_enabled.store(on, std::memory_order_relaxed); }
int64_t SpinTeam::Started() { return g_started.load(std::memory_order_relaxed); }

void SpinTeam::RunShare(uint64_t word, int member) {
  const auto tasks = static_cast<int64_t>(Tasks(word));
  const int64_t begin = tasks * member / size();
  const int64_t end = tasks * (member + 1) / size();
  if (end <= begin) return;
  const InTaskMark in_task;
  for (int64_t k = begin; k < end; ++k) {
    try {
      call_(ctx_, k);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }
  done_.fetch_add(end - begin, std::memory_order_release);
}

void SpinTeam::RunTasks(int64_t tasks, Call call, void* ctx) {
  if (tasks <= 0) return;
  if (workers_.empty() || tasks == 1) {
    const InTaskMark in_task;
    for (int64_t k = 0; k < tasks; ++k) call(ctx, k);
    return;
  }
  TESSEL_CHECK(tasks <= kMaxTasks, "SpinTeam::Run: {} tasks, at most {}", tasks, kMaxTasks);
  call_ = call;
  ctx_ = ctx;
  error_ = nullptr;
  done_.store(0, std::memory_order_relaxed);
  const uint64_t word = ((Region(state_.load(std::memory_order_relaxed)) + 1) << 32) | static_cast<uint64_t>(tasks);
  state_.store(word, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) state_.notify_all();
  RunShare(word, 0);
  for (int64_t spins = 0; done_.load(std::memory_order_acquire) < tasks; ++spins) {
    if (spins < kCallerSpins) {
      CpuRelax();
    } else {
      std::this_thread::yield();  // a worker was descheduled (other processes on these cores)
    }
  }
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void SpinTeam::WorkerLoop(int member) {
  uint64_t seen = 0;  // the last region run (the first region is 1)
  for (;;) {
    uint64_t w = state_.load(std::memory_order_acquire);
    int64_t start = NowNs();
    for (int64_t spins = 1; Region(w) == seen; ++spins) {
      CpuRelax();
      if ((spins & 255) == 0 && NowNs() - start > kSpinNanoseconds) {
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        w = state_.load(std::memory_order_seq_cst);
        if (Region(w) == seen) state_.wait(w, std::memory_order_seq_cst);
        sleepers_.fetch_sub(1, std::memory_order_seq_cst);
        start = NowNs();
      }
      w = state_.load(std::memory_order_acquire);
    }
    if (Tasks(w) == kStopTasks) return;
    seen = Region(w);
    RunShare(w, member);
  }
}

SpinTeamScope::SpinTeamScope(int threads) {
  if (!g_enabled.load(std::memory_order_relaxed) || t_team != nullptr || t_in_task || t_tbb_depth > 0) return;
  if (threads <= 0) threads = ThreadLimit::Current();
  if (threads <= 1) return;
  team_ = std::make_unique<SpinTeam>(threads);
  t_team = team_.get();
  g_started.fetch_add(1, std::memory_order_relaxed);
}

SpinTeamScope::~SpinTeamScope() {
  if (team_ != nullptr) t_team = nullptr;
}

detail::TbbBodyMark::TbbBodyMark() { ++t_tbb_depth; }
detail::TbbBodyMark::~TbbBodyMark() { --t_tbb_depth; }

}  // namespace tessel
