// Communicator's non-virtual entry points: local argument checks, then the backend, then byte accounting;
// messages to this rank itself (queued here, for every backend); MakeWorldCommunicator, which picks MPI or local
// by build and launcher, and OnEveryRankOrFail.
#include "comm/communicator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/build_config.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/fault_inject.h"

#if TESSEL_MPI
#include "comm/mpi_comm.h"
#endif

namespace tessel::comm {

namespace {

using Clock = std::chrono::steady_clock;

// Times one call: its wall seconds (waiting included) with the alpha-beta terms, and where the counter has a call
// model the calling thread's CPU seconds (two system calls, kept off every call of a run without --network).
class CallTimer {
 public:
  explicit CallTimer(const ByteCounter& counter) : cpu_(counter.Modelled()), cpu0_(cpu_ ? ThreadCpuSeconds() : 0) {}
  CallCost Cost(double latency, double volume) const {
    return {.seconds = SecondsSince(t0_),
            .latency = latency,
            .volume = volume,
            .cpu = cpu_ ? ThreadCpuSeconds() - cpu0_ : 0.0};
  }

 private:
  Clock::time_point t0_ = Clock::now();
  bool cpu_;
  double cpu0_;
};

// ceil(log2(p)): rounds of a tree or recursive-doubling algorithm.
double Rounds(int p) { return p > 1 ? std::ceil(std::log2(static_cast<double>(p))) : 0.0; }

}  // namespace

Communicator::Communicator(int rank, int size) : rank_(rank), size_(size) {
  TESSEL_CHECK(size >= 1 && rank >= 0 && rank < size, "comm: rank {} of {} is out of range", rank, size);
}

void Communicator::CheckSize(size_t have, int64_t want, std::string_view what) {
  TESSEL_CHECK(static_cast<int64_t>(have) == want, "comm: {} should have {} elements, has {}", what, want, have);
}

std::vector<int64_t> Communicator::ToBytes(std::span<const int64_t> counts, size_t element_size,
                                           std::string_view what) const {
  TESSEL_CHECK(counts.size() == static_cast<size_t>(size_), "comm: {} has {} entries, needs one per rank ({})", what,
               counts.size(), size_);
  std::vector<int64_t> bytes(counts.size());
  for (size_t j = 0; j < counts.size(); ++j) {
    TESSEL_CHECK(counts[j] >= 0, "comm: {}[{}] = {} is negative", what, j, counts[j]);
    bytes[j] = counts[j] * static_cast<int64_t>(element_size);
  }
  return bytes;
}

Status Communicator::AllreduceRaw(void* data, int64_t count, DataType type, ReduceOp op, std::string_view purpose) {
  TESSEL_CHECK(count >= 0, "comm: Allreduce count {} is negative", count);
  TESSEL_CHECK(OpFits(type, op),
               "comm: Allreduce {} does not apply to {} (min-loc/max-loc take ValueIndex, "
               "sum/min/max take scalars)",
               ReduceOpName(op), DataTypeName(type));
  Enter("allreduce", purpose);
  const CallTimer timer(bytes_);
  Status s = DoAllreduce(data, count, type, op);
  const double n = static_cast<double>(count) * static_cast<double>(DataTypeSize(type));
  const double p = size_;
  // Ring / Rabenseifner: 2 log2 P latencies (a tree for small ones), 2 (P-1)/P n bytes on each link.
  if (s.ok()) {
    bytes_.Add(purpose, size_ > 1 ? static_cast<uint64_t>(count) * DataTypeSize(type) : 0,
               timer.Cost(2 * Rounds(size_), 2 * (p - 1) / p * n));
  }
  return s;
}

Status Communicator::BroadcastRaw(void* data, int64_t bytes, int root, std::string_view purpose) {
  TESSEL_CHECK(bytes >= 0, "comm: Broadcast size {} is negative", bytes);
  TESSEL_CHECK(root >= 0 && root < size_, "comm: Broadcast root {} is not a rank (0..{})", root, size_ - 1);
  Enter("broadcast", purpose);
  const CallTimer timer(bytes_);
  Status s = DoBroadcast(data, bytes, root);
  const double p = size_;
  // Binomial tree latencies, scatter + allgather volume (van de Geijn): log2 P alpha + 2 (P-1)/P n beta.
  if (s.ok()) {
    bytes_.Add(purpose, size_ > 1 && rank_ == root ? static_cast<uint64_t>(bytes) : 0,
               timer.Cost(Rounds(size_), 2 * (p - 1) / p * static_cast<double>(bytes)));
  }
  return s;
}

Status Communicator::AllgathervRaw(const void* send, int64_t send_bytes, void* recv,
                                   std::span<const int64_t> recv_bytes, std::string_view purpose) {
  TESSEL_CHECK(recv_bytes.size() == static_cast<size_t>(size_),
               "comm: Allgatherv recv sizes have {} entries, need one per rank ({})", recv_bytes.size(), size_);
  for (size_t j = 0; j < recv_bytes.size(); ++j) {
    TESSEL_CHECK(recv_bytes[j] >= 0, "comm: Allgatherv recv size [{}] = {} is negative", j, recv_bytes[j]);
  }
  TESSEL_CHECK(recv_bytes[static_cast<size_t>(rank_)] == send_bytes,
               "comm: Allgatherv on rank {} sends {} bytes but expects {} from itself", rank_, send_bytes,
               recv_bytes[static_cast<size_t>(rank_)]);
  Enter("allgatherv", purpose);
  const CallTimer timer(bytes_);
  Status s = DoAllgatherv(send, send_bytes, recv, recv_bytes);
  double others = 0;  // a ring: P - 1 steps, every other rank's block arrives over one link
  for (size_t j = 0; j < recv_bytes.size(); ++j) {
    if (static_cast<int>(j) != rank_) others += static_cast<double>(recv_bytes[j]);
  }
  if (s.ok()) {
    bytes_.Add(purpose, size_ > 1 ? static_cast<uint64_t>(send_bytes) : 0, timer.Cost(size_ - 1.0, others));
  }
  return s;
}

Status Communicator::AlltoallvRaw(const void* send, std::span<const int64_t> send_bytes, void* recv,
                                  std::span<const int64_t> recv_bytes, std::string_view purpose) {
  TESSEL_CHECK(send_bytes.size() == static_cast<size_t>(size_) && recv_bytes.size() == static_cast<size_t>(size_),
               "comm: Alltoallv needs one send and one recv size per rank ({}), got {} and {}", size_,
               send_bytes.size(), recv_bytes.size());
  uint64_t to_others = 0;
  for (size_t j = 0; j < send_bytes.size(); ++j) {
    TESSEL_CHECK(send_bytes[j] >= 0 && recv_bytes[j] >= 0, "comm: Alltoallv sizes for rank {} are negative", j);
    if (static_cast<int>(j) != rank_) to_others += static_cast<uint64_t>(send_bytes[j]);
  }
  TESSEL_CHECK(send_bytes[static_cast<size_t>(rank_)] == recv_bytes[static_cast<size_t>(rank_)],
               "comm: Alltoallv on rank {} sends itself {} bytes but expects {}", rank_,
               send_bytes[static_cast<size_t>(rank_)], recv_bytes[static_cast<size_t>(rank_)]);
  Enter("alltoallv", purpose);
  const CallTimer timer(bytes_);
  Status s = DoAlltoallv(send, send_bytes, recv, recv_bytes);
  uint64_t from_others = 0;  // pairwise exchange: P - 1 steps, the larger of what leaves and what arrives
  for (size_t j = 0; j < recv_bytes.size(); ++j) {
    if (static_cast<int>(j) != rank_) from_others += static_cast<uint64_t>(recv_bytes[j]);
  }
  if (s.ok()) {
    bytes_.Add(purpose, to_others, timer.Cost(size_ - 1.0, static_cast<double>(std::max(to_others, from_others))));
  }
  return s;
}

Status Communicator::Barrier() {  // sends no payload; not counted
  Enter("barrier", kUntagged);
  return DoBarrier();
}

void Communicator::Enter(std::string_view point, std::string_view purpose) {
  purpose_ = purpose;
  (void)fault::FaultPoint(point, rank_);  // stall, kill and fail act inside; the write actions do not apply here
}

void Communicator::CheckPeer(std::string_view call, std::string_view role, int peer, int tag, int64_t bytes) const {
  TESSEL_CHECK(peer >= 0 && peer < size_, "comm: {} {} {} is not a rank (0..{})", call, role, peer, size_ - 1);
  TESSEL_CHECK(tag >= 0 && tag <= kMaxTag, "comm: {} tag {} is outside 0..{}", call, tag, kMaxTag);
  TESSEL_CHECK(bytes >= 0, "comm: {} size {} is negative", call, bytes);
}

void Communicator::PushToSelf(const void* data, int64_t bytes, int tag) {
  const auto* p = static_cast<const std::byte*>(data);
  to_self_[tag].emplace_back(p, p + bytes);
}

Status Communicator::PopFromSelf(void* data, int64_t bytes, int tag) {
  auto it = to_self_.find(tag);
  TESSEL_CHECK(it != to_self_.end() && !it->second.empty(),
               "comm: rank {} receives from itself with tag {}, but no message to itself is pending (it would wait "
               "forever; send to yourself before receiving)",
               rank_, tag);
  const std::vector<std::byte> message = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) to_self_.erase(it);
  if (static_cast<int64_t>(message.size()) != bytes) {
    return Status::Failed(
        fmt::format("RecvRaw: rank {} expects {} bytes from rank {} with tag {}, but the message has {}", rank_, bytes,
                    rank_, tag, message.size()));
  }
  if (bytes > 0) std::memcpy(data, message.data(), static_cast<size_t>(bytes));
  return Status::Ok();
}

