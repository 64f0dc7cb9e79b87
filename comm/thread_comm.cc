// Thread backend: ranks are threads sharing one Group (a generation barrier, one argument slot per rank, and
// FIFO mailboxes per (source, destination, tag) for point-to-point messages).
// Each collective: post the arguments, barrier, check that all ranks agree and read the peers' buffers, barrier.
// A send copies the payload into the destination's mailbox and returns; a receive waits for it.
#include "comm/thread_comm.h"

#include <array>
#include <chrono>
#include <cmath>
#include <compare>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/name_table.h"

namespace tessel::comm {
namespace {

enum class Kind : uint8_t { kAllreduce, kBroadcast, kAllgatherv, kAlltoallv, kBarrier };

constexpr std::array<std::string_view, 5> kKindNames{"Allreduce", "Broadcast", "Allgatherv", "Alltoallv", "Barrier"};
static_assert(kKindNames.size() == static_cast<size_t>(Kind::kBarrier) + 1);
std::string_view KindName(Kind k) { return NameAt(kKindNames, k, "?"); }

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
  std::string_view purpose;             // for the timeout message
};

// Where a rank is, for deadlock detection: running, waiting in a collective's barrier, or waiting for a message.
struct Waiting {
  enum class What : uint8_t { kRunning, kSync, kRecv } what = What::kRunning;
  uint64_t generation = 0;  // kSync: the barrier generation it waits to end
  int source = 0;           // kRecv
  int tag = 0;              // kRecv
};

// The mailbox of one (source, destination, tag): messages oldest first.
struct MailKey {
  int source = 0;
  int dest = 0;
  int tag = 0;
  auto operator<=>(const MailKey&) const = default;
};

// Shared by the ranks of one ThreadGroup::Run.
class Group {
 public:
  Group(int size, double timeout_seconds)
      : size_(size),
        timeout_(timeout_seconds),
        slots_(static_cast<size_t>(size)),
        left_(static_cast<size_t>(size), false),
        waiting_(static_cast<size_t>(size)),
        recv_cv_(std::make_unique<std::condition_variable[]>(static_cast<size_t>(size))) {}

  Slot& slot(int rank) { return slots_[static_cast<size_t>(rank)]; }
  int size() const { return size_; }

  // Blocks until every rank arrives; a failed Status as soon as any rank has failed or returned.
  Status Sync(int rank) {
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
    Waiting& me = waiting_[static_cast<size_t>(rank)];
    me = {.what = Waiting::What::kSync, .generation = generation};
    FailIfDeadlocked();
    const auto woken = [&] { return generation_ != generation || failed_ || left_rank_ >= 0; };
    if (timeout_ > 0) {
      if (!cv_.wait_for(lock, Timeout(), woken)) FailLocked(-1, SyncTimeoutMessage(rank));
    } else {
      cv_.wait(lock, woken);
    }
    me = {};
    if (generation_ != generation) return Status::Ok();
    return Status::Failed(failed_ ? failure_ : LeftMessage());
  }

  // Buffered: copies the payload into dest's mailbox. Fails when the group failed or dest has returned (the
  // message could never be received).
  Status Send(int source, int dest, int tag, const void* data, int64_t bytes) {
    const auto* p = static_cast<const std::byte*>(data);
    std::vector<std::byte> message(p, p + bytes);  // copied before locking: peers keep running meanwhile
    std::lock_guard lock(mu_);
    if (failed_) return Status::Failed(failure_);
    if (left_[static_cast<size_t>(dest)]) {
      return Status::Failed(
          fmt::format("rank {} sends to rank {} (tag {}), which has returned: the message would never be received",
                      source, dest, tag));
    }
    mail_[MailKey{source, dest, tag}].push_back(std::move(message));
    recv_cv_[static_cast<size_t>(dest)].notify_one();  // only dest's own thread waits on its variable
    return Status::Ok();
  }

