// The coarsening route's parts shared by its two files, private to partition/: dist_coarsen.cc (the clustering, the
// cluster graph and METIS on rank 0) and dist_refine.cc (the label-propagation refinement).
#pragma once

#include <cstdint>
#include <vector>

#include "comm/communicator.h"
#include "core/error.h"
#include "partition/dist_partition_steps.h"

namespace tessel::partition::detail {

inline size_t Z(int64_t i) { return static_cast<size_t>(i); }

// W values of each of the sorted, unique `keys`, asked of their owners (`dist`: K + 1 key offsets by rank; the key
// k's owner answers `of(k - dist[owner], out)`, writing W values to out). One request/reply exchange; returns
// W values per key, in the keys' order.
template <int W, typename F>
std::vector<int64_t> AskOwners(DistPartitionRun& run, const std::vector<int64_t>& dist,
                               const std::vector<int64_t>& keys, F of) {
  std::vector<int64_t> counts(Z(run.K), 0);
  for (const int64_t v : keys) ++counts[Z(OwnerOf(dist, v))];
  std::vector<int64_t> asked_counts;
  const std::vector<int64_t> asked = Exchange(run.comm, keys, counts, &asked_counts, "partition");
  const int64_t lo = dist[Z(run.me)];
  const int64_t hi = dist[Z(run.me) + 1];
  std::vector<int64_t> answers(asked.size() * W);
  comm::OnEveryRankOrFail(run.comm, [&] {
    for (size_t i = 0; i < asked.size(); ++i) {
      TESSEL_CHECK(asked[i] >= lo && asked[i] < hi, "distributed partition: rank {} was asked for {} outside [{}, {})",
                   run.me, asked[i], lo, hi);
      of(asked[i] - lo, &answers[i * W]);
    }
  });
  for (int64_t& c : asked_counts) c *= W;
  std::vector<int64_t> got = Exchange(run.comm, answers, asked_counts, nullptr, "partition");
  TESSEL_CHECK(got.size() == keys.size() * W, "distributed partition: {} answers for {} keys", got.size(), keys.size());
  return got;
}

// AskOwners for the same keys again and again (the ghosts' labels every clustering round, their parts every
// refinement round): the keys go to their owners once, here, and each Ask sends only the answers back.
class OwnerQuery {
 public:
  OwnerQuery(DistPartitionRun& run, const std::vector<int64_t>& dist, const std::vector<int64_t>& keys)
      : run_(run), keys_(keys.size()) {
    std::vector<int64_t> counts(Z(run.K), 0);
    for (const int64_t v : keys) ++counts[Z(OwnerOf(dist, v))];
    asked_ = Exchange(run.comm, keys, counts, &asked_counts_, "partition");
    const int64_t lo = dist[Z(run.me)];
    const int64_t hi = dist[Z(run.me) + 1];
    comm::OnEveryRankOrFail(run.comm, [&] {
      for (int64_t& v : asked_) {
        TESSEL_CHECK(v >= lo && v < hi, "distributed partition: rank {} was asked for {} outside [{}, {})", run.me, v,
                     lo, hi);
        v -= lo;
      }
    });
  }
  // W values of each key (in the keys' order), `of(k - dist[me], out)` answering on the key's owner.
  template <int W, typename F>
  std::vector<int64_t> Ask(F of) {
    std::vector<int64_t> answers(asked_.size() * W);
    for (size_t i = 0; i < asked_.size(); ++i) of(asked_[i], &answers[i * W]);
    std::vector<int64_t> counts = asked_counts_;
    for (int64_t& c : counts) c *= W;
    std::vector<int64_t> got = Exchange(run_.comm, answers, counts, nullptr, "partition");
    TESSEL_CHECK(got.size() == keys_ * W, "distributed partition: {} answers for {} keys", got.size(), keys_);
    return got;
  }

 private:
  DistPartitionRun& run_;
  size_t keys_;
  std::vector<int64_t> asked_;  // the keys others asked this rank for, as offsets from dist[me]
  std::vector<int64_t> asked_counts_;
};

// The block's remote neighbours, sorted and unique, and each adjacency entry's slot: >= 0 the index among them,
// < 0 the local row ~slot.
std::vector<int64_t> Ghosts(const DistPartitionRun& run, std::vector<int32_t>* slot);

// The refinement (dist_refine.cc): rounds of label propagation on run.assignment.part, keeping the best balanced
// parts a round reached; returns the rounds run.
int Refine(DistPartitionRun& run, const std::vector<int64_t>& vwgt, const std::vector<int64_t>& ghosts,
           const std::vector<int32_t>& slot);

}  // namespace tessel::partition::detail
