// MPI backend: MPI_Init_thread(FUNNELED) only when needed, collectives on a private duplicate of MPI_COMM_WORLD
// with MPI_ERRORS_RETURN, int-count splitting, user ops for (value, index) loc reductions, point-to-point messages on
// a second duplicate (so user tags never meet the collectives' internal messages), and the abort guard. Every wait
// polls under the watchdog (comm/mpi_watchdog.cc).
#include "comm/mpi_comm.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "comm/mpi_watchdog.h"
#include "core/error.h"
#include "core/fault_inject.h"
#include "core/log.h"
#include "core/memory_budget.h"

namespace tessel::comm {
namespace {

constexpr int kPairwiseTag = 7301;  // the chunked point-to-point fallback; our communicator is private (a dup)
bool g_owned = false;               // EnsureMpiInitialized called MPI_Init_thread
double g_finalize_timeout = 0;      // the last communicator's timeout: bounds the barrier before MPI_Finalize

std::string MpiErrorString(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return fmt::format("MPI error {}", code);
  return std::string(text, static_cast<size_t>(length));
}

Status Check(int rc, std::string_view call) {
  return rc == MPI_SUCCESS ? Status::Ok() : Status::Failed(fmt::format("{}: {}", call, MpiErrorString(rc)));
}

// MPI's predefined type of each scalar DataType (the first eight, kInt8 .. kFloat64, in their order) and op of each
// scalar ReduceOp (kSum, kMin, kMax); the other types and ops are this backend's own (loc_type_, loc_op_, half_op_).
MPI_Datatype ScalarType(DataType type) {
  static const MPI_Datatype kTypes[] = {MPI_INT8_T,  MPI_UINT8_T,  MPI_INT32_T, MPI_UINT32_T,
                                        MPI_INT64_T, MPI_UINT64_T, MPI_FLOAT,   MPI_DOUBLE};
  static_assert(std::size(kTypes) == static_cast<size_t>(DataType::kFloat64) + 1);
  const auto i = static_cast<size_t>(type);
  return i < std::size(kTypes) ? kTypes[i] : MPI_DATATYPE_NULL;
}

MPI_Op ScalarOp(ReduceOp op) {
  static const MPI_Op kOps[] = {MPI_SUM, MPI_MIN, MPI_MAX};
  static_assert(std::size(kOps) == static_cast<size_t>(ReduceOp::kMax) + 1);
  const auto i = static_cast<size_t>(op);
  return i < std::size(kOps) ? kOps[i] : MPI_OP_NULL;
}

// MPI user op for the (value, index) types: the same kernel as the other backends (ties -> smaller index).
template <typename T, ReduceOp kOp>
void LocOp(void* in, void* inout, int* len, MPI_Datatype*) {
  ReduceInto(inout, in, *len, DataTypeOf<ValueIndex<T>>(), kOp);
}

// MPI user op for the 16-bit float types (MPI has no standard fp16 arithmetic): the shared reduction kernel.
template <DataType kType, ReduceOp kOp>
void HalfOp(void* in, void* inout, int* len, MPI_Datatype*) {
  ReduceInto(inout, in, *len, kType, kOp);
}

int ToInt(int64_t v) { return static_cast<int>(v); }  // callers keep v <= max_message_bytes <= INT_MAX

// A point-to-point payload of `bytes` bytes as (count, datatype) with an int count: `bytes` x MPI_BYTE when it fits
// in one block, otherwise one element of a derived type (whole blocks, then the rest). Either way it travels as ONE
// MPI message, so MPI's matching and its truncation check cover the whole payload; chunking it into several
// messages would let a receiver that expects a shorter message take the first chunks and leave the rest behind.
class ByteMessage {
 public:
  ByteMessage(int64_t bytes, int64_t block) {
    if (bytes <= block) {
      count_ = ToInt(bytes);
      return;
    }
    const int64_t blocks = bytes / block;
    const int64_t rest = bytes % block;
    TESSEL_CHECK(blocks <= INT_MAX, "comm: a message of {} bytes needs more than INT_MAX blocks of {} bytes", bytes,
                 block);
    MPI_Datatype piece = MPI_DATATYPE_NULL;
    MPI_Datatype whole = MPI_DATATYPE_NULL;
    MPI_Type_contiguous(ToInt(block), MPI_BYTE, &piece);
    MPI_Type_contiguous(ToInt(blocks), piece, &whole);
    MPI_Type_free(&piece);  // allowed: `whole` keeps what it needs
    if (rest == 0) {
      type_ = whole;
    } else {
      int lengths[2] = {1, ToInt(rest)};
      MPI_Aint displacements[2] = {0, static_cast<MPI_Aint>(blocks * block)};
      MPI_Datatype types[2] = {whole, MPI_BYTE};
      MPI_Type_create_struct(2, lengths, displacements, types, &type_);
      MPI_Type_free(&whole);
    }
    MPI_Type_commit(&type_);
    owned_ = true;
    count_ = 1;
  }
  ~ByteMessage() {
    if (owned_) MPI_Type_free(&type_);
  }
  ByteMessage(const ByteMessage&) = delete;
  ByteMessage& operator=(const ByteMessage&) = delete;

