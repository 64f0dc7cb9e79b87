// Fault injection for tests: the environment variable TESSEL_FAULT=ACTION@POINT[,rank=R][,after=N] makes the named
// hook misbehave once (docs/comm.md, "Fault injection"). Unset, a hook costs one load of a global flag.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tessel::fault {

enum class Action : uint8_t {
  kNone,      // nothing happens (the normal case)
  kStall,     // the process stops making progress (raise(SIGSTOP)): a hung rank
  kKill,      // raise(SIGKILL): a rank that dies
  kFail,      // throw tessel::Error("injected fault at POINT")
  kEnospc,    // write points only: the write fails with ENOSPC, as on a full disk
  kTruncate,  // write points only: the written file is cut short before it is renamed into place
};

struct Spec {
  Action action = Action::kNone;
  std::string point;  // one of KnownPoints()
  int rank = -1;      // -1: every rank
  int64_t after = 0;  // the fault fires at the matching call number after + 1 (after = 0: the first one)
};

// The hook names: every collective and point-to-point entry of comm::Communicator, "epoch" (the start of a training
// epoch: GCN epochs, distributed SVM batch rounds and SMO check points), "step" (a GCN step's batch about to be
// sampled), "write" (WriteFileAtomic, core/file_io.h),
// "start" (before an MPI communicator is created) and "finalize" (before MPI_Finalize, under a timeout).
std::string_view KnownPoints();  // "allreduce, broadcast, ..." for messages

// Parses a TESSEL_FAULT value; throws tessel::Error naming what is wrong and the grammar otherwise.
Spec ParseSpec(std::string_view text);

// Parses TESSEL_FAULT now, so a malformed value ends the program before any work (tools/main.cc). Hooks parse it on
// first use as well, and throw the same error, so a malformed value is never ignored.
void InitFromEnvironment();

namespace detail {
extern const bool g_armed;  // TESSEL_FAULT is set and not empty
Action Hit(std::string_view point, int rank);
}  // namespace detail

// A hook. `rank` is the caller's rank when it knows it (communicators); -1 means this process's rank under a
// launcher (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK), else 0. Stall, kill and fail act here; for write points the
// caller applies enospc and truncate, which are returned.
inline Action FaultPoint(std::string_view point, int rank = -1) {
  if (!detail::g_armed) [[likely]]
    return Action::kNone;
  return detail::Hit(point, rank);
}

}  // namespace tessel::fault
