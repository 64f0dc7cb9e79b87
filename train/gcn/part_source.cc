// One part of a partition folder per rank as a GraphSource (trainer.h; docs/distributed.md): every step samples
// from this rank's seeds (DistNeighborSampler: owners sample their nodes for the requesters, one exchange per
// layer, optionally skewed towards owned neighbours), fetches the missing input rows in one all-to-all
// (DistFeatureStore, halo cache); evaluation never samples nor skews: layer-wise full-neighbour inference over the
// 1-hop halo (DistEvaluator, one halo exchange per layer), split counts summed over ranks.
#include <chrono>
#include <memory>
#include <numeric>
#include <utility>

#include "sampling/dist_sampler.h"
#include "train/gcn/dist_eval.h"
#include "train/gcn/dist_features.h"
#include "train/gcn/sample_exchange.h"
#include "train/gcn/trainer.h"

namespace tessel::train::gcn {
namespace {

using Clock = std::chrono::steady_clock;

class PartSource final : public GraphSource {
 public:
  // Built in place (no moves): the sampler keeps views into its own arrays.
  PartSource(const partition::LocalPart& part, std::vector<int64_t> offsets, comm::Communicator& comm,
             const TrainConfig& c, const Context& ctx)
      : part_(part),
        comm_(comm),
        sampler_(
            MakeDistSampler(part, offsets, comm,
                            sampling::SamplerOptions{c.fanouts, c.replace,
                                                     c.model.kind == ModelKind::kGcn ? sampling::Aggregation::kGcn
                                                                                     : sampling::Aggregation::kMean},
                            c.dist.skew)),
        features_(ctx, part, std::move(offsets), comm, c.normalize_features, FeatureCacheOptions{c.dist.feature_cache}),
        eval_(part, comm, c.model.kind),
        labels_(part.labels.ToVector()) {
    features_.SetCompression(comm::CompressSpec::Parse(c.dist.feature_compress, "--feature-compress"),
                             Mix64(ctx.seed ^ 0x66656174ULL));
  }

  std::vector<int64_t> TrainNodes() const override {
    std::vector<int64_t> ids = part_.train.ToVector();
    for (int64_t& u : ids) u += part_.global_offset;
    return ids;
  }
  bool Samples() const override { return true; }
  bool Partitioned() const override { return true; }

  void MakeBatch(const Context& ctx, std::span<const int64_t> seeds, const StreamKey& sample_key, Batch* b,
                 StepCounters* counters) override {
    auto t0 = Clock::now();
    uint64_t b0 = comm_.Bytes().Total();
    b->blocks = sampler_.Sample(seeds, sample_key);
    counters->sample_seconds += SecondsSince(t0);
    const sampling::SampleStats& ss = sampler_.last_stats();
    counters->sampled_edges += ss.sampled_edges;
    counters->remote_picks += ss.remote_picks;
    counters->remote_input_nodes += ss.remote_input_nodes;
    uint64_t b1 = comm_.Bytes().Total();
    counters->sample_bytes += b1 - b0;
    b->graphs.clear();
    for (const auto& blk : b->blocks) b->graphs.push_back(LayerGraph{&blk.adj, nullptr});

    t0 = Clock::now();
    const std::span<const int64_t> inputs =
        b->blocks.empty() ? std::span<const int64_t>() : std::span<const int64_t>(b->blocks.front().src_nodes);
    FetchStats fs;
    const uint64_t step = sample_key.epoch * 1000003ULL + sample_key.batch;
    b->x_row_ids = nullptr;
    if (ctx.IsCuda() && !features_.is_sparse()) {
      // On a device the owned and cached rows stay there; only the fetched rows go up (from a pinned array), and the
      // first layer gathers its input rows by id (docs/gpu.md, "Partitioned runs").
      const DistFeatureStore::DeviceRows rows = features_.FetchToDevice(inputs, &fs, step);
      b->gathered = FeatureMatrix();
      b->x = rows.table;
      b->x_rows = rows.rows;
    } else {
      b->gathered = features_.Fetch(inputs, &fs, step);
      b->x = &b->gathered;
      b->x_rows = {};
    }
    counters->fetch_seconds += SecondsSince(t0);
    const uint64_t fetch_bytes = comm_.Bytes().Total() - b1;
    counters->feature_bytes += fetch_bytes;
    counters->fetched_rows += fs.fetched_rows;
    counters->feature_raw_bytes +=
        fetch_bytes - static_cast<uint64_t>(fs.sent_wire_bytes) + static_cast<uint64_t>(fs.sent_raw_bytes);
    counters->compress_seconds += fs.encode_seconds;
    counters->decompress_seconds += fs.decode_seconds;

    SetSeedLabels(
        seeds,
        [&](int64_t seed) {
          const int64_t local = seed - part_.global_offset;
          TESSEL_CHECK(local >= 0 && local < part_.num_owned, "seed {} is not owned by rank {}", seed, ctx.rank);
          return labels_[static_cast<size_t>(local)];
        },
        b);
  }

  const Matrix& Logits(const Context& ctx, GcnModel& model) override {
    logits_ = eval_.Logits(ctx, model, features_.EvalInput());
    return logits_;
  }

  void Metrics(std::span<const int32_t> pred, ClassMetrics* train, ClassMetrics* val, ClassMetrics* test) override {
    eval_.Metrics(pred, labels_, train, val, test);
  }

  const FeatureScaling& scaling() const override { return features_.scaling(); }

 private:
  const partition::LocalPart& part_;
  comm::Communicator& comm_;
  sampling::DistNeighborSampler sampler_;
  DistFeatureStore features_;
  DistEvaluator eval_;
  std::vector<int32_t> labels_;  // per owned node (-1 where unlabelled)
  Matrix logits_;
};

}  // namespace

std::unique_ptr<GraphSource> MakePartSource(const partition::LocalPart& part, std::vector<int64_t> offsets,
                                            comm::Communicator& comm, const TrainConfig& c, const Context& ctx) {
  return std::make_unique<PartSource>(part, std::move(offsets), comm, c, ctx);
}

}  // namespace tessel::train::gcn
