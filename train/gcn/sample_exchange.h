// The distributed sampler on this engine's communicator and partition format: SampleExchange over a
// comm::Communicator (counted under sampling::kSamplingPurpose), and the sampler's OwnedGraph view of a LocalPart.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "comm/communicator.h"
#include "partition/partition_build.h"
#include "sampling/dist_sampler.h"

namespace tessel::train::gcn {

// sampling::SampleExchange as comm::Communicator::AlltoallvRaw under kSamplingPurpose; keeps a reference to `comm`.
class CommSampleExchange final : public sampling::SampleExchange {
 public:
  explicit CommSampleExchange(comm::Communicator& comm) : comm_(comm) {}
  int32_t Rank() const override;
  int32_t Size() const override;
  void Alltoallv(const void* send, std::span<const int64_t> send_bytes, void* recv,
                 std::span<const int64_t> recv_bytes) override;
  uint64_t SentBytes() const override;  // comm.Bytes().Bytes(kSamplingPurpose)

 private:
  comm::Communicator& comm_;
};

// Views of `part`'s local CSR and halo map (host arrays; `part` must outlive the view).
sampling::OwnedGraph OwnedGraphOf(const partition::LocalPart& part);

// The distributed sampler of `part` on `comm` (both must outlive it). COLLECTIVE (see DistNeighborSampler).
sampling::DistNeighborSampler MakeDistSampler(const partition::LocalPart& part, std::vector<int64_t> offsets,
                                              comm::Communicator& comm, sampling::SamplerOptions options,
                                              sampling::SkewOptions skew = {},
                                              sampling::VirtualParts virtual_parts = {});

}  // namespace tessel::train::gcn
