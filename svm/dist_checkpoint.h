// The distributed SVM's resumable state (`train svm --checkpoint DIR [--resume]`, docs/reliability.md "Ranks that
// leave"): the alpha of every binary problem the run has solved or started, in the order the run solves them. The
// dual is convex, so any feasible alpha is a valid start: a resumed run, on any number of ranks, starts each problem
// from its saved alpha and rebuilds the gradients from it (G = p + Q alpha); a finished problem takes no step.
//
// Alpha is kept replicated: both distributed solvers compute each step's new alphas identically on every rank, and
// every rank copies them into an AlphaMirror (svm/dist_solver.h) as the step ends, O(1) per SMO step. So when a peer
// dies or stalls, every survivor holds the whole alpha of the last completed step without any collective (a gather
// could not reach the dead rank's share), and writes it (the peer-failure hook, core/peer_failure.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "svm/dist_solver.h"

namespace tessel::svm {

inline constexpr int kSvmCheckpointVersion = 1;

struct SvmCheckpointProblem {
  int64_t samples = 0;     // the problem's variables (alpha.size())
  int64_t iterations = 0;  // SMO steps in alpha, over every run that worked on it
  bool done = false;       // solved to the tolerance
  std::vector<double> alpha;
};

struct SvmCheckpoint {
  std::string settings;  // what alpha depends on (the training parameters and the data), compared on resume
  int ranks = 0;         // the ranks that wrote it
  bool just_in_time = false;
  std::vector<SvmCheckpointProblem> problems;
  // Where the state is: the problems solved before the first one that is not, and that one's steps.
  std::pair<size_t, int64_t> Progress() const;
  // The steps in the state over all problems (every step of a run, resumed or not, adds one): "newer" is more.
  int64_t TotalSteps() const;
};

// DIR/svm_state.bin: written atomically (a temporary file, fsync, rename), under an exclusive lock on DIR (flock) for
// the writers of one job (rank 0's scheduled state and every survivor's just-in-time state). With only_if_newer it
// writes only when `state` holds more work than the file there (or there is none, or it cannot be read). Creates DIR.
// Returns whether it wrote.
bool SaveSvmCheckpoint(const std::filesystem::path& dir, const SvmCheckpoint& state, bool only_if_newer);
// Whether DIR holds an SVM state.
bool HasSvmCheckpoint(const std::filesystem::path& dir);
// Reads and checks DIR/svm_state.bin (format, version, checksum, sizes, every alpha finite and >= 0); throws naming
// the file and the fix.
SvmCheckpoint LoadSvmCheckpoint(const std::filesystem::path& dir);

// One run's state as it goes: what it resumed from, the problems it has finished, and the mirror of the problem it
// is solving. Every rank keeps one; the peer-failure hook saves it.
class SvmElasticState {
 public:
  // `resumed`: the state to start from (settings already compared), or none.
  SvmElasticState(std::filesystem::path dir, std::string settings, int ranks, int rank, SvmCheckpoint resumed);

  // Problem `index` (the run's next) of `samples` variables starts: returns the mirror to give the solver, holding
  // the saved alpha when there is one (then *start is set to it) or `alpha0` (the problem's own start; empty: zeros).
  AlphaMirror* Begin(int64_t samples, std::span<const double> alpha0, std::vector<double>* start);
  // The problem begun last ended (its alpha is the mirror's) after `iterations` steps, solved to the tolerance unless
  // the iteration limit stopped it: kept, and written by rank 0.
  void End(int64_t iterations, bool solved);
  // The peer-failure hook: writes the state of the last completed step (if newer than the file's) and logs it.
  void SaveJustInTime();
  // The problems resumed from a saved alpha, and those of them already done.
  int resumed_problems() const { return resumed_problems_; }

 private:
  SvmCheckpoint Capture() const;

  std::filesystem::path dir_;
  int rank_ = 0;
  std::string settings_;
  int ranks_ = 0;
  std::vector<SvmCheckpointProblem> finished_;  // this run's problems solved, in order
  SvmCheckpoint saved_;                         // what the run resumed from
  size_t next_ = 0;                             // the problem Begin gives next
  bool solving_ = false;                        // Begin was called and End not yet
  int64_t base_steps_ = 0;                      // the saved steps of the problem being solved
  AlphaMirror mirror_;
  int resumed_problems_ = 0;
};

}  // namespace tessel::svm
