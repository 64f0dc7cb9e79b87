// DistFeatureStore and HaloExchange on thread ranks (1 to 4) over partition folders written and loaded for real:
// rows equal the single-process PrepareFeatures rows, the cache policy, fetch counts and exact byte accounting.
#include "train/gcn/dist_features.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "comm/thread_comm.h"
#include "core/device.h"
#include "core/error.h"
#include "core/pinned_memory.h"
#include "core/rng.h"
#include "partition/partition_format.h"
#include "tests/partition/test_graphs.h"

namespace tessel::train::gcn {
namespace {

namespace fs = std::filesystem;
using partition::LocalPart;

// One partition folder and what a test needs to check against the single-process rows.
struct Partitioned {
  fs::path dir;
  int32_t parts = 1;
  datasets::NodeDataset data;
  FeatureMatrix reference;              // PrepareFeatures(data.features, L1): row = original id
  std::vector<int64_t> offsets;         // partitions.json node_ranges
  std::vector<int64_t> global_to_orig;  // new global id -> original id
};

// The partition folders are written once for the whole suite (writing is the slow part) and removed at its end.
class DistFeaturesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / fmt::format("tessel-distfeat-{}", ::getpid());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  static void TearDownTestSuite() {
    cache_.clear();
    fs::remove_all(root_);
  }

  // A 200-node random dataset (dense features on an undirected graph, or sparse ones on a directed graph) in
  // `parts` parts: METIS, except random assignment at 3 parts (more halo, every part talks to every other).
  static const Partitioned& Make(int32_t parts, bool sparse) {
    std::unique_ptr<Partitioned>& slot = cache_[{parts, sparse}];
    if (slot != nullptr) return *slot;
    partition::fixtures::GraphSpec spec;
    spec.sparse_features = sparse;
    spec.directed = sparse;
    spec.feature_dim = 6;
    spec.seed = 11 + static_cast<uint64_t>(parts);
    auto p = std::make_unique<Partitioned>();
    p->parts = parts;
    p->data = partition::fixtures::RandomDataset(spec);
    p->dir = root_ / fmt::format("p{}-{}", parts, sparse ? "sparse" : "dense");
    partition::PartitionOptions opt;
    opt.method = parts == 3 ? partition::Method::kRandom : partition::Method::kMetis;
    opt.num_parts = parts;
    opt.seed = 3;
    partition::PartitionToFolder(p->data, opt, p->dir, false);
    p->reference = PrepareFeatures(p->data.features, FeatureScaling{FeatureNorm::kL1, {}, {}});
    p->offsets = partition::ReadPartitionsJson(p->dir)["node_ranges"].get<std::vector<int64_t>>();
    p->global_to_orig.assign(static_cast<size_t>(p->data.num_nodes()), -1);
    for (int32_t k = 0; k < parts; ++k) {
      const LocalPart part = partition::LoadPart(p->dir, k);
      for (int64_t l = 0; l < part.num_owned; ++l) p->global_to_orig[part.global_offset + l] = part.owned_ids[l];
    }
    for (int64_t o : p->global_to_orig) EXPECT_GE(o, 0);
    slot = std::move(p);
    return *slot;
  }

