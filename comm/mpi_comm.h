// The MPI backend (built when TESSEL_MPI): initialisation at MPI_THREAD_FUNNELED when needed, a communicator over
// a duplicate of MPI_COMM_WORLD with counts above INT_MAX split, and RunMain, which aborts the job on any exception.
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "comm/communicator.h"

namespace tessel::comm {

struct MpiOptions {
  // Largest message (bytes) handed to one MPI call: MPI-3 counts are `int`, so larger transfers are split
  // (allreduce, broadcast) or sent as chunked point-to-point messages (allgatherv, alltoallv). Tests lower it.
  int64_t max_message_bytes = INT_MAX;
  // Before each collective, one small allreduce checks that every rank called the same collective with matching
  // sizes, root and op, so a mismatch becomes a failed Status on all ranks rather than a hang or a corrupt result.
  bool check_arguments = false;
  // The watchdog: a collective or message that has not completed after this many seconds ends the whole job
  // (AbortJob) with a message naming this rank, the call (purpose, bytes) and the ranks that did not answer a probe
  // on a control communicator. Calls are issued non-blocking and polled (a short spin, then a backoff that yields
  // the core). 0 = no limit (polled the same way, without a deadline). Must be finite and >= 0.
  double timeout_seconds = Communicator::kDefaultTimeoutSeconds;
};

bool MpiInitialized();  // MPI_Init has run and MPI_Finalize has not
// Initialises MPI unless it already is, requesting MPI_THREAD_FUNNELED (only the thread that called this makes MPI
// calls; oneTBB workers never do). Throws when the library provides less. Safe to call repeatedly.
void EnsureMpiInitialized();
// MPI_Finalize if this process's EnsureMpiInitialized initialised MPI and it is not finalised yet. Also registered
// with std::atexit when EnsureMpiInitialized initialises MPI, so a normal exit always finalises.
void FinalizeMpiIfOwned();

// A communicator over a duplicate of MPI_COMM_WORLD (errors returned, not fatal); initialises MPI if needed and
// makes core logging rank-aware (log::SetRank). Collective: duplicates MPI_COMM_WORLD three times (collectives,
// point-to-point messages, the watchdog's probes).
std::unique_ptr<Communicator> MakeMpiCommunicator(const MpiOptions& options = {});

// The MPI communicator behind an MPI-backend communicator (Backend() == "mpi"), for libraries that take one
// (ParMETIS): a pointer to its MPI_Comm, kept out of this header's types so it needs no <mpi.h>; cast it to
// `const MPI_Comm*`. The caller must not free it and should MPI_Comm_dup it for calls of its own. Throws
// tessel::Error for another backend.
const void* MpiHandle(const Communicator& comm);

// Prints "error: [rank r] <message>" to stderr and ends the whole job: MPI_Abort when MPI is initialised (every
// rank is killed within seconds), std::exit otherwise. For main() and job guards only; library code throws.
[[noreturn]] void AbortJob(std::string_view message, int exit_code = 1);

// The guard for an MPI program's main: initialises MPI, builds the world communicator, runs fn, finalises MPI and
// returns fn's exit status; an exception on any rank ends the job through AbortJob with that rank's message.
int RunMain(const std::function<int(Communicator&)>& fn, const MpiOptions& options = {});

}  // namespace tessel::comm