  int count() const { return count_; }
  MPI_Datatype type() const { return type_; }

 private:
  int count_ = 0;
  MPI_Datatype type_ = MPI_BYTE;
  bool owned_ = false;
};

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(MPI_Comm comm, int rank, int size, const MpiOptions& options)
      : Communicator(rank, size), comm_(comm), options_(options), watchdog_(rank, size, options.timeout_seconds) {
    options_.max_message_bytes = std::clamp<int64_t>(options_.max_message_bytes, 16, INT_MAX);
    for (int f = 0; f < 2; ++f) {
      const size_t bytes = f == 0 ? sizeof(ValueIndex<float>) : sizeof(ValueIndex<double>);
      MPI_Type_contiguous(static_cast<int>(bytes), MPI_BYTE, &loc_type_[f]);
      MPI_Type_commit(&loc_type_[f]);
    }
    MPI_Op_create(&LocOp<float, ReduceOp::kMinLoc>, 1, &loc_op_[0][0]);
    MPI_Op_create(&LocOp<float, ReduceOp::kMaxLoc>, 1, &loc_op_[0][1]);
    MPI_Op_create(&LocOp<double, ReduceOp::kMinLoc>, 1, &loc_op_[1][0]);
    MPI_Op_create(&LocOp<double, ReduceOp::kMaxLoc>, 1, &loc_op_[1][1]);
    MPI_Op_create(&HalfOp<DataType::kFloat16, ReduceOp::kSum>, 1, &half_op_[0][0]);
    MPI_Op_create(&HalfOp<DataType::kFloat16, ReduceOp::kMin>, 1, &half_op_[0][1]);
    MPI_Op_create(&HalfOp<DataType::kFloat16, ReduceOp::kMax>, 1, &half_op_[0][2]);
    MPI_Op_create(&HalfOp<DataType::kBFloat16, ReduceOp::kSum>, 1, &half_op_[1][0]);
    MPI_Op_create(&HalfOp<DataType::kBFloat16, ReduceOp::kMin>, 1, &half_op_[1][1]);
    MPI_Op_create(&HalfOp<DataType::kBFloat16, ReduceOp::kMax>, 1, &half_op_[1][2]);
    // Collective like the constructor's caller (MakeMpiCommunicator duplicated comm on every rank just before).
    p2p_comm_ = DupWithin(comm_, options_.timeout_seconds, "point-to-point");
    MPI_Comm_set_errhandler(p2p_comm_, MPI_ERRORS_RETURN);
    watchdog_.Start(DupWithin(comm_, options_.timeout_seconds, "watchdog"));
  }
  ~MpiCommunicator() override {
    if (!MpiInitialized()) return;
    for (auto& ops : loc_op_) {
      for (MPI_Op& op : ops) MPI_Op_free(&op);
    }
    for (auto& ops : half_op_) {
      for (MPI_Op& op : ops) MPI_Op_free(&op);
    }
    for (MPI_Datatype& t : loc_type_) MPI_Type_free(&t);
    watchdog_.Free();
    MPI_Comm_free(&p2p_comm_);
    MPI_Comm_free(&comm_);
  }
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  std::string_view Backend() const override { return "mpi"; }

