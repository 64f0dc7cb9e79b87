// `tessel launch` (app/launch.h): mpirun in a loop. Each run's stderr is relayed line by line and read for the
// failed ranks, the survivors' step counts and the line saying the run resumed; between runs the failed slots are
// dropped and the job's --checkpoint is read for the report.
#include "app/launch.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "core/peer_failure.h"
#include "datasets/text_input.h"
#include "svm/dist_checkpoint.h"
#include "train/gcn/checkpoint.h"

extern char** environ;

namespace tessel::app {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::vector<Host> ReadHostfile(const std::string& path) {
  std::ifstream in(path);
  TESSEL_CHECK(in.good(), "--hostfile {}: cannot be read; give an Open MPI hostfile (\"host slots=N\" lines)", path);
  std::vector<Host> hosts;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    Host h;
    if (!(words >> h.name)) continue;
    for (std::string w; words >> w;) {
      if (w.starts_with("slots=")) {
        int64_t slots = 0;
        TESSEL_CHECK(datasets::ParseInt64(std::string_view(w).substr(6), &slots) && slots >= 1 &&
                         slots <= std::numeric_limits<int>::max(),
                     "--hostfile {} line {}: \"{}\" is not slots=N with N >= 1", path, line_no, w);
        h.slots = static_cast<int>(slots);
      }
    }
    hosts.push_back(h);
  }
  TESSEL_CHECK(!hosts.empty(), "--hostfile {}: no hosts in it", path);
  return hosts;
}

// A child process whose descriptor `fd` (1: standard output, 2: standard error) is a pipe this process reads.
struct Child {
  pid_t pid = 0;
  int out = -1;   // the pipe's read end
  int error = 0;  // posix_spawnp's error (the child did not start) or 0
};

// Starts argv[0] (looked up on PATH) with `envp` as its environment and `fd` going to the pipe. The pipe's ends are
// close-on-exec, so the child holds only its `fd` (a helper it detaches with its output redirected does not keep the
// pipe open).
Child Spawn(const std::vector<std::string>& argv, char* const* envp, int fd) {
  int fds[2];
  TESSEL_CHECK(::pipe2(fds, O_CLOEXEC) == 0, "launch: pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], fd);  // the duplicate is not close-on-exec
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  Child c;
  c.error = posix_spawnp(&c.pid, args[0], &actions, nullptr, args.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (c.error != 0) {
    ::close(fds[0]);
  } else {
    c.out = fds[0];
  }
  return c;
}

// The next bytes of the child's pipe into buf; 0 at its end (or on a read error).
ssize_t ReadSome(const Child& c, char* buf, size_t size) {
  for (;;) {
    const ssize_t n = ::read(c.out, buf, size);
    if (n < 0 && errno == EINTR) continue;
    return std::max<ssize_t>(n, 0);
  }
}
// Closes the pipe and waits for the child; returns its wait status.
int Finish(const Child& c) {
  ::close(c.out);
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// Runs `script` (looked up on PATH) and returns its standard output; its standard error goes to this process's. A
// run that has not printed its hosts and exited within `limit` is ended (SIGKILL), and the launch with it: a launcher
// waiting on a hung script would hang the job.
std::string ScriptOutput(const std::string& script, std::chrono::milliseconds limit, int min_seconds) {
  const Child child = Spawn({script}, environ, 1);
  if (child.error != 0) {
    throw Error(
        fmt::format("--host-discovery-script {}: cannot be run ({}); give an executable that prints "
                    "\"host:slots\" lines",
                    script, std::strerror(child.error)));
  }
  const auto deadline = Clock::now() + limit;
  std::string text;
  char buf[4096];
  bool eof = false;
  bool exited = false;
  int status = 0;
  const auto end_child = [&](const std::string& why) {
    if (!exited) {
      ::kill(child.pid, SIGKILL);
      while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    ::close(child.out);
    throw Error(fmt::format("--host-discovery-script {}: {}", script, why));
  };
  while (!(eof && exited)) {
    if (!exited && ::waitpid(child.pid, &status, WNOHANG) == child.pid) exited = true;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 && !(eof && exited)) {
      const double seconds = static_cast<double>(limit.count()) / 1000.0;
      end_child(exited ? fmt::format("exited, but what it started still holds its standard output open after {:g} s; "
                                     "start helpers with their output redirected (helper >/dev/null 2>&1 &)",
                                     seconds)
                       : fmt::format("still running after {:g} s; it must print the hosts and exit: end what it "
                                     "waits on, or raise --start-timeout (a run may take what is left of it, at "
                                     "least {} s)",
                                     seconds, min_seconds));
    }
    if (eof) {  // output closed, the script not reaped yet
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(left, 10)));
      continue;
    }
    pollfd p{child.out, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 100)));
    if (ready <= 0) continue;  // nothing yet (or EINTR): check the child and the deadline again
    const ssize_t n = ReadSome(child, buf, sizeof(buf));
    if (n == 0) eof = true;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > (1U << 24))
      end_child("printed more than 16 MiB; it should print one \"host:slots\" line per host");
  }
  ::close(child.out);
  TESSEL_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
               "--host-discovery-script {}: ended with {} {}; it must exit with 0 after printing the hosts", script,
               WIFEXITED(status) ? "exit status" : "signal",
               WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
  return text;
}

