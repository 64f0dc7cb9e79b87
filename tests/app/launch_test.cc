// `tessel launch` (app/launch.h) without mpirun: which exit statuses are rank failures, the failed ranks read from
// mpirun's and the watchdog's messages, and the options refused before anything runs. Real restarts under mpirun are
// the ctest entries dist_gcn_launch_* (tests/tools/dist_launch.cmake).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/launch.h"
#include "core/error.h"

namespace tessel::app {
namespace {

TEST(Launch, OnlyRankFailuresAreRestarted) {
  EXPECT_TRUE(IsRankFailure(75));    // a survivor's exit (core/peer_failure.h)
  EXPECT_TRUE(IsRankFailure(137));   // a rank killed by SIGKILL (mpirun reports its signal)
  EXPECT_TRUE(IsRankFailure(143));   // SIGTERM
  EXPECT_FALSE(IsRankFailure(1));    // bad input, an error
  EXPECT_FALSE(IsRankFailure(139));  // SIGSEGV: a bug
  EXPECT_FALSE(IsRankFailure(134));  // SIGABRT
  EXPECT_FALSE(IsRankFailure(130));  // Ctrl-C
}

TEST(Launch, FailedRanksAreReadFromMpirunAndTheWatchdog) {
  std::string how;
  EXPECT_EQ(
      FailedRanks("mpirun noticed that process rank 3 with PID 0 on node vm exited on signal 9 (Killed).\n", &how),
      std::vector<int>{3});
  EXPECT_EQ(how, "exited on signal 9");
  const std::string stall =
      "error: [rank 0] comm: rank 0 made no progress for 3.0 s in Allreduce; ranks 1, 2 did not answer within 1.0 s\n"
      "error: [rank 3] comm: rank 3 made no progress for 3.0 s in Allreduce; ranks 1, 2 did not answer within 1.0 s\n";
  EXPECT_EQ(FailedRanks(stall, &how), (std::vector<int>{1, 2}));
  EXPECT_EQ(how, "stopped answering within --timeout");
  EXPECT_TRUE(FailedRanks("error: --hidden must be at least 1\n", &how).empty());
  EXPECT_TRUE(how.empty());
}

TEST(Launch, OptionsAreCheckedBeforeAnythingRuns) {
  const auto error_of = [](LaunchOptions o) {
    try {
      Launch(o);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  LaunchOptions o;
  o.np = 2;
  o.min_np = 3;
  o.command = {"train", "gcn", "--checkpoint", "ck"};
  EXPECT_NE(error_of(o).find("--min-np 3 is more than -np 2"), std::string::npos);
  o.min_np = 1;
  o.command = {"predict", "svm", "--data", "x"};
  EXPECT_NE(error_of(o).find("tessel launch runs `train gcn ...` or `train svm ...`"), std::string::npos);
  o.command = {"train", "svm", "--data", "x"};  // the SVM is restarted too, from its alpha in --checkpoint
  EXPECT_NE(error_of(o).find("needs the job's --checkpoint DIR"), std::string::npos);
  o.command = {"train", "gcn", "--partitions", "p"};
  EXPECT_NE(error_of(o).find("needs the job's --checkpoint DIR"), std::string::npos);
  o.command = {"train", "gcn", "--checkpoint", "ck"};
  o.hostfile = "/nonexistent/hosts";
  EXPECT_NE(error_of(o).find("--hostfile /nonexistent/hosts: cannot be read"), std::string::npos);
}

}  // namespace
}  // namespace tessel::app