  // LocalSize: the ranks whose host name hashes like this one's (an allgather under the timeout; neither counted
  // nor a fault point).
  void FindLocalRanks() {
    char name[256] = {};
    gethostname(name, sizeof(name) - 1);
    const uint64_t mine = std::hash<std::string_view>{}(std::string_view(name));
    std::vector<uint64_t> all(static_cast<size_t>(Size()));
    const std::vector<int64_t> sizes(all.size(), static_cast<int64_t>(sizeof(uint64_t)));
    DoAllgatherv(&mine, sizeof(uint64_t), all.data(), sizes).ThrowIfError();
    SetLocalSize(static_cast<int>(std::count(all.begin(), all.end(), mine)));
  }

 protected:
  Status DoAllreduce(void* data, int64_t count, DataType type, ReduceOp op) override {
    watchdog_.Begin(MpiCall::kAllreduce, count * static_cast<int64_t>(DataTypeSize(type)));
    Status s = CheckArguments(1, count, static_cast<int64_t>(type) * 16 + static_cast<int64_t>(op), {});
    if (!s.ok() || count == 0) return s;
    MPI_Datatype dtype = ScalarType(type);
    MPI_Op mpi_op = ScalarOp(op);
    if (IsIndexType(type)) {
      const int f = type == DataType::kFloat64Index ? 1 : 0;
      dtype = loc_type_[f];
      mpi_op = loc_op_[f][op == ReduceOp::kMaxLoc ? 1 : 0];
    } else if (type == DataType::kFloat16 || type == DataType::kBFloat16) {
      dtype = MPI_UINT16_T;  // 2-byte elements; the arithmetic is the user op's
      mpi_op = half_op_[type == DataType::kBFloat16 ? 1 : 0][static_cast<int>(op)];
    }
    const int64_t element = static_cast<int64_t>(DataTypeSize(type));
    const int64_t chunk = std::max<int64_t>(1, options_.max_message_bytes / element);
    auto* p = static_cast<std::byte*>(data);
    for (int64_t off = 0; off < count; off += chunk) {
      const int64_t n = std::min(chunk, count - off);
      MPI_Request r = MPI_REQUEST_NULL;
      s = Check(MPI_Iallreduce(MPI_IN_PLACE, p + off * element, ToInt(n), dtype, mpi_op, comm_, &r), "MPI_Iallreduce");
      if (s.ok()) s = Wait(&r, 1, nullptr, "MPI_Allreduce");
      if (!s.ok()) return s;
    }
    return s;
  }

  Status DoBroadcast(void* data, int64_t bytes, int root) override {
    watchdog_.Begin(MpiCall::kBroadcast, bytes);
    Status s = CheckArguments(2, bytes, root, {});
    if (!s.ok()) return s;
    auto* p = static_cast<std::byte*>(data);
    for (int64_t off = 0; off < bytes; off += options_.max_message_bytes) {
      const int64_t n = std::min(options_.max_message_bytes, bytes - off);
      MPI_Request r = MPI_REQUEST_NULL;
      s = Check(MPI_Ibcast(p + off, ToInt(n), MPI_BYTE, root, comm_, &r), "MPI_Ibcast");
      if (s.ok()) s = Wait(&r, 1, nullptr, "MPI_Bcast");
      if (!s.ok()) return s;
    }
    return s;
  }

  Status DoAllgatherv(const void* send, int64_t send_bytes, void* recv, std::span<const int64_t> recv_bytes) override {
    const std::vector<int64_t> rdispl = Displacements(recv_bytes);
    watchdog_.Begin(MpiCall::kAllgatherv, rdispl.back());
    std::vector<int64_t> mine(static_cast<size_t>(Size()), send_bytes);  // the same block goes to every peer
    Status s = CheckArguments(3, 0, 0, {mine, recv_bytes, /*gather=*/true});
    if (!s.ok()) return s;
    if (rdispl.back() <= options_.max_message_bytes) {  // recv_bytes is the same on every rank: the same path
      std::vector<int> counts = Ints(recv_bytes);
      std::vector<int> displs = Ints(std::span(rdispl).first(recv_bytes.size()));
      MPI_Request r = MPI_REQUEST_NULL;
      s = Check(
          MPI_Iallgatherv(send, ToInt(send_bytes), MPI_BYTE, recv, counts.data(), displs.data(), MPI_BYTE, comm_, &r),
          "MPI_Iallgatherv");
      return s.ok() ? Wait(&r, 1, nullptr, "MPI_Allgatherv") : s;
    }
    const std::vector<int64_t> sdispl(static_cast<size_t>(Size()), 0);
    return Pairwise(static_cast<const std::byte*>(send), mine, sdispl, static_cast<std::byte*>(recv), recv_bytes,
                    rdispl);
  }

