// BackgroundWorker: jobs run on one other thread, in the order started; Wait rethrows a job's exception and the
// worker keeps working after it; Start while busy is refused; destruction waits for a running job (no lost work,
// no hang).
#include "core/worker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace tessel {
namespace {

TEST(BackgroundWorker, RunsJobsInOrderOnOneOtherThread) {
  BackgroundWorker w;
  std::vector<int> order;
  std::vector<std::thread::id> ids;
  for (int i = 0; i < 50; ++i) {
    w.Start([&, i] {
      order.push_back(i);
      ids.push_back(std::this_thread::get_id());
    });
    w.Wait();
  }
  ASSERT_EQ(order.size(), 50U);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[static_cast<size_t>(i)], i);
  for (const auto& id : ids) {
    EXPECT_EQ(id, ids.front());  // one persistent thread
    EXPECT_NE(id, std::this_thread::get_id());
  }
  EXPECT_FALSE(w.Busy());
  w.Wait();  // nothing running: returns at once
}

TEST(BackgroundWorker, OverlapsWithTheOwnerAndRefusesASecondJob) {
  BackgroundWorker w;
  std::atomic<bool> release{false};
  std::atomic<bool> started{false};
  w.Start([&] {
    started = true;
    while (!release) std::this_thread::yield();
  });
  while (!started) std::this_thread::yield();
  EXPECT_TRUE(w.Busy());  // the owner runs on while the job does
  EXPECT_THROW(w.Start([] {}), std::logic_error);
  release = true;
  w.Wait();
  EXPECT_FALSE(w.Busy());
}

TEST(BackgroundWorker, WaitRethrowsAndTheWorkerGoesOn) {
  BackgroundWorker w;
  w.Start([] { throw std::runtime_error("job failed"); });
  try {
    w.Wait();
    FAIL() << "Wait must rethrow the job's exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "job failed");
  }
  w.Wait();  // the error is reported once
  int ran = 0;
  w.Start([&] { ran = 1; });
  w.Wait();
  EXPECT_EQ(ran, 1);
}

TEST(BackgroundWorker, RunAlongsideEndsTheJobBeforeTheCallersErrorLeaves) {
  BackgroundWorker w;
  std::atomic<int> job_done{0};
  const auto slow_job = [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    job_done = 1;
  };
  try {
    w.RunAlongside(slow_job, [] { throw std::runtime_error("here failed"); });
    FAIL() << "RunAlongside must rethrow the caller's exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "here failed");
    EXPECT_EQ(job_done.load(), 1);  // the job ended before the exception left
  }
  EXPECT_FALSE(w.Busy());
  // Both fail: the caller's error is reported, the job's dropped.
  EXPECT_THROW(w.RunAlongside([] { throw std::logic_error("job"); }, [] { throw std::runtime_error("here"); }),
               std::runtime_error);
  w.Wait();  // nothing left to report
  // Only the job fails: its error, once both ended.
  int here_ran = 0;
  EXPECT_THROW(w.RunAlongside([] { throw std::logic_error("job"); }, [&] { here_ran = 1; }), std::logic_error);
  EXPECT_EQ(here_ran, 1);
}

TEST(BackgroundWorker, DestructionWaitsForTheRunningJob) {
  std::atomic<int> done{0};
  {
    BackgroundWorker w;
    w.Start([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      done = 1;
    });
  }  // destroyed while the job sleeps
  EXPECT_EQ(done.load(), 1);
  {
    BackgroundWorker w;  // never used: destruction must not hang
  }
  {
    BackgroundWorker w;
    w.Start([] { throw std::runtime_error("dropped"); });
  }  // a failed job that nobody waited for: its error is dropped, no terminate
}

}  // namespace
}  // namespace tessel
