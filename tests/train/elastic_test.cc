// Elastic GCN training (docs/reliability.md, "Ranks that leave"): parts merged for fewer ranks hold exactly the graph,
// features, labels and splits of their parts (partition/merge_parts.h), a checkpoint written by K thread ranks
// resumes on 1 to K - 1 of them and trains on, and a resume inside an epoch runs only that epoch's remaining steps.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "comm/thread_comm.h"
#include "partition/merge_parts.h"
#include "partition/partition_format.h"
#include "tests/comm/comm_test_util.h"
#include "tests/train/gcn_test_util.h"
#include "train/gcn/checkpoint.h"
#include "train/gcn/trainer.h"

namespace tessel::train::gcn {
namespace {

namespace fs = std::filesystem;

fs::path Scratch(const std::string& name) {
  return fs::path(::testing::TempDir()) / ("tessel_elastic_" + std::to_string(::getpid()) + "_" + name);
}

// Cora (sparse or dense features) in 4 METIS parts, written once per process (thread ranks ask at once).
const fs::path& FourParts(bool dense) {
  static const fs::path dirs[2] = {Scratch("p4"), Scratch("p4_dense")};
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  const fs::path& dir = dirs[dense ? 1 : 0];
  if (!fs::exists(dir / "partitions.json")) {
    partition::PartitionOptions o;
    o.num_parts = 4;
    o.seed = 3;
    partition::PartitionToFolder(dense ? test_util::BundledDenseCora() : test_util::BundledCora(), o, dir, true);
  }
  return dir;
}

std::vector<int64_t> Ranges(const fs::path& dir) {
  return partition::ReadPartitionsJson(dir).at("node_ranges").get<std::vector<int64_t>>();
}

// Rank r of R's merged part, as the CLI makes it (app/train_gcn.cc LoadRankPart).
partition::LocalPart Merged(const fs::path& dir, int32_t ranks, int32_t r) {
  const std::vector<int64_t> ranges = Ranges(dir);
  const std::vector<int32_t> first = partition::GroupParts(ranges, ranks);
  std::vector<partition::LocalPart> run;
  for (int32_t p = first[static_cast<size_t>(r)]; p < first[static_cast<size_t>(r) + 1]; ++p) {
    run.push_back(partition::LoadPart(dir, p));
  }
  return partition::MergeParts(run, ranges, first, r);
}

TEST(MergeParts, GroupsAreContiguousNonEmptyAndBalanced) {
  const std::vector<int64_t> offsets = {0, 10, 20, 30, 40};
  EXPECT_EQ(partition::GroupParts(offsets, 4), (std::vector<int32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(partition::GroupParts(offsets, 2), (std::vector<int32_t>{0, 2, 4}));
  EXPECT_EQ(partition::GroupParts(offsets, 1), (std::vector<int32_t>{0, 4}));
  const std::vector<int32_t> three = partition::GroupParts(offsets, 3);
  ASSERT_EQ(three.size(), 4U);
  for (size_t r = 0; r + 1 < three.size(); ++r) EXPECT_LT(three[r], three[r + 1]);
  // Uneven parts: the boundary nearest half the nodes.
  EXPECT_EQ(partition::GroupParts({0, 70, 80, 90, 100}, 2), (std::vector<int32_t>{0, 1, 4}));
  EXPECT_EQ(partition::GroupOffsets(offsets, {0, 2, 4}), (std::vector<int64_t>{0, 20, 40}));
  EXPECT_THROW(partition::GroupParts(offsets, 5), Error);
  EXPECT_THROW(partition::GroupParts(offsets, 0), Error);
}

// Every merged rank's rows are the dataset's rows of its nodes (by original id), its halo names the node its holder
// owns, its features and labels are the dataset's, and the splits together are the dataset's.
TEST(MergeParts, MergedPartsHoldExactlyTheirPartsGraphFeaturesLabelsAndSplits) {
  for (bool dense : {false, true}) {
    const datasets::NodeDataset& data = dense ? test_util::BundledDenseCora() : test_util::BundledCora();
    const auto& g = std::get<datasets::CsrGraph32>(data.graph);
    for (int32_t ranks : {1, 2, 3}) {
      SCOPED_TRACE("dense " + std::to_string(dense) + ", ranks " + std::to_string(ranks));
      std::vector<partition::LocalPart> parts;
      for (int32_t r = 0; r < ranks; ++r) parts.push_back(Merged(FourParts(dense), ranks, r));
      std::set<int64_t> train;
      int64_t owned = 0;
      for (const partition::LocalPart& p : parts) {
        owned += p.num_owned;
        const auto original = [&](int32_t local) {
          return local < p.num_owned ? p.owned_ids[static_cast<size_t>(local)]
                                     : p.halo_ids[static_cast<size_t>(local - p.num_owned)];
        };
        for (int64_t u = 0; u < p.num_owned; ++u) {
          const int64_t v = p.owned_ids[static_cast<size_t>(u)];
          std::vector<int64_t> mine;
          for (int32_t c : p.graph.Neighbors(u)) mine.push_back(original(c));
          std::vector<int64_t> want(g.Neighbors(v).begin(), g.Neighbors(v).end());
          std::sort(mine.begin(), mine.end());
          ASSERT_EQ(mine, want) << "rank " << p.part << " node " << v;
          ASSERT_EQ(p.labels[static_cast<size_t>(u)], data.labels[static_cast<size_t>(v)]);
        }
        for (int64_t j = 0; j < p.num_halo; ++j) {
          const partition::LocalPart& holder = parts[static_cast<size_t>(p.halo_owner[static_cast<size_t>(j)])];
          ASSERT_NE(holder.part, p.part);
          ASSERT_EQ(holder.owned_ids[static_cast<size_t>(p.halo_remote[static_cast<size_t>(j)])],
                    p.halo_ids[static_cast<size_t>(j)]);
        }
        ASSERT_EQ(p.features.num_rows, p.num_owned);
        for (int64_t u = 0; u < p.num_owned; u += 97) {
          const auto v = static_cast<size_t>(p.owned_ids[static_cast<size_t>(u)]);
          const auto row = static_cast<size_t>(u);
          if (dense) {
            const auto d = static_cast<size_t>(data.features.dim);
            for (size_t c = 0; c < d; ++c) ASSERT_EQ(p.features.dense[row * d + c], data.features.dense[v * d + c]);
          } else {
            const auto mine = p.features.SparseRows();
            const auto want = data.features.SparseRows();
            ASSERT_TRUE(std::ranges::equal(mine.RowIndices(static_cast<int64_t>(row)),
                                           want.RowIndices(static_cast<int64_t>(v))));
            ASSERT_TRUE(
                std::ranges::equal(mine.RowValues(static_cast<int64_t>(row)), want.RowValues(static_cast<int64_t>(v))));
          }
        }
        for (int64_t u : p.train.Host()) train.insert(p.owned_ids[static_cast<size_t>(u)]);
      }
      EXPECT_EQ(owned, data.num_nodes());
      EXPECT_EQ(train, std::set<int64_t>(data.train.Host().begin(), data.train.Host().end()));
    }
  }
}

TrainConfig Config(int epochs, const fs::path& checkpoint, bool resume) {
  TrainConfig c;
  c.model.layers = 2;
  c.model.hidden = 16;
  c.epochs = epochs;
  c.batch_size = 16;
  c.fanouts = {5, 5};
  c.normalize_features = FeatureNorm::kL1;
  c.adam.lr = 0.05F;
  c.checkpoint_dir = checkpoint;
  c.checkpoint_every = 1;
  c.resume = resume;
  return c;
}

struct RankRun {
  TrainResult result;
  ResumePoint resumed;
};

// Trains on `ranks` thread ranks of the 4-part Cora (merged parts below 4); rank 0's outcome.
RankRun TrainOn(int32_t ranks, const TrainConfig& c) {
  RankRun out;
  comm::testing::WithWatchdog(std::chrono::seconds(180), [&] {
    comm::ThreadGroup::Run(ranks, [&](comm::Communicator& comm) {
      const fs::path& dir = FourParts(false);
      const partition::LocalPart part =
          ranks == 4 ? partition::LoadPart(dir, comm.Rank()) : Merged(dir, ranks, comm.Rank());
      std::vector<int64_t> offsets = Ranges(dir);
      if (ranks < 4) offsets = partition::GroupOffsets(offsets, partition::GroupParts(offsets, ranks));
      Context ctx;
      ctx.seed = 11;
      ctx.threads = 1;
      GcnTrainer trainer(part, offsets, comm, c, ctx);
      TrainResult r = trainer.Train();
      if (comm.Rank() == 0) out = {std::move(r), trainer.resumed()};
    });
  });
  return out;
}

// A checkpoint of 4 ranks after 5 epochs resumes on 3, 2 and 1 ranks: the resumed run starts after epoch 5, says it
// was written by 4 ranks, and reaches the accuracy of 4 ranks trained straight through for 20 epochs, less 0.03 (Cora's
// 1000 test nodes: about two standard deviations of the difference between two seeds' runs). Fewer ranks take more
// steps of the same per-rank batch, so they may do better.
TEST(ElasticResume, FourRankCheckpointResumesOnFewerRanks) {
  const fs::path ckpt = Scratch("ck4");
  fs::remove_all(ckpt);
  const RankRun straight = TrainOn(4, Config(20, {}, false));
  ASSERT_GT(straight.result.test.accuracy, 0.7);
  TrainOn(4, Config(5, ckpt, false));
  ASSERT_EQ(LoadCheckpoint(ckpt).ranks, 4);
  for (int32_t ranks : {3, 2, 1}) {
    SCOPED_TRACE("ranks " + std::to_string(ranks));
    const fs::path copy = Scratch("ck4_on" + std::to_string(ranks));
    fs::remove_all(copy);
    fs::copy(ckpt, copy);
    const RankRun r = TrainOn(ranks, Config(20, copy, true));
    EXPECT_TRUE(r.resumed.resumed);
    EXPECT_EQ(r.resumed.epochs_done, 5);
    EXPECT_EQ(r.resumed.ranks, 4);
    ASSERT_EQ(r.result.epochs.size(), 15U);
    EXPECT_EQ(r.result.epochs.front().epoch, 6);
    EXPECT_GT(r.result.test.accuracy, straight.result.test.accuracy - 0.03);
    EXPECT_EQ(LoadCheckpoint(copy).ranks, ranks);
    fs::remove_all(copy);
  }
  fs::remove_all(ckpt);
}

TEST(ElasticResume, FirstStepScalesTheStepsDoneToTheNewEpoch) {
  EXPECT_EQ(FirstStep(ResumePoint{}, 10), 0);
  EXPECT_EQ(FirstStep(ResumePoint{.resumed = true, .epochs_done = 2}, 10), 0);
  EXPECT_EQ(FirstStep(ResumePoint{.resumed = true, .epoch_steps_done = 3, .epoch_steps = 5}, 5), 3);
  EXPECT_EQ(FirstStep(ResumePoint{.resumed = true, .epoch_steps_done = 3, .epoch_steps = 5}, 9), 5);  // 27 / 5
  EXPECT_EQ(FirstStep(ResumePoint{.resumed = true, .epoch_steps_done = 5, .epoch_steps = 5}, 9), 9);
}

// State taken inside epoch 2 (as the just-in-time state of a failed job is) resumes there: the run takes only the
// epoch's remaining steps, on the same ranks and on fewer.
TEST(ElasticResume, StateInsideAnEpochResumesThere) {
  const fs::path ckpt = Scratch("ck_mid");
  fs::remove_all(ckpt);
  const fs::path one = Scratch("ck_one");
  fs::remove_all(one);
  TrainOn(4, Config(1, one, false));
  const int64_t steps = LoadCheckpoint(one).adam_steps;  // one epoch on 4 ranks
  ASSERT_GT(steps, 2);
  for (int32_t ranks : {4, 2}) {
    SCOPED_TRACE("ranks " + std::to_string(ranks));
    fs::remove_all(ckpt);
    SaveCheckpoint(ckpt, test_util::MidEpochState(one, steps, 2, 2));  // 2 steps of epoch 2 done
    const RankRun r = TrainOn(ranks, Config(2, ckpt, true));
    EXPECT_EQ(r.resumed.epoch_steps_done, 2);
    EXPECT_TRUE(r.resumed.just_in_time);
    ASSERT_EQ(r.result.epochs.size(), 1U);
    const TrainState end = LoadCheckpoint(ckpt);
    EXPECT_EQ(end.epochs_done, 2);
    EXPECT_EQ(end.epoch_steps_done, 0);
    EXPECT_FALSE(end.just_in_time);
    if (ranks == 4) {
      EXPECT_EQ(end.adam_steps, 2 * steps);  // the 2 steps in the state are not taken again
    } else {
      const int64_t steps2 = r.result.epochs.front().steps;
      EXPECT_EQ(end.adam_steps, steps + 2 + steps2 - FirstStep(r.resumed, steps2));
    }
  }
  fs::remove_all(ckpt);
  fs::remove_all(one);
}

}  // namespace
}  // namespace tessel::train::gcn