  Status DoAlltoallv(const void* send, std::span<const int64_t> send_bytes, void* recv,
                     std::span<const int64_t> recv_bytes) override {
    const std::vector<int64_t> sdispl = Displacements(send_bytes);
    const std::vector<int64_t> rdispl = Displacements(recv_bytes);
    watchdog_.Begin(MpiCall::kAlltoallv, sdispl.back());
    Status s = CheckArguments(4, 0, 0, {send_bytes, recv_bytes, /*gather=*/false});
    if (!s.ok()) return s;
    // Every rank must take the same path, and each sees only its own sizes: agree with one tiny allreduce.
    int split = sdispl.back() > options_.max_message_bytes || rdispl.back() > options_.max_message_bytes ? 1 : 0;
    s = SmallAllreduce(&split, 1, MPI_INT, "MPI_Allreduce (alltoallv path)");
    if (!s.ok()) return s;
    if (split == 0) {
      std::vector<int> scounts = Ints(send_bytes);
      std::vector<int> sdispls = Ints(std::span(sdispl).first(send_bytes.size()));
      std::vector<int> rcounts = Ints(recv_bytes);
      std::vector<int> rdispls = Ints(std::span(rdispl).first(recv_bytes.size()));
      MPI_Request r = MPI_REQUEST_NULL;
      s = Check(MPI_Ialltoallv(send, scounts.data(), sdispls.data(), MPI_BYTE, recv, rcounts.data(), rdispls.data(),
                               MPI_BYTE, comm_, &r),
                "MPI_Ialltoallv");
      return s.ok() ? Wait(&r, 1, nullptr, "MPI_Alltoallv") : s;
    }
    return Pairwise(static_cast<const std::byte*>(send), send_bytes, sdispl, static_cast<std::byte*>(recv), recv_bytes,
                    rdispl);
  }

  Status DoBarrier() override {
    watchdog_.Begin(MpiCall::kBarrier, 0);
    Status s = CheckArguments(5, 0, 0, {});
    if (!s.ok()) return s;
    MPI_Request r = MPI_REQUEST_NULL;
    s = Check(MPI_Ibarrier(comm_, &r), "MPI_Ibarrier");
    return s.ok() ? Wait(&r, 1, nullptr, "MPI_Barrier") : s;
  }

  // Point-to-point: one MPI message per call on p2p_comm_ with the user's tag (check_arguments does not apply:
  // only two ranks take part). MPI_Isend is standard mode: it may complete only once the receive is posted.
  Status DoSend(const void* data, int64_t bytes, int dest, int tag) override {
    CheckThread();
    watchdog_.Begin(MpiCall::kSend, bytes, dest, tag);
    const ByteMessage m(bytes, options_.max_message_bytes);
    MPI_Request r = MPI_REQUEST_NULL;
    const std::string call = fmt::format("MPI_Send ({} bytes to rank {}, tag {})", bytes, dest, tag);
    const Status s = Check(MPI_Isend(data, m.count(), m.type(), dest, tag, p2p_comm_, &r), call);
    return s.ok() ? Wait(&r, 1, nullptr, call) : s;
  }

  Status DoRecv(void* data, int64_t bytes, int source, int tag) override {
    CheckThread();
    watchdog_.Begin(MpiCall::kRecv, bytes, source, tag);
    const ByteMessage m(bytes, options_.max_message_bytes);
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status status{};
    int rc = MPI_Irecv(data, m.count(), m.type(), source, tag, p2p_comm_, &r);
    if (rc == MPI_SUCCESS) rc = WaitCode(&r, 1, &status);
    return Received(rc, status, m, bytes, source, tag, "MPI_Recv");
  }

  Status DoSendRecv(const void* send, int64_t send_bytes, int dest, void* recv, int64_t recv_bytes, int source,
                    int tag) override {
    CheckThread();
    watchdog_.Begin(MpiCall::kSendRecv, send_bytes, dest, tag, source);
    const ByteMessage sm(send_bytes, options_.max_message_bytes);
    const ByteMessage rm(recv_bytes, options_.max_message_bytes);
    MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status status[2]{};
    int rc = MPI_Irecv(recv, rm.count(), rm.type(), source, tag, p2p_comm_, &r[0]);
    if (rc == MPI_SUCCESS) rc = MPI_Isend(send, sm.count(), sm.type(), dest, tag, p2p_comm_, &r[1]);
    if (rc == MPI_SUCCESS) rc = WaitCode(r, 2, status);
    return Received(rc, status[0], rm, recv_bytes, source, tag, "MPI_Sendrecv");
  }

