// GPU neighbour sampling: pick_math.h (the per-row algorithm of the CUDA kernel and of PickRow) against the reference
// PickRow, bit for bit; the GPU pipeline's blocks identical to NeighborSampler's (uniform, skewed, with and without
// replacement, GCN and mean, 32/64-bit ids, hubs past the kernel's local scratch), run as host loops of the same step
// functions everywhere and as CUDA kernels where a GPU exists (skipped otherwise).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/device.h"
#include "core/rng.h"
#include "datasets/graph_builder.h"
#include "sampling/gpu_sampler.h"
#include "sampling/neighbor_sampler.h"
#include "sampling/pick_math.h"
#include "sampling/skewed_policy.h"
#include "tests/sampling/reference_pick.h"

namespace tessel::sampling {
namespace {

// Bitwise equality of doubles (EXPECT_EQ would accept -0 == 0 and reject NaN == NaN).
bool SameBits(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }

// A policy with fixed per-edge probabilities (the test draws them: zeros, ties, spread).
class TablePolicy final : public PickPolicy {
 public:
  explicit TablePolicy(std::vector<double> q) : q_(std::move(q)) {}
  bool Uniform() const override { return false; }
  void Probabilities(int64_t /*row*/, int64_t row_begin, std::span<double> q) const override {
    for (size_t j = 0; j < q.size(); ++j) q[j] = q_[static_cast<size_t>(row_begin) + j];
  }