Status Communicator::SendRaw(const void* data, int64_t bytes, int dest, int tag, std::string_view purpose) {
  CheckPeer("SendRaw", "destination", dest, tag, bytes);
  Enter("send", purpose);
  if (dest == rank_) {
    PushToSelf(data, bytes, tag);
    bytes_.Add(purpose, 0);
    return Status::Ok();
  }
  const CallTimer timer(bytes_);
  Status s = DoSend(data, bytes, dest, tag);
  if (s.ok()) bytes_.Add(purpose, static_cast<uint64_t>(bytes), timer.Cost(1.0, static_cast<double>(bytes)));
  return s;
}

Status Communicator::RecvRaw(void* data, int64_t bytes, int source, int tag) {
  CheckPeer("RecvRaw", "source", source, tag, bytes);
  Enter("recv", kUntagged);
  if (source == rank_) return PopFromSelf(data, bytes, tag);
  return DoRecv(data, bytes, source, tag);  // receiving sends nothing: not counted
}

Status Communicator::SendRecvRaw(const void* send, int64_t send_bytes, int dest, void* recv, int64_t recv_bytes,
                                 int source, int tag, std::string_view purpose) {
  CheckPeer("SendRecvRaw", "destination", dest, tag, send_bytes);
  CheckPeer("SendRecvRaw", "source", source, tag, recv_bytes);
  const auto s0 = reinterpret_cast<uintptr_t>(send);
  const auto r0 = reinterpret_cast<uintptr_t>(recv);
  TESSEL_CHECK(send_bytes == 0 || recv_bytes == 0 || s0 + static_cast<uintptr_t>(send_bytes) <= r0 ||
                   r0 + static_cast<uintptr_t>(recv_bytes) <= s0,
               "comm: SendRecvRaw send and recv buffers overlap");
  Enter("sendrecv", purpose);
  const CallTimer timer(bytes_);
  Status s;
  if (dest == rank_ && source == rank_) {
    PushToSelf(send, send_bytes, tag);
    s = PopFromSelf(recv, recv_bytes, tag);
  } else if (dest == rank_) {
    PushToSelf(send, send_bytes, tag);
    s = DoRecv(recv, recv_bytes, source, tag);
  } else if (source == rank_) {
    s = PopFromSelf(recv, recv_bytes, tag);             // throws before anything is sent when none is pending
    Status sent = DoSend(send, send_bytes, dest, tag);  // sent even after a size mismatch: dest is waiting for it
    if (s.ok()) s = std::move(sent);
  } else {
    s = DoSendRecv(send, send_bytes, dest, recv, recv_bytes, source, tag);
  }
  const double out = dest == rank_ ? 0.0 : static_cast<double>(send_bytes);
  const double in = source == rank_ ? 0.0 : static_cast<double>(recv_bytes);
  if (s.ok()) {
    bytes_.Add(purpose, dest == rank_ ? 0 : static_cast<uint64_t>(send_bytes),
               timer.Cost(dest == rank_ && source == rank_ ? 0.0 : 1.0, std::max(out, in)));
  }
  return s;
}