 private:
  // Completes n requests under the watchdog (MpiWatchdog::WaitCode), the call's purpose named should it time out.
  int WaitCode(MPI_Request* requests, int n, MPI_Status* statuses) {
    return watchdog_.WaitCode(requests, n, statuses, CurrentPurpose());
  }
  Status Wait(MPI_Request* requests, int n, MPI_Status* statuses, std::string_view call) {
    return Check(WaitCode(requests, n, statuses), call);
  }

  // A small in-place allreduce on comm_ under the watchdog (argument checks, the alltoallv path).
  Status SmallAllreduce(void* data, int count, MPI_Datatype type, std::string_view call) {
    MPI_Request r = MPI_REQUEST_NULL;
    Status s = Check(MPI_Iallreduce(MPI_IN_PLACE, data, count, type, MPI_MAX, comm_, &r), call);
    return s.ok() ? Wait(&r, 1, nullptr, call) : s;
  }

  // The outcome of a receive: MPI's error (a longer message than expected is MPI_ERR_TRUNCATE), or a shorter
  // message than expected, which MPI accepts and only the received size shows.
  Status Received(int rc, const MPI_Status& status, const ByteMessage& m, int64_t bytes, int source, int tag,
                  std::string_view call) const {
    if (rc != MPI_SUCCESS) {
      return Check(
          rc, fmt::format("{} (rank {} expects {} bytes from rank {} with tag {})", call, Rank(), bytes, source, tag));
    }
    MPI_Count got = 0;
    const int erc = MPI_Get_elements_x(&status, m.type(), &got);
    if (erc != MPI_SUCCESS) return Check(erc, "MPI_Get_elements_x");
    if (got != bytes) {
      return Status::Failed(fmt::format("{}: rank {} expects {} bytes from rank {} with tag {}, but the message has {}",
                                        call, Rank(), bytes, source, tag, got));
    }
    return Status::Ok();
  }

  struct Sizes {
    std::span<const int64_t> send;
    std::span<const int64_t> recv;
    bool gather = false;  // every peer's recv[j] must equal rank j's send[*] (allgatherv) or send[r] (alltoallv)
  };

  // Exclusive prefix sums with the total appended (Size() + 1 entries).
  static std::vector<int64_t> Displacements(std::span<const int64_t> sizes) {
    std::vector<int64_t> d(sizes.size() + 1, 0);
    for (size_t j = 0; j < sizes.size(); ++j) d[j + 1] = d[j] + sizes[j];
    return d;
  }
  static std::vector<int> Ints(std::span<const int64_t> v) {
    std::vector<int> out(v.size());
    for (size_t j = 0; j < v.size(); ++j) out[j] = ToInt(v[j]);
    return out;
  }

  // FUNNELED allows MPI calls from the initialising thread only: a local contract, so it throws.
  static void CheckThread() {
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (level >= MPI_THREAD_SERIALIZED) return;
    int is_main = 0;
    MPI_Is_thread_main(&is_main);
    TESSEL_CHECK(is_main != 0,
                 "comm: an MPI collective was called from a thread other than the one that "
                 "initialised MPI (MPI_THREAD_FUNNELED); call collectives from the main thread");
  }

