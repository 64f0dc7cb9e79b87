// `tessel launch -np K --min-np M [--hostfile F | --host-discovery-script S] [--max-restarts N] -- train gcn|svm ...`:
// runs the job under mpirun and, when it ends on a rank failure (exit status 75, core/peer_failure.h, or a rank killed
// by a signal), drops the failed slot and restarts it on the ranks that are left (never fewer than M), resuming from
// the just-in-time state its survivors wrote to --checkpoint (docs/reliability.md, "Ranks that leave"). Horovod's
// elastic names (-np, --min-np,
// --hostfile) and torchrun's --max-restarts. A failure that is not a rank failure (bad input, a bug) is not retried.
#pragma once

#include <string>
#include <vector>

#include "app/given.h"
#include "app/run_options.h"

namespace tessel::app {

struct LaunchOptions {
  int np = 0;
  int min_np = 1;
  std::string hostfile;
  std::string host_discovery_script;
  int start_timeout = 30;
  int max_restarts = 3;
  std::string mpirun = "mpirun";
  std::string mpirun_args;
  int term_grace = 3;
  std::vector<std::string> command;
  Given given;
  // The least time one run of --host-discovery-script may take, whatever is left of --start-timeout (a script that
  // asks a scheduler or a cloud API takes seconds). Not an option: tests shorten it.
  int min_script_seconds = 30;

  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(ParamInfo{"np", "Ranks to start (one per part of the job's --partitions, or fewer)"}
          .Flags("-n,--np")
          .Cli()
          .Required()
          .Range(1, 1 << 20),
      c.np);
    v(ParamInfo{"min_np", "Fewest ranks to go on with: a failure that leaves fewer ends the job"}.Cli().Range(1,
                                                                                                              1 << 20),
      c.min_np);
    v(ParamInfo{"hostfile", "Open MPI hostfile (\"host slots=N\" lines); a failed rank's slot is dropped from it"}
          .Cli(),
      c.hostfile);
    v(ParamInfo{"host_discovery_script",
                "Program run before the first run and every restart that prints the hosts available now, one "
                "\"host\" or \"host:slots\" a line (Horovod's format); the job runs on min(-np, their slots less the "
                "slots of failed ranks). Not with --hostfile"}
          .Cli(),
      c.host_discovery_script);
    v(ParamInfo{"start_timeout",
                "Seconds to wait, asking --host-discovery-script again every second, for at least --min-np slots "
                "before a run; a run of the script not done when they are over (at least 30 s) ends the launch"}
          .Cli()
          .Range(0, 86400),
      c.start_timeout);
    v(ParamInfo{"max_restarts", "Restarts after rank failures before the launcher gives up"}.Cli().Range(0, 1000),
      c.max_restarts);
    v(ParamInfo{"mpirun", "The mpirun program"}.Cli(), c.mpirun);
    v(ParamInfo{"mpirun_args", "More mpirun arguments, split at spaces (e.g. \"--oversubscribe\")"}.Cli(),
      c.mpirun_args);
    v(ParamInfo{"term_grace",
                "Seconds mpirun leaves the survivors between SIGTERM and SIGKILL when a rank dies, to write their "
                "just-in-time state (odls_base_sigkill_timeout)"}
          .Cli()
          .Range(1, 3600),
      c.term_grace);
    v(ParamInfo{"command", "The tessel job after --: train gcn ... or train svm ..., with --checkpoint DIR"}
          .Flags("command")
          .Cli()
          .Required()
          .Values(1 << 20),
      c.command);
  }
};

// What one rank failure cost, as `tessel launch` reports it.
struct RestartReport {
  std::vector<int> failed_ranks;  // ranks of the failed run (empty: not named by mpirun or the watchdog)
  std::string how;                // "exited on signal 9", "stopped answering (--timeout)", "exit status 75"
  double failed_after = 0;        // seconds from the failed run's start to its end
  int ranks_before = 0, ranks_after = 0;
  // The state the restart resumes from (the job's --checkpoint): epochs ended, steps of the next epoch done, of its
  // steps, Adam steps, and whether it is just-in-time state.
  int epochs_done = 0;
  int64_t epoch_steps_done = 0, epoch_steps = 0, adam_steps = 0;
  bool just_in_time = false;
  int64_t survivor_adam_steps = 0;  // the most Adam steps a survivor reported having taken (0: none reported)
  bool step_in_flight = true;       // a step was under way at the failure (the survivors' reports; none: assumed)
  // The SVM (train svm): the first problem not solved in the state (1-based; svm_problems + 1 when all are), of the
  // problems saved; adam_steps then counts the SMO steps of that problem, and survivor_adam_steps the survivors' in
  // survivor_svm_problem.
  bool svm = false;
  int64_t svm_problem = 0, svm_problems = 0, survivor_svm_problem = 0;
  double restart_seconds = -1;  // from the failed run's end to the restarted run's "resuming from" line (-1: not seen)
};

// A host and its slots (ranks mpirun may start there).
struct Host {
  std::string name;
  int slots = 1;
};
// The hosts of a --host-discovery-script's output: one "host" or "host:slots" a line (blank lines and text after '#'
// ignored). `source` names the script in errors, which give the line and the fix.
std::vector<Host> ParseDiscoveredHosts(const std::string& text, const std::string& source);

// Runs the job, restarting it on rank failures; prints each restart's report on stderr. Returns the exit status
// of the last run (0 when the job finished). Throws on bad options (naming the option and the fix).
int Launch(const LaunchOptions& options);

// For tests: the ranks a run's output names as failed, and how ("" when none): mpirun's "process rank R ... exited on
// signal S" and the watchdog's "rank(s) R, ... did not answer".
std::vector<int> FailedRanks(const std::string& output, std::string* how);
// Whether exit status `status` of mpirun is a rank failure (75, or a rank killed by SIGKILL or SIGTERM: 137, 143).
bool IsRankFailure(int status);

}  // namespace tessel::app
