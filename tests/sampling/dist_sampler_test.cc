// DistNeighborSampler against its oracle: at 1..4 thread ranks, each rank's blocks equal (same source order, same
// float weights) NeighborSampler's on the whole relabelled graph with the requester's SkewedPolicy; stats, bytes
// and the errors for bad calls. The sampler runs as the trainer builds it (train/gcn/sample_exchange.h: the
// communicator's exchange and a LocalPart's view).
#include "sampling/dist_sampler.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "comm/thread_comm.h"
#include "core/error.h"
#include "partition/merge_parts.h"
#include "partition/partition_format.h"
#include "tests/partition/test_graphs.h"
#include "train/gcn/sample_exchange.h"

namespace tessel::sampling {
namespace {

namespace fs = std::filesystem;
using train::gcn::MakeDistSampler;

struct PartSpec {
  int32_t parts = 1;
  partition::Method method = partition::Method::kMetis;
  bool directed = false;
};

struct Config {
  std::string name;
  SkewOptions skew;
  Aggregation aggregation = Aggregation::kGcn;
  bool replace = false;
  std::vector<int> fanouts{3, 2, 4};
};

// A partitioned random graph (self-loops on every 7th node), its parts, and the whole graph in new global ids
// with each row sorted, built from the original dataset (not from the parts) as the oracle's input.
void PrintTo(const PartSpec& s, std::ostream* os) {
  *os << s.parts << " parts, " << partition::MethodName(s.method) << (s.directed ? ", directed" : "");
}
void PrintTo(const Config& c, std::ostream* os) { *os << c.name; }

class Partitioned {
 public:
  explicit Partitioned(const PartSpec& spec, const std::string& tag) {
    partition::fixtures::GraphSpec g;
    g.nodes = 240;
    g.edges = 900;
    g.directed = spec.directed;
    g.self_loops = true;
    g.seed = 5;
    data_ = partition::fixtures::RandomDataset(g);
    dir_ = fs::temp_directory_path() / ("tessel-distsample-" + std::to_string(::getpid()) + "-" + tag);
    fs::remove_all(dir_);
    partition::PartitionOptions opt;
    opt.method = spec.method;
    opt.num_parts = spec.parts;
    opt.seed = 3;
    partition::PartitionToFolder(data_, opt, dir_, false);
    offsets_ = partition::ReadPartitionsJson(dir_)["node_ranges"].get<std::vector<int64_t>>();
    for (int32_t k = 0; k < spec.parts; ++k) parts_.push_back(partition::LoadPart(dir_, k));

    const int64_t n = data_.num_nodes();
    std::vector<int64_t> new_id(static_cast<size_t>(n), -1);
    std::vector<int64_t> original(static_cast<size_t>(n), -1);
    for (int32_t k = 0; k < spec.parts; ++k) {
      auto ids = parts_[static_cast<size_t>(k)].owned_ids.Host();
      for (size_t u = 0; u < ids.size(); ++u) {
        const int64_t gid = offsets_[static_cast<size_t>(k)] + static_cast<int64_t>(u);
        new_id[static_cast<size_t>(ids[u])] = gid;
        original[static_cast<size_t>(gid)] = ids[u];
      }
    }
    const auto& og = std::get<datasets::CsrGraph32>(data_.graph);
    std::vector<int64_t> indptr{0};
    std::vector<int32_t> indices;
    for (int64_t gid = 0; gid < n; ++gid) {
      const size_t begin = indices.size();
      for (int32_t v : og.Neighbors(original[static_cast<size_t>(gid)]))
        indices.push_back(static_cast<int32_t>(new_id[static_cast<size_t>(v)]));
      std::sort(indices.begin() + static_cast<std::ptrdiff_t>(begin), indices.end());
      indptr.push_back(static_cast<int64_t>(indices.size()));
    }
    for (int32_t v : indices) edge_owner_.push_back(Owner(v));
    global_ = datasets::AnyGraph(
        datasets::CsrGraph32(Buffer<int64_t>(std::move(indptr)), Buffer<int32_t>(std::move(indices))));
  }
  ~Partitioned() { fs::remove_all(dir_); }
  Partitioned(const Partitioned&) = delete;
  Partitioned& operator=(const Partitioned&) = delete;