  // With options_.check_arguments: the ranks agree on (kind, a, b) and the v-sizes mirror each other, or every
  // rank gets the same failed Status.
  Status CheckArguments(int64_t kind, int64_t a, int64_t b, Sizes sizes) {
    CheckThread();
    if (!options_.check_arguments) return Status::Ok();
    int64_t v[6] = {kind, a, b, -kind, -a, -b};
    Status s = SmallAllreduce(v, 6, MPI_INT64_T, "MPI_Allreduce (check)");
    if (!s.ok()) return s;
    if (v[0] != -v[3] || v[1] != -v[4] || v[2] != -v[5]) {
      return Status::Failed(
          fmt::format("ranks called different collectives or passed different sizes, roots or "
                      "ops (rank {} called collective kind {} with ({}, {}))",
                      Rank(), kind, a, b));
    }
    if (sizes.send.empty()) return Status::Ok();
    // What each peer sends to this rank, to compare with what this rank expects.
    std::vector<int64_t> incoming(static_cast<size_t>(Size()));
    MPI_Request r = MPI_REQUEST_NULL;
    s = Check(MPI_Ialltoall(sizes.send.data(), 1, MPI_INT64_T, incoming.data(), 1, MPI_INT64_T, comm_, &r),
              "MPI_Alltoall (check)");
    if (s.ok()) s = Wait(&r, 1, nullptr, "MPI_Alltoall (check)");
    if (!s.ok()) return s;
    int64_t bad = -1;  // the first peer whose size disagrees, or -1
    for (size_t j = 0; j < incoming.size() && bad < 0; ++j) {
      if (incoming[j] != sizes.recv[j]) bad = static_cast<int64_t>(j);
    }
    int64_t worst[2] = {bad >= 0 ? 1 : 0, bad};
    s = SmallAllreduce(worst, 2, MPI_INT64_T, "MPI_Allreduce (check)");
    if (!s.ok()) return s;
    if (worst[0] != 0) {
      return Status::Failed(fmt::format(
          "{}: the receive sizes do not mirror the send sizes{}", sizes.gather ? "Allgatherv" : "Alltoallv",
          bad >= 0 ? fmt::format(" (rank {} expects {} bytes from rank {}, which sends "
                                 "{})",
                                 Rank(), sizes.recv[static_cast<size_t>(bad)], bad, incoming[static_cast<size_t>(bad)])
                   : std::string(" on another rank")));
    }
    return Status::Ok();
  }

  // Point-to-point exchange in messages of at most max_message_bytes (MPI keeps same-tag messages between two
  // ranks in order, so chunk k matches receive k). For transfers whose sizes or offsets exceed an int.
  Status Pairwise(const std::byte* send, std::span<const int64_t> send_bytes, std::span<const int64_t> sdispl,
                  std::byte* recv, std::span<const int64_t> recv_bytes, std::span<const int64_t> rdispl) {
    const int64_t chunk = options_.max_message_bytes;
    std::vector<MPI_Request> requests;
    Status s;
    // One MPI_Irecv or MPI_Isend (`post`) per chunk of every peer's bytes: the receives first, then the sends.
    const auto post_all = [&](auto* base, std::span<const int64_t> bytes, std::span<const int64_t> displ, auto post,
                              std::string_view call) {
      for (int j = 0; j < Size() && s.ok(); ++j) {
        if (j == Rank()) continue;
        const auto jj = static_cast<size_t>(j);
        for (int64_t off = 0; off < bytes[jj] && s.ok(); off += chunk) {
          requests.emplace_back();
          s = Check(post(base + displ[jj] + off, ToInt(std::min(chunk, bytes[jj] - off)), MPI_BYTE, j, kPairwiseTag,
                         comm_, &requests.back()),
                    call);
        }
      }
    };
    post_all(recv, recv_bytes, rdispl, MPI_Irecv, "MPI_Irecv");
    post_all(send, send_bytes, sdispl, MPI_Isend, "MPI_Isend");
    if (!s.ok()) return s;
    const auto me = static_cast<size_t>(Rank());
    if (send_bytes[me] > 0) std::memcpy(recv + rdispl[me], send + sdispl[me], static_cast<size_t>(send_bytes[me]));
    return Wait(requests.data(), static_cast<int>(requests.size()), nullptr, "MPI_Waitall");
  }

  MPI_Comm comm_;  // collectives; MpiHandle hands it to libraries that take an MPI_Comm

 public:
  const MPI_Comm* handle() const { return &comm_; }

 private:
  MPI_Comm p2p_comm_ = MPI_COMM_NULL;  // point-to-point messages only: their tags are the callers'
  MpiOptions options_;
  MpiWatchdog watchdog_;  // the call in progress, every wait polled under the timeout (its own control communicator)
  MPI_Datatype loc_type_[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};  // ValueIndex<float>, ValueIndex<double>
  MPI_Op loc_op_[2][2] = {};                                           // [float|double][min|max]
  MPI_Op half_op_[2][3] = {};                                          // [fp16|bf16][sum|min|max]
};

}  // namespace

bool MpiInitialized() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}

