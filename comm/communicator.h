// Communicator: the collectives of distributed training (allreduce, broadcast, allgather(v), alltoall(v), barrier)
// and point-to-point messages (send, recv, sendrecv) behind one interface with local, thread (tests) and MPI
// backends, and per-purpose byte accounting. docs/comm.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "comm/byte_counter.h"
#include "comm/reduce.h"
#include "comm/status.h"

namespace tessel::comm {

// Every rank calls the same collectives in the same order with matching arguments (same count and op for
// allreduce, same root and size for broadcast, recv counts that mirror the peers' send counts). Buffers passed
// to one call must not overlap, except that allreduce and broadcast work in place. One communicator belongs to one
// thread at a time. The typed helpers below check sizes locally and throw tessel::Error on a bad call; the
// collective itself returns a failed Status when a peer fails or leaves, the transport fails, or the ranks'
// arguments disagree (always checked by the thread backend; by MPI only with MpiOptions::check_arguments).
//
// Point-to-point messages (SendRaw, RecvRaw, SendRecvRaw and the typed Send, Recv, SendRecv) are matched by
// (source, destination, tag); messages with the same triple arrive in send order (MPI's non-overtaking rule), and
// different tags are independent. The receiver knows the size: a message whose size differs from the receive's is
// a failed Status (on MPI: MPI's truncation error when the message is longer). A failed Status also comes when the
// peer failed or left (thread backend: with no matching message pending) or the transport failed; a peer rank out
// of range, a tag outside 0..kMaxTag or a negative size throws tessel::Error. Sending may block until the receiver
// posts its receive (MPI's standard mode; the thread backend buffers every send), so two ranks that exchange data
// call SendRecvRaw, which never deadlocks with the matching SendRecvRaw (or SendRaw and RecvRaw) on the peers.
// Messages to this rank itself are allowed in every backend, the local one included: the communicator queues them
// (per tag, in order) without the transport, and a receive from itself takes the oldest pending one; receiving from
// itself with none pending would wait forever and throws tessel::Error instead.
class Communicator {
 public:
  // Tags of point-to-point messages are 0..kMaxTag (MPI guarantees tags up to 32767 in every implementation). The
  // MPI backend sends them on a communicator of their own, so they never meet the collectives' internal messages.
  static constexpr int kMaxTag = 32767;
  // How long a collective or a message may make no progress before the job ends (MPI) or the call fails (threads);
  // MpiOptions::timeout_seconds, ThreadOptions::timeout_seconds and `--timeout` default to it. 0 = no limit.
  static constexpr double kDefaultTimeoutSeconds = 600;

  virtual ~Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int Rank() const { return rank_; }
  int Size() const { return size_; }
  virtual std::string_view Backend() const = 0;  // "local", "thread" or "mpi"
  // Ranks on this rank's machine, this one included (they share its cores): every thread rank; under MPI, the
  // ranks with this host name (found when the communicator was made).
  int LocalSize() const { return local_size_; }

  // Bytes sent, by purpose (docs/comm.md, "Byte accounting"); counted only when the collective succeeds.
  ByteCounter& Bytes() { return bytes_; }
  const ByteCounter& Bytes() const { return bytes_; }

  // ---- Byte-level collectives (sizes in bytes; counts spans have Size() entries).
  // In place: data[i] = op over ranks of data[i], `count` elements of `type`.
  Status AllreduceRaw(void* data, int64_t count, DataType type, ReduceOp op, std::string_view purpose = kUntagged);
  // Root's `bytes` bytes at data are copied to every rank's data.
  Status BroadcastRaw(void* data, int64_t bytes, int root, std::string_view purpose = kUntagged);
  // recv holds every rank's block, rank order; recv_bytes[j] is rank j's send_bytes.
  Status AllgathervRaw(const void* send, int64_t send_bytes, void* recv, std::span<const int64_t> recv_bytes,
                       std::string_view purpose = kUntagged);
  // send holds the blocks for ranks 0..P-1 back to back; recv gets the blocks from ranks 0..P-1 back to back;
  // recv_bytes[j] on rank r equals send_bytes[r] on rank j.
  Status AlltoallvRaw(const void* send, std::span<const int64_t> send_bytes, void* recv,
                      std::span<const int64_t> recv_bytes, std::string_view purpose = kUntagged);
  Status Barrier();

