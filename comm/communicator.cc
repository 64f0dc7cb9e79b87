// Communicator's non-virtual entry points: local argument checks, then the backend, then byte accounting;
// plus MakeWorldCommunicator, which picks MPI or local by build and launcher, and OnEveryRankOrFail.
#include "comm/communicator.h"

#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/build_config.h"
#include "core/error.h"

#if TESSEL_MPI
#include "comm/mpi_comm.h"
#endif

namespace tessel::comm {

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
  Status s = DoAllreduce(data, count, type, op);
  if (s.ok()) bytes_.Add(purpose, size_ > 1 ? static_cast<uint64_t>(count) * DataTypeSize(type) : 0);
  return s;
}

Status Communicator::BroadcastRaw(void* data, int64_t bytes, int root, std::string_view purpose) {
  TESSEL_CHECK(bytes >= 0, "comm: Broadcast size {} is negative", bytes);
  TESSEL_CHECK(root >= 0 && root < size_, "comm: Broadcast root {} is not a rank (0..{})", root, size_ - 1);
  Status s = DoBroadcast(data, bytes, root);
  if (s.ok()) bytes_.Add(purpose, size_ > 1 && rank_ == root ? static_cast<uint64_t>(bytes) : 0);
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
  Status s = DoAllgatherv(send, send_bytes, recv, recv_bytes);
  if (s.ok()) bytes_.Add(purpose, size_ > 1 ? static_cast<uint64_t>(send_bytes) : 0);
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
  Status s = DoAlltoallv(send, send_bytes, recv, recv_bytes);
  if (s.ok()) bytes_.Add(purpose, to_others);
  return s;
}

Status Communicator::Barrier() { return DoBarrier(); }  // sends no payload; not counted

std::unique_ptr<Communicator> MakeWorldCommunicator() {
#if TESSEL_MPI
  // Open MPI, MPICH/Hydra and PMIx launchers set these in every rank's environment.
  const bool launched = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
                        std::getenv("PMIX_RANK") != nullptr;
  if (launched || MpiInitialized()) return MakeMpiCommunicator();
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