  static inline fs::path root_;
  static inline std::map<std::pair<int32_t, bool>, std::unique_ptr<Partitioned>> cache_;
};

// Row r of a feature matrix as (columns, values), read straight from the arrays (dense rows list every column).
std::pair<std::vector<int32_t>, std::vector<float>> RowOf(const FeatureMatrix& m, int64_t r) {
  std::pair<std::vector<int32_t>, std::vector<float>> row;
  if (m.is_sparse) {
    auto p = m.sparse.indptr.Host();
    for (int64_t e = p[r]; e < p[r + 1]; ++e) {
      row.first.push_back(m.sparse.indices[e]);
      row.second.push_back(m.sparse.has_values() ? m.sparse.values[e] : 1.0F);
    }
  } else {
    for (int64_t c = 0; c < m.dense.cols; ++c) {
      row.first.push_back(static_cast<int32_t>(c));
      row.second.push_back(m.dense.View()[r * m.dense.cols + c]);
    }
  }
  return row;
}

// got row i must equal the reference row of original node orig[i], bit for bit.
void ExpectRows(const FeatureMatrix& got, const FeatureMatrix& ref, const std::vector<int64_t>& orig,
                const std::string& what) {
  ASSERT_EQ(got.is_sparse, ref.is_sparse) << what;
  ASSERT_EQ(got.rows(), static_cast<int64_t>(orig.size())) << what;
  ASSERT_EQ(got.cols(), ref.cols()) << what;
  if (got.is_sparse) got.sparse.Validate(what);
  for (size_t i = 0; i < orig.size(); ++i) {
    ASSERT_EQ(RowOf(got, static_cast<int64_t>(i)), RowOf(ref, orig[i]))
        << what << " row " << i << " (node " << orig[i] << ")";
  }
}

int64_t RowPayloadBytes(const FeatureMatrix& ref, int64_t orig) {
  if (!ref.is_sparse) return ref.cols() * 4;
  return 8 + static_cast<int64_t>(RowOf(ref, orig).first.size()) * 8;  // nnz count + (column id, value) pairs
}

// The halo nodes a capacity keeps, by brute force: most owned nodes listing the node, ties by smaller global id.
std::vector<int64_t> ExpectedCache(const LocalPart& part, const std::vector<int64_t>& offsets, int64_t capacity) {
  std::vector<std::pair<int64_t, int64_t>> order;  // (-owned neighbours, global id)
  for (int64_t j = 0; j < part.num_halo; ++j) {
    int64_t owned_neighbours = 0;
    for (int64_t u = 0; u < part.num_owned; ++u) {
      auto nb = part.graph.Neighbors(u);
      owned_neighbours += std::count(nb.begin(), nb.end(), static_cast<int32_t>(part.num_owned + j));
    }
    order.emplace_back(-owned_neighbours, offsets[part.halo_owner[j]] + part.halo_remote[j]);
  }
  std::sort(order.begin(), order.end());
  if (capacity >= 0 && capacity < part.num_halo) order.resize(static_cast<size_t>(capacity));
  std::vector<int64_t> ids;
  for (const auto& o : order) ids.push_back(o.second);
  std::sort(ids.begin(), ids.end());
  return ids;
}

// Two steps per rank: A = some owned nodes and every halo node (repeats, shuffled); B = random nodes anywhere,
// empty on rank 1. Deterministic per (parts, rank).
std::vector<int64_t> StepIds(const LocalPart& part, const std::vector<int64_t>& offsets, int rank, int step) {
  Rng rng(StreamKey{.seed = static_cast<uint64_t>(offsets.size()),
                    .rank = static_cast<uint64_t>(rank),
                    .purpose = static_cast<uint64_t>(step)});
  std::vector<int64_t> ids;
  if (step == 0) {
    for (int t = 0; t < 12 && part.num_owned > 0; ++t) {
      ids.push_back(part.global_offset + static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(part.num_owned))));
    }
    for (int64_t j = 0; j < part.num_halo; ++j) {
      const int64_t g = offsets[part.halo_owner[j]] + part.halo_remote[j];
      ids.push_back(g);
      if (j % 4 == 0) ids.push_back(g);
    }
  } else if (rank != 1) {
    const auto n = static_cast<uint64_t>(offsets.back());
    for (int t = 0; t < 40; ++t) ids.push_back(static_cast<int64_t>(rng.UniformInt(n)));
    ids.push_back(ids.front());
  }
  for (size_t i = ids.size(); i > 1; --i) std::swap(ids[i - 1], ids[rng.UniformInt(i)]);
  return ids;
}

struct RankRun {
  std::vector<int64_t> ids[2];
  FeatureMatrix rows[2];
  FetchStats after_a;
  FetchStats after_b;  // accumulated over both steps
  std::vector<int64_t> cached;
  int64_t setup_bytes = 0;
  int64_t cache_rows = 0;
  uint64_t cache_bytes_sent = 0;
  uint64_t feature_bytes_sent = 0;
};

std::vector<RankRun> RunStore(const Partitioned& p, FeatureCacheOptions cache, FeatureNorm norm = FeatureNorm::kL1,
                              std::vector<int64_t>* fill_rounds = nullptr) {
  std::vector<RankRun> runs(static_cast<size_t>(p.parts));
  if (fill_rounds != nullptr) fill_rounds->assign(static_cast<size_t>(p.parts), 0);
  comm::ThreadGroup::Run(p.parts, [&](comm::Communicator& comm) {
    const LocalPart part = partition::LoadPart(p.dir, comm.Rank());
    RankRun& run = runs[static_cast<size_t>(comm.Rank())];
    DistFeatureStore store(Context{}, part, p.offsets, comm, norm, cache);
    if (fill_rounds != nullptr) (*fill_rounds)[static_cast<size_t>(comm.Rank())] = store.fill_rounds();
    EXPECT_EQ(store.num_owned(), part.num_owned);
    EXPECT_EQ(store.cols(), p.data.features.dim);
    EXPECT_EQ(store.is_sparse(), p.data.features.sparse);
    run.cached.assign(store.cached_ids().begin(), store.cached_ids().end());
    run.setup_bytes = store.setup_bytes();
    run.cache_rows = store.cache_rows();
    run.cache_bytes_sent = comm.Bytes().Bytes("feature_cache");
    FetchStats stats;
    for (int step = 0; step < 2; ++step) {
      run.ids[step] = StepIds(part, p.offsets, comm.Rank(), step);
      run.rows[step] = store.Fetch(run.ids[step], &stats);
      if (step == 0) run.after_a = stats;
    }
    run.after_b = stats;
    run.feature_bytes_sent = comm.Bytes().Bytes("features");
  });
  return runs;
}

