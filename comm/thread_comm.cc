// Thread backend: ranks are threads sharing one Group (a generation barrier plus one argument slot per rank).
// Each collective: post the arguments, barrier, check that all ranks agree and read the peers' buffers, barrier.
#include "comm/thread_comm.h"

#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"

namespace tessel::comm {
namespace {

enum class Kind : uint8_t { kAllreduce, kBroadcast, kAllgatherv, kAlltoallv, kBarrier };

std::string_view KindName(Kind k) {
  switch (k) {
    case Kind::kAllreduce:
      return "Allreduce";
    case Kind::kBroadcast:
      return "Broadcast";
    case Kind::kAllgatherv:
      return "Allgatherv";
    case Kind::kAlltoallv:
      return "Alltoallv";
    case Kind::kBarrier:
      return "Barrier";
  }
  return "?";
}

// The arguments one rank passed to the current collective; peers read them between the two barriers.
struct Slot {
  Kind kind = Kind::kBarrier;
  const void* send = nullptr;  // allgatherv/alltoallv send buffer; allreduce/broadcast: the in-place buffer
  int64_t count = 0;           // allreduce elements, broadcast bytes, allgatherv send bytes
  DataType type = DataType::kUInt8;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;
  std::span<const int64_t> send_sizes;  // alltoallv
  std::span<const int64_t> recv_sizes;  // allgatherv, alltoallv
};

// Shared by the ranks of one ThreadGroup::Run.
class Group {
 public:
  explicit Group(int size) : size_(size), slots_(static_cast<size_t>(size)) {}

  Slot& slot(int rank) { return slots_[static_cast<size_t>(rank)]; }
  int size() const { return size_; }

  // Blocks until every rank arrives; a failed Status as soon as any rank has failed or returned.
  Status Sync() {
    std::unique_lock lock(mu_);
    if (failed_) return Status::Failed(failure_);
    if (left_rank_ >= 0) return Status::Failed(LeftMessage());
    const uint64_t generation = generation_;
    if (++arrived_ == size_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return Status::Ok();
    }
    cv_.wait(lock, [&] { return generation_ != generation || failed_ || left_rank_ >= 0; });
    if (generation_ != generation) return Status::Ok();
    return Status::Failed(failed_ ? failure_ : LeftMessage());
  }

  // The first failure wins; later ones (usually the echoes "rank r failed: ...") are dropped.
  void Fail(int rank, std::string_view what) {
    std::lock_guard lock(mu_);
    if (!failed_) {
      failed_ = true;
      failure_ = rank >= 0 ? fmt::format("rank {} failed: {}", rank, what) : std::string(what);
    }
    cv_.notify_all();
  }
  void Leave(int rank) {
    std::lock_guard lock(mu_);
    if (left_rank_ < 0) left_rank_ = rank;
    cv_.notify_all();
  }
  bool failed() const {
    std::lock_guard lock(mu_);
    return failed_;
  }
  std::string failure() const {
    std::lock_guard lock(mu_);
    return failure_;
  }

 private:
  std::string LeftMessage() const {
    return fmt::format(
        "rank {} returned while other ranks wait in a collective (the ranks called different "
        "sequences of collectives)",
        left_rank_);
  }

  const int size_;
  std::vector<Slot> slots_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  bool failed_ = false;
  std::string failure_;
  int left_rank_ = -1;
};

class ThreadCommunicator final : public Communicator {
 public:
  ThreadCommunicator(int rank, Group* group) : Communicator(rank, group->size()), group_(group) {}
  std::string_view Backend() const override { return "thread"; }

 protected:
  Status DoAllreduce(void* data, int64_t count, DataType type, ReduceOp op) override {
    const size_t bytes = static_cast<size_t>(count) * DataTypeSize(type);
    std::vector<std::byte> acc(bytes);  // allocated before the barrier: nothing throws while peers read
    Slot& me = Post(Kind::kAllreduce, data, count);
    me.type = type;
    me.op = op;
    return Exchange(
        [&] {
          // Every rank reduces in rank order, so all ranks get bit-identical results.
          if (bytes > 0) std::memcpy(acc.data(), group_->slot(0).send, bytes);
          for (int j = 1; j < Size(); ++j) ReduceInto(acc.data(), group_->slot(j).send, count, type, op);
        },
        [&] {
          if (bytes > 0) std::memcpy(data, acc.data(), bytes);
        });
  }

  Status DoBroadcast(void* data, int64_t bytes, int root) override {
    Post(Kind::kBroadcast, data, bytes).root = root;
    return Exchange(
        [&] {
          if (Rank() != root && bytes > 0) std::memcpy(data, group_->slot(root).send, static_cast<size_t>(bytes));
        },
        [] {});
  }

  Status DoAllgatherv(const void* send, int64_t send_bytes, void* recv, std::span<const int64_t> recv_bytes) override {
    Post(Kind::kAllgatherv, send, send_bytes).recv_sizes = recv_bytes;
    return Exchange(
        [&] {
          auto* out = static_cast<std::byte*>(recv);
          for (int j = 0; j < Size(); ++j) {
            const Slot& peer = group_->slot(j);
            if (peer.count > 0) std::memcpy(out, peer.send, static_cast<size_t>(peer.count));
            out += peer.count;
          }
        },
        [] {});
  }

