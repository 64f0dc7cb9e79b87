// `tessel launch` (app/launch.h) without mpirun: which exit statuses are rank failures, the failed ranks read from
// mpirun's and the watchdog's messages, and the options refused before anything runs. Real restarts under mpirun are
// the ctest entries dist_gcn_launch_* (tests/tools/dist_launch.cmake).
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

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

TEST(Launch, DiscoveredHostsAreReadLineByLine) {
  const std::vector<Host> hosts = ParseDiscoveredHosts("node1:4\n\n# spare\nnode2\n  node3:16  # big\n", "d.sh");
  ASSERT_EQ(hosts.size(), 3U);
  EXPECT_EQ(hosts[0].name, "node1");
  EXPECT_EQ(hosts[0].slots, 4);
  EXPECT_EQ(hosts[1].name, "node2");
  EXPECT_EQ(hosts[1].slots, 1);  // no slots: one, as in Horovod
  EXPECT_EQ(hosts[2].slots, 16);
  EXPECT_TRUE(ParseDiscoveredHosts("", "d.sh").empty());  // none now: the launcher asks again
  const auto error_of = [](const std::string& text) {
    try {
      ParseDiscoveredHosts(text, "d.sh");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of("a:2\nb:0\n").find("d.sh: output line 2 \"b:0\" is not"), std::string::npos);
  EXPECT_NE(error_of("a:x\n").find("output line 1"), std::string::npos);
  EXPECT_NE(error_of("a b\n").find("output line 1"), std::string::npos);
  EXPECT_NE(error_of(":3\n").find("output line 1"), std::string::npos);
  EXPECT_NE(error_of("a:1\na:2\n").find("names host a again"), std::string::npos);
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
  o.host_discovery_script = "/bin/true";
  EXPECT_NE(error_of(o).find("--hostfile and --host-discovery-script both given"), std::string::npos);
  o.hostfile.clear();
  o.host_discovery_script = "/nonexistent/discover";
  EXPECT_NE(error_of(o).find("--host-discovery-script /nonexistent/discover: cannot be run"), std::string::npos);
  o.host_discovery_script = "/bin/false";
  EXPECT_NE(error_of(o).find("--host-discovery-script /bin/false: ended with exit status 1"), std::string::npos);
}

// A discovery script that does not print its hosts and exit within what is left of --start-timeout (here shortened
// to 1 s) ends the launch with the reason instead of hanging it: one still running, and one that exited while a child
// it started holds its output open. A helper it detaches with its output redirected does not hold the launcher.
TEST(Launch, AHungDiscoveryScriptEndsTheLaunch) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("tessel_hung_{}", ::getpid());
  std::filesystem::create_directories(dir);
  const auto run = [&](const std::string& body, double* seconds) {
    const std::string script = (dir / "discover.sh").string();
    {
      std::ofstream out(script, std::ios::trunc);
      out << "#!/bin/sh\necho localhost:4\n" << body;
    }
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    LaunchOptions o;
    o.np = 2;
    o.command = {"train", "svm", "--checkpoint", (dir / "ck").string()};
    o.host_discovery_script = script;
    o.start_timeout = 1;
    o.min_script_seconds = 1;
    o.mpirun = (dir / "no-mpirun").string();  // past the discovery, the launch ends at once
    const auto start = std::chrono::steady_clock::now();
    std::string error;
    try {
      Launch(o);
    } catch (const Error& e) {
      error = e.what();
    }
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return error;
  };
  double seconds = 0;
  std::string error = run("sleep 20 >/dev/null 2>&1 &\nwait\n", &seconds);
  EXPECT_NE(error.find("discover.sh: still running after 1 s"), std::string::npos) << error;
  EXPECT_LT(seconds, 15.0);  // not the script's 20 s
  error = run("(sleep 20 2>/dev/null) &\nexit 0\n", &seconds);
  EXPECT_NE(error.find("discover.sh: exited, but what it started still holds its standard output open after 1 s"),
            std::string::npos)
      << error;
  EXPECT_LT(seconds, 15.0);
  error = run("sleep 20 >/dev/null 2>&1 &\nexit 0\n", &seconds);  // detached properly: the hosts are read
  EXPECT_EQ(error.find("--host-discovery-script"), std::string::npos) << error;
  EXPECT_LT(seconds, 15.0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessel::app