void CheckStore(const Partitioned& p, int64_t capacity) {
  const std::string what =
      fmt::format("{} parts, {} features, capacity {}", p.parts, p.reference.is_sparse ? "sparse" : "dense", capacity);
  std::vector<RankRun> runs = RunStore(p, FeatureCacheOptions{capacity});
  const auto ranks = static_cast<uint64_t>(p.parts);
  const uint64_t count_exchanges = p.reference.is_sparse ? 2 : 1;  // AlltoallvWithCounts calls per request
  uint64_t sent = 0;
  uint64_t expected_sent = 0;
  uint64_t cache_sent = 0;
  uint64_t expected_cache_sent = 0;
  for (int32_t r = 0; r < p.parts; ++r) {
    const RankRun& run = runs[static_cast<size_t>(r)];
    const LocalPart part = partition::LoadPart(p.dir, r);
    const std::vector<int64_t> cached = ExpectedCache(part, p.offsets, capacity);
    EXPECT_EQ(run.cached, cached) << what << ", rank " << r;
    EXPECT_EQ(run.cache_rows, static_cast<int64_t>(cached.size())) << what;
    if (capacity == 0) {
      EXPECT_EQ(run.setup_bytes, 0) << what;
    }
    EXPECT_EQ(static_cast<uint64_t>(run.setup_bytes), run.cache_bytes_sent) << what;
    cache_sent += run.cache_bytes_sent;
    if (capacity != 0) expected_cache_sent += (ranks - 1) * 8 * count_exchanges + cached.size() * 8;
    for (int64_t g : cached)
      expected_cache_sent += static_cast<uint64_t>(RowPayloadBytes(p.reference, p.global_to_orig[g]));

    FetchStats expect[2];
    for (int step = 0; step < 2; ++step) {
      const std::vector<int64_t>& ids = run.ids[step];
      std::vector<int64_t> orig;
      std::set<int64_t> remote;
      for (int64_t g : ids) {
        orig.push_back(p.global_to_orig[g]);
        if (g >= part.global_offset && g < part.global_offset + part.num_owned) {
          ++expect[step].local_rows;
        } else if (std::binary_search(cached.begin(), cached.end(), g)) {
          ++expect[step].cache_hits;
        } else {
          remote.insert(g);
        }
      }
      expect[step].requested_rows = static_cast<int64_t>(ids.size());
      expect[step].fetched_rows = static_cast<int64_t>(remote.size());
      for (int64_t g : remote) expect[step].fetched_bytes += RowPayloadBytes(p.reference, p.global_to_orig[g]);
      ExpectRows(run.rows[step], p.reference, orig, fmt::format("{}, rank {}, step {}", what, r, step));
      expected_sent +=
          (ranks - 1) * 8 * count_exchanges + remote.size() * 8 + static_cast<uint64_t>(expect[step].fetched_bytes);
    }
    if (capacity == -1) {
      EXPECT_EQ(expect[0].fetched_rows, 0) << "owned + halo requests never leave the rank";
    }
    if (r == 1) {
      EXPECT_EQ(expect[1].requested_rows, 0);
    }
    const FetchStats& a = run.after_a;
    const FetchStats& b = run.after_b;
    EXPECT_EQ(a.requested_rows, expect[0].requested_rows) << what << ", rank " << r;
    EXPECT_EQ(a.local_rows, expect[0].local_rows) << what << ", rank " << r;
    EXPECT_EQ(a.cache_hits, expect[0].cache_hits) << what << ", rank " << r;
    EXPECT_EQ(a.fetched_rows, expect[0].fetched_rows) << what << ", rank " << r;
    EXPECT_EQ(a.fetched_bytes, expect[0].fetched_bytes) << what << ", rank " << r;
    EXPECT_EQ(b.requested_rows, expect[0].requested_rows + expect[1].requested_rows) << what << ", rank " << r;
    EXPECT_EQ(b.local_rows, expect[0].local_rows + expect[1].local_rows) << what << ", rank " << r;
    EXPECT_EQ(b.cache_hits, expect[0].cache_hits + expect[1].cache_hits) << what << ", rank " << r;
    EXPECT_EQ(b.fetched_rows, expect[0].fetched_rows + expect[1].fetched_rows) << what << ", rank " << r;
    EXPECT_EQ(b.fetched_bytes, expect[0].fetched_bytes + expect[1].fetched_bytes) << what << ", rank " << r;
    sent += run.feature_bytes_sent;
  }
  // Bytes sent by all ranks = bytes asked for (ids) and received (rows) by all ranks, plus the count exchanges.
  if (p.parts == 1) expected_sent = 0;
  if (p.parts == 1) expected_cache_sent = 0;
  EXPECT_EQ(sent, expected_sent) << what;
  EXPECT_EQ(cache_sent, expected_cache_sent) << what;
}

TEST_F(DistFeaturesTest, FetchEqualsSingleProcessRowsForEveryCachePolicy) {
  for (int32_t parts = 1; parts <= 4; ++parts) {
    for (bool sparse : {false, true}) {
      const Partitioned& p = Make(parts, sparse);
      for (int64_t capacity : {-1, 0, 5}) CheckStore(p, capacity);
      if (HasFatalFailure()) return;
    }
  }
}

// The rows a budget buys: budget / row bytes (dense: cols x 4; sparse: 8 + 8 per stored entry, the mean row), at
// most the halo; a budget that buys nothing gives no cache.
TEST(CacheBudget, RowsForBudget) {
  EXPECT_EQ(CacheRowsForBudget(1000, 100, 50), 10);
  EXPECT_EQ(CacheRowsForBudget(1099, 100, 50), 10);
  EXPECT_EQ(CacheRowsForBudget(1000, 100, 4), 4);
  EXPECT_EQ(CacheRowsForBudget(99, 100, 50), 0);
  EXPECT_EQ(CacheRowsForBudget(0, 100, 50), 0);
  FeatureMatrix dense;
  dense.dense = kernels::Matrix(3, 128);
  EXPECT_EQ(RowBytesForBudget(dense), 512);
  FeatureMatrix sparse;
  sparse.is_sparse = true;
  sparse.sparse = kernels::SparseMatrix{4, 10, Buffer<int64_t>({0, 1, 3, 3, 5}), Buffer<int32_t>({0, 1, 2, 3, 4}),
                                        Buffer<float>({1, 1, 1, 1, 1})};
  EXPECT_EQ(RowBytesForBudget(sparse), 8 + 10);  // 5 entries x 8 bytes over 4 rows, rounded up
}

