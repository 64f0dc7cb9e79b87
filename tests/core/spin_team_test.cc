// SpinTeam (core/spin_team.h): every task once, each member its documented share, exceptions to the caller, sleeping
// workers woken, and where a scope installs a team (enabled only, never inside a oneTBB region or a team's task).
#include "core/spin_team.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/parallel.h"

namespace tessel {
namespace {

// Teams are off in a process until enabled; each test that needs them turns them on for its duration.
class Enabled {
 public:
  Enabled() { SpinTeam::Enable(true); }
  ~Enabled() { SpinTeam::Enable(false); }
  Enabled(const Enabled&) = delete;
  Enabled& operator=(const Enabled&) = delete;
};

TEST(SpinTeam, EveryTaskOnceInEachMembersShare) {
  SpinTeam team(3);
  ASSERT_EQ(team.size(), 3);
  for (int64_t tasks : {1, 2, 3, 5, 64, 1000}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(tasks));
    std::vector<std::thread::id> by(static_cast<size_t>(tasks));
    team.Run(tasks, [&](int64_t k) {
      hits[k]++;
      by[k] = std::this_thread::get_id();
    });
    std::set<std::thread::id> members;
    for (int64_t k = 0; k < tasks; ++k) {
      ASSERT_EQ(hits[k].load(), 1) << tasks << " tasks, task " << k;
      members.insert(by[k]);
    }
    if (tasks >= 3) {  // member m ran [T m / S, T (m + 1) / S), all on one thread
      EXPECT_EQ(members.size(), 3U) << tasks << " tasks";
      for (int member = 0; member < 3; ++member) {
        const int64_t b = tasks * member / 3;
        const int64_t e = tasks * (member + 1) / 3;
        for (int64_t k = b + 1; k < e; ++k) EXPECT_EQ(by[k], by[b]) << tasks << " tasks, task " << k;
      }
    }
    if (tasks == 1 || tasks >= 3) {
      EXPECT_EQ(by[0], std::this_thread::get_id()) << "member 0 is the caller";
    }
  }
}

TEST(SpinTeam, ManyShortRegionsAndSleepingWorkers) {
  SpinTeam team(2);
  std::atomic<int64_t> sum{0};
  for (int r = 0; r < 20000; ++r) team.Run(2, [&](int64_t k) { sum += k + 1; });
  EXPECT_EQ(sum.load(), 20000 * 3);
  // Regions further apart than the workers' spin (200 us): each one wakes a sleeping worker.
  for (int r = 0; r < 20; ++r) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::atomic<int> ran{0};
    team.Run(4, [&](int64_t) { ran++; });
    ASSERT_EQ(ran.load(), 4) << "region " << r;
  }
}

TEST(SpinTeam, ExceptionReachesTheCallerAfterEveryTask) {
  SpinTeam team(2);
  std::atomic<int> ran{0};
  EXPECT_THROW(team.Run(8,
                        [&](int64_t k) {
                          ran++;
                          if (k == 6) throw Error("boom");  // the worker's share
                        }),
               Error);
  EXPECT_EQ(ran.load(), 8);
  team.Run(2, [&](int64_t) { ran++; });  // the team still works
  EXPECT_EQ(ran.load(), 10);
  EXPECT_THROW(team.Run(SpinTeam::kMaxTasks + 1, [&](int64_t) { ran++; }), Error);  // refused, none run
  EXPECT_EQ(ran.load(), 10);
}

TEST(SpinTeam, ParallelForRunsOnTheInstalledTeam) {
  const Enabled on;
  const SpinTeamScope scope(2);
  ASSERT_TRUE(scope.active());
  ASSERT_NE(SpinTeam::Current(), nullptr);
  const int64_t n = 100003;
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  std::mutex m;
  std::set<std::thread::id> threads;
  parallel_for<int64_t>(0, n, 64, [&](int64_t i) {
    hits[i]++;
    if (i % 1000 == 0) {
      const std::lock_guard<std::mutex> lock(m);
      threads.insert(std::this_thread::get_id());
    }
  });
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << i;
  EXPECT_EQ(threads.size(), 2U);
  // Inside a task, parallel_for runs serially on that thread, and no team is current.
  std::atomic<int> nested_bad{0};
  parallel_for_chunks<int64_t>(0, 2, 1, [&](int64_t, int64_t) {
    if (SpinTeam::Current() != nullptr || !SpinTeam::InTask()) nested_bad++;
    const auto self = std::this_thread::get_id();
    parallel_for<int64_t>(0, 10000, 1, [&](int64_t) {
      if (std::this_thread::get_id() != self) nested_bad++;
    });
  });
  EXPECT_EQ(nested_bad.load(), 0);
  EXPECT_THROW(parallel_for<int64_t>(0, 100000, 10,
                                     [](int64_t i) {
                                       if (i == 77777) throw Error("boom");
                                     }),
               Error);
}

TEST(SpinTeam, ScopesInstallNothingWhereTheyMustNot) {
  {
    const SpinTeamScope off(2);  // not enabled
    EXPECT_FALSE(off.active());
    EXPECT_EQ(SpinTeam::Current(), nullptr);
  }
  const Enabled on;
  {
    const SpinTeamScope one(1);
    EXPECT_FALSE(one.active());
  }
  {
    const SpinTeamScope outer(2);
    ASSERT_TRUE(outer.active());
    const SpinTeamScope inner(2);  // the thread already has one
    EXPECT_FALSE(inner.active());
  }
  EXPECT_EQ(SpinTeam::Current(), nullptr);
  // Inside oneTBB's bodies (concurrent folds or pairs each running a solve): none.
  std::atomic<int> installed{0};
  parallel_for<int64_t>(0, 4, 1, [&](int64_t) {
    const SpinTeamScope s(2);
    if (s.active()) installed++;
  });
  EXPECT_EQ(installed.load(), 0);
}

}  // namespace
}  // namespace tessel