  int32_t Owner(int64_t gid) const {
    return static_cast<int32_t>(std::upper_bound(offsets_.begin(), offsets_.end(), gid) - offsets_.begin() - 1);
  }
  int32_t num_parts() const { return static_cast<int32_t>(parts_.size()); }
  const partition::LocalPart& part(int32_t k) const { return parts_[static_cast<size_t>(k)]; }
  const std::vector<int64_t>& offsets() const { return offsets_; }
  const datasets::AnyGraph& global() const { return global_; }
  const std::vector<int32_t>& edge_owner() const { return edge_owner_; }
  const fs::path& dir() const { return dir_; }

 private:
  datasets::NodeDataset data_;
  fs::path dir_;
  std::vector<int64_t> offsets_;
  std::vector<partition::LocalPart> parts_;
  datasets::AnyGraph global_;
  std::vector<int32_t> edge_owner_;
};

// The current test's name as a file name (parameterised names hold '/').
std::string TestName() {
  std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(name.begin(), name.end(), '/', '_');
  return name;
}

// Seeds of rank r in batch b: up to 12 distinct owned nodes in a random order; the last rank has none in batch 1.
std::vector<int64_t> Seeds(const Partitioned& p, int32_t r, uint64_t b) {
  if (b == 1 && r == p.num_parts() - 1 && p.num_parts() > 1) return {};
  std::vector<int64_t> owned;
  for (int64_t g = p.offsets()[static_cast<size_t>(r)]; g < p.offsets()[static_cast<size_t>(r) + 1]; ++g)
    owned.push_back(g);
  Rng rng(StreamKey{.seed = 11, .rank = static_cast<uint64_t>(r), .batch = b});
  for (size_t i = owned.size(); i > 1; --i) std::swap(owned[i - 1], owned[rng.UniformInt(i)]);
  owned.resize(std::min<size_t>(owned.size(), 12));
  return owned;
}

StreamKey Key(int32_t r, uint64_t b) {
  return StreamKey{.seed = 7, .rank = static_cast<uint64_t>(r), .epoch = 2, .batch = b, .purpose = 100};
}

struct RankRun {
  std::vector<std::vector<Block>> blocks;  // per batch
  std::vector<SampleStats> stats;
  std::vector<uint64_t> bytes;  // comm bytes under "sampling" during each Sample call
};

constexpr uint64_t kBatches = 3;

std::vector<RankRun> RunDistributed(const Partitioned& p, const Config& c) {
  std::vector<RankRun> runs(static_cast<size_t>(p.num_parts()));
  comm::ThreadGroup::Run(p.num_parts(), [&](comm::Communicator& comm) {
    const int32_t r = comm.Rank();
    DistNeighborSampler sampler =
        MakeDistSampler(p.part(r), p.offsets(), comm, SamplerOptions{c.fanouts, c.replace, c.aggregation}, c.skew);
    RankRun& run = runs[static_cast<size_t>(r)];
    for (uint64_t b = 0; b < kBatches; ++b) {
      const uint64_t before = comm.Bytes().Bytes(kSamplingPurpose);
      run.blocks.push_back(sampler.Sample(Seeds(p, r, b), Key(r, b)));
      run.stats.push_back(sampler.last_stats());
      run.bytes.push_back(comm.Bytes().Bytes(kSamplingPurpose) - before);
    }
  });
  return runs;
}

void ExpectSameBlock(const Block& got, const Block& want, const std::string& where) {
  SCOPED_TRACE(where);
  ASSERT_EQ(got.num_dst, want.num_dst);
  ASSERT_EQ(got.src_nodes, want.src_nodes);
  EXPECT_EQ(got.adj.rows, want.adj.rows);
  EXPECT_EQ(got.adj.cols, want.adj.cols);
  EXPECT_EQ(got.adj.indptr.ToVector(), want.adj.indptr.ToVector());
  EXPECT_EQ(got.adj.indices.ToVector(), want.adj.indices.ToVector());
  EXPECT_EQ(got.adj.values.ToVector(), want.adj.values.ToVector());  // bit-identical floats
}

class DistSamplerOracle : public ::testing::TestWithParam<std::tuple<PartSpec, Config>> {};

TEST_P(DistSamplerOracle, EqualsNeighborSamplerOnWholeGraph) {
  const auto& [spec, config] = GetParam();
  const Partitioned p(spec, TestName());
  const std::vector<RankRun> runs = RunDistributed(p, config);
  const bool gcn = config.aggregation == Aggregation::kGcn;
  for (int32_t r = 0; r < p.num_parts(); ++r) {
    // The oracle: the whole graph, the requester's skew (uniform runs use the plain UniformPolicy).
    std::shared_ptr<const PickPolicy> policy;
    if (config.skew.Active()) policy = std::make_shared<SkewedPolicy>(p.edge_owner(), r, config.skew);
    NeighborSampler oracle(p.global(), SamplerOptions{config.fanouts, config.replace, config.aggregation}, policy);
    const RankRun& run = runs[static_cast<size_t>(r)];
    ASSERT_EQ(run.blocks.size(), kBatches);
    for (uint64_t b = 0; b < kBatches; ++b) {
      const std::vector<int64_t> seeds = Seeds(p, r, b);
      const std::vector<Block> want = oracle.Sample(seeds, Key(r, b));
      const std::vector<Block>& got = run.blocks[b];
      ASSERT_EQ(got.size(), want.size());
      SampleStats expect;
      for (size_t l = 0; l < want.size(); ++l) {
        ExpectSameBlock(got[l], want[l],
                        "rank " + std::to_string(r) + " batch " + std::to_string(b) + " layer " + std::to_string(l));
        auto ptr = want[l].adj.indptr.Host();
        auto idx = want[l].adj.indices.Host();
        for (int64_t i = 0; i < want[l].num_dst; ++i) {
          for (int64_t e = ptr[i] + (gcn ? 1 : 0); e < ptr[i + 1]; ++e) {
            ++expect.sampled_edges;
            expect.remote_picks += p.Owner(want[l].src_nodes[static_cast<size_t>(idx[e])]) != r ? 1 : 0;
          }
          expect.remote_rows += p.Owner(want[l].src_nodes[static_cast<size_t>(i)]) != r ? 1 : 0;
        }
      }
      for (int64_t v : want.front().src_nodes) expect.remote_input_nodes += p.Owner(v) != r ? 1 : 0;
      const SampleStats& s = run.stats[b];
      EXPECT_EQ(s.seeds, static_cast<int64_t>(seeds.size()));
      EXPECT_EQ(s.sampled_edges, expect.sampled_edges);
      EXPECT_EQ(s.remote_picks, expect.remote_picks);
      EXPECT_DOUBLE_EQ(s.remote_pick_share, expect.sampled_edges > 0 ? static_cast<double>(expect.remote_picks) /
                                                                           static_cast<double>(expect.sampled_edges)
                                                                     : 0.0);
      EXPECT_EQ(s.input_nodes, want.front().num_src());
      EXPECT_EQ(s.remote_input_nodes, expect.remote_input_nodes);
      EXPECT_EQ(s.remote_rows, expect.remote_rows);
      EXPECT_EQ(s.request_bytes + s.response_bytes, run.bytes[b]);
      if (p.num_parts() == 1) {
        EXPECT_EQ(run.bytes[b], 0U);
      }
      // The compact wire format (EncodeIds, EncodeAnswer): beyond one 8-byte count per peer and layer, a request
      // takes one varint per remote row, of at most 2 bytes here (ids below 8192: every zigzag difference fits 14
      // bits; 8 bytes uncompressed), and an answer at least one byte per served row.
      const uint64_t count_bytes = 8U * static_cast<uint64_t>(p.num_parts() - 1) * want.size();
      const auto remote_rows = static_cast<uint64_t>(s.remote_rows);
      EXPECT_GE(s.request_bytes, count_bytes + remote_rows);
      EXPECT_LE(s.request_bytes, count_bytes + 2U * remote_rows);
      EXPECT_GE(s.response_bytes, count_bytes + static_cast<uint64_t>(s.served_rows));
    }
  }
  // Every remote row was served by somebody: requests sent = requests served, over all ranks.
  int64_t sent = 0;
  int64_t served = 0;
  for (const RankRun& run : runs) {
    for (const SampleStats& s : run.stats) {
      sent += s.remote_rows;
      served += s.served_rows;
    }
  }
  EXPECT_EQ(sent, served);
  if (p.num_parts() > 1) {
    EXPECT_GT(sent, 0);
  }
}

std::vector<Config> Configs() {
  std::vector<Config> out;
  const std::pair<std::string, SkewOptions> skews[] = {
      {"uniform", SkewOptions{}}, {"s4", SkewOptions{.skew = 4}}, {"budget", SkewOptions{.variance_budget = 0.5}}};
  for (const auto& [sname, skew] : skews) {
    for (Aggregation agg : {Aggregation::kGcn, Aggregation::kMean}) {
      for (bool replace : {false, true}) {
        out.push_back(Config{sname + (agg == Aggregation::kGcn ? "_gcn" : "_mean") + (replace ? "_replace" : ""), skew,
                             agg, replace});
      }
    }
  }
  out.push_back(Config{"s4_gcn_all_then_2", SkewOptions{.skew = 4}, Aggregation::kGcn, false, {-1, 2}});
  return out;
}

std::string ParamName(const ::testing::TestParamInfo<std::tuple<PartSpec, Config>>& param) {
  const PartSpec& s = std::get<0>(param.param);
  return "k" + std::to_string(s.parts) + std::string(partition::MethodName(s.method)) +
         (s.directed ? "_directed_" : "_") + std::get<1>(param.param).name;
}

INSTANTIATE_TEST_SUITE_P(Parts, DistSamplerOracle,
                         ::testing::Combine(::testing::Values(PartSpec{1, partition::Method::kMetis, false},
                                                              PartSpec{2, partition::Method::kMetis, false},
                                                              PartSpec{3, partition::Method::kRandom, false},
                                                              PartSpec{4, partition::Method::kMetis, false},
                                                              PartSpec{4, partition::Method::kHash, true}),
                                            ::testing::ValuesIn(Configs())),
                         ParamName);

// Skew toward the requester lowers the share of picks that land on other ranks' nodes (METIS parts, 4 ranks).
TEST(DistSampler, SkewLowersRemoteShare) {
  const Partitioned p(PartSpec{4, partition::Method::kMetis, false}, TestName());
  auto share = [&](SkewOptions skew) {
    int64_t remote = 0;
    int64_t all = 0;
    for (const RankRun& run : RunDistributed(p, Config{"", skew, Aggregation::kGcn, true, {5, 5}})) {
      for (const SampleStats& s : run.stats) {
        remote += s.remote_picks;
        all += s.sampled_edges;
      }
    }
    return static_cast<double>(remote) / static_cast<double>(all);
  };
  const double uniform = share(SkewOptions{});
  const double skewed = share(SkewOptions{.skew = 8});
  EXPECT_GT(uniform, 0.05);
  EXPECT_LT(skewed, 0.75 * uniform);
}

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(DistSampler, RejectsBadCalls) {
  const Partitioned one(PartSpec{1, partition::Method::kMetis, false}, TestName() + "1");
  auto comm = comm::MakeLocalCommunicator();
  const SamplerOptions options{{2, 2}, false, Aggregation::kGcn};
  DistNeighborSampler sampler = MakeDistSampler(one.part(0), one.offsets(), *comm, options);
  const std::vector<int64_t> seeds{3, 5};
  EXPECT_NE(ErrorOf([&] { sampler.Sample(seeds, Key(1, 0)); }).find("set key.rank = comm.Rank()"), std::string::npos);
  const std::vector<int64_t> twice{3, 5, 3};
  EXPECT_NE(ErrorOf([&] { sampler.Sample(twice, Key(0, 0)); }).find("node 3 is listed twice"), std::string::npos);
  const std::vector<int64_t> outside{3, 240};
  EXPECT_NE(ErrorOf([&] { sampler.Sample(outside, Key(0, 0)); }).find("not owned by rank 0"), std::string::npos);
  // The sampler still works after the local checks failed (no exchange had started).
  EXPECT_EQ(sampler.Sample(seeds, Key(0, 0)).back().num_dst, 2);
  EXPECT_NE(ErrorOf([&] {
              MakeDistSampler(one.part(0), {0, 100}, *comm, options);
            }).find("node ranges say"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { MakeDistSampler(one.part(0), one.offsets(), *comm, SamplerOptions{{0}}); }).find("--fanouts"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              MakeDistSampler(one.part(0), one.offsets(), *comm, options, SkewOptions{.skew = 0.5});
            }).find("--skew"),
            std::string::npos);