  // Waits for the oldest message from source with tag, or a failure: the group failed (a rank threw, or every rank
  // waits for another), or source returned with no such message pending.
  Status Recv(int source, int dest, int tag, void* data, int64_t bytes) {
    std::unique_lock lock(mu_);
    const MailKey key{source, dest, tag};
    Waiting& me = waiting_[static_cast<size_t>(dest)];
    const auto deadline = std::chrono::steady_clock::now() + Timeout();
    for (;;) {
      if (failed_) return Status::Failed(failure_);
      auto it = mail_.find(key);
      if (it != mail_.end() && !it->second.empty()) {
        const std::vector<std::byte> message = std::move(it->second.front());
        it->second.pop_front();
        lock.unlock();
        if (static_cast<int64_t>(message.size()) != bytes) {
          return Status::Failed(
              fmt::format("RecvRaw: rank {} expects {} bytes from rank {} with tag {}, but the message has {}", dest,
                          bytes, source, tag, message.size()));
        }
        if (bytes > 0) std::memcpy(data, message.data(), static_cast<size_t>(bytes));
        return Status::Ok();
      }
      if (left_[static_cast<size_t>(source)]) {
        return Status::Failed(fmt::format(
            "rank {} returned with no message pending for rank {} with tag {} (it sent fewer messages than rank {} "
            "receives)",
            source, dest, tag, dest));
      }
      me = {.what = Waiting::What::kRecv, .source = source, .tag = tag};
      FailIfDeadlocked();
      if (!failed_ && timeout_ > 0) {
        if (recv_cv_[static_cast<size_t>(dest)].wait_until(lock, deadline) == std::cv_status::timeout &&
            !HasMail(source, dest, tag) && !failed_ && !left_[static_cast<size_t>(source)]) {
          FailLocked(-1, fmt::format("comm: rank {} waited {:g} s for a message from rank {} with tag {}, but {} (it "
                                     "never sent it, or it is stalled); raise ThreadOptions::timeout_seconds if a step "
                                     "legitimately takes longer",
                                     dest, timeout_, source, tag, Describe(source)));
        }
      } else if (!failed_) {
        recv_cv_[static_cast<size_t>(dest)].wait(lock);
      }
      me = {};
    }
  }

  // The first failure wins; later ones (usually the echoes "rank r failed: ...") are dropped.
  void Fail(int rank, std::string_view what) {
    std::lock_guard lock(mu_);
    FailLocked(rank, what);
  }
  void Leave(int rank) {
    std::lock_guard lock(mu_);
    if (left_rank_ < 0) left_rank_ = rank;
    left_[static_cast<size_t>(rank)] = true;
    NotifyAll();
    FailIfDeadlocked();
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
  void NotifyAll() {
    cv_.notify_all();
    for (int r = 0; r < size_; ++r) recv_cv_[static_cast<size_t>(r)].notify_all();
  }
  void FailLocked(int rank, std::string_view what) {
    if (!failed_) {
      failed_ = true;
      failure_ = rank >= 0 ? fmt::format("rank {} failed: {}", rank, what) : std::string(what);
    }
    NotifyAll();
  }

  // Called (under the lock) whenever a rank is about to wait or returns: when no rank can make progress any more —
  // every rank has returned, waits in a barrier that cannot end, or waits for a message nobody will send — the
  // group fails with a description instead of hanging. Only other ranks' actions wake a waiting rank, so when all
  // are waiting none will.
  void FailIfDeadlocked() {
    if (failed_) return;
    bool any_recv = false;
    for (int r = 0; r < size_; ++r) {
      if (left_[static_cast<size_t>(r)]) continue;
      const Waiting& w = waiting_[static_cast<size_t>(r)];
      if (w.what == Waiting::What::kRunning) return;
      if (w.what == Waiting::What::kSync && (w.generation != generation_ || left_rank_ >= 0)) return;  // will wake
      if (w.what == Waiting::What::kRecv) {
        if (left_[static_cast<size_t>(w.source)] || HasMail(w.source, r, w.tag)) return;  // will wake
        any_recv = true;
      }
    }
    if (!any_recv) return;  // all in the barrier: the last one to arrive ends it
    std::string who;
    for (int r = 0; r < size_; ++r) {
      const Waiting& w = waiting_[static_cast<size_t>(r)];
      if (!who.empty()) who += ", ";
      if (left_[static_cast<size_t>(r)]) {
        who += fmt::format("rank {} returned", r);
      } else if (w.what == Waiting::What::kSync) {
        who += fmt::format("rank {} waits in a collective", r);
      } else {
        who += fmt::format("rank {} waits for a message from rank {} with tag {}", r, w.source, w.tag);
      }
    }
    FailLocked(-1, fmt::format("deadlock: no rank can go on ({})", who));
  }
  bool HasMail(int source, int dest, int tag) const {
    auto it = mail_.find(MailKey{source, dest, tag});
    return it != mail_.end() && !it->second.empty();
  }

  std::chrono::steady_clock::duration Timeout() const {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_));
  }