  // ---- Byte-level point-to-point (not collective: only the two ranks take part; see the class comment).
  // Sends `bytes` bytes at data to rank dest with `tag`. Counted under purpose as `bytes` (0 when dest is this rank).
  Status SendRaw(const void* data, int64_t bytes, int dest, int tag, std::string_view purpose = kUntagged);
  // Receives the next message from rank source with `tag` into data, which must be exactly `bytes` bytes long.
  Status RecvRaw(void* data, int64_t bytes, int source, int tag);
  // Sends to dest and receives from source at once (like MPI_Sendrecv): the step of a ring or a pairwise exchange, free
  // of deadlock whatever the message sizes. send and recv must not overlap. Counted like SendRaw.
  Status SendRecvRaw(const void* send, int64_t send_bytes, int dest, void* recv, int64_t recv_bytes, int source,
                     int tag, std::string_view purpose = kUntagged);

  // ---- Typed helpers (counts in elements).
  template <typename T>
  Status Allreduce(std::span<T> data, ReduceOp op = ReduceOp::kSum, std::string_view purpose = kUntagged) {
    return AllreduceRaw(data.data(), static_cast<int64_t>(data.size()), DataTypeOf<std::remove_const_t<T>>(), op,
                        purpose);
  }
  // One fused (value, index) reduction: every rank gets the best value and, on ties, the smallest index.
  template <typename T>
  Status AllreduceMaxLoc(ValueIndex<T>* v, std::string_view purpose = kUntagged) {
    return Allreduce(std::span<ValueIndex<T>>(v, 1), ReduceOp::kMaxLoc, purpose);
  }
  template <typename T>
  Status AllreduceMinLoc(ValueIndex<T>* v, std::string_view purpose = kUntagged) {
    return Allreduce(std::span<ValueIndex<T>>(v, 1), ReduceOp::kMinLoc, purpose);
  }
  template <typename T>
  Status Broadcast(std::span<T> data, int root, std::string_view purpose = kUntagged) {
    return BroadcastRaw(data.data(), ByteSize<T>(data.size()), root, purpose);
  }
  // recv.size() == Size() * send.size().
  template <typename T>
  Status Allgather(std::span<const T> send, std::span<T> recv, std::string_view purpose = kUntagged);
  // recv_counts[j] elements from rank j; recv.size() == sum(recv_counts).
  template <typename T>
  Status Allgatherv(std::span<const T> send, std::span<T> recv, std::span<const int64_t> recv_counts,
                    std::string_view purpose = kUntagged);
  // Equal blocks: send.size() == recv.size() == Size() * block.
  template <typename T>
  Status Alltoall(std::span<const T> send, std::span<T> recv, std::string_view purpose = kUntagged);
  template <typename T>
  Status Alltoallv(std::span<const T> send, std::span<const int64_t> send_counts, std::span<T> recv,
                   std::span<const int64_t> recv_counts, std::string_view purpose = kUntagged);

  // When the receivers do not know the counts: first exchanges the counts (counted under the same purpose), then
  // the data; resizes *recv and fills *recv_counts (Size() entries).
  template <typename T>
  Status AllgathervWithCounts(std::span<const T> send, std::vector<T>* recv, std::vector<int64_t>* recv_counts,
                              std::string_view purpose = kUntagged);
  template <typename T>
  Status AlltoallvWithCounts(std::span<const T> send, std::span<const int64_t> send_counts, std::vector<T>* recv,
                             std::vector<int64_t>* recv_counts, std::string_view purpose = kUntagged);

