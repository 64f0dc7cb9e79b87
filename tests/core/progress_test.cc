// Progress reports: lines at the interval while work runs (done/total, percentage, estimate), none for short work,
// and a destructor that returns at once however long the interval.
#include "core/progress.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace tessel {
namespace {

class ProgressTest : public ::testing::Test {
 protected:
  void TearDown() override { Progress::SetInterval(10); }
};

TEST_F(ProgressTest, TheLineSaysDoneTotalShareAndTimeLeft) {
  Progress p("training", 200, "steps");
  p.Add(50);
  EXPECT_EQ(p.Line(30), "training: 50/200 steps (25%), 30 s elapsed, about 90 s left");
  p.Set(200);
  EXPECT_EQ(p.Line(300), "training: 200/200 steps (100%), 5 min elapsed");
  Progress unknown("partition: metis into 4 parts");
  EXPECT_EQ(unknown.Line(12.4), "partition: metis into 4 parts: 0 done, 12 s elapsed");
}

TEST_F(ProgressTest, LongWorkReportsAtTheIntervalAndShortWorkNever) {
  Progress::SetInterval(0.02);
  {
    Progress p("slow", 10, "steps");
    for (int i = 0; i < 10 && p.Reports() < 3; ++i) {
      p.Add();
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (p.Reports() < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_GE(p.Reports(), 2);
  }
  Progress::SetInterval(10);
  const auto t0 = std::chrono::steady_clock::now();
  int reports = -1;
  {
    Progress p("quick", 1);
    p.Add();
    reports = p.Reports();
  }
  EXPECT_EQ(reports, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));  // no wait for the interval to end
}

}  // namespace
}  // namespace tessel