// The default budget is the machine's: the node's available memory over 4 x the ranks on the host. A halo that fits
// it is cached whole (the 100 Mbit/s case of issue 51: a 22 MB halo on a machine with gigabytes free); on a node
// too small for it the cache shrinks to the share; with the available memory unknown, half the own bytes (as before).
TEST(CacheBudget, DefaultBudgetIsTheMachinesShareAndTakesTheWholeHaloWhenItFits) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  EXPECT_EQ(MachineCacheBudget(16 * kGiB, 2, 100), 2 * kGiB);
  EXPECT_EQ(MachineCacheBudget(16 * kGiB, 8, 100), kGiB / 2);
  EXPECT_EQ(MachineCacheBudget(16 * kGiB, 0, 100), 4 * kGiB);  // no count of local ranks: this rank alone
  EXPECT_EQ(MachineCacheBudget(-1, 2, 1000), 500);             // unknown: half the own feature bytes
  EXPECT_EQ(MachineCacheBudget(0, 2, 1000), 0);                // nothing available: no cache
  // 100k-node CSBM, 2 ranks, 128 dense features: about 43k halo rows of 512 bytes each (22 MB).
  const int64_t halo = 43000;
  const int64_t row = 512;
  EXPECT_EQ(CacheRowsForBudget(MachineCacheBudget(8 * kGiB, 2, 25'600'000), row, halo), halo);
  // The same halo on a node with 40 MB available to 2 ranks: 5 MB each, 10240 rows.
  EXPECT_EQ(CacheRowsForBudget(MachineCacheBudget(40 << 20, 2, 25'600'000), row, halo), (5 << 20) / row);
  // Rising available memory never shrinks the cache; more ranks on the host never grow it.
  int64_t last = 0;
  for (int64_t avail = 0; avail <= 64 * kGiB; avail += kGiB / 3) {
    const int64_t rows = CacheRowsForBudget(MachineCacheBudget(avail, 4, 0), row, int64_t{1} << 40);
    EXPECT_GE(rows, last);
    EXPECT_LE(MachineCacheBudget(avail, 5, 0), MachineCacheBudget(avail, 4, 0));
    last = rows;
  }
}

// --feature-cache-budget: each rank caches the rows its budget buys (the ones with the most owned neighbours, as a
// row count would choose them), filled over several rounds when a round's bytes are small, and every fetched row is
// the single-process one; owned rows are read in place without scaling.
TEST_F(DistFeaturesTest, BudgetSizesTheCacheAndTheFillTakesBoundedRounds) {
  for (bool sparse : {false, true}) {
    const Partitioned& p = Make(3, sparse);
    FeatureCacheOptions cache;
    cache.capacity = FeatureCacheOptions::kFromBudget;
    cache.budget_bytes = 7 * 64;
    cache.fill_round_bytes = 1;  // one row per requester and round
    std::vector<int64_t> rounds;
    const std::vector<RankRun> runs = RunStore(p, cache, FeatureNorm::kNone, &rounds);
    int64_t most = 0;
    for (int32_t r = 0; r < p.parts; ++r) {
      const LocalPart part = partition::LoadPart(p.dir, r);
      FeatureMatrix owned = PrepareFeatures(part.features, FeatureScaling{});
      const int64_t rows = CacheRowsForBudget(cache.budget_bytes, RowBytesForBudget(owned), part.num_halo);
      const RankRun& run = runs[static_cast<size_t>(r)];
      EXPECT_EQ(run.cache_rows, rows) << "rank " << r << (sparse ? " sparse" : " dense");
      EXPECT_EQ(run.cached, ExpectedCache(part, p.offsets, rows)) << "rank " << r;
      most = std::max(most, rows);
      std::vector<int64_t> orig;
      for (int64_t g : run.ids[0]) orig.push_back(p.global_to_orig[g]);
      // Without scaling the reference rows are the raw ones.
      ExpectRows(run.rows[0], PrepareFeatures(p.data.features, FeatureScaling{}), orig, fmt::format("rank {}", r));
    }
    EXPECT_GT(most, 1);
    for (int64_t n : rounds) EXPECT_EQ(n, most) << "one row per round: as many rounds as the largest cache";
  }
}

// The default (--feature-cache -2 with no budget) on a machine with any memory to spare caches every halo row.
TEST_F(DistFeaturesTest, DefaultBudgetCachesTheWholeHaloOfASmallPart) {
  const Partitioned& p = Make(3, false);
  FeatureCacheOptions cache;
  cache.capacity = FeatureCacheOptions::kFromBudget;
  cache.budget_bytes = -1;
  const std::vector<RankRun> runs = RunStore(p, cache, FeatureNorm::kNone, nullptr);
  for (int32_t r = 0; r < p.parts; ++r) {
    const LocalPart part = partition::LoadPart(p.dir, r);
    EXPECT_GT(part.num_halo, 0);
    EXPECT_EQ(runs[static_cast<size_t>(r)].cache_rows, part.num_halo) << "rank " << r;
  }
}