  // Point-to-point on spans; the receive span's size is the expected message size.
  template <typename T>
  Status Send(std::span<const T> data, int dest, int tag, std::string_view purpose = kUntagged) {
    return SendRaw(data.data(), ByteSize<T>(data.size()), dest, tag, purpose);
  }
  template <typename T>
  Status Recv(std::span<T> data, int source, int tag) {
    return RecvRaw(data.data(), ByteSize<T>(data.size()), source, tag);
  }
  template <typename T>
  Status SendRecv(std::span<const T> send, int dest, std::span<T> recv, int source, int tag,
                  std::string_view purpose = kUntagged) {
    return SendRecvRaw(send.data(), ByteSize<T>(send.size()), dest, recv.data(), ByteSize<T>(recv.size()), source, tag,
                       purpose);
  }

 protected:
  void SetLocalSize(int n) { local_size_ = n; }
  Communicator(int rank, int size);
  // The purpose of the call in progress (for the backends' timeout messages; kUntagged for receives and barriers).
  std::string_view CurrentPurpose() const { return purpose_; }

  // Backends implement these; arguments are already checked locally (sizes, root, counts >= 0).
  virtual Status DoAllreduce(void* data, int64_t count, DataType type, ReduceOp op) = 0;
  virtual Status DoBroadcast(void* data, int64_t bytes, int root) = 0;
  virtual Status DoAllgatherv(const void* send, int64_t send_bytes, void* recv,
                              std::span<const int64_t> recv_bytes) = 0;
  virtual Status DoAlltoallv(const void* send, std::span<const int64_t> send_bytes, void* recv,
                             std::span<const int64_t> recv_bytes) = 0;
  virtual Status DoBarrier() = 0;
  // Point-to-point with a peer: dest/source is another rank (messages to this rank never reach the backend), the
  // tag is in 0..kMaxTag and sizes are >= 0. A received message of another size is a failed Status.
  virtual Status DoSend(const void* data, int64_t bytes, int dest, int tag) = 0;
  virtual Status DoRecv(void* data, int64_t bytes, int source, int tag) = 0;
  virtual Status DoSendRecv(const void* send, int64_t send_bytes, int dest, void* recv, int64_t recv_bytes, int source,
                            int tag) = 0;

 private:
  template <typename T>
  static int64_t ByteSize(size_t count) {
    return static_cast<int64_t>(count * sizeof(T));
  }
  // Element counts -> byte counts; throws on a negative count or a wrong number of entries.
  std::vector<int64_t> ToBytes(std::span<const int64_t> counts, size_t element_size, std::string_view what) const;
  static void CheckSize(size_t have, int64_t want, std::string_view what);
  // Local checks of a point-to-point call: peer in 0..Size()-1, tag in 0..kMaxTag, bytes >= 0.
  void CheckPeer(std::string_view call, std::string_view role, int peer, int tag, int64_t bytes) const;
  // Messages to this rank itself, by tag, oldest first.
  void PushToSelf(const void* data, int64_t bytes, int tag);
  Status PopFromSelf(void* data, int64_t bytes, int tag);

  // Fault-injection hook (core/fault_inject.h) and the purpose of the call that starts now.
  void Enter(std::string_view point, std::string_view purpose);