  const Partitioned two(PartSpec{2, partition::Method::kMetis, false}, TestName() + "2");
  // A part of a 2-way partition on a 1-rank job.
  EXPECT_NE(ErrorOf([&] { MakeDistSampler(two.part(0), two.offsets(), *comm, options); }).find("run one rank per part"),
            std::string::npos);
  // A seed owned by the other rank: the asking rank fails, and its peer is released with its message.
  const std::string err = ErrorOf([&] {
    comm::ThreadGroup::Run(2, [&](comm::Communicator& c) {
      DistNeighborSampler s = MakeDistSampler(two.part(c.Rank()), two.offsets(), c, options);
      const std::vector<int64_t> mine{two.offsets()[1]};  // owned by rank 1
      s.Sample(mine, Key(c.Rank(), 0));
    });
  });
  EXPECT_NE(err.find("is not owned by rank 0"), std::string::npos) << err;
}

// Virtual parts (dist_sampler.h): the 4 parts on 3, 2 and 1 ranks, each rank's run merged into one part; sub-step i
// samples for each rank's i-th part with that part's key. Every part's blocks (and remote picks: another PART's
// neighbours) equal those of the 4-rank run's rank for it, with skew; a rank past its parts joins with no seeds.
TEST(DistSampler, VirtualPartsSampleAsOneRankPerPart) {
  const Partitioned p(PartSpec{4, partition::Method::kMetis, false}, TestName());
  const Config config{"s4", SkewOptions{.skew = 4}, Aggregation::kGcn, false, {3, 2}};
  const std::vector<RankRun> want = RunDistributed(p, config);
  // Rank r's run of parts merged (partition/merge_parts.h), as the CLI loads it.
  const auto merged_part = [&](const std::vector<int32_t>& first, size_t r) {
    std::vector<partition::LocalPart> run;
    for (int32_t k = first[r]; k < first[r + 1]; ++k) run.push_back(partition::LoadPart(p.dir(), k));
    return partition::MergeParts(run, p.offsets(), first, static_cast<int32_t>(r));
  };
  for (int32_t ranks : {3, 2, 1}) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    const std::vector<int32_t> first = partition::GroupParts(p.offsets(), ranks);
    const VirtualParts vp{.part_offsets = p.offsets(), .first = first};
    comm::ThreadGroup::Run(ranks, [&](comm::Communicator& comm) {
      const auto r = static_cast<size_t>(comm.Rank());
      const partition::LocalPart merged = merged_part(first, r);
      DistNeighborSampler sampler =
          MakeDistSampler(merged, partition::GroupOffsets(p.offsets(), first), comm,
                          SamplerOptions{config.fanouts, config.replace, config.aggregation}, config.skew, vp);
      for (uint64_t b = 0; b < kBatches; ++b) {
        for (int32_t i = 0; i < vp.SubSteps(); ++i) {
          const int32_t part = first[r] + i;
          const bool mine = part < first[r + 1];
          const std::vector<Block> got =
              sampler.Sample(mine ? Seeds(p, part, b) : std::vector<int64_t>{}, Key(part, b));
          if (!mine) continue;
          const RankRun& w = want[static_cast<size_t>(part)];
          ASSERT_EQ(got.size(), w.blocks[b].size());
          for (size_t l = 0; l < got.size(); ++l) {
            ExpectSameBlock(got[l], w.blocks[b][l], "part " + std::to_string(part) + " batch " + std::to_string(b));
          }
          EXPECT_EQ(sampler.last_stats().remote_picks, w.stats[b].remote_picks);
        }
      }
    });
  }
  // A key naming a part the rank does not hold is refused.
  const std::vector<int32_t> first = partition::GroupParts(p.offsets(), 2);
  const std::string err = ErrorOf([&] {
    comm::ThreadGroup::Run(2, [&](comm::Communicator& comm) {
      const auto r = static_cast<size_t>(comm.Rank());
      const partition::LocalPart merged = merged_part(first, r);
      DistNeighborSampler sampler =
          MakeDistSampler(merged, partition::GroupOffsets(p.offsets(), first), comm,
                          SamplerOptions{{2}, false, Aggregation::kGcn}, {}, VirtualParts{p.offsets(), first});
      sampler.Sample({}, Key(first[r] + 5, 0));
    });
  });
  EXPECT_NE(err.find("holds parts"), std::string::npos) << err;
}

}  // namespace
}  // namespace tessel::sampling
