// When another rank of the job fails (dies, stalls past --timeout, or mpirun ends the job after a rank's death), the
// survivors run one hook before they end: the GCN trainer writes its just-in-time state (docs/reliability.md,
// "Ranks that leave"). The job then ends with kRankFailureExit, which `tessel launch` restarts on the survivors; every
// other non-zero status (bad input, a bug) is not retried.
#pragma once

#include <functional>
#include <string_view>

namespace tessel::peer_failure {

// The exit status of a rank that ends because another rank failed: 75 (EX_TEMPFAIL of sysexits.h, "try again").
inline constexpr int kRankFailureExit = 75;

// Sets (or, with an empty function, clears) the hook, and while one is set makes SIGTERM (what mpirun sends the
// survivors when a rank dies, a second before SIGKILL; `tessel launch` allows more) a request to end: the handler
// only records it, and the communicator's next wait runs the hook and ends the process (TermRequested). The hook runs
// on the thread that waits in a communicator call, with the trainer's state as of its last completed step.
void SetHook(std::function<void()> hook);
bool HasHook();
// Runs the hook once (later calls do nothing; an exception it throws is reported on stderr and swallowed: the job is
// ending either way). `why` is logged.
void RunHook(std::string_view why);
// Whether SIGTERM arrived while a hook was set. Async-signal-safe to set, cheap to read.
bool TermRequested();

}  // namespace tessel::peer_failure