// --feature-compress: every row a rank owns arrives exact; every remote row arrives as the codec's round trip of
// the exact row (bit for bit for the deterministic codecs; within one level per element and with the same columns
// for QSGD; rows of ones exactly), and the wire bytes are fewer than the raw bytes, which are what the plain format
// sends (the requested ids and the rows).
TEST_F(DistFeaturesTest, CompressedFetchDeliversEachRowsCodecRoundTrip) {
  for (int32_t parts = 1; parts <= 4; ++parts) {
    for (bool sparse : {false, true}) {
      const Partitioned& p = Make(parts, sparse);
      for (const std::string spec_text : {"fp16", "bf16", "int8", "qsgd:3"}) {
        const comm::CompressSpec spec = comm::CompressSpec::Parse(spec_text, "--feature-compress");
        const std::string what = fmt::format("{} parts, {}, {}", parts, sparse ? "sparse" : "dense", spec_text);
        int64_t raw_sent = 0, wire_sent = 0, plain_received = 0;
        std::vector<FetchStats> stats(static_cast<size_t>(parts));
        std::vector<std::vector<int64_t>> ids(static_cast<size_t>(parts));
        std::vector<FeatureMatrix> rows(static_cast<size_t>(parts));
        comm::ThreadGroup::Run(parts, [&](comm::Communicator& comm) {
          const LocalPart part = partition::LoadPart(p.dir, comm.Rank());
          DistFeatureStore store(Context{}, part, p.offsets, comm, FeatureNorm::kL1, FeatureCacheOptions{0});
          store.SetCompression(spec, 5);
          const auto r = static_cast<size_t>(comm.Rank());
          ids[r] = StepIds(part, p.offsets, comm.Rank(), 0);
          rows[r] = store.Fetch(ids[r], &stats[r], 3);
        });
        for (int32_t r = 0; r < parts; ++r) {
          const LocalPart part = partition::LoadPart(p.dir, r);
          const FeatureMatrix& got = rows[static_cast<size_t>(r)];
          ASSERT_EQ(got.is_sparse, sparse) << what;
          if (sparse) got.sparse.Validate(what);
          std::set<int64_t> remote;
          for (size_t i = 0; i < ids[static_cast<size_t>(r)].size(); ++i) {
            const int64_t g = ids[static_cast<size_t>(r)][i];
            const auto want = RowOf(p.reference, p.global_to_orig[g]);
            const auto have = RowOf(got, static_cast<int64_t>(i));
            ASSERT_EQ(have.first, want.first) << what << " row " << i;
            const bool owned = g >= part.global_offset && g < part.global_offset + part.num_owned;
            if (owned) {
              ASSERT_EQ(have.second, want.second) << what << " owned row " << i;
              continue;
            }
            remote.insert(g);
            if (sparse && std::all_of(want.second.begin(), want.second.end(), [](float v) { return v == 1.0F; })) {
              ASSERT_EQ(have.second, want.second) << what << " row of ones " << i;  // sent as a flag, exact
              continue;
            }
            auto codec = comm::MakeCodec(spec, static_cast<int64_t>(want.second.size()));
            std::vector<std::byte> w(
                static_cast<size_t>(codec->EncodedBytes(static_cast<int64_t>(want.second.size()))));
            codec->Encode(want.second, 0, w);
            std::vector<float> trip(want.second.size());
            codec->Decode(w, trip, false);
            if (spec.method != comm::CompressMethod::kQsgd) {
              ASSERT_EQ(have.second, trip) << what << " remote row " << i;
            } else {
              double sq = 0;
              for (float v : want.second) sq += static_cast<double>(v) * v;
              for (size_t c = 0; c < want.second.size(); ++c) {
                ASSERT_LE(std::fabs(have.second[c] - want.second[c]), std::sqrt(sq) / 3 * (1 + 1e-5))
                    << what << " remote row " << i;
              }
            }
          }
          // The plain exchange: 8 bytes per requested id, then the rows.
          for (int64_t g : remote) plain_received += 8 + RowPayloadBytes(p.reference, p.global_to_orig[g]);
          raw_sent += stats[static_cast<size_t>(r)].sent_raw_bytes;
          wire_sent += stats[static_cast<size_t>(r)].sent_wire_bytes;
        }
        EXPECT_EQ(raw_sent, plain_received) << what;  // raw = what the uncompressed exchange carries (ids, rows)
        if (plain_received > 0) {
          EXPECT_LT(wire_sent, raw_sent) << what;
        } else {
          EXPECT_EQ(wire_sent, 0) << what;
        }
      }
    }
  }
}

