// What a GCN training step computes on and where it comes from: the Batch of one step, the StepCounters that a
// step's batch adds to, and the GraphSource interface with its two implementations (the whole graph in one process,
// whole_graph_source.cc; one part of a partition folder per rank, part_source.cc). Also the gradient average over
// ranks that every step ends with.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "comm/communicator.h"
#include "comm/compress.h"
#include "core/context.h"
#include "datasets/dataset.h"
#include "partition/partition_build.h"
#include "sampling/block.h"
#include "sampling/dist_sampler.h"
#include "train/gcn/data.h"
#include "train/gcn/metrics.h"
#include "train/gcn/model.h"
#include "train/gcn/train_common.h"
#include "train/gcn/train_config.h"

namespace tessel::train::gcn {

// Scales each rank's gradients by local_count / total_count and sums them over ranks (purpose "gradients"), so
// every rank holds sum_r (b_r / B) g_r: the gradient of the mean loss over the union batch when g_r is the
// gradient of rank r's mean loss over its b_r seeds. A rank with local_count 0 contributes zeros. Collective.
// With `compress` the sum goes through that compressed allreduce (call number `step`; `stats` collects its bytes
// and seconds); without, through a plain float32 allreduce.
void AverageGradients(comm::Communicator& comm, std::vector<Param>& params, int64_t local_count, int64_t total_count,
                      comm::CompressedAllreduce* compress = nullptr, uint64_t step = 0,
                      comm::CompressStats* stats = nullptr);
// AverageGradients in its three parts: the rank's gradients scaled by local_count / total_count into one flat
// buffer; the sum over ranks in place (collective); the buffer back into the parameters' gradients.
std::vector<float> PackGradients(const std::vector<Param>& params, int64_t local_count, int64_t total_count);
void SumGradients(comm::Communicator& comm, std::vector<float>& buf, comm::CompressedAllreduce* compress = nullptr,
                  uint64_t step = 0, comm::CompressStats* stats = nullptr);
void UnpackGradients(std::span<const float> buf, std::vector<Param>& params);

// What one step computes on: the layer graphs (input layer first), the input rows of the first
// layer's sources, and the rows of the last layer's output that enter the loss with their labels.
// Made by a GraphSource; the spans point into the batch itself or into the source, valid until
// the source's next MakeBatch.
struct Batch {
  std::vector<sampling::Block> blocks;         // sampled layer graphs, owned here (empty for a whole-graph step)
  std::vector<LayerGraph> graphs;              // one per layer
  FeatureMatrix gathered;                      // input rows gathered for this step (unused when x points elsewhere)
  const FeatureMatrix* x = nullptr;            // the input rows, or (x_rows non-empty) the rows they are read from
  std::span<const int64_t> x_rows;             // dense x: input row i is x's row x_rows[i] (gathered inside the model)
  const Buffer<int64_t>* x_row_ids = nullptr;  // x_rows already on the device (the GPU sampler's), or null
  std::vector<int64_t> gathered_rows;          // x_rows of `gathered` when its rows are indexed (FetchIndexed)
  // Labels and loss rows are Buffers kept from step to step, so on a device they are uploaded
  // only when they change (a whole-graph step's never; a sampled step's labels every step, its
  // rows 0..n-1 when n changes).
  Buffer<int32_t> seed_labels;
  const Buffer<int32_t>* labels = nullptr;  // (*labels)[(*rows)[i]] is the class of loss row i
  Buffer<int64_t> seed_rows;
  const Buffer<int64_t>* rows = nullptr;  // output rows in the loss (null or empty: no seeds in this step)
};

// A sampled batch's loss inputs: seed_labels[i] = label_of(seeds[i]) and seed_rows = 0, 1, ...,
// rewritten only when the count changes (so its device copy stays valid).
template <typename LabelOf>
void SetSeedLabels(std::span<const int64_t> seeds, LabelOf label_of, Batch* b) {
  b->seed_labels.ResizeUninitialized(seeds.size());
  auto labels = b->seed_labels.MutableHost();
  for (size_t i = 0; i < seeds.size(); ++i) labels[i] = label_of(seeds[i]);
  if (b->seed_rows.size() != seeds.size()) {
    b->seed_rows = Buffer<int64_t>::Uninitialized(seeds.size());
    auto rows = b->seed_rows.MutableHost();
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int64_t>(i);
  }
  b->labels = &b->seed_labels;
  b->rows = &b->seed_rows;
}

// What a step's batch cost this rank; MakeBatch adds to it, so one struct sums an epoch.
struct StepCounters {
  double sample_seconds = 0, fetch_seconds = 0;
  uint64_t sample_bytes = 0, feature_bytes = 0;
  uint64_t feature_raw_bytes = 0;  // feature_bytes as if the rows travelled uncompressed
  uint64_t sample_raw_bytes = 0;   // sample_bytes with 8-byte ids and 16-byte picks (sampling::SampleStats::raw_bytes)
  double compress_seconds = 0, decompress_seconds = 0;
  int64_t sampled_edges = 0, remote_picks = 0, remote_input_nodes = 0, fetched_rows = 0;
};

// Where a rank's share of the graph lives and how batches and predictions are made from it: the
// trainer's only view of the data. Two sources: the whole graph in one process (full-graph or
// sampled mini-batch steps) and one part of a partition folder per rank (sampled steps, remote
// rows fetched; MakePartSource). Every call of a partitioned source is collective.
class GraphSource {
 public:
  virtual ~GraphSource() = default;
  // This rank's training nodes, in the ids MakeBatch takes.
  virtual std::vector<int64_t> TrainNodes() const = 0;
  // True when steps sample neighbourhoods of their seeds (and the seeds are shuffled); false when
  // every step is the whole graph (full batch).
  virtual bool Samples() const = 0;
  // True for a part of a partition folder (the distributed parameters apply; configs record
  // "distributed").
  virtual bool Partitioned() const = 0;
  // Fills *batch for `seeds` (a slice of TrainNodes(); possibly empty on a partitioned rank),
  // drawing samples from the streams of `sample_key` (its rank: the part sampled for, with virtual ranks).
  virtual void MakeBatch(const Context& ctx, std::span<const int64_t> seeds, const StreamKey& sample_key, Batch* batch,
                         StepCounters* counters) = 0;
  // Output rows (logits) of every owned node with the current weights: full-neighbour inference,
  // no dropout.
  virtual const Matrix& Logits(const Context& ctx, GcnModel& model) = 0;
  // Metrics of the owned nodes' predictions over the train, val and test splits, summed over
  // ranks.
  virtual void Metrics(std::span<const int32_t> pred, ClassMetrics* train, ClassMetrics* val, ClassMetrics* test) = 0;
  // The input scaling the source applied (fitted over every rank's rows).
  virtual const FeatureScaling& scaling() const = 0;
  // Metrics of the current weights over the train, val and test splits, summed over ranks.
  // `final` asks for the whole train split (the result's) and exact exchanges; an epoch's may
  // estimate the train accuracy on a subset and send its rows through the feature codec
  // (--feature-compress). `counters` (may be null) receives the rows the evaluation sent
  // (feature_bytes, feature_raw_bytes: on the wire and uncompressed) and its coding seconds. The
  // default predicts every owned node (Logits) and calls Metrics. Collective.
  virtual void EvaluateSplits(const Context& ctx, GcnModel& model, int epoch, bool final, ClassMetrics* train,
                              ClassMetrics* val, ClassMetrics* test, StepCounters* counters);
  // The bytes of this rank's input (a part's arrays); 0 when not known.
  virtual int64_t PartBytes() const { return 0; }
};

// The whole dataset in one process (checked with CheckTrainable): full-graph steps when
// c.batch_size is 0 (the normalised adjacency and its transpose, every training node in one
// step), sampled blocks (NeighborSampler) otherwise; evaluation is full-graph inference.
std::unique_ptr<GraphSource> MakeWholeGraphSource(const datasets::NodeDataset& data, const TrainConfig& c,
                                                  const Context& ctx);
// Part comm.Rank() of a partition folder: DistNeighborSampler (skewed by c.dist.skew),
// DistFeatureStore (halo cache of c.dist.feature_cache rows), DistEvaluator. Training node ids
// are new global ids. With `virtual_parts` (a rank holding several parts of the folder merged: virtual ranks), the
// sampler draws for one part at a time (MakeBatch's key.rank names it; sampling/dist_sampler.h). Collective; `part`
// and `comm` must outlive the source.
std::unique_ptr<GraphSource> MakePartSource(const partition::LocalPart& part, std::vector<int64_t> offsets,
                                            comm::Communicator& comm, const TrainConfig& c, const Context& ctx,
                                            sampling::VirtualParts virtual_parts = {});

}  // namespace tessel::train::gcn
