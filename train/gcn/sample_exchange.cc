// CommSampleExchange, OwnedGraphOf and MakeDistSampler (sample_exchange.h): the distributed sampler wired to
// comm::Communicator and partition::LocalPart, which sampling/ does not know.
#include "train/gcn/sample_exchange.h"

#include <memory>
#include <utility>

namespace tessel::train::gcn {

int32_t CommSampleExchange::Rank() const { return static_cast<int32_t>(comm_.Rank()); }

int32_t CommSampleExchange::Size() const { return static_cast<int32_t>(comm_.Size()); }

void CommSampleExchange::Alltoallv(const void* send, std::span<const int64_t> send_bytes, void* recv,
                                   std::span<const int64_t> recv_bytes) {
  comm_.AlltoallvRaw(send, send_bytes, recv, recv_bytes, sampling::kSamplingPurpose).ThrowIfError();
}

uint64_t CommSampleExchange::SentBytes() const { return comm_.Bytes().Bytes(sampling::kSamplingPurpose); }

sampling::OwnedGraph OwnedGraphOf(const partition::LocalPart& part) {
  sampling::OwnedGraph g;
  g.part = part.part;
  g.num_parts = part.num_parts;
  g.global_offset = part.global_offset;
  g.num_owned = part.num_owned;
  g.num_halo = part.num_halo;
  g.adj = part.graph.View();
  g.halo_owner = part.halo_owner.Host();
  g.halo_remote = part.halo_remote.Host();
  return g;
}

sampling::DistNeighborSampler MakeDistSampler(const partition::LocalPart& part, std::vector<int64_t> offsets,
                                              comm::Communicator& comm, sampling::SamplerOptions options,
                                              sampling::SkewOptions skew, sampling::VirtualParts virtual_parts) {
  return sampling::DistNeighborSampler(OwnedGraphOf(part), std::move(offsets),
                                       std::make_unique<CommSampleExchange>(comm), std::move(options), skew,
                                       std::move(virtual_parts));
}

}  // namespace tessel::train::gcn