std::unique_ptr<Communicator> MakeWorldCommunicator(double timeout_seconds) {
#if TESSEL_MPI
  // Open MPI, MPICH/Hydra and PMIx launchers set these in every rank's environment.
  const bool launched = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
                        std::getenv("PMIX_RANK") != nullptr;
  if (launched || MpiInitialized()) return MakeMpiCommunicator({.timeout_seconds = timeout_seconds});
#else
  (void)timeout_seconds;  // one process: nothing to wait for
#endif
  return MakeLocalCommunicator();
}

void OnEveryRankOrFail(Communicator& comm, const std::function<void()>& fn) {
  std::string error;
  try {
    fn();
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (comm.Size() == 1) {
    if (!error.empty()) throw Error(error);
    return;
  }
  const std::vector<uint8_t> mine(error.begin(), error.end());
  std::vector<uint8_t> all;
  std::vector<int64_t> counts;
  comm.AllgathervWithCounts<uint8_t>(mine, &all, &counts, "setup").ThrowIfError();
  std::string message;
  size_t at = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    const auto n = static_cast<size_t>(counts[r]);
    if (n > 0) {
      if (!message.empty()) message += "; ";
      message += fmt::format("rank {}: {}", r,
                             std::string(all.begin() + static_cast<std::ptrdiff_t>(at),
                                         all.begin() + static_cast<std::ptrdiff_t>(at + n)));
    }
    at += n;
  }
  if (!message.empty()) throw Error(message);
}

}  // namespace tessel::comm