  int rank_;
  int size_;
  int local_size_ = size_;                // LocalSize(); MPI sets it after construction
  std::string_view purpose_ = kUntagged;  // valid during the call that set it
  ByteCounter bytes_;
  std::map<int, std::deque<std::vector<std::byte>>> to_self_;
};

// A one-rank communicator: collectives are copies or no-ops.
std::unique_ptr<Communicator> MakeLocalCommunicator();

// The world communicator of this process: MPI's when built with MPI and launched by mpirun/srun (or MPI is already
// initialised), otherwise a local one. The MPI case initialises MPI if needed (see comm/mpi_comm.h) and ends the job
// when a call makes no progress for timeout_seconds (MpiOptions::timeout_seconds; 0 = no limit).
std::unique_ptr<Communicator> MakeWorldCommunicator(double timeout_seconds = Communicator::kDefaultTimeoutSeconds);

// Runs fn on every rank and shares the outcome (collective: one allgatherv of the error texts, purpose "setup"):
// when fn throws on any rank, every rank throws the same Error naming the failing ranks and their messages, so
// each one reports it before the job ends instead of some ranks waiting in the next collective.
void OnEveryRankOrFail(Communicator& comm, const std::function<void()>& fn);

// ---- Template definitions.

template <typename T>
Status Communicator::Allgather(std::span<const T> send, std::span<T> recv, std::string_view purpose) {
  CheckSize(recv.size(), static_cast<int64_t>(send.size()) * size_, "Allgather recv (Size() * send.size())");
  std::vector<int64_t> counts(static_cast<size_t>(size_), static_cast<int64_t>(send.size()));
  return Allgatherv<T>(send, recv, counts, purpose);
}

template <typename T>
Status Communicator::Allgatherv(std::span<const T> send, std::span<T> recv, std::span<const int64_t> recv_counts,
                                std::string_view purpose) {
  std::vector<int64_t> recv_bytes = ToBytes(recv_counts, sizeof(T), "Allgatherv recv_counts");
  int64_t total = 0;
  for (int64_t c : recv_counts) total += c;
  CheckSize(recv.size(), total, "Allgatherv recv (sum of recv_counts)");
  return AllgathervRaw(send.data(), ByteSize<T>(send.size()), recv.data(), recv_bytes, purpose);
}

template <typename T>
Status Communicator::Alltoall(std::span<const T> send, std::span<T> recv, std::string_view purpose) {
  TESSEL_CHECK(send.size() % static_cast<size_t>(size_) == 0,
               "comm: Alltoall send has {} elements, not a multiple of the {} ranks (use Alltoallv for uneven blocks)",
               send.size(), size_);
  CheckSize(recv.size(), static_cast<int64_t>(send.size()), "Alltoall recv (send.size())");
  std::vector<int64_t> counts(static_cast<size_t>(size_), static_cast<int64_t>(send.size()) / size_);
  return Alltoallv<T>(send, counts, recv, counts, purpose);
}

template <typename T>
Status Communicator::Alltoallv(std::span<const T> send, std::span<const int64_t> send_counts, std::span<T> recv,
                               std::span<const int64_t> recv_counts, std::string_view purpose) {
  std::vector<int64_t> send_bytes = ToBytes(send_counts, sizeof(T), "Alltoallv send_counts");
  std::vector<int64_t> recv_bytes = ToBytes(recv_counts, sizeof(T), "Alltoallv recv_counts");
  int64_t send_total = 0;
  int64_t recv_total = 0;
  for (int64_t c : send_counts) send_total += c;
  for (int64_t c : recv_counts) recv_total += c;
  CheckSize(send.size(), send_total, "Alltoallv send (sum of send_counts)");
  CheckSize(recv.size(), recv_total, "Alltoallv recv (sum of recv_counts)");
  return AlltoallvRaw(send.data(), send_bytes, recv.data(), recv_bytes, purpose);
}

template <typename T>
Status Communicator::AllgathervWithCounts(std::span<const T> send, std::vector<T>* recv,
                                          std::vector<int64_t>* recv_counts, std::string_view purpose) {
  recv_counts->assign(static_cast<size_t>(size_), 0);
  const int64_t mine = static_cast<int64_t>(send.size());
  Status s = Allgather<int64_t>(std::span<const int64_t>(&mine, 1), *recv_counts, purpose);
  if (!s.ok()) return s;
  int64_t total = 0;
  for (int64_t c : *recv_counts) total += c;
  recv->resize(static_cast<size_t>(total));
  return Allgatherv<T>(send, *recv, *recv_counts, purpose);
}

template <typename T>
Status Communicator::AlltoallvWithCounts(std::span<const T> send, std::span<const int64_t> send_counts,
                                         std::vector<T>* recv, std::vector<int64_t>* recv_counts,
                                         std::string_view purpose) {
  CheckSize(send_counts.size(), size_, "AlltoallvWithCounts send_counts (one per rank)");
  recv_counts->assign(static_cast<size_t>(size_), 0);
  Status s = Alltoall<int64_t>(send_counts, *recv_counts, purpose);
  if (!s.ok()) return s;
  int64_t total = 0;
  for (int64_t c : *recv_counts) total += c;
  recv->resize(static_cast<size_t>(total));
  return Alltoallv<T>(send, send_counts, *recv, *recv_counts, purpose);
}

}  // namespace tessel::comm