// FetchIndexed (the host's training path for dense rows): input i's row (row rows[i] of one matrix, the received rows
// in place) is Fetch's row i bit for bit, with the same statistics and bytes sent, for every cache policy, compressed
// or not; the matrix holds one row per local mention and one per distinct remote id, nothing more.
TEST_F(DistFeaturesTest, IndexedFetchEqualsFetchWithoutASecondCopy) {
  for (int32_t parts = 1; parts <= 4; ++parts) {
    const Partitioned& p = Make(parts, false);
    for (int64_t capacity : {-1, 0, 5}) {
      for (const std::string spec_text : {"none", "int8"}) {
        const std::string what = fmt::format("{} parts, capacity {}, {}", parts, capacity, spec_text);
        comm::ThreadGroup::Run(parts, [&](comm::Communicator& comm) {
          const LocalPart part = partition::LoadPart(p.dir, comm.Rank());
          DistFeatureStore store(Context{}, part, p.offsets, comm, FeatureNorm::kL1, FeatureCacheOptions{capacity});
          store.SetCompression(comm::CompressSpec::Parse(spec_text, "--feature-compress"), 5);
          for (int step = 0; step < 2; ++step) {
            const std::vector<int64_t> ids = StepIds(part, p.offsets, comm.Rank(), step);
            FetchStats want_stats, got_stats;
            const uint64_t b0 = comm.Bytes().Bytes("features");
            const FeatureMatrix want = store.Fetch(ids, &want_stats, 7);
            const uint64_t b1 = comm.Bytes().Bytes("features");
            std::vector<int64_t> rows = {-1};
            const FeatureMatrix got = store.FetchIndexed(ids, &rows, &got_stats, 7);
            EXPECT_EQ(comm.Bytes().Bytes("features") - b1, b1 - b0) << what;
            ASSERT_EQ(rows.size(), ids.size()) << what;
            std::set<int64_t> remote;
            for (int64_t g : ids) {
              if (g < part.global_offset || g >= part.global_offset + part.num_owned) remote.insert(g);
            }
            EXPECT_LE(got.rows(), static_cast<int64_t>(ids.size())) << what;
            EXPECT_GE(got.rows(), static_cast<int64_t>(remote.size()) - store.cache_rows()) << what;
            for (size_t i = 0; i < ids.size(); ++i) {
              ASSERT_GE(rows[i], 0) << what;
              ASSERT_LT(rows[i], got.rows()) << what;
              EXPECT_EQ(RowOf(got, rows[i]), RowOf(want, static_cast<int64_t>(i))) << what << " input " << i;
            }
            EXPECT_EQ(got_stats.requested_rows, want_stats.requested_rows) << what;
            EXPECT_EQ(got_stats.local_rows, want_stats.local_rows) << what;
            EXPECT_EQ(got_stats.cache_hits, want_stats.cache_hits) << what;
            EXPECT_EQ(got_stats.fetched_rows, want_stats.fetched_rows) << what;
            EXPECT_EQ(got_stats.fetched_bytes, want_stats.fetched_bytes) << what;
            EXPECT_EQ(got.rows(), want_stats.local_rows + want_stats.cache_hits + want_stats.fetched_rows) << what;
          }
        });
      }
    }
  }
}

