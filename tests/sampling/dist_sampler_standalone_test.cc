// DistNeighborSampler on nothing but sampling's own interfaces: parts given as OwnedGraph views built by hand
// (contiguous id ranges of one graph, no partition step) and an in-test SampleExchange over threads (no comm
// library). Blocks must equal NeighborSampler's on the whole graph; bytes are what the exchange counted.
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/rng.h"
#include "datasets/graph_builder.h"
#include "sampling/dist_sampler.h"
#include "sampling/neighbor_sampler.h"
#include "sampling/skewed_policy.h"

namespace tessel::sampling {
namespace {

// Shared state of `size` thread ranks: each posts its send buffer, all wait, each copies its pieces, all wait.
struct ThreadWire {
  explicit ThreadWire(int32_t n) : size(n), sync(n), send(static_cast<size_t>(n)), send_bytes(static_cast<size_t>(n)) {}
  int32_t size;
  std::barrier<> sync;
  std::vector<const std::byte*> send;
  std::vector<std::vector<int64_t>> send_bytes;
};

class ThreadExchange final : public SampleExchange {
 public:
  ThreadExchange(ThreadWire& wire, int32_t rank) : wire_(wire), rank_(rank) {}
  int32_t Rank() const override { return rank_; }
  int32_t Size() const override { return wire_.size; }
  void Alltoallv(const void* send, std::span<const int64_t> send_bytes, void* recv,
                 std::span<const int64_t> recv_bytes) override {
    const auto r = static_cast<size_t>(rank_);
    wire_.send[r] = static_cast<const std::byte*>(send);
    wire_.send_bytes[r].assign(send_bytes.begin(), send_bytes.end());
    for (size_t j = 0; j < send_bytes.size(); ++j) sent_ += j == r ? 0 : static_cast<uint64_t>(send_bytes[j]);
    wire_.sync.arrive_and_wait();
    auto* out = static_cast<std::byte*>(recv);
    for (size_t j = 0; j < recv_bytes.size(); ++j) {
      const std::vector<int64_t>& theirs = wire_.send_bytes[j];
      int64_t at = 0;
      for (size_t i = 0; i < r; ++i) at += theirs[i];
      EXPECT_EQ(theirs[r], recv_bytes[j]) << "rank " << j << " -> " << r;
      if (recv_bytes[j] > 0) std::memcpy(out, wire_.send[j] + at, static_cast<size_t>(recv_bytes[j]));
      out += recv_bytes[j];
    }
    wire_.sync.arrive_and_wait();
  }
  uint64_t SentBytes() const override { return sent_; }

