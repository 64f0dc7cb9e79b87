// Communicator: the collectives of distributed training (allreduce, broadcast, allgather(v), alltoall(v), barrier)
// behind one interface with local, thread (tests) and MPI backends, and per-purpose byte accounting. docs/comm.md.
#pragma once

#include <cstdint>
#include <functional>
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
class Communicator {
 public:
  virtual ~Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int Rank() const { return rank_; }
  int Size() const { return size_; }
  virtual std::string_view Backend() const = 0;  // "local", "thread" or "mpi"

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

 protected:
  Communicator(int rank, int size);

  // Backends implement these; arguments are already checked locally (sizes, root, counts >= 0).
  virtual Status DoAllreduce(void* data, int64_t count, DataType type, ReduceOp op) = 0;
  virtual Status DoBroadcast(void* data, int64_t bytes, int root) = 0;
  virtual Status DoAllgatherv(const void* send, int64_t send_bytes, void* recv,
                              std::span<const int64_t> recv_bytes) = 0;
  virtual Status DoAlltoallv(const void* send, std::span<const int64_t> send_bytes, void* recv,
                             std::span<const int64_t> recv_bytes) = 0;
  virtual Status DoBarrier() = 0;

 private:
  template <typename T>
  static int64_t ByteSize(size_t count) {
    return static_cast<int64_t>(count * sizeof(T));
  }
  // Element counts -> byte counts; throws on a negative count or a wrong number of entries.
  std::vector<int64_t> ToBytes(std::span<const int64_t> counts, size_t element_size, std::string_view what) const;
  static void CheckSize(size_t have, int64_t want, std::string_view what);

  int rank_;
  int size_;
  ByteCounter bytes_;
};

// A one-rank communicator: collectives are copies or no-ops.
std::unique_ptr<Communicator> MakeLocalCommunicator();

// The world communicator of this process: MPI's when built with MPI and launched by mpirun/srun (or MPI is already
// initialised), otherwise a local one. The MPI case initialises MPI if needed (see comm/mpi_comm.h).
std::unique_ptr<Communicator> MakeWorldCommunicator();

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