// --device cuda (FetchToDevice, on the simulated device): the table rows a step names are Fetch's rows bit for bit
// (compressed or not: the same exchange and the same rounding), and once the table and the pinned staging array are
// large enough a step uploads exactly its fetched rows, in one copy per rank that fetched any, and allocates, pins
// and downloads nothing. The thread ranks share the process's counters, so they are read by rank 0 between
// barriers and compared with the sum over ranks.
TEST_F(DistFeaturesTest, DeviceFetchUploadsOnlyTheFetchedRowsAndEqualsFetch) {
  device::ScopedSimulatedDevice sim;
  const int64_t pinned_at_start = device::ReadPinnedCounters().in_use_bytes;
  for (int32_t parts = 1; parts <= 4; ++parts) {
    const Partitioned& p = Make(parts, false);
    for (int64_t capacity : {-1, 0, 5}) {
      for (const std::string spec_text : {"none", "int8", "qsgd:3"}) {
        const std::string what = fmt::format("{} parts, capacity {}, {}", parts, capacity, spec_text);
        const auto n_ranks = static_cast<size_t>(parts);
        std::vector<int64_t> fetched(n_ranks, 0), uploads(n_ranks, 0);
        device::Counters moved;
        device::PinnedCounters pinned_before, pinned_after;
        int64_t pinned_allocated = 0;
        comm::ThreadGroup::Run(parts, [&](comm::Communicator& comm) {
          const LocalPart part = partition::LoadPart(p.dir, comm.Rank());
          const auto r = static_cast<size_t>(comm.Rank());
          DistFeatureStore store(Context{}, part, p.offsets, comm, FeatureNorm::kL1, FeatureCacheOptions{capacity});
          store.SetCompression(comm::CompressSpec::Parse(spec_text, "--feature-compress"), 5);
          const std::vector<int64_t> ids0 = StepIds(part, p.offsets, comm.Rank(), 0);
          const std::vector<int64_t> ids1 = StepIds(part, p.offsets, comm.Rank(), 1);
          std::vector<int64_t> both = ids0;
          both.insert(both.end(), ids1.begin(), ids1.end());
          (void)store.FetchToDevice(both, nullptr, 7);  // warm: the table and the staging array sized for either step
          for (int step = 0; step < 2; ++step) {
            const std::vector<int64_t>& ids = step == 0 ? ids0 : ids1;
            const FeatureMatrix want = store.Fetch(ids, nullptr, 7);
            ASSERT_TRUE(comm.Barrier().ok());
            device::Counters before;
            if (r == 0) {
              before = device::ReadCounters();
              pinned_before = device::ReadPinnedCounters();
            }
            ASSERT_TRUE(comm.Barrier().ok());
            FetchStats stats;
            // Each measured step fetches other rows than the call before it, so stale staging rows would show.
            const DistFeatureStore::DeviceRows got = store.FetchToDevice(ids, &stats, 7);
            ASSERT_TRUE(comm.Barrier().ok());
            if (r == 0) {
              const device::Counters d = device::ReadCounters() - before;
              moved.h2d_copies += d.h2d_copies;
              moved.h2d_bytes += d.h2d_bytes;
              moved.d2h_copies += d.d2h_copies;
              moved.allocations += d.allocations;
              moved.synchronizations += d.synchronizations;
              pinned_after = device::ReadPinnedCounters();
              pinned_allocated += pinned_after.allocations - pinned_before.allocations;
            }
            fetched[r] += stats.fetched_rows;
            uploads[r] += stats.fetched_rows > 0 ? 1 : 0;
            ASSERT_TRUE(comm.Barrier().ok());
            // The simulated device's memory is host memory: the table is read where the model's gather reads it.
            ASSERT_EQ(got.rows.size(), ids.size()) << what;
            const int64_t c = store.cols();
            const float* table = got.table->dense.data.Device();
            for (size_t i = 0; i < ids.size(); ++i) {
              const std::vector<float> row(table + got.rows[i] * c, table + (got.rows[i] + 1) * c);
              ASSERT_EQ(row, RowOf(want, static_cast<int64_t>(i)).second) << what << ", step " << step << " row " << i;
            }
          }
        });
        if (HasFatalFailure()) return;
        int64_t copies = 0, rows = 0;
        for (size_t r = 0; r < n_ranks; ++r) {
          copies += uploads[r];
          rows += fetched[r];
        }
        const int64_t c = p.data.features.dim;
        EXPECT_EQ(moved.h2d_copies, copies) << what;
        EXPECT_EQ(moved.h2d_bytes, rows * c * 4) << what;
        EXPECT_EQ(moved.d2h_copies, 0) << what;
        EXPECT_EQ(moved.allocations, 0) << what;
        EXPECT_EQ(moved.synchronizations, 0) << what;
        EXPECT_EQ(pinned_allocated, 0) << what;
        if (parts > 1 && capacity == 0) {
          EXPECT_GT(rows, 0) << what << ": the test must fetch something";
        }
      }
    }
  }
  EXPECT_EQ(device::ReadPinnedCounters().in_use_bytes, pinned_at_start) << "the stores freed their staging arrays";
}

// Standard scaling is fitted over the rows of every rank (two allreduces): each rank's owned rows equal the
// single-process rows scaled with the whole dataset's statistics (up to the order of the float64 sums).
TEST_F(DistFeaturesTest, StandardScalingUsesTheStatisticsOfEveryRank) {
  for (int32_t parts : {1, 3, 4}) {
    for (bool sparse : {false, true}) {
      const Partitioned& p = Make(parts, sparse);
      const FeatureScaling whole = FitFeatureScaling(p.data.features, FeatureNorm::kStandard);
      const FeatureMatrix reference = PrepareFeatures(p.data.features, whole);
      comm::ThreadGroup::Run(parts, [&](comm::Communicator& comm) {
        const LocalPart part = partition::LoadPart(p.dir, comm.Rank());
        DistFeatureStore store(Context{}, part, p.offsets, comm, FeatureNorm::kStandard, FeatureCacheOptions{0});
        ASSERT_EQ(store.scaling().scale.size(), whole.scale.size());
        for (size_t c = 0; c < whole.scale.size(); ++c) {
          EXPECT_NEAR(store.scaling().scale[c], whole.scale[c], 1e-12 * whole.scale[c]) << c;
          EXPECT_NEAR(store.scaling().mean[c], whole.mean[c], 1e-12 * (1 + std::abs(whole.mean[c]))) << c;
        }
        for (int64_t l = 0; l < part.num_owned; ++l) {
          const auto got = RowOf(store.owned(), l);
          const auto want = RowOf(reference, part.owned_ids[l]);
          ASSERT_EQ(got.first, want.first) << parts << " parts, row " << l;
          for (size_t i = 0; i < got.second.size(); ++i) {
            EXPECT_NEAR(got.second[i], want.second[i], 1e-5 * (1 + std::abs(want.second[i]))) << l;
          }
        }
      });
    }
  }
}

TEST_F(DistFeaturesTest, RemoteRowsAreFetchedFromTheirOwnersWithoutCache) {
  // Without a cache, every halo request of step A goes to its owner (a positive check that fetches happen).
  const Partitioned& p = Make(2, false);
  std::vector<RankRun> runs = RunStore(p, FeatureCacheOptions{0});
  for (int32_t r = 0; r < 2; ++r) {
    const LocalPart part = partition::LoadPart(p.dir, r);
    EXPECT_EQ(runs[static_cast<size_t>(r)].after_a.fetched_rows, part.num_halo);
    EXPECT_EQ(runs[static_cast<size_t>(r)].after_a.fetched_bytes, part.num_halo * p.reference.cols() * 4);
    EXPECT_GT(part.num_halo, 0);
  }
}