  // What rank r is doing now (under the lock), for timeout messages.
  std::string Describe(int r) const {
    const Waiting& w = waiting_[static_cast<size_t>(r)];
    if (left_[static_cast<size_t>(r)]) return fmt::format("rank {} has returned", r);
    switch (w.what) {
      case Waiting::What::kRunning:
        return fmt::format("rank {} is running outside any communicator call", r);
      case Waiting::What::kSync:
        return w.generation == generation_ ? fmt::format("rank {} waits in this collective", r)
                                           : fmt::format("rank {} waits in another collective", r);
      case Waiting::What::kRecv:
        return fmt::format("rank {} waits for a message from rank {} with tag {}", r, w.source, w.tag);
    }
    return fmt::format("rank {}", r);
  }

  // The timeout of a collective: the ranks that did not arrive, and what they do instead.
  std::string SyncTimeoutMessage(int rank) const {
    std::string missing;
    std::string doing;
    for (int r = 0; r < size_; ++r) {
      const Waiting& w = waiting_[static_cast<size_t>(r)];
      if (w.what == Waiting::What::kSync && w.generation == generation_ && !left_[static_cast<size_t>(r)]) continue;
      missing += fmt::format("{}{}", missing.empty() ? "" : ", ", r);
      doing += fmt::format("; {}", Describe(r));
    }
    const Slot& me = slots_[static_cast<size_t>(rank)];
    return fmt::format(
        "comm: rank {} waited {:g} s in {} (purpose \"{}\") but rank(s) {} did not arrive{}; raise "
        "ThreadOptions::timeout_seconds if a step legitimately takes longer",
        rank, timeout_, KindName(me.kind), me.purpose, missing, doing);
  }

  std::string LeftMessage() const {
    return fmt::format(
        "rank {} returned while other ranks wait in a collective (the ranks called different "
        "sequences of collectives)",
        left_rank_);
  }

  const int size_;
  const double timeout_;  // seconds a rank waits in a collective or a receive; 0 = no limit
  std::vector<Slot> slots_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  bool failed_ = false;
  std::string failure_;
  int left_rank_ = -1;            // the first rank that returned (collectives fail once one has)
  std::vector<bool> left_;        // every rank that returned (a receive from it fails)
  std::vector<Waiting> waiting_;  // by rank
  std::map<MailKey, std::deque<std::vector<std::byte>>> mail_;
  std::unique_ptr<std::condition_variable[]> recv_cv_;  // by rank: wakes that rank's receive
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

  Status DoSend(const void* data, int64_t bytes, int dest, int tag) override {
    return group_->Send(Rank(), dest, tag, data, bytes);
  }
  Status DoRecv(void* data, int64_t bytes, int source, int tag) override {
    return group_->Recv(source, Rank(), tag, data, bytes);
  }
  // Sends are buffered, so send-then-receive cannot deadlock.
  Status DoSendRecv(const void* send, int64_t send_bytes, int dest, void* recv, int64_t recv_bytes, int source,
                    int tag) override {
    Status s = group_->Send(Rank(), dest, tag, send, send_bytes);
    if (!s.ok()) return s;
    return group_->Recv(source, Rank(), tag, recv, recv_bytes);
  }

 private:
  // Resets this rank's slot for a new collective.
  Slot& Post(Kind kind, const void* send, int64_t count) {
    Slot& me = group_->slot(Rank());
    me = Slot();
    me.kind = kind;
    me.send = send;
    me.count = count;
    me.purpose = CurrentPurpose();
    return me;
  }

  // Barrier; if the ranks' arguments agree, read(); barrier (peers' buffers stay valid until here); then finish().
  template <typename Read, typename Finish>
  Status Exchange(Read&& read, Finish&& finish) {
    Status s = group_->Sync(Rank());
    if (!s.ok()) return s;
    const std::string mismatch = Mismatch();  // the same verdict on every rank: all read the same slots
    if (mismatch.empty()) read();
    s = group_->Sync(Rank());
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

void ThreadGroup::Run(int num_ranks, const std::function<void(Communicator&)>& fn, const ThreadOptions& options) {
  TESSEL_CHECK(num_ranks >= 1 && num_ranks <= kMaxRanks, "comm: ThreadGroup needs 1 to {} ranks, got {}", kMaxRanks,
               num_ranks);
  TESSEL_CHECK(std::isfinite(options.timeout_seconds) && options.timeout_seconds >= 0,
               "comm: ThreadOptions::timeout_seconds = {} must be a finite number of seconds >= 0 (0 = no limit)",
               options.timeout_seconds);
  Group group(num_ranks, options.timeout_seconds);
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