int SlotsOf(const std::vector<Host>& hosts) {
  int64_t slots = 0;
  for (const Host& h : hosts) slots += h.slots;
  return static_cast<int>(std::min<int64_t>(slots, std::numeric_limits<int>::max()));
}

// The hosts to run on now: --host-discovery-script's, each less the slots its failed ranks cost (`lost`), asked
// again every second until they have --min-np slots or --start-timeout passes. Empty when they never reach it.
std::vector<Host> DiscoverHosts(const LaunchOptions& o, const std::map<std::string, int>& lost) {
  const auto deadline = Clock::now() + std::chrono::seconds(o.start_timeout);
  for (int ask = 0;; ++ask) {
    const auto left = std::max<std::chrono::milliseconds>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()),
        std::chrono::seconds(o.min_script_seconds));
    std::vector<Host> hosts = ParseDiscoveredHosts(ScriptOutput(o.host_discovery_script, left, o.min_script_seconds),
                                                   o.host_discovery_script);
    for (Host& h : hosts) {
      const auto it = lost.find(h.name);
      if (it != lost.end()) h.slots -= it->second;
    }
    std::erase_if(hosts, [](const Host& h) { return h.slots <= 0; });
    const int slots = SlotsOf(hosts);
    if (slots >= o.min_np) return hosts;
    if (Clock::now() >= deadline) return {};
    if (ask == 0) {
      std::fprintf(stderr,
                   "launch: %s lists %d usable slot(s), fewer than --min-np %d; asking again every second "
                   "for up to --start-timeout %d s\n",
                   o.host_discovery_script.c_str(), slots, o.min_np, o.start_timeout);
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

std::string TooFewSlots(const LaunchOptions& o) {
  return fmt::format("{} did not list --min-np {} usable slot(s) within --start-timeout {} s", o.host_discovery_script,
                     o.min_np, o.start_timeout);
}

// The value of --checkpoint in the job's command ("" when absent).
std::string CheckpointOf(const std::vector<std::string>& cmd) {
  for (size_t i = 0; i < cmd.size(); ++i) {
    if (cmd[i] == "--checkpoint" && i + 1 < cmd.size()) return cmd[i + 1];
    if (cmd[i].starts_with("--checkpoint=")) return cmd[i].substr(13);
  }
  return "";
}

struct RunOutcome {
  int status = 0;
  std::string output;            // stderr of mpirun and the ranks
  double seconds = 0;            // the run's wall time
  double resumed_at = -1;        // seconds from the run's start to its "resuming from" line (-1: none)
  int64_t survivor_steps = 0;    // the most Adam steps (SVM: SMO steps) a survivor reported in its just-in-time message
  int64_t survivor_problem = 0;  // SVM: the problem (1-based) the survivors were solving
  bool survivors_reported = false;
  bool step_in_flight = false;  // a survivor was inside an epoch's steps (not at an epoch's end) at the failure
};

// Runs argv (argv[0] looked up on PATH) with stderr read here: relayed to this process's stderr line by line and
// kept. `env` replaces the environment.
RunOutcome Run(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  std::vector<char*> envp;
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const auto t0 = Clock::now();
  const Child child = Spawn(argv, envp.data(), 2);
  if (child.error != 0) {
    throw Error(fmt::format("--mpirun {}: cannot be started ({}); give the path of Open MPI's mpirun", argv[0],
                            std::strerror(child.error)));
  }
  RunOutcome out;
  static const std::regex resumed_line(R"(info resuming from )");
  static const std::regex steps_taken(R"(at the failure: (\d+) Adam steps \(epoch \d+, (\d+) of (\d+) steps done\))");
  static const std::regex svm_taken(R"(at the failure: svm: (\d+) problem\(s\) solved, (?:(\d+) steps into|none))");
  std::string pending;
  char buf[4096];
  for (ssize_t n; (n = ReadSome(child, buf, sizeof(buf))) > 0;) {
    std::fwrite(buf, 1, static_cast<size_t>(n), stderr);
    pending.append(buf, static_cast<size_t>(n));
    for (size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
      const std::string line = pending.substr(0, nl + 1);
      pending.erase(0, nl + 1);
      std::smatch m;
      if (out.resumed_at < 0 && std::regex_search(line, resumed_line)) {
        out.resumed_at = std::chrono::duration<double>(Clock::now() - t0).count();
      }
      if (std::regex_search(line, m, steps_taken)) {
        out.survivor_steps = std::max<int64_t>(out.survivor_steps, std::stoll(m[1]));
        out.survivors_reported = true;
        if (std::stoll(m[2]) < std::stoll(m[3])) out.step_in_flight = true;
      }
      if (std::regex_search(line, m, svm_taken)) {  // SMO steps are counted within the problem under way
        out.survivor_problem = std::max<int64_t>(out.survivor_problem, std::stoll(m[1]) + 1);
        out.survivors_reported = true;
        if (m[2].matched) {  // inside a problem: its steps follow each other without a pause
          out.survivor_steps = std::max<int64_t>(out.survivor_steps, std::stoll(m[2]));
          out.step_in_flight = true;
        }
      }
      out.output += line;
    }
  }
  out.output += pending;
  const int status = Finish(child);
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return out;
}

std::vector<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The host that ran `rank` under mpirun's default mapping (by slot: each host's slots in turn).
size_t HostOfRank(const std::vector<Host>& hosts, int rank) {
  int seen = 0;
  for (size_t h = 0; h < hosts.size(); ++h) {
    seen += hosts[h].slots;
    if (rank < seen) return h;
  }
  return hosts.size() - 1;
}