// Per-node matrices of the whole graph (row = original id) and their owned slices exchanged across the halo.
TEST_F(DistFeaturesTest, HaloExchangeEqualsTheGlobalRows) {
  for (int32_t parts = 1; parts <= 4; ++parts) {
    for (bool sparse : {false, true}) {
      const Partitioned& p = Make(parts, sparse);
      const int64_t n = p.data.num_nodes();
      const int64_t c = 3;
      std::vector<float> global(static_cast<size_t>(n * c));
      Rng rng(42);
      for (float& x : global) x = static_cast<float>(rng.Normal());
      FeatureMatrix global_m;
      global_m.dense = kernels::Matrix(n, c, global);
      comm::ThreadGroup::Run(parts, [&](comm::Communicator& comm) {
        const LocalPart part = partition::LoadPart(p.dir, comm.Rank());
        const std::string what = fmt::format("{} parts, rank {}", parts, comm.Rank());
        std::vector<int64_t> owned_orig(part.owned_ids.Host().begin(), part.owned_ids.Host().end());
        std::vector<int64_t> local_orig;
        for (int64_t l = 0; l < part.num_local(); ++l) local_orig.push_back(part.ToOriginal(l));
        kernels::Matrix owned(part.num_owned, c);
        for (int64_t l = 0; l < part.num_owned; ++l) {
          std::copy_n(global.data() + owned_orig[l] * c, c, owned.Mut().data() + l * c);
        }
        // The one-shot form, then an exchanger reused twice: one alltoallv per dense exchange.
        FeatureMatrix got;
        got.dense = HaloExchange(part, comm, owned);
        ExpectRows(got, global_m, local_orig, what + " one-shot");
        const HaloExchanger exchanger(part, comm);
        const uint64_t calls = comm.Bytes().ByPurpose().at("halo_exchange").calls;
        for (int round = 0; round < 2; ++round) {
          got.dense = exchanger.Exchange(owned);
          ExpectRows(got, global_m, local_orig, what + " exchanger");
        }
        EXPECT_EQ(comm.Bytes().ByPurpose().at("halo_exchange").calls, calls + 2) << what;
        // Rounds of one row per pair of ranks: the same rows, in as many alltoallv calls as the largest pair has
        // rows (the default's buffers hold 8 MiB a round; these, one row per peer).
        const HaloExchanger by_row(part, comm, 1);
        const uint64_t calls_by_row = comm.Bytes().ByPurpose().at("halo_exchange").calls;
        got.dense = by_row.Exchange(owned);
        ExpectRows(got, global_m, local_orig, what + " one row a round");
        EXPECT_EQ(comm.Bytes().ByPurpose().at("halo_exchange").calls - calls_by_row, by_row.Rounds(c)) << what;
        EXPECT_EQ(exchanger.Rounds(c), 1) << what;
        if (parts > 1) {
          EXPECT_GT(by_row.Rounds(c), 1) << what;
        }
        // Input features, sparse kept sparse.
        const FeatureMatrix prepared = PrepareFeatures(part.features, FeatureScaling{FeatureNorm::kL1, {}, {}});
        const FeatureMatrix all = HaloExchange(part, comm, prepared);
        EXPECT_EQ(all.is_sparse, sparse);
        ExpectRows(all, p.reference, local_orig, what + " features");
      });
    }
  }
}

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(DistFeaturesTest, BadArgumentsFailWithTheFix) {
  const Partitioned& p = Make(2, false);
  auto store = [&](std::vector<int64_t> offsets, int64_t capacity, std::vector<int64_t> ids) {
    comm::ThreadGroup::Run(2, [&](comm::Communicator& comm) {
      const LocalPart part = partition::LoadPart(p.dir, comm.Rank());
      DistFeatureStore s(Context{}, part, offsets, comm, FeatureNorm::kL1, FeatureCacheOptions{capacity});
      (void)s.Fetch(ids, nullptr);
    });
  };
  EXPECT_NE(ErrorOf([&] { store(p.offsets, -3, {}); }).find("cache capacity -3 (budget -1 bytes) is invalid"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { store({0, 7, 200}, -1, {}); }).find("offsets give"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { store({0, 200}, -1, {}); }).find("node_ranges"), std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              store(p.offsets, -1, {3, 200});
            }).find("global id 200 is outside [0, 200)"),
            std::string::npos);
  // One rank per part.
  const std::string wrong_size = ErrorOf([&] {
    comm::ThreadGroup::Run(1, [&](comm::Communicator& comm) {
      const LocalPart part = partition::LoadPart(p.dir, 0);
      (void)HaloExchange(part, comm, kernels::Matrix(part.num_owned, 2));
    });
  });
  EXPECT_NE(wrong_size.find("1 ranks for a partition of 2 parts"), std::string::npos) << wrong_size;
  const std::string wrong_rows = ErrorOf([&] {
    comm::ThreadGroup::Run(2, [&](comm::Communicator& comm) {
      const LocalPart part = partition::LoadPart(p.dir, comm.Rank());
      (void)HaloExchanger(part, comm).Exchange(kernels::Matrix(part.num_owned + 1, 2));
    });
  });
  EXPECT_NE(wrong_rows.find("rows given for the"), std::string::npos) << wrong_rows;
}

}  // namespace
}  // namespace tessel::train::gcn