 private:
  ThreadWire& wire_;
  int32_t rank_;
  uint64_t sent_ = 0;
};

// Part k of `parts` owns global ids [offsets[k], offsets[k+1]); its local CSR has the owned rows, columns in local
// ids (owned, then halo in order of first appearance: any order will do), and the halo map.
struct HandPart {
  std::vector<int64_t> indptr{0};
  std::vector<int32_t> indices;
  std::vector<int32_t> halo_owner;
  std::vector<int64_t> halo_remote;
  OwnedGraph view;
};

HandPart MakePart(const datasets::CsrGraph32& g, const std::vector<int64_t>& offsets, int32_t k) {
  HandPart p;
  const int64_t begin = offsets[static_cast<size_t>(k)];
  const int64_t owned = offsets[static_cast<size_t>(k) + 1] - begin;
  std::vector<int32_t> local(static_cast<size_t>(g.num_nodes()), -1);
  for (int64_t u = 0; u < owned; ++u) local[static_cast<size_t>(begin + u)] = static_cast<int32_t>(u);
  for (int64_t u = 0; u < owned; ++u) {
    for (int32_t v : g.Neighbors(begin + u)) {
      int32_t& l = local[static_cast<size_t>(v)];
      if (l < 0) {
        l = static_cast<int32_t>(owned + static_cast<int64_t>(p.halo_owner.size()));
        const auto o = static_cast<int32_t>(std::upper_bound(offsets.begin(), offsets.end(), v) - offsets.begin() - 1);
        p.halo_owner.push_back(o);
        p.halo_remote.push_back(v - offsets[static_cast<size_t>(o)]);
      }
      p.indices.push_back(l);
    }
    std::reverse(p.indices.end() - g.Degree(begin + u), p.indices.end());  // rows out of order on purpose
    p.indptr.push_back(static_cast<int64_t>(p.indices.size()));
  }
  p.indptr.resize(static_cast<size_t>(owned) + p.halo_owner.size() + 1, p.indptr.back());
  p.view = OwnedGraph{k,
                      static_cast<int32_t>(offsets.size() - 1),
                      begin,
                      owned,
                      static_cast<int64_t>(p.halo_owner.size()),
                      CsrView<int32_t>{p.indptr, p.indices, {}, owned + static_cast<int64_t>(p.halo_owner.size())},
                      p.halo_owner,
                      p.halo_remote};
  return p;
}

TEST(DistSamplerStandalone, HandBuiltPartsAndThreadExchangeEqualNeighborSampler) {
  datasets::EdgeList el;
  el.num_nodes = 150;
  Rng rng(9);
  for (int e = 0; e < 600; ++e)
    el.Add(static_cast<int64_t>(rng.UniformInt(150)), static_cast<int64_t>(rng.UniformInt(150)));
  const datasets::AnyGraph graph(datasets::GraphBuilder().Build<int32_t>(el));
  const auto& g = std::get<datasets::CsrGraph32>(graph);
  const std::vector<int64_t> offsets{0, 40, 95, 150};
  const auto parts = static_cast<int32_t>(offsets.size() - 1);
  std::vector<int32_t> edge_owner;
  for (int32_t v : g.indices().Host())
    edge_owner.push_back(
        static_cast<int32_t>(std::upper_bound(offsets.begin(), offsets.end(), v) - offsets.begin() - 1));
  const SamplerOptions options{{3, 2}, false, Aggregation::kGcn};
  const SkewOptions skew{.skew = 4};

  std::vector<HandPart> hand;
  for (int32_t k = 0; k < parts; ++k) hand.push_back(MakePart(g, offsets, k));
  ThreadWire wire(parts);
  std::vector<std::vector<Block>> got(static_cast<size_t>(parts));
  std::vector<std::vector<Block>> uniform(static_cast<size_t>(parts));  // Sample(..., skewed = false)
  std::vector<SampleStats> stats(static_cast<size_t>(parts));
  std::vector<uint64_t> sent(static_cast<size_t>(parts));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(parts));
  std::vector<std::vector<int64_t>> seeds(static_cast<size_t>(parts));
  for (int32_t k = 0; k < parts; ++k) {
    for (int64_t s = offsets[static_cast<size_t>(k)]; s < offsets[static_cast<size_t>(k) + 1]; s += 5)
      seeds[static_cast<size_t>(k)].push_back(s);
  }
  const auto key = [](int32_t r) { return StreamKey{.seed = 3, .rank = static_cast<uint64_t>(r), .batch = 1}; };
  {
    std::vector<std::jthread> ranks;
    for (int32_t r = 0; r < parts; ++r) {
      ranks.emplace_back([&, r] {
        const auto i = static_cast<size_t>(r);
        try {
          auto exchange = std::make_unique<ThreadExchange>(wire, r);
          const ThreadExchange* ex = exchange.get();
          DistNeighborSampler sampler(hand[i].view, offsets, std::move(exchange), options, skew);
          const uint64_t before = ex->SentBytes();
          got[i] = sampler.Sample(seeds[i], key(r));
          stats[i] = sampler.last_stats();
          sent[i] = ex->SentBytes() - before;
          uniform[i] = sampler.Sample(seeds[i], key(r), false);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
    }
  }
  // Blocks equal to the oracle's, layer by layer: nodes, offsets, columns and weights.
  const auto expect_blocks = [](const std::vector<Block>& have, const std::vector<Block>& want,
                                const std::string& what) {
    ASSERT_EQ(have.size(), want.size()) << what;
    for (size_t l = 0; l < want.size(); ++l) {
      SCOPED_TRACE(what + " layer " + std::to_string(l));
      EXPECT_EQ(have[l].src_nodes, want[l].src_nodes);
      EXPECT_EQ(have[l].adj.indptr.ToVector(), want[l].adj.indptr.ToVector());
      EXPECT_EQ(have[l].adj.indices.ToVector(), want[l].adj.indices.ToVector());
      EXPECT_EQ(have[l].adj.values.ToVector(), want[l].adj.values.ToVector());
    }
  };
  int64_t remote_rows = 0;
  for (int32_t r = 0; r < parts; ++r) {
    const auto i = static_cast<size_t>(r);
    ASSERT_FALSE(errors[i]) << "rank " << r;
    NeighborSampler oracle(graph, options, std::make_shared<SkewedPolicy>(edge_owner, r, skew));
    expect_blocks(got[i], oracle.Sample(seeds[i], key(r)), "rank " + std::to_string(r));
    EXPECT_EQ(stats[i].request_bytes + stats[i].response_bytes, sent[i]);
    remote_rows += stats[i].remote_rows;
    // The skew switched off for one call: NeighborSampler's uniform blocks (what evaluation samples).
    NeighborSampler plain(graph, options);
    expect_blocks(uniform[i], plain.Sample(seeds[i], key(r)), "uniform, rank " + std::to_string(r));
  }
  EXPECT_GT(remote_rows, 0);  // the exchange carried requests
}

// What a rank holds is sized by its part and its blocks, not by the graph: the same part 0 (40 nodes) next to a
// part 1 of 2,000 or 400,000 nodes (isolated, so part 0's halo is the same) gives a sampler of the same size after
// the same Sample.
TEST(DistSamplerStandalone, MemoryDoesNotGrowWithTheGlobalNodeCount) {
  const auto bytes_with = [](int64_t total) {
    datasets::EdgeList el;
    el.num_nodes = total;
    Rng rng(4);
    for (int e = 0; e < 200; ++e) {
      el.Add(static_cast<int64_t>(rng.UniformInt(60)), static_cast<int64_t>(rng.UniformInt(60)));
    }
    const datasets::AnyGraph graph(datasets::GraphBuilder().Build<int32_t>(el));
    const auto& g = std::get<datasets::CsrGraph32>(graph);
    const std::vector<int64_t> offsets{0, 40, total};
    std::vector<HandPart> hand;
    for (int32_t k = 0; k < 2; ++k) hand.push_back(MakePart(g, offsets, k));
    ThreadWire wire(2);
    std::vector<int64_t> bytes(2, -1);
    std::vector<std::exception_ptr> errors(2);
    {
      std::vector<std::jthread> ranks;
      for (int32_t r = 0; r < 2; ++r) {
        ranks.emplace_back([&, r] {
          const auto i = static_cast<size_t>(r);
          try {
            DistNeighborSampler sampler(hand[i].view, offsets, std::make_unique<ThreadExchange>(wire, r),
                                        SamplerOptions{{4, 4}, false, Aggregation::kGcn}, SkewOptions{.skew = 2});
            std::vector<int64_t> seeds;
            if (r == 0) {
              for (int64_t s = 0; s < 40; s += 3) seeds.push_back(s);
            }
            (void)sampler.Sample(seeds, StreamKey{.seed = 1, .rank = static_cast<uint64_t>(r)});
            bytes[i] = sampler.MemoryBytes();
          } catch (...) {
            errors[i] = std::current_exception();
          }
        });
      }
    }
    for (const auto& e : errors) {
      if (e) std::rethrow_exception(e);
    }
    return bytes[0];
  };
  const int64_t small = bytes_with(2000);
  const int64_t large = bytes_with(400000);
  EXPECT_GT(small, 0);
  EXPECT_EQ(small, large);
  EXPECT_LT(large, 400000);  // a map of the global node count alone would be 4 bytes a node
}

// The block id map: finds what it stored, grows, and forgets everything on Clear (and shrinks after a large block).
TEST(BlockIdMap, StoresFindsAndClears) {
  BlockIdMap map;
  for (int32_t i = 0; i < 1000; ++i) EXPECT_EQ(map.FindOrInsert(int64_t{7919} * i, i), -1);
  for (int32_t i = 0; i < 1000; ++i) EXPECT_EQ(map.FindOrInsert(int64_t{7919} * i, -5), i);
  EXPECT_EQ(map.size(), 1000);
  const int64_t big = map.MemoryBytes();
  map.Clear();
  EXPECT_EQ(map.size(), 0);
  EXPECT_EQ(map.FindOrInsert(0, 3), -1);
  EXPECT_EQ(map.FindOrInsert(0, 4), 3);
  map.Clear();  // one key in a table for 1000: shrinks
  EXPECT_LT(map.MemoryBytes(), big);
}

}  // namespace
}  // namespace tessel::sampling