 private:
  std::vector<double> q_;
};

// Runs the reference (the std-library PickRow of tests/sampling/reference_pick.h), PickRow and PickRowArrays from the
// same stream state: all must give the same picks, bit for bit, and leave the stream in the same state.
void ExpectSamePicks(int64_t deg, int64_t k, bool replace, const PickPolicy& policy, uint64_t seed,
                     const std::string& what) {
  Rng cpu_rng(seed);
  std::vector<double> cpu_scratch;
  std::vector<Pick> cpu;
  testing::ReferencePickRow(7, 0, deg, k, replace, policy, cpu_rng, &cpu_scratch, &cpu);

  Rng row_rng(seed);
  std::vector<Pick> row = {{-5, -5.0}};  // PickRow appends
  PickRow(7, 0, deg, k, replace, policy, row_rng, &cpu_scratch, &row);
  ASSERT_EQ(row.size(), cpu.size() + 1) << what;
  for (size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_EQ(row[i + 1].offset, cpu[i].offset) << what << " pick " << i;
    ASSERT_TRUE(SameBits(row[i + 1].factor, cpu[i].factor)) << what << " pick " << i;
  }
  EXPECT_EQ(row_rng(), Rng(cpu_rng)()) << what << ": PickRow consumed a different number of draws";

  std::vector<double> q;
  if (!policy.Uniform()) {
    q.resize(static_cast<size_t>(deg));
    policy.Probabilities(7, 0, q);
  }
  const int64_t cap = pick_math::MaxPicks(deg, k, replace, policy.Uniform());
  std::vector<int64_t> offsets(static_cast<size_t>(cap) + 1, -7);
  std::vector<double> factors(offsets.size(), -7.0);
  std::vector<double> a(static_cast<size_t>(deg) + 1);
  std::vector<uint8_t> capped(a.size());
  std::vector<int64_t> order(a.size());
  Rng gpu_rng(seed);
  const int64_t n = pick_math::PickRowArrays(deg, k, replace, q.empty() ? nullptr : q.data(), gpu_rng,
                                             pick_math::Scratch{a.data(), capped.data(), order.data()}, offsets.data(),
                                             factors.data());
  ASSERT_EQ(n, static_cast<int64_t>(cpu.size())) << what;
  ASSERT_LE(n, cap) << what;
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(offsets[i], cpu[i].offset) << what << " pick " << i;
    ASSERT_TRUE(SameBits(factors[i], cpu[i].factor))
        << what << " pick " << i << ": " << factors[i] << " vs " << cpu[i].factor;
  }
  EXPECT_EQ(cpu_rng(), gpu_rng()) << what << ": the streams consumed different numbers of draws";
}

TEST(PickMath, ReproducesPickRowBitForBit) {
  Rng gen(2024);
  const UniformPolicy uniform;
  int cases = 0;
  for (int64_t deg : {0, 1, 2, 3, 5, 8, 13, 31, 32, 33, 70, 200}) {
    std::vector<double> spread(static_cast<size_t>(deg));
    std::vector<double> sparse(spread.size());
    std::vector<double> ties(spread.size());
    for (size_t j = 0; j < spread.size(); ++j) {
      spread[j] = 0.01 + gen.Uniform() * (gen.UniformInt(4) == 0 ? 100.0 : 1.0);
      sparse[j] = gen.UniformInt(3) == 0 ? 0.0 : 0.5 + gen.Uniform();
      ties[j] = gen.UniformInt(2) == 0 ? 1.0 : 3.0;
    }
    std::vector<int32_t> owners(spread.size());
    for (auto& o : owners) o = static_cast<int32_t>(gen.UniformInt(3));
    const TablePolicy p_spread(spread), p_sparse(sparse), p_ties(ties);
    const TablePolicy p_equal(std::vector<double>(spread.size(), 2.5));
    const SkewedPolicy p_skew4(owners, 1, SkewOptions{.skew = 4.0});
    const SkewedPolicy p_budget(owners, 1, SkewOptions{.variance_budget = 0.5});
    const SkewedPolicy p_skew1(owners, 1, SkewOptions{.skew = 1.0});
    const std::vector<std::pair<const PickPolicy*, std::string>> policies{
        {&uniform, "uniform"}, {&p_spread, "spread"}, {&p_sparse, "zeros"},  {&p_ties, "ties"},
        {&p_equal, "equal"},   {&p_skew4, "skew4"},   {&p_budget, "budget"}, {&p_skew1, "skew1"}};
    for (int64_t k : {int64_t{-1}, int64_t{1}, int64_t{3}, int64_t{10}, deg, deg + 1}) {
      for (bool replace : {false, true}) {
        for (const auto& [policy, name] : policies) {
          for (uint64_t seed = 0; seed < 4; ++seed) {
            ExpectSamePicks(deg, k, replace, *policy, Mix64(seed + 100 * static_cast<uint64_t>(deg)),
                            name + " deg " + std::to_string(deg) + " k " + std::to_string(k) +
                                (replace ? " replace" : " no-replace"));
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 2000);
}

TEST(PickMath, ReportsTheFirstBadProbability) {
  const double q[4] = {1.0, 2.0, -1.0, std::numeric_limits<double>::infinity()};
  int64_t offsets[4];
  double factors[4];
  double a[4];
  uint8_t capped[4];
  int64_t order[4];
  Rng rng(1);
  const int64_t r =
      pick_math::PickRowArrays(4, 2, false, q, rng, pick_math::Scratch{a, capped, order}, offsets, factors);
  EXPECT_EQ(r, pick_math::kBadWeight - 2);
  // PickRow and the reference throw for the same row.
  const TablePolicy policy(std::vector<double>(q, q + 4));
  std::vector<double> scratch;
  std::vector<Pick> picks;
  EXPECT_THROW(PickRow(0, 0, 4, 2, false, policy, rng, &scratch, &picks), Error);
  EXPECT_THROW(testing::ReferencePickRow(0, 0, 4, 2, false, policy, rng, &scratch, &picks), Error);
}

TEST(PickMath, UpperBoundMatchesTheStandardLibrary) {
  const std::vector<double> a{0.5, 0.5, 1.0, 2.0, 2.0, 2.0, 3.5};
  for (double x : {-1.0, 0.0, 0.5, 0.7, 1.0, 2.0, 3.0, 3.5, 4.0}) {
    EXPECT_EQ(pick_math::UpperBound(a.data(), static_cast<int64_t>(a.size()), x),
              std::upper_bound(a.begin(), a.end(), x) - a.begin())
        << x;
  }
}

TEST(GpuNeighborSampler, NeedsACudaDevice) {
  const auto graph = datasets::AnyGraph(datasets::GraphBuilder().Build<int32_t>(datasets::EdgeList{}));
  if (device::CudaDeviceCount() == 0) {
    EXPECT_THROW(GpuNeighborSampler(graph, SamplerOptions{{3}, false, Aggregation::kGcn}), Error);
  }
  EXPECT_THROW(GpuNeighborSampler(graph, SamplerOptions{{3}, false, Aggregation::kGcn}, std::nullopt, -1), Error);
}

// ---- Device tests: GPU blocks identical to the CPU sampler's (skip without a GPU). ----

struct SamplerCase {
  std::string name;
  std::vector<int> fanouts;
  bool replace;
  Aggregation aggregation;
  std::optional<SkewOptions> skew;
  bool ids64;
};

void PrintTo(const SamplerCase& c, std::ostream* os) { *os << c.name; }

// Random graph with a few hubs (degree far above the kernel's 32-entry local scratch) and isolated nodes.
datasets::EdgeList HubGraph(int64_t n, int64_t edges, uint64_t seed) {
  datasets::EdgeList el;
  el.num_nodes = n;
  Rng rng(seed);
  for (int64_t e = 0; e < edges; ++e) {
    const auto u = static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(n - 10)));
    const auto v = rng.UniformInt(4) == 0 ? static_cast<int64_t>(rng.UniformInt(5))  // hubs 0..4
                                          : static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(n - 10)));
    el.Add(u, v);
  }
  return el;
}

void ExpectSameBlocks(const std::vector<Block>& gpu, const std::vector<Block>& cpu, const std::string& what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  for (size_t l = 0; l < cpu.size(); ++l) {
    const Block& g = gpu[l];
    const Block& c = cpu[l];
    ASSERT_EQ(g.num_dst, c.num_dst) << what << " layer " << l;
    ASSERT_EQ(g.src_nodes, c.src_nodes) << what << " layer " << l;
    ASSERT_EQ(g.adj.rows, c.adj.rows) << what << " layer " << l;
    ASSERT_EQ(g.adj.cols, c.adj.cols) << what << " layer " << l;
    ASSERT_EQ(g.adj.indptr.ToVector(), c.adj.indptr.ToVector()) << what << " layer " << l;
    ASSERT_EQ(g.adj.indices.ToVector(), c.adj.indices.ToVector()) << what << " layer " << l;
    const auto gv = g.adj.values.ToVector();
    const auto cv = c.adj.values.ToVector();
    ASSERT_EQ(gv.size(), cv.size()) << what << " layer " << l;
    for (size_t e = 0; e < gv.size(); ++e) {
      ASSERT_EQ(std::bit_cast<uint32_t>(gv[e]), std::bit_cast<uint32_t>(cv[e]))
          << what << " layer " << l << " entry " << e;
    }
  }
}

// Where the GPU sampler's pipeline runs: the CUDA kernels, or the same pipeline on the simulated device (each kernel
// a host loop over the same step functions).
enum class Backend { kSimulated, kCuda };
void PrintTo(Backend b, std::ostream* os) { *os << (b == Backend::kCuda ? "cuda" : "simulated device"); }

class GpuMatchesCpu : public ::testing::TestWithParam<std::tuple<SamplerCase, Backend>> {
 protected:
  void SetUp() override {
    if (std::get<1>(GetParam()) == Backend::kCuda && device::CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_P(GpuMatchesCpu, IdenticalBlocksForTheSameKey) {
  const auto& [c, backend] = GetParam();
  const int64_t n = 3000;
  const datasets::EdgeList el = HubGraph(n, 12000, 7);
  const datasets::GraphBuilder builder(datasets::BuildOptions{.remove_self_loops = false});  // keep a few self-loops
  const datasets::AnyGraph graph =
      c.ids64 ? datasets::AnyGraph(builder.Build<int64_t>(el)) : datasets::AnyGraph(builder.Build<int32_t>(el));
  std::vector<int32_t> owners(static_cast<size_t>(datasets::NumEntries(graph)));
  Rng owner_rng(8);
  for (auto& o : owners) o = static_cast<int32_t>(owner_rng.UniformInt(3));
  const SamplerOptions options{c.fanouts, c.replace, c.aggregation};
  std::shared_ptr<const PickPolicy> policy;
  std::optional<GpuSkew> skew;
  if (c.skew) {
    policy = std::make_shared<SkewedPolicy>(owners, 1, *c.skew);
    skew = GpuSkew{owners, 1, *c.skew};
  }
  NeighborSampler cpu(graph, options, policy);
  std::optional<device::ScopedSimulatedDevice> sim;
  if (backend == Backend::kSimulated) sim.emplace();
  GpuNeighborSampler gpu(graph, options, skew, 0);
  auto sample = [&](std::span<const int64_t> seeds, const StreamKey& key) {
    std::vector<Block> blocks = gpu.Sample(seeds, key);
    for (const Block& b : blocks) {  // written on the device, not through the host
      EXPECT_TRUE(b.adj.indptr.DeviceCurrent() && b.adj.indices.DeviceCurrent() && b.adj.values.DeviceCurrent());
      EXPECT_EQ(b.device_src.ToVector(), b.src_nodes);
    }
    return blocks;
  };
  Rng seed_rng(9);
  for (uint64_t batch = 0; batch < 3; ++batch) {
    // Distinct seeds including the hubs and isolated nodes (n-10 .. n-1 have no edges).
    std::vector<int64_t> seeds{0, 1, n - 1, n - 5};
    std::vector<bool> used(static_cast<size_t>(n), false);
    for (int64_t s : seeds) used[static_cast<size_t>(s)] = true;
    while (seeds.size() < 200) {
      const auto s = static_cast<int64_t>(seed_rng.UniformInt(static_cast<uint64_t>(n)));
      if (!used[static_cast<size_t>(s)]) {
        used[static_cast<size_t>(s)] = true;
        seeds.push_back(s);
      }
    }
    const StreamKey key{.seed = 11, .rank = 2, .epoch = 3, .batch = batch, .purpose = 5};
    ExpectSameBlocks(sample(seeds, key), cpu.Sample(seeds, key), c.name + " batch " + std::to_string(batch));
  }
  EXPECT_THROW(sample(std::vector<int64_t>{n}, StreamKey{}), Error);
  EXPECT_THROW(sample(std::vector<int64_t>{3, 4, 3}, StreamKey{}), Error);
  // Still correct after the errors (the id maps were reset).
  const std::vector<int64_t> seeds{3, 4, 5};
  ExpectSameBlocks(sample(seeds, StreamKey{.seed = 1}), cpu.Sample(seeds, StreamKey{.seed = 1}),
                   c.name + " after errors");
  ExpectSameBlocks(sample(std::vector<int64_t>{}, StreamKey{}), cpu.Sample(std::vector<int64_t>{}, StreamKey{}),
                   c.name + " no seeds");
}

// A uniform sample is bounded: its layers' rows own fanout slots each and its arrays are sized by the fanout bound,
// so it waits for the device once (the read of every layer's sizes and flags at its end, with all_sources false the
// input layer's source ids read with them: their bound is small): 1 download a sample, its one synchronisation;
// launches
// as the pipeline counts them: the top layer's PlanRow, then per layer the picks, one fused scan, the new ids with
// the rows, the maps' reset with the next layer's marks.
TEST(GpuSamplerCounts, AUniformSampleWaitsOnceAndOnceMoreForTheInputRowsWhenAsked) {
  const int64_t n = 2000;
  const datasets::AnyGraph graph(datasets::GraphBuilder().Build<int32_t>(HubGraph(n, 8000, 17)));
  const SamplerOptions options{{10, 5}, false, Aggregation::kMean};
  NeighborSampler cpu(graph, options);
  device::ScopedSimulatedDevice sim;
  GpuNeighborSampler gpu(graph, options, std::nullopt, 0);
  std::vector<int64_t> seeds(300);
  std::iota(seeds.begin(), seeds.end(), int64_t{100});
  const StreamKey key{.seed = 3, .batch = 1};
  (void)gpu.Sample(seeds, key, false);  // sizes the pipeline's arrays
  const device::Counters before = device::ReadCounters();
  const std::vector<Block> blocks = gpu.Sample(seeds, key, false);
  const device::Counters d = device::ReadCounters() - before;
  EXPECT_EQ(d.d2h_copies, 1);
  EXPECT_EQ(d.synchronizations, 1);
  EXPECT_EQ(d.h2d_copies, 1);  // the seeds
  EXPECT_EQ(d.runtime_allocations, 0);
  EXPECT_EQ(d.launches, 1 + 2 * 4);
  EXPECT_EQ(d.allocations, 2 * 4) << "the blocks' arrays only (the pipeline's are sized by the bounds)";
  // Without the input layer's host copy (a device gather reads Block::device_src): one wait too, fewer bytes.
  const device::Counters before_ids = device::ReadCounters();
  const std::vector<Block> device_only = gpu.Sample(seeds, key, false, false);
  const device::Counters d_ids = device::ReadCounters() - before_ids;
  EXPECT_EQ(d_ids.synchronizations, 1);
  EXPECT_EQ(d_ids.d2h_copies, 1);
  EXPECT_EQ(d_ids.launches, 1 + 2 * 4);
  EXPECT_EQ(d_ids.d2h_bytes, 2 * 4 * 8) << "4 values a layer";
  EXPECT_GT(d.d2h_bytes, d_ids.d2h_bytes + static_cast<int64_t>(blocks.front().src_nodes.size() * 8) - 1);
  EXPECT_TRUE(device_only.front().src_nodes.empty());
  EXPECT_EQ(device_only.front().device_src.ToVector(), blocks.front().src_nodes);
  const std::vector<Block> want = cpu.Sample(seeds, key);
  ASSERT_EQ(blocks.size(), want.size());
  EXPECT_EQ(blocks.front().src_nodes, want.front().src_nodes);
  EXPECT_TRUE(blocks.back().src_nodes.empty()) << "above the input layer the sources stay on the device";
  EXPECT_EQ(blocks.back().device_src.ToVector(), want.back().src_nodes);
  EXPECT_EQ(blocks.back().adj.cols, want.back().num_src());
}

// Layers too large for the fused scan (more than 2^17 slots or rows: kMarkNew, two CUB scans and a staging kernel
// instead of one launch) give the same blocks, in a bounded sample (uniform, fanout 60) and in one that reads its
// sizes per layer (fanout -1 takes every neighbour).
TEST(GpuSamplerCounts, LayersBeyondTheFusedScanGiveTheSameBlocks) {
  const int64_t n = 6000;
  const datasets::AnyGraph graph(datasets::GraphBuilder().Build<int32_t>(HubGraph(n, 400000, 5)));
  std::vector<int64_t> seeds(n / 2);
  std::iota(seeds.begin(), seeds.end(), int64_t{0});
  device::ScopedSimulatedDevice sim;
  for (const std::vector<int>& fanouts : {std::vector<int>{60}, std::vector<int>{-1}}) {
    const SamplerOptions options{fanouts, false, Aggregation::kGcn};
    NeighborSampler cpu(graph, options);
    GpuNeighborSampler gpu(graph, options, std::nullopt, 0);
    const StreamKey key{.seed = 9, .batch = 2};
    const device::Counters before = device::ReadCounters();
    const std::vector<Block> blocks = gpu.Sample(seeds, key);
    const device::Counters d = device::ReadCounters() - before;
    ExpectSameBlocks(blocks, cpu.Sample(seeds, key), "fanout " + std::to_string(fanouts[0]));
    // PlanRow, picks, 1 + 2 + 2 + 1 for the marks, scans and staging, AssignWrite, ResetMaps; every neighbour
    // besides scans the slot and scratch counts (2 + 2) and reads their totals (3 copies and a wait) first.
    const bool bounded = fanouts[0] >= 0;
    EXPECT_EQ(d.launches, bounded ? 10 : 17) << "fanout " << fanouts[0];
    EXPECT_EQ(d.synchronizations, bounded ? 1 : 3) << "the source ids read with the sizes, or on their own";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GpuMatchesCpu,
    ::testing::Combine(
        ::testing::Values(
            SamplerCase{"uniform_gcn", {10, 25}, false, Aggregation::kGcn, std::nullopt, false},
            SamplerCase{"uniform_mean_replace", {15, 10, 5}, true, Aggregation::kMean, std::nullopt, false},
            SamplerCase{"uniform_all_ids64", {-1, 4}, false, Aggregation::kGcn, std::nullopt, true},
            SamplerCase{"skew4_gcn", {10, 25}, false, Aggregation::kGcn, SkewOptions{.skew = 4.0}, false},
            SamplerCase{"skew4_replace_mean", {5, 8}, true, Aggregation::kMean, SkewOptions{.skew = 4.0}, true},
            SamplerCase{
                "budget_gcn", {15, 10, 5}, false, Aggregation::kGcn, SkewOptions{.variance_budget = 0.5}, false},
            SamplerCase{"budget_replace", {40, 3}, true, Aggregation::kGcn, SkewOptions{.variance_budget = 0.5}, false},
            SamplerCase{"skew1_is_uniform", {10, 25}, false, Aggregation::kMean, SkewOptions{.skew = 1.0}, false}),
        ::testing::Values(Backend::kSimulated, Backend::kCuda)),
    [](const auto& param_info) {
      return std::get<0>(param_info.param).name +
             (std::get<1>(param_info.param) == Backend::kCuda ? "_cuda" : "_simulated");
    });

}  // namespace
}  // namespace tessel::sampling