  Status DoAlltoallv(const void* send, std::span<const int64_t> send_bytes, void* recv,
                     std::span<const int64_t> recv_bytes) override {
    Slot& me = Post(Kind::kAlltoallv, send, 0);
    me.send_sizes = send_bytes;
    me.recv_sizes = recv_bytes;
    return Exchange(
        [&] {
          auto* out = static_cast<std::byte*>(recv);
          for (int j = 0; j < Size(); ++j) {
            const Slot& peer = group_->slot(j);
            int64_t offset = 0;
            for (int q = 0; q < Rank(); ++q) offset += peer.send_sizes[static_cast<size_t>(q)];
            const int64_t n = peer.send_sizes[static_cast<size_t>(Rank())];
            if (n > 0) std::memcpy(out, static_cast<const std::byte*>(peer.send) + offset, static_cast<size_t>(n));
            out += n;
          }
        },
        [] {});
  }

  Status DoBarrier() override {
    Post(Kind::kBarrier, nullptr, 0);
    return Exchange([] {}, [] {});
  }

 private:
  // Resets this rank's slot for a new collective.
  Slot& Post(Kind kind, const void* send, int64_t count) {
    Slot& me = group_->slot(Rank());
    me = Slot();
    me.kind = kind;
    me.send = send;
    me.count = count;
    return me;
  }

  // Barrier; if the ranks' arguments agree, read(); barrier (peers' buffers stay valid until here); then finish().
  template <typename Read, typename Finish>
  Status Exchange(Read&& read, Finish&& finish) {
    Status s = group_->Sync();
    if (!s.ok()) return s;
    const std::string mismatch = Mismatch();  // the same verdict on every rank: all read the same slots
    if (mismatch.empty()) read();
    s = group_->Sync();
    if (!s.ok()) return s;
    if (!mismatch.empty()) return Status::Failed(mismatch);
    finish();
    return Status::Ok();
  }

  // Empty when every rank called the same collective with matching arguments; otherwise what differs.
  std::string Mismatch() const {
    const Slot& first = group_->slot(0);
    for (int j = 1; j < Size(); ++j) {
      const Slot& s = group_->slot(j);
      if (s.kind != first.kind) {
        return fmt::format("ranks called different collectives: rank 0 {}, rank {} {}", KindName(first.kind), j,
                           KindName(s.kind));
      }
      if (first.kind == Kind::kAllreduce && (s.count != first.count || s.type != first.type || s.op != first.op)) {
        return fmt::format("Allreduce arguments differ: rank 0 has {} x {} ({}), rank {} has {} x {} ({})", first.count,
                           DataTypeName(first.type), ReduceOpName(first.op), j, s.count, DataTypeName(s.type),
                           ReduceOpName(s.op));
      }
      if (first.kind == Kind::kBroadcast && (s.count != first.count || s.root != first.root)) {
        return fmt::format(
            "Broadcast arguments differ: rank 0 has {} bytes from root {}, rank {} has {} bytes "
            "from root {}",
            first.count, first.root, j, s.count, s.root);
      }
    }
    for (int r = 0; r < Size() && (first.kind == Kind::kAllgatherv || first.kind == Kind::kAlltoallv); ++r) {
      for (int j = 0; j < Size(); ++j) {
        const int64_t expected = group_->slot(r).recv_sizes[static_cast<size_t>(j)];
        const int64_t sent = first.kind == Kind::kAllgatherv ? group_->slot(j).count
                                                             : group_->slot(j).send_sizes[static_cast<size_t>(r)];
        if (expected != sent) {
          return fmt::format("{}: rank {} expects {} bytes from rank {}, which sends {}", KindName(first.kind), r,
                             expected, j, sent);
        }
      }
    }
    return {};
  }

  Group* group_;
};

}  // namespace

void ThreadGroup::Run(int num_ranks, const std::function<void(Communicator&)>& fn) {
  TESSEL_CHECK(num_ranks >= 1 && num_ranks <= kMaxRanks, "comm: ThreadGroup needs 1 to {} ranks, got {}", kMaxRanks,
               num_ranks);
  Group group(num_ranks);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(num_ranks));
  try {
    for (int r = 0; r < num_ranks; ++r) {
      threads.emplace_back([&group, &fn, r] {
        try {
          ThreadCommunicator comm(r, &group);
          fn(comm);
          group.Leave(r);
        } catch (const std::exception& e) {
          group.Fail(r, e.what());
        } catch (...) {
          group.Fail(r, "unknown exception");
        }
      });
    }
  } catch (const std::exception& e) {  // could not start a thread: release the ranks already running
    group.Fail(-1, fmt::format("comm: could not start {} rank threads: {}", num_ranks, e.what()));
  }
  for (std::thread& t : threads) t.join();
  if (group.failed()) throw Error(group.failure());
}

}  // namespace tessel::comm
