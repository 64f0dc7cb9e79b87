// RingAllreduce: a bandwidth-optimal sum allreduce built on Communicator's point-to-point messages (reduce-scatter
// then allgather around the ring), with optional chunking of each transfer. docs/comm.md, "Ring allreduce".
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "comm/communicator.h"

namespace tessel::comm {

struct RingOptions {
  // 0: each step sends its whole segment as one message. > 0: each segment transfer is split into messages of at
  // most this many bytes (rounded down to whole elements, at least one), which bounds the receive buffer to one
  // chunk and lets large payloads flow through the ring chunk by chunk. Must be >= 0.
  int64_t chunk_bytes = 0;
  // The point-to-point tag of every message of the ring (0..Communicator::kMaxTag). Messages with another tag, or
  // between other ranks, do not interfere; the caller must not have its own messages with this tag in flight
  // between ring neighbours while the ring runs.
  int tag = Communicator::kMaxTag;
};

// In place: data[i] = sum over ranks of data[i], like comm.Allreduce(data, ReduceOp::kSum, purpose), but always
// with the ring algorithm on SendRecvRaw, whatever the backend. Collective: every rank calls it with the same
// data.size() and options (a size disagreement shows up as a failed Status — a message of the wrong size — or,
// when the segments happen to agree, as wrong sums; it is not checked separately).
//
// Algorithm (P ranks, n elements): the data is split into P segments of n/P elements (the first n % P segments one
// longer, so some are empty when n < P). Reduce-scatter: in step s = 0..P-2, rank r sends segment (r - s) mod P to
// rank r+1 and adds the segment (r - s - 1) mod P received from rank r-1 into its own; afterwards rank r holds the
// complete sum of segment (r + 1) mod P. Allgather: in P-1 more steps each complete segment travels once around the
// ring and overwrites the partial ones. Each rank sends (n - |seg (r+1) mod P|) + (n - |seg (r+2) mod P|) elements,
// about 2(P-1)/P · n: the lower bound for an allreduce, independent of P, at the price of 2(P-1) message latencies.
//
// Every element is summed in one fixed order (starting at the rank whose index is its segment's, then around the
// ring) by one owner and copied to the others, so all ranks get bit-identical results; they can differ by rounding
// from a serial sum and from Allreduce. One rank: nothing to do. Bytes are counted under `purpose` as sent (one
// call per message). A failed Status comes from the messages (a peer failed or left, the transport failed); the
// data is then partly reduced and must not be used.
Status RingAllreduce(Communicator& comm, std::span<float> data, std::string_view purpose, const RingOptions& opt = {});
Status RingAllreduce(Communicator& comm, std::span<double> data, std::string_view purpose, const RingOptions& opt = {});

// The number of elements rank `rank` sends in a RingAllreduce of n elements over `size` ranks (for accounting and
// tests): n - |segment (rank + 1) mod size| + n - |segment (rank + 2) mod size|, 0 for one rank.
int64_t RingElementsSent(int64_t n, int size, int rank);

}  // namespace tessel::comm
