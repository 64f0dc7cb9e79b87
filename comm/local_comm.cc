// The one-rank local communicator: every collective is a copy or a no-op, so single-process runs use the same
// code paths as distributed ones.
#include <cstring>

#include "comm/communicator.h"

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
};

}  // namespace

std::unique_ptr<Communicator> MakeLocalCommunicator() { return std::make_unique<LocalCommunicator>(); }

}  // namespace tessel::comm