void EnsureMpiInitialized() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  TESSEL_CHECK(finalized == 0, "comm: MPI was already finalised; create communicators before the program ends");
  if (initialized != 0) {
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    TESSEL_CHECK(level >= MPI_THREAD_FUNNELED,
                 "comm: MPI was initialised at thread level {}, but tessel needs "
                 "MPI_THREAD_FUNNELED or better (oneTBB runs worker threads); use MPI_Init_thread",
                 level);
    return;
  }
  int provided = MPI_THREAD_SINGLE;
  const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  TESSEL_CHECK(rc == MPI_SUCCESS, "comm: MPI_Init_thread failed: {}", MpiErrorString(rc));
  g_owned = true;
  std::atexit(FinalizeMpiIfOwned);  // a program that never calls it still finalises when it exits normally
  TESSEL_CHECK(provided >= MPI_THREAD_FUNNELED,
               "comm: the MPI library provides thread level {}, but tessel needs "
               "MPI_THREAD_FUNNELED (oneTBB runs worker threads); use an MPI built with thread support",
               provided);
}

void FinalizeMpiIfOwned() {
  if (!g_owned || !MpiInitialized()) return;
  // MPI_Finalize waits for every rank: one stopped after its last call would hold the others there for ever. Under a
  // timeout, a barrier polled within it comes first, and a rank that never arrives ends the job with a message.
  if (g_finalize_timeout > 0) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    (void)fault::FaultPoint("finalize", rank);  // TESSEL_FAULT tests (core/fault_inject.h)
    MPI_Request request = MPI_REQUEST_NULL;
    if (MPI_Ibarrier(MPI_COMM_WORLD, &request) == MPI_SUCCESS && !PollWithin(&request, g_finalize_timeout)) {
      AbortJob(
          fmt::format("comm: rank {} waited {} s (--timeout) at the end of the job: not every rank finished (a "
                      "rank stopped after its last call); ending the job",
                      rank, g_finalize_timeout));
    }
  }
  MPI_Finalize();
}

const void* MpiHandle(const Communicator& comm) {
  const auto* mpi = dynamic_cast<const MpiCommunicator*>(&comm);
  TESSEL_CHECK(mpi != nullptr, "comm: the {} communicator has no MPI_Comm (run under mpirun)", comm.Backend());
  return mpi->handle();
}

std::unique_ptr<Communicator> MakeMpiCommunicator(const MpiOptions& options) {
  TESSEL_CHECK(std::isfinite(options.timeout_seconds) && options.timeout_seconds >= 0,
               "comm: MpiOptions::timeout_seconds = {} must be a finite number of seconds >= 0 (0 = no limit)",
               options.timeout_seconds);
  EnsureMpiInitialized();
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  (void)fault::FaultPoint("start", world_rank);  // TESSEL_FAULT tests (core/fault_inject.h)
  g_finalize_timeout = options.timeout_seconds;
  MPI_Comm comm = DupWithin(MPI_COMM_WORLD, options.timeout_seconds, "creating the communicator");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  log::SetRank(rank, size);
  auto c = std::make_unique<MpiCommunicator>(comm, rank, size, options);
  c->FindLocalRanks();
  return c;
}

void AbortJob(std::string_view message, int exit_code) {
  const bool mpi = MpiInitialized();
  int rank = 0;
  if (mpi) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fflush(stdout);
  if (mpi) {
    std::fprintf(stderr, "error: [rank %d] %.*s\n", rank, static_cast<int>(message.size()), message.data());
  } else {
    std::fprintf(stderr, "error: %.*s\n", static_cast<int>(message.size()), message.data());
  }
  std::fflush(stderr);
  if (mpi) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::exit(exit_code);
}

int RunMain(const std::function<int(Communicator&)>& fn, const MpiOptions& options) {
  std::unique_ptr<Communicator> comm;  // outlives the handler: no collective MPI_Comm_free while aborting
  int status = 0;
  try {
    comm = MakeMpiCommunicator(options);
    status = fn(*comm);
  } catch (const std::bad_alloc&) {
    AbortJob(PrintableText(memory::OutOfMemoryMessage()));  // what was running, the memory there was, the fix
  } catch (const std::exception& e) {
    AbortJob(PrintableText(e.what()));
  } catch (...) {
    AbortJob("unknown exception");
  }
  comm.reset();
  FinalizeMpiIfOwned();
  return status;
}

}  // namespace tessel::comm