void CheckOptions(const LaunchOptions& o) {
  TESSEL_CHECK(o.min_np <= o.np, "--min-np {} is more than -np {}: give --min-np between 1 and {}", o.min_np, o.np,
               o.np);
  const std::vector<std::string>& c = o.command;
  TESSEL_CHECK(c.size() >= 2 && c[0] == "train" && (c[1] == "gcn" || c[1] == "svm"),
               "tessel launch runs `train gcn ...` or `train svm ...` (give it after --: tessel launch -np 4 -- train "
               "gcn --partitions DIR --checkpoint DIR ...); other jobs are not restarted on fewer ranks");
  TESSEL_CHECK(o.hostfile.empty() || o.host_discovery_script.empty(),
               "--hostfile and --host-discovery-script both given: give one (the script's hosts replace a hostfile)");
  TESSEL_CHECK(!CheckpointOf(c).empty(),
               "tessel launch needs the job's --checkpoint DIR: a restarted job resumes from the state its surviving "
               "ranks write there");
}

// The state the restart resumes from, for the report: the GCN checkpoint or the SVM state in `checkpoint`.
void ReadState(bool svm, const std::string& checkpoint, RestartReport* r) {
  r->svm = svm;
  try {
    if (svm) {
      const svm::SvmCheckpoint s = svm::LoadSvmCheckpoint(checkpoint);
      const auto [done, steps] = s.Progress();
      r->svm_problems = static_cast<int64_t>(s.problems.size());
      r->svm_problem = static_cast<int64_t>(done) + 1;
      r->adam_steps = steps;
      r->just_in_time = s.just_in_time;
      return;
    }
    const train::gcn::TrainState s = train::gcn::LoadCheckpoint(checkpoint);
    r->epochs_done = s.epochs_done;
    r->epoch_steps_done = s.epoch_steps_done;
    r->epoch_steps = s.epoch_steps;
    r->adam_steps = s.adam_steps;
    r->just_in_time = s.just_in_time;
  } catch (const Error& e) {
    std::fprintf(stderr, "launch: no state to resume from (%s); the restart starts over\n", e.what());
  }
}

