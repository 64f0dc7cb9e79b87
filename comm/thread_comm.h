// ThreadGroup: K ranks as threads of one process, each with its own Communicator, for tests and single-node
// experiments. A rank that throws (or returns early) wakes every rank blocked in a collective or a receive instead of
// a hang.
#pragma once

#include <functional>

#include "comm/communicator.h"

namespace tessel::comm {

struct ThreadOptions {
  // A rank that waits longer than this in a collective (for the ranks that have not arrived) or in a receive fails
  // the whole group with a message naming the ranks it waits for and what they do instead. 0 = no limit.
  double timeout_seconds = Communicator::kDefaultTimeoutSeconds;
};

class ThreadGroup {
 public:
  static constexpr int kMaxRanks = 256;

  // Runs fn(comm) for ranks 0..num_ranks-1, each on its own thread, and returns once every rank has returned.
  // When a rank throws, every other rank blocked in (or later entering) a collective gets the failed Status
  // "rank r failed: <what>", and Run rethrows the first failure as tessel::Error("rank r failed: <what>").
  // A rank that returns while its peers wait in a collective fails them too (the ranks called different
  // collectives). The thread backend checks that all ranks pass matching arguments and fails every rank if not.
  // Point-to-point sends are buffered (the payload is copied, the send returns); a receive fails when the group
  // failed or the source rank returned with no matching message pending, and when every rank waits for another
  // (a receive nobody will send to, while the rest wait or have returned) all fail with "deadlock: ...".
  // A rank that waits longer than options.timeout_seconds fails the group the same way (the message names the ranks
  // that did not arrive or send).
  static void Run(int num_ranks, const std::function<void(Communicator&)>& fn, const ThreadOptions& options = {});
};

}  // namespace tessel::comm
