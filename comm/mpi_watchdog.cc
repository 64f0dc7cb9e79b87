// The MPI backend's polling and watchdog (comm/mpi_watchdog.h): requests completed by polling with a backoff, probes
// answered while waiting, and the timeout's message naming the ranks that did not answer.
#include "comm/mpi_watchdog.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "comm/mpi_comm.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/peer_failure.h"

namespace tessel::comm {
namespace {

constexpr int kProbeTag = 1;  // watchdog: "where are you?" (on the control communicator)
constexpr int kReplyTag = 2;  // watchdog: the answer (sequence number, call, peer)
// How long a timed-out rank waits for the answers to its probes: a third of the timeout, within [0.5 s, 2 s] (a
// polling rank answers within milliseconds; short test timeouts keep the job's end near the timeout).
double ProbeWindowSeconds(double timeout) { return std::clamp(timeout / 3, 0.5, 2.0); }
constexpr double kSpinSeconds = 50e-6;  // polling: tight spin, then yields, then sleeps (WaitCode)
constexpr double kYieldSeconds = 0.1;

using Clock = std::chrono::steady_clock;

// What a polling wait does between two polls once it has waited `waited` seconds: yields up to kYieldSeconds, then
// sleeps doubling from 50 us to 1 ms (WaitCode says why).
class PollPause {
 public:
  void After(double waited) {
    if (waited < kYieldSeconds) {
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(pause_);
    pause_ = std::min(pause_ * 2, std::chrono::microseconds(1000));
  }

 private:
  std::chrono::microseconds pause_{50};
};

constexpr std::array<std::string_view, 9> kCallNames = {"no call", "Allreduce", "Broadcast", "Allgatherv", "Alltoallv",
                                                        "Barrier", "Send",      "Recv",      "SendRecv"};
std::string_view CallName(int64_t c) {
  return c >= 0 && c < static_cast<int64_t>(kCallNames.size()) ? kCallNames[static_cast<size_t>(c)] : "?";
}

}  // namespace

bool PollWithin(MPI_Request* request, double timeout) {
  const Clock::time_point t0 = Clock::now();
  PollPause pause;
  for (;;) {
    int done = 0;
    const int rc = MPI_Test(request, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || done != 0) return true;  // an error surfaces at the next call on the communicator
    const double waited = SecondsSince(t0);
    if (timeout > 0 && waited >= timeout) return false;
    pause.After(waited);
  }
}

MPI_Comm DupWithin(MPI_Comm in, double timeout, std::string_view what) {
  MPI_Comm out = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = MPI_Comm_idup(in, &out, &request);
  TESSEL_CHECK(rc == MPI_SUCCESS, "comm: MPI_Comm_idup ({}) failed: {}", what, rc);
  if (!PollWithin(&request, timeout)) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    throw Error(fmt::format(
        "comm: rank {} waited {} s (--timeout) in MPI_Comm_dup ({}): not every rank has started the job (a rank "
        "stopped or was slow during start-up; check the other ranks' hosts, or raise --timeout)",
        rank, timeout, what));
  }
  return out;
}

void MpiWatchdog::Start(MPI_Comm control) {
  control_ = control;
  MPI_Comm_set_errhandler(control_, MPI_ERRORS_RETURN);
}

void MpiWatchdog::Free() {
  for (Answer& a : answers_) MPI_Request_free(&a.request);
  MPI_Comm_free(&control_);
}

int MpiWatchdog::WaitCode(MPI_Request* requests, int n, MPI_Status* statuses, std::string_view purpose) {
  MPI_Status ignored[2];
  MPI_Status* st = statuses != nullptr ? statuses : (n <= 2 ? ignored : MPI_STATUSES_IGNORE);
  int rc = MPI_SUCCESS;
  const Clock::time_point t0 = Clock::now();
  PollPause pause;
  if (peer_failure::TermRequested()) EndedByLauncher();
  for (;;) {
    int done = 0;
    rc = MPI_Testall(n, requests, &done, st);  // MPI_SUCCESS and done = 0 while any request is pending
    if (rc != MPI_SUCCESS || done != 0) break;
    const double waited = SecondsSince(t0);
    if (waited < kSpinSeconds) continue;
    AnswerProbes();
    if (peer_failure::TermRequested()) EndedByLauncher();
    if (timeout_ > 0 && waited >= timeout_) TimedOut(waited, purpose);
    pause.After(waited);
  }
  if (rc == MPI_ERR_IN_STATUS && st != MPI_STATUSES_IGNORE) {
    for (int i = 0; i < n; ++i) {
      if (st[i].MPI_ERROR != MPI_SUCCESS && st[i].MPI_ERROR != MPI_ERR_PENDING) return st[i].MPI_ERROR;
    }
  }
  return rc;
}

void MpiWatchdog::EndedByLauncher() {
  const std::string message = fmt::format(
      "rank {}: the job is ending because another rank failed (mpirun sent SIGTERM after a rank's death); exit "
      "status {} (a rank failure: `tessel launch` restarts on the survivors)",
      rank_, peer_failure::kRankFailureExit);
  peer_failure::RunHook(message);
  std::fflush(stdout);
  std::fprintf(stderr, "error: [rank %d] %s\n", rank_, message.c_str());
  std::fflush(stderr);
  std::_Exit(peer_failure::kRankFailureExit);  // mpirun is ending the job: no MPI_Finalize, no MPI_Abort
}

void MpiWatchdog::AnswerProbes() {
  for (;;) {
    int flag = 0;
    MPI_Status st;
    if (MPI_Iprobe(MPI_ANY_SOURCE, kProbeTag, control_, &flag, &st) != MPI_SUCCESS || flag == 0) break;
    int64_t asked = 0;
    if (MPI_Recv(&asked, 1, MPI_INT64_T, st.MPI_SOURCE, kProbeTag, control_, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      break;
    }
    Answer& a = answers_.emplace_back();
    a.data = {static_cast<int64_t>(seq_), static_cast<int64_t>(current_.call), current_.peer, current_.tag};
    if (MPI_Isend(a.data.data(), 4, MPI_INT64_T, st.MPI_SOURCE, kReplyTag, control_, &a.request) != MPI_SUCCESS) {
      answers_.pop_back();
    }
  }
  while (!answers_.empty()) {  // forget the answers that have left
    int done = 0;
    if (MPI_Test(&answers_.front().request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done == 0) break;
    answers_.pop_front();
  }
}

void MpiWatchdog::TimedOut(double waited, std::string_view purpose) {
  const int64_t probe = static_cast<int64_t>(seq_);
  std::vector<MPI_Request> sent;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    sent.emplace_back();
    if (MPI_Isend(&probe, 1, MPI_INT64_T, r, kProbeTag, control_, &sent.back()) != MPI_SUCCESS) sent.pop_back();
  }
  std::vector<std::optional<std::array<int64_t, 4>>> heard(static_cast<size_t>(size_));
  int missing = size_ - 1;
  const double window = ProbeWindowSeconds(timeout_);
  const Clock::time_point t0 = Clock::now();
  while (missing > 0 && SecondsSince(t0) < window) {
    AnswerProbes();
    int flag = 0;
    MPI_Status st;
    if (MPI_Iprobe(MPI_ANY_SOURCE, kReplyTag, control_, &flag, &st) == MPI_SUCCESS && flag != 0) {
      std::array<int64_t, 4> a{};
      if (MPI_Recv(a.data(), 4, MPI_INT64_T, st.MPI_SOURCE, kReplyTag, control_, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
          !heard[static_cast<size_t>(st.MPI_SOURCE)]) {
        heard[static_cast<size_t>(st.MPI_SOURCE)] = a;
        --missing;
      }
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::string silent;
  std::string where;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const auto& h = heard[static_cast<size_t>(r)];
    if (!h) {
      silent += fmt::format("{}{}", silent.empty() ? "" : ", ", r);
    } else {
      const auto& a = *h;
      where += fmt::format("{}rank {} waits in {}", where.empty() ? "" : "; ", r, CallName(a[1]));
      if (a[2] >= 0) {
        const std::string_view dir = a[1] == static_cast<int64_t>(MpiCall::kRecv)   ? "from"
                                     : a[1] == static_cast<int64_t>(MpiCall::kSend) ? "to"
                                                                                    : "with";
        where += fmt::format(" {} rank {} with tag {}", dir, a[2], a[3]);
      }
      where += fmt::format(" (its call {})", a[0]);
    }
  }
  std::string what = fmt::format("{}", CallName(static_cast<int64_t>(current_.call)));
  if (current_.call == MpiCall::kSend) {
    what += fmt::format(" to rank {} with tag {}", current_.peer, current_.tag);
  } else if (current_.call == MpiCall::kRecv) {
    what += fmt::format(" from rank {} with tag {}", current_.peer, current_.tag);
  } else if (current_.call == MpiCall::kSendRecv) {
    what += fmt::format(" to rank {} and from rank {} with tag {}", current_.peer, current_.source, current_.tag);
  }
  const std::string named =
      current_.call == MpiCall::kRecv || current_.call == MpiCall::kBarrier ? "" : fmt::format("\"{}\", ", purpose);
  std::string message =
      fmt::format("comm: rank {} made no progress for {:.1f} s in {} ({}{} bytes, call {} on this rank); ", rank_,
                  waited, what, named, current_.bytes, seq_);
  if (!silent.empty()) {
    message += fmt::format(
        "{} {} did not answer within {:.1f} s (stopped, hung, dead, or busy outside communication for longer than "
        "the timeout)",
        missing == 1 ? "rank" : "ranks", silent, window);
    if (!where.empty()) message += "; " + where;
  } else {
    message += fmt::format(
        "every rank answered, so none is stopped: {} (ranks waiting in different calls are a program error)", where);
  }
  message += fmt::format(
      ". Ending the job; if a step legitimately takes longer, raise the timeout (--timeout SECONDS, now {:g}; 0 = no "
      "limit)",
      timeout_);
  if (silent.empty()) AbortJob(message);  // a program error, not a rank failure: not retried
  peer_failure::RunHook(fmt::format("rank {}: {} did not answer", rank_, silent));
  AbortJob(message + fmt::format(" (exit status {}: a rank failure)", peer_failure::kRankFailureExit),
           peer_failure::kRankFailureExit);
}

}  // namespace tessel::comm