void Report(const RestartReport& r, int restart) {
  std::string ranks;
  for (int x : r.failed_ranks) ranks += fmt::format("{}{}", ranks.empty() ? "" : ", ", x);
  std::string state = fmt::format("after epoch {}", r.epochs_done);
  if (r.epoch_steps_done > 0) {
    state = fmt::format("in epoch {}, {} of {} steps done", r.epochs_done + 1, r.epoch_steps_done, r.epoch_steps);
  }
  std::string steps = fmt::format(" ({} Adam steps)", r.adam_steps);
  if (r.svm) {
    state = r.svm_problem > r.svm_problems
                ? fmt::format("with its {} problem(s) solved", r.svm_problems)
                : fmt::format("in problem {} of {}", r.svm_problem, std::max(r.svm_problem, r.svm_problems));
    steps = r.svm_problem > r.svm_problems ? "" : fmt::format(" ({} SMO steps into it)", r.adam_steps);
  }
  const int64_t in_flight = r.step_in_flight ? 1 : 0;
  const int64_t behind =
      r.svm && r.survivor_svm_problem != r.svm_problem ? 0 : std::max<int64_t>(0, r.survivor_adam_steps - r.adam_steps);
  std::string lost = in_flight > 0 ? "the step in flight"
                     : r.svm       ? "no step was in flight: the failure came between problems"
                                   : "no step was in flight: the failure came between epochs";
  if (behind > 0) lost += fmt::format(", and {} completed after the saved state", behind);
  const std::string line = fmt::format(
      "launch: restart {}: {} {} ({}) {:.1f} s into the run; resuming on {} from the {} state {}{}; "
      "steps lost: {} ({})\n",
      restart, r.failed_ranks.size() == 1 ? "rank" : "ranks", ranks.empty() ? "?" : ranks, r.how, r.failed_after,
      r.ranks_after <= r.ranks_before ? fmt::format("{} of {} ranks", r.ranks_after, r.ranks_before)
                                      : fmt::format("{} ranks, {} more than before (hosts discovered since)",
                                                    r.ranks_after, r.ranks_after - r.ranks_before),
      r.just_in_time ? "just-in-time" : "scheduled", state, steps, in_flight + behind, lost);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

std::vector<Host> ParseDiscoveredHosts(const std::string& text, const std::string& source) {
  std::vector<Host> hosts;
  std::istringstream in(text);
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    const std::vector<std::string> words = [&] {
      std::istringstream w(line.substr(0, line.find('#')));
      std::vector<std::string> out;
      for (std::string x; w >> x;) out.push_back(x);
      return out;
    }();
    if (words.empty()) continue;
    const std::string& word = words[0];
    const size_t colon = word.rfind(':');
    Host h{word.substr(0, colon), 1};
    int64_t slots = 1;
    const bool ok =
        words.size() == 1 && !h.name.empty() &&
        (colon == std::string::npos ||
         (datasets::ParseInt64(std::string_view(word).substr(colon + 1), &slots) && slots >= 1 && slots <= (1 << 20)));
    TESSEL_CHECK(ok,
                 "--host-discovery-script {}: output line {} \"{}\" is not \"host\" or \"host:slots\" (slots from 1 "
                 "to 2^20); print one host a line",
                 source, line_no, line);
    h.slots = static_cast<int>(slots);
    const auto same = std::find_if(hosts.begin(), hosts.end(), [&](const Host& x) { return x.name == h.name; });
    TESSEL_CHECK(same == hosts.end(),
                 "--host-discovery-script {}: output line {} names host {} again; print each host "
                 "once, with all its slots",
                 source, line_no, h.name);
    hosts.push_back(h);
  }
  return hosts;
}

