// How the MPI backend waits, private to comm/mpi_comm.cc (built only with TESSEL_MPI): MPI requests completed by
// polling (a short spin, then yields, then sleeps), and the watchdog that ends the job when a call makes no progress
// within MpiOptions::timeout_seconds, naming the ranks that did not answer its probes and where the others wait.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <deque>
#include <string_view>

namespace tessel::comm {

// Completes one request by polling; false when `timeout` seconds (> 0) passed first. For the calls outside a
// communicator: creating one, and the end of the job.
bool PollWithin(MPI_Request* request, double timeout);
// MPI_Comm_dup under the timeout (MPI_Comm_idup polled): a rank that never arrives (stopped during start-up, not
// started) ends the job with a message instead of holding every other rank in MPI_Comm_dup. `what` names the copy.
MPI_Comm DupWithin(MPI_Comm in, double timeout, std::string_view what);

// The calls the watchdog names (their index travels in probe answers).
enum class MpiCall : int64_t {
  kNone,
  kAllreduce,
  kBroadcast,
  kAllgatherv,
  kAlltoallv,
  kBarrier,
  kSend,
  kRecv,
  kSendRecv
};

// One communicator's watchdog: which call this rank is in, every wait polled while answering other ranks' probes on
// the control communicator (a duplicate of its own), and the timeout's message.
class MpiWatchdog {
 public:
  MpiWatchdog(int rank, int size, double timeout_seconds) : rank_(rank), size_(size), timeout_(timeout_seconds) {}
  MpiWatchdog(const MpiWatchdog&) = delete;
  MpiWatchdog& operator=(const MpiWatchdog&) = delete;

  // Takes the control communicator (the probes and answers only), with errors returned.
  void Start(MPI_Comm control);
  // Frees the answers still being sent (small: MPI delivers them on its own) and the control communicator.
  void Free();

  // The call now beginning on this rank, for probe answers and the timeout message.
  void Begin(MpiCall call, int64_t bytes, int peer = -1, int tag = -1, int source = -1) {
    ++seq_;
    current_ = {call, bytes, peer, tag, source};
  }

  // Completes n requests: MPI_Testall polled while answering other ranks' probes, until done or the timeout (if any)
  // ends the job. Also without a timeout: Open MPI 4.1.4's MPI_Waitall never returned for a receive that failed with
  // MPI_ERR_TRUNCATE when the message arrived after the receive was posted (MPI_Testall sees it). A tight spin for
  // kSpinSeconds (small messages complete within it), then a yield between polls up to kYieldSeconds (an oversubscribed
  // rank leaves the core to the peer it waits for, as Open MPI's own blocking calls do; a non-blocking collective
  // advances only while its ranks poll, so sleeping here would cost every round of it), then sleeps doubling to 1 ms (a
  // long wait for a slow peer does not burn a core). Returns MPI's code; for MPI_ERR_IN_STATUS, the first failed
  // request's own error. `purpose` names the call's purpose in the timeout message.
  int WaitCode(MPI_Request* requests, int n, MPI_Status* statuses, std::string_view purpose);

 private:
  // The call in progress on this rank, for probe answers and the timeout message.
  struct Current {
    MpiCall call = MpiCall::kNone;
    int64_t bytes = 0;
    int peer = -1;    // point-to-point: the destination (send, sendrecv) or the source (recv)
    int tag = -1;     // point-to-point
    int source = -1;  // sendrecv: the source
  };
  struct Answer {
    std::array<int64_t, 4> data{};
    MPI_Request request = MPI_REQUEST_NULL;
  };

  // Answers every pending probe with (sequence number, call, peer, tag); sends complete in the background.
  void AnswerProbes();
  // SIGTERM arrived while a peer-failure hook is set (core/peer_failure.h): runs the hook and ends this process with
  // kRankFailureExit.
  [[noreturn]] void EndedByLauncher();
  // The timeout: probe every other rank on the control communicator, collect answers for ProbeWindowSeconds
  // (answering probes of ranks that timed out too), and end the job naming the ranks that did not answer; when some
  // did not, the peer-failure hook runs first and the exit status is kRankFailureExit (core/peer_failure.h).
  [[noreturn]] void TimedOut(double waited, std::string_view purpose);

  int rank_;
  int size_;
  double timeout_;                    // seconds; 0 = no limit
  MPI_Comm control_ = MPI_COMM_NULL;  // the watchdog's probes and answers only
  uint64_t seq_ = 0;                  // calls begun on this rank (collectives and messages)
  Current current_;                   // the call in progress (or the last one)
  std::deque<Answer> answers_;        // probe answers still being sent
};

}  // namespace tessel::comm
