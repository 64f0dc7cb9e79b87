// One part of a partition folder per rank as a GraphSource (trainer.h; docs/distributed.md): every step samples
// from this rank's seeds (DistNeighborSampler: owners sample their nodes for the requesters, one exchange per
// layer, optionally skewed towards owned neighbours), fetches the missing input rows in one all-to-all
// (DistFeatureStore, halo cache sized by a per-rank budget). Evaluation (--eval) is full by default: layer-wise
// full-neighbour inference over the 1-hop halo (DistEvaluator, one halo exchange per layer, its rows through the
// feature codec after an epoch with --feature-compress, exact at the end); --eval sampled predicts the val and test
// nodes (and a train subset) on uniformly sampled blocks (never skewed, so unbiased). Split counts are summed over
// ranks.
//
// Memory: what a rank holds is sized by its part (docs/distributed.md, "Memory per rank"): the owned feature rows
// are read in place from the mapped part (without scaling), the sampler keeps one compact copy of the owned
// columns, after which the part's mapped column array is released, and the full evaluation's adjacency exists only
// with --eval full.
#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <optional>
#include <utility>

#include "core/memory_budget.h"
#include "kernels/loss.h"
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
             const TrainConfig& c, const Context& ctx, sampling::VirtualParts virtual_parts)
      : part_(part),
        comm_(comm),
        sampler_(
            MakeDistSampler(part, offsets, comm,
                            sampling::SamplerOptions{c.fanouts, c.replace,
                                                     c.model.kind == ModelKind::kGcn ? sampling::Aggregation::kGcn
                                                                                     : sampling::Aggregation::kMean},
                            c.dist.skew, std::move(virtual_parts))),
        features_(ctx, part, std::move(offsets), comm, c.normalize_features,
                  FeatureCacheOptions{c.dist.feature_cache, c.dist.feature_cache_budget_mib < 0
                                                                ? int64_t{-1}
                                                                : c.dist.feature_cache_budget_mib << 20}),
        kind_(c.model.kind),
        eval_mode_(c.dist.eval),
        eval_batch_(c.batch_size),
        eval_fanouts_(c.dist.eval_fanouts),
        feature_spec_(c.dist.feature_compress.spec),
        eval_seed_(Mix64(ctx.seed ^ 0x6576616cULL)) {
    if (eval_fanouts_.empty()) {
      for (int f : c.fanouts) eval_fanouts_.push_back(f < 0 ? -1 : 4 * f);
    }
    if (eval_mode_ == EvalMode::kFull) eval_.emplace(part, comm, kind_);
    features_.SetCompression(feature_spec_, Mix64(ctx.seed ^ 0x66656174ULL));
    // The sampler has its own copy of the owned columns and the cache is chosen: the mapped column array, and the
    // original ids only the loader's checks read, need not stay in memory (read again from the file if needed).
    const auto release = [](const auto& buf) {
      memory::ReleaseMappedPages(buf.Host().data(), static_cast<int64_t>(buf.bytes()));
    };
    release(part.graph.indices());
    release(part.owned_ids);
    release(part.halo_ids);
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
    Fill(ctx, seeds, sample_key, true, b, counters);
  }

  // A batch for `seeds`: blocks sampled (training: skewed, the training fanouts; evaluation, skewed = false: uniform,
  // the evaluation fanouts), input rows fetched, seed labels set.
  void Fill(const Context& ctx, std::span<const int64_t> seeds, const StreamKey& sample_key, bool skewed, Batch* b,
            StepCounters* counters) {
    // The previous step's input rows (the largest per-step array) go before this step's arrive: a batch is
    // refilled only once its step has computed.
    b->gathered = FeatureMatrix();
    b->x = nullptr;
    b->x_rows = {};
    auto t0 = Clock::now();
    uint64_t b0 = comm_.Bytes().Total();
    b->blocks = sampler_.Sample(seeds, sample_key, skewed, skewed ? std::span<const int>() : eval_fanouts_);
    counters->sample_seconds += SecondsSince(t0);
    const sampling::SampleStats& ss = sampler_.last_stats();
    counters->sampled_edges += ss.sampled_edges;
    counters->remote_picks += ss.remote_picks;
    counters->remote_input_nodes += ss.remote_input_nodes;
    uint64_t b1 = comm_.Bytes().Total();
    counters->sample_bytes += b1 - b0;
    counters->sample_raw_bytes += b1 - b0 - (ss.request_bytes + ss.response_bytes) + ss.raw_bytes;
    b->graphs.clear();
    for (const auto& blk : b->blocks) b->graphs.push_back(LayerGraph{&blk.adj, nullptr});

    // What sampling freed goes back to the OS before the step's largest arrays (the input rows and the rows this rank
    // serves) are mapped beside it.
    memory::ReturnFreeHeap();
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
    } else if (!features_.is_sparse()) {
      // Each input row once, the received ones in place, read by id inside the model (no assembled copy).
      b->gathered = features_.FetchIndexed(inputs, &b->gathered_rows, &fs, step);
      b->x = &b->gathered;
      b->x_rows = b->gathered_rows;
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
          return part_.labels[static_cast<size_t>(local)];
        },
        b);
  }

  const Matrix& Logits(const Context& ctx, GcnModel& model) override {
    if (!eval_) eval_.emplace(part_, comm_, kind_);  // collective: every rank calls Logits together
    logits_ = eval_->Logits(ctx, model, features_.EvalInput());
    return logits_;
  }

  void Metrics(std::span<const int32_t> pred, ClassMetrics* train, ClassMetrics* val, ClassMetrics* test) override {
    SplitMetrics(comm_, part_.num_classes, pred, part_.labels.Host(), part_.train.Host(), part_.val.Host(),
                 part_.test.Host(), train, val, test);
  }

  void EvaluateSplits(const Context& ctx, GcnModel& model, int epoch, bool final, ClassMetrics* train,
                      ClassMetrics* val, ClassMetrics* test, StepCounters* counters) override {
    StepCounters unused;
    if (counters == nullptr) counters = &unused;
    memory::ReturnFreeHeap();  // the steps' freed arrays, so that they do not stand beside the evaluation's
    if (eval_mode_ == EvalMode::kFull) {
      // An epoch's evaluation sends each layer's halo rows through the training's feature codec (--feature-compress;
      // rounding keyed by the epoch, so a resumed run evaluates as the uninterrupted one); the final one is exact.
      if (!eval_) eval_.emplace(part_, comm_, kind_);
      const comm::CompressSpec spec = final ? comm::CompressSpec{} : feature_spec_;
      FetchStats fs;
      const uint64_t b0 = comm_.Bytes().Total();
      logits_ =
          eval_->Logits(ctx, model, features_.EvalInput(), spec, Mix64(eval_seed_ ^ static_cast<uint64_t>(epoch)), &fs);
      const uint64_t sent = comm_.Bytes().Total() - b0;
      counters->feature_bytes += sent;
      counters->feature_raw_bytes +=
          sent - static_cast<uint64_t>(fs.sent_wire_bytes) + static_cast<uint64_t>(fs.sent_raw_bytes);
      counters->compress_seconds += fs.encode_seconds;
      counters->decompress_seconds += fs.decode_seconds;
      std::vector<int32_t> pred(static_cast<size_t>(logits_.rows));
      kernels::RowArgmax(ctx, logits_, pred);
      Metrics(pred, train, val, test);
      return;
    }
    // The train nodes evaluated: all of them at the end; after an epoch, a fixed random subset as large as the val
    // split (the shuffle of "epoch 0", which training never draws), so an epoch costs about what val + test cost.
    std::vector<int64_t> train_nodes = part_.train.ToVector();
    if (!final) {
      ShuffleSeeds(ctx, 0, train_nodes);
      train_nodes.resize(std::min(train_nodes.size(), part_.val.size()));
      std::sort(train_nodes.begin(), train_nodes.end());
    }
    const std::span<const int64_t> lists[3] = {train_nodes, part_.val.Host(), part_.test.Host()};
    std::vector<int64_t> seeds;
    for (const auto& list : lists) {
      for (int64_t u : list) seeds.push_back(part_.global_offset + u);
    }
    std::vector<int32_t> pred(static_cast<size_t>(part_.num_owned), -1);
    PredictSampled(ctx, model, seeds, pred, counters);
    SplitMetrics(comm_, part_.num_classes, pred, part_.labels.Host(), lists[0], lists[1], lists[2], train, val, test);
  }

  int64_t PartBytes() const override {
    const auto& g = part_.graph;
    const auto& f = part_.features;
    size_t n = g.indptr().bytes() + g.indices().bytes() + g.weights().bytes() + part_.owned_ids.bytes() +
               part_.halo_ids.bytes() + part_.halo_owner.bytes() + part_.halo_remote.bytes() + f.dense.bytes() +
               f.indptr.bytes() + f.indices.bytes() + f.values.bytes() + part_.labels.bytes() + part_.train.bytes() +
               part_.val.bytes() + part_.test.bytes();
    return static_cast<int64_t>(n);
  }

  const FeatureScaling& scaling() const override { return features_.scaling(); }

 private:
  // Predicted classes of `seeds` (owned global ids) into pred[seed - global_offset]: batches of the training batch
  // size, blocks sampled with the evaluation fanouts, uniformly (no skew: unbiased), the same stream every epoch
  // (purpose kPurposeEvalSample, epoch 0), forward without dropout. Every rank takes as many batches as the rank
  // with the most seeds. Collective.
  void PredictSampled(const Context& ctx, GcnModel& model, std::span<const int64_t> seeds, std::span<int32_t> pred,
                      StepCounters* counters) {
    const auto n = static_cast<int64_t>(seeds.size());
    const int64_t bs = eval_batch_ > 0 ? eval_batch_ : std::max<int64_t>(1, n);
    int64_t steps = (n + bs - 1) / bs;
    comm_.Allreduce<int64_t>(std::span<int64_t>(&steps, 1), comm::ReduceOp::kMax, "stats").ThrowIfError();
    Batch b;
    std::vector<int32_t> out;
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t begin = std::min(n, s * bs);
      const std::span<const int64_t> batch =
          seeds.subspan(static_cast<size_t>(begin), static_cast<size_t>(std::min(n, begin + bs) - begin));
      StreamKey key = TrainKey(ctx, 0, s, kPurposeEvalSample);
      // With virtual parts the key names this rank's first part (evaluation keeps the rank's own stream).
      const sampling::VirtualParts& vp = sampler_.virtual_parts();
      if (vp.Active()) key.rank = static_cast<uint64_t>(vp.first[static_cast<size_t>(comm_.Rank())]);
      Fill(ctx, batch, key, false, &b, counters);
      if (batch.empty()) continue;
      const Matrix& logits = model.Forward(ctx, *b.x, b.x_rows, b.graphs, false, key, b.x_row_ids);
      out.resize(static_cast<size_t>(logits.rows));
      kernels::RowArgmax(ctx, logits, out);
      for (size_t i = 0; i < batch.size(); ++i) {
        pred[static_cast<size_t>(batch[i] - part_.global_offset)] = out[i];
      }
    }
  }

  const partition::LocalPart& part_;
  comm::Communicator& comm_;
  sampling::DistNeighborSampler sampler_;
  DistFeatureStore features_;
  ModelKind kind_;
  EvalMode eval_mode_;
  int64_t eval_batch_;
  std::vector<int> eval_fanouts_;      // of sampled evaluation
  comm::CompressSpec feature_spec_;    // --feature-compress: remote feature rows and the epochs' evaluation rows
  uint64_t eval_seed_;                 // keys the rounding of the evaluation's compressed rows (with the epoch)
  std::optional<DistEvaluator> eval_;  // --eval full, or once Logits is asked for (predictions of every node)
  Matrix logits_;
};

}  // namespace

std::unique_ptr<GraphSource> MakePartSource(const partition::LocalPart& part, std::vector<int64_t> offsets,
                                            comm::Communicator& comm, const TrainConfig& c, const Context& ctx,
                                            sampling::VirtualParts virtual_parts) {
  return std::make_unique<PartSource>(part, std::move(offsets), comm, c, ctx, std::move(virtual_parts));
}

}  // namespace tessel::train::gcn