bool IsRankFailure(int status) {
  return status == peer_failure::kRankFailureExit || status == 128 + 9 || status == 128 + 15;
}

std::vector<int> FailedRanks(const std::string& output, std::string* how) {
  std::set<int> ranks;
  static const std::regex died(R"(process rank (\d+) with PID \d+ on node \S+ exited on signal (\d+))");
  static const std::regex silent(R"(ranks? ([0-9, ]+) did not answer)");
  how->clear();
  for (auto it = std::sregex_iterator(output.begin(), output.end(), died); it != std::sregex_iterator(); ++it) {
    ranks.insert(std::stoi((*it)[1]));
    *how = fmt::format("exited on signal {}", (*it)[2].str());
  }
  for (auto it = std::sregex_iterator(output.begin(), output.end(), silent); it != std::sregex_iterator(); ++it) {
    const std::string list = (*it)[1];
    std::istringstream in(list);
    for (std::string w; std::getline(in, w, ',');) {
      if (w.find_first_of("0123456789") != std::string::npos) ranks.insert(std::stoi(w));
    }
    if (how->empty()) *how = "stopped answering within --timeout";
  }
  return {ranks.begin(), ranks.end()};
}

int Launch(const LaunchOptions& o) {
  CheckOptions(o);
  const fs::path self = fs::read_symlink("/proc/self/exe");
  const std::string checkpoint = CheckpointOf(o.command);
  std::vector<Host> hosts;
  if (!o.hostfile.empty()) hosts = ReadHostfile(o.hostfile);
  const bool discover = !o.host_discovery_script.empty();
  std::map<std::string, int> lost_slots;  // per discovered host: the slots its failed ranks cost
  const fs::path hostfile = fs::temp_directory_path() / fmt::format("tessel-launch-{}.hosts", ::getpid());
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  int np = o.np;
  double restart_from = -1;  // when the last failed run ended (seconds since the launch)
  const auto t_launch = Clock::now();
  for (int attempt = 0;; ++attempt) {
    if (discover && attempt == 0) {
      hosts = DiscoverHosts(o, lost_slots);
      TESSEL_CHECK(!hosts.empty(), "--host-discovery-script {}; give hosts with more slots or a lower --min-np",
                   TooFewSlots(o));
      np = std::min(o.np, SlotsOf(hosts));
    }
    std::vector<std::string> argv = {
        o.mpirun, "-np", std::to_string(np), "--mca", "odls_base_sigkill_timeout", std::to_string(o.term_grace)};
    if (!hosts.empty()) {
      std::ofstream(hostfile) << [&] {
        std::string text;
        for (const Host& h : hosts) text += fmt::format("{} slots={}\n", h.name, h.slots);
        return text;
      }();
      argv.insert(argv.end(), {"--hostfile", hostfile.string()});
    }
    for (const std::string& w : Words(o.mpirun_args)) argv.push_back(w);
    argv.push_back(self.string());
    argv.insert(argv.end(), o.command.begin(), o.command.end());
    if (attempt > 0 && std::find(o.command.begin(), o.command.end(), "--resume") == o.command.end()) {
      argv.push_back("--resume");
    }
    const double started = std::chrono::duration<double>(Clock::now() - t_launch).count();
    const RunOutcome run = Run(argv, env);
    if (attempt > 0) {
      std::fprintf(stderr, "launch: the restarted run %s\n",
                   run.resumed_at >= 0 ? fmt::format("resumed (its state loaded{}) {:.1f} s after the failed run ended",
                                                     o.command[1] == "svm" ? "" : ", its parts merged",
                                                     started + run.resumed_at - restart_from)
                                             .c_str()
                                       : "printed no \"resuming from\" line (--log-level info shows it)");
    }
    if (run.status == 0) {
      std::fprintf(stderr, "launch: the job finished on %d rank(s) after %d restart(s), %.1f s in all\n", np, attempt,
                   std::chrono::duration<double>(Clock::now() - t_launch).count());
      fs::remove(hostfile);
      return 0;
    }
    if (!IsRankFailure(run.status)) {
      std::fprintf(stderr,
                   "launch: the job ended with exit status %d, not a rank failure (bad input or a bug: see its "
                   "message above); not restarted\n",
                   run.status);
      fs::remove(hostfile);
      return run.status;
    }
    RestartReport r;
    r.failed_ranks = FailedRanks(run.output, &r.how);
    if (r.how.empty()) r.how = fmt::format("exit status {}", run.status);
    r.failed_after = run.seconds;
    r.ranks_before = np;
    const int lost = std::max<int>(1, static_cast<int>(r.failed_ranks.size()));
    r.ranks_after = np - lost;
    if (attempt >= o.max_restarts || (!discover && r.ranks_after < o.min_np)) {
      std::fprintf(stderr, "launch: rank failure (%s) with %s; giving up\n", r.how.c_str(),
                   attempt >= o.max_restarts
                       ? fmt::format("--max-restarts {} used", o.max_restarts).c_str()
                       : fmt::format("{} rank(s) left, fewer than --min-np {}", r.ranks_after, o.min_np).c_str());
      fs::remove(hostfile);
      return run.status;
    }
    for (int i = 0; i < lost; ++i) {  // drop the failed slots (the last rank's when mpirun did not name one)
      if (hosts.empty()) break;
      const int rank = i < static_cast<int>(r.failed_ranks.size()) ? r.failed_ranks[static_cast<size_t>(i)] : np - 1;
      Host& h = hosts[HostOfRank(hosts, rank)];
      ++lost_slots[h.name];
      if (--h.slots == 0) hosts.erase(hosts.begin() + static_cast<std::ptrdiff_t>(&h - hosts.data()));
    }
    if (discover) {  // asked again: a restart may also grow back onto hosts that returned or were added
      hosts = DiscoverHosts(o, lost_slots);
      if (hosts.empty()) {
        std::fprintf(stderr, "launch: rank failure (%s); %s; giving up\n", r.how.c_str(), TooFewSlots(o).c_str());
        fs::remove(hostfile);
        return run.status;
      }
      r.ranks_after = std::min(o.np, SlotsOf(hosts));  // up to -np
    }
    np = r.ranks_after;
    ReadState(o.command[1] == "svm", checkpoint, &r);
    r.survivor_adam_steps = run.survivor_steps;
    r.survivor_svm_problem = run.survivor_problem;
    // Without a survivor's report (no hook ran) the step in flight is counted as lost.
    r.step_in_flight = run.step_in_flight || !run.survivors_reported;
    Report(r, attempt + 1);
    restart_from = std::chrono::duration<double>(Clock::now() - t_launch).count();
    // An injected fault (tests) applies to the first run only: a restart must not repeat it. A test of a failure in
    // a restarted run gives that run's fault as TESSEL_FAULT_AFTER_RESTART (used once, by the next run).
    std::string next;
    for (const std::string& e : env) {
      if (e.starts_with("TESSEL_FAULT_AFTER_RESTART="))
        next = e.substr(std::string_view("TESSEL_FAULT_AFTER_RESTART=").size());
    }
    std::erase_if(env, [](const std::string& e) {
      return e.starts_with("TESSEL_FAULT=") || e.starts_with("TESSEL_FAULT_AFTER_RESTART=");
    });
    if (!next.empty()) env.push_back("TESSEL_FAULT=" + next);
  }
}

}  // namespace tessel::app
