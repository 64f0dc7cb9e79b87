// The one-rank local communicator: every collective is a copy or a no-op, so single-process runs use the same
// code paths as distributed ones. Point-to-point messages can only go to itself, which Communicator handles.
#include <cstring>

#include "comm/communicator.h"
#include "core/error.h"

namespace tessel::comm {
namespace {

class LocalCommunicator final : public Communicator {
 public:
  LocalCommunicator() : Communicator(0, 1) {}
  std::string_view Backend() const override { return "local"; }

 protected:
  Status DoAllreduce(void*, int64_t, DataType, ReduceOp) override { return Status::Ok(); }
  Status DoBroadcast(void*, int64_t, int) override { return Status::Ok(); }
  Status DoAllgatherv(const void* send, int64_t send_bytes, void* recv, std::span<const int64_t>) override {
    if (send_bytes > 0) std::memmove(recv, send, static_cast<size_t>(send_bytes));
    return Status::Ok();
  }
  Status DoAlltoallv(const void* send, std::span<const int64_t> send_bytes, void* recv,
                     std::span<const int64_t>) override {
    if (send_bytes[0] > 0) std::memmove(recv, send, static_cast<size_t>(send_bytes[0]));
    return Status::Ok();
  }
  Status DoBarrier() override { return Status::Ok(); }
  // The only rank is this one, and Communicator queues messages to itself without the backend.
  Status DoSend(const void*, int64_t, int, int) override { return NoPeer(); }
  Status DoRecv(void*, int64_t, int, int) override { return NoPeer(); }
  Status DoSendRecv(const void*, int64_t, int, void*, int64_t, int, int) override { return NoPeer(); }

 private:
  [[noreturn]] static Status NoPeer() { throw Error("comm: the local backend has no peer to message (one rank)"); }
};

}  // namespace

std::unique_ptr<Communicator> MakeLocalCommunicator() { return std::make_unique<LocalCommunicator>(); }

}  // namespace tessel::comm
