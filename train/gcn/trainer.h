// GCN training, one process or K ranks (docs/gcn.md, docs/distributed.md): one config, one epoch loop, one stats
// type. Where the graph lives is a GraphSource: the whole graph in one process (full-batch or sampled mini-batch
// steps) or one part of a partition folder per rank (skewed sampling, batched remote feature fetches; Jiang &
// Rumi, "Communication-Efficient Sampling for Distributed Training of Graph Convolutional Networks", 2021).
// Adam, early stopping on validation accuracy (the best-validation weights are kept and evaluated), atomic
// checkpoints and exact resume: every random draw is keyed by (seed, rank, epoch, batch, purpose).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/communicator.h"
#include "comm/compress.h"
#include "comm/net_model.h"
#include "core/context.h"
#include "core/params.h"
#include "core/worker.h"
#include "datasets/dataset.h"
#include "partition/partition_build.h"
#include "sampling/block.h"
#include "sampling/skewed_policy.h"
#include "train/gcn/data.h"
#include "train/gcn/metrics.h"
#include "train/gcn/model.h"
#include "train/gcn/optimizer.h"
#include "train/gcn/train_common.h"

namespace tessel::train::gcn {

// Where a --device cuda run in one process keeps its input features (`--features-on`).
enum class FeaturePlacement {
  kAuto,    // the device, except a sampled run's features that take more than half the device's free memory: kHost
  kDevice,  // resident on the device
  kHost,    // mapped pinned host memory that the device's gathers read in place (zero-copy; sampled runs only)
};

// How a partitioned run evaluates after each epoch (`--eval`).
enum class EvalMode {
  kSampled,  // the val and test nodes (and a train subset; the whole train split at the end) on sampled blocks
  kFull,     // layer-wise full-neighbour inference of every owned node over the 1-hop halo (exact)
};

// The parameters of partitioned (distributed) training only.
struct DistOptions {
  // --feature-cache's default: size the cache by --feature-cache-budget.
  static constexpr int64_t kCacheFromBudget = -2;

  sampling::SkewOptions skew;                // training only; evaluation never skews
  int64_t feature_cache = kCacheFromBudget;  // halo rows cached per rank: -1 = the whole halo, 0 = none, N rows
  int64_t feature_cache_budget_mib = -1;     // with feature_cache -2: MiB per rank; -1 = half the owned features
  EvalMode eval = EvalMode::kFull;           // per-epoch and final evaluation
  std::vector<int> eval_fanouts;             // sampled evaluation's fanouts; empty = 4x the training ones
  comm::CompressOption grad_compress;        // the gradient allreduce's codec, or auto
  comm::CompressOption feature_compress;     // the remote feature rows' codec, or auto
  std::string network;                       // comm::NetworkModel to predict epoch times on ("" = none)
  // 0: synchronous gradient exchange. 1: pipelined (width two): the allreduce of step s runs while step s + 1
  // computes, and the update after step s + 1 applies step s's averaged gradient (one step stale).
  int grad_staleness = 0;

  // The --help section of the distributed options.
  static constexpr std::string_view kGroup = "Distributed (mpirun -np K, one rank per part; docs/distributed.md)";
  // Declared once (core/params.h): `tessel train gcn` options and the config echo of partitioned runs.
  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(ParamInfo{"skew",
                "Skewed sampling: owned neighbours weigh s, remote ones 1 (s >= 1; 1 = uniform); unbiased",
                {},
                kGroup},
      c.skew.skew);
    v(ParamInfo{"skew_variance",
                "Choose s per node from a variance budget eps > 0 instead of --skew (second moment <= (1+eps)x); "
                "-1 = off",
                {},
                kGroup},
      c.skew.variance_budget);
    v(ParamInfo{"skew_max", "Largest s the variance budget may pick (>= 1)", {}, kGroup}, c.skew.max_skew);
    v(ParamInfo{"feature_cache",
                "Halo feature rows cached per rank: -2 = as many as --feature-cache-budget allows, -1 = the whole "
                "halo, 0 = none, N = the N with the most owned neighbours (wins over the budget)",
                {},
                kGroup},
      c.feature_cache);
    v(ParamInfo{"feature_cache_budget",
                "Memory per rank for cached halo feature rows, in MiB (with --feature-cache -2); -1 = half of the "
                "rank's own feature bytes, 0 = no cache",
                {},
                kGroup},
      c.feature_cache_budget_mib);
    v(ParamInfo{"eval",
                "Evaluation after each epoch: full (exact full-neighbour inference of every owned node) or sampled "
                "(the val and test nodes and a train subset of the val's size on uniformly sampled blocks with "
                "--eval-fanouts, never skewed, so unbiased; the whole train split at the end)",
                {},
                kGroup},
      c.eval);
    v(ParamInfo{"eval_fanouts",
                "Fanouts of --eval sampled, input layer first (-1 = all); leave it out for 4x the training fanouts",
                {},
                kGroup},
      c.eval_fanouts);
    v(ParamInfo{"grad_compress",
                "Gradient allreduce compression: none, fp16, bf16, int8[:BLOCK], qsgd[:LEVELS], topk[:RATIO], "
                "randk[:RATIO], cltk[:RATIO], powersgd[:RANK], or auto (with --network: the fastest of none, fp16, "
                "int8 and topk:0.02 by the time model and their measured cost; docs/compression.md)",
                {},
                kGroup},
      c.grad_compress);
    v(ParamInfo{"feature_compress",
                "Remote feature row compression: none, fp16, bf16, int8 (a scale per row), qsgd[:LEVELS], or auto "
                "(with --network: the fastest of none, fp16 and int8)",
                {},
                kGroup},
      c.feature_compress);
    v(
        ParamInfo{
            "grad_staleness",
            "Gradient exchange: 0 = synchronous; 1 = pipelined, the allreduce of step s overlapping the compute "
            "of step s + 1, whose update applies step s's gradient (one step stale, from the second epoch on; "
            "every gradient is applied by the end of each epoch). 1 runs the two-thread pipeline also with --threads 1",
            {},
            kGroup},
        c.grad_staleness);
    v(ParamInfo{"network",
                "Predict each epoch's time on this network from the measured compute and the bytes and messages of "
                "every exchange: BANDWIDTH,LATENCY[,shared][,burst=SIZE], e.g. 10Gbit,5us; shared = one link all "
                "ranks take turns on, burst = a token bucket of SIZE bytes (a traffic shaper) (docs/comm.md, time "
                "model); leave it out for none",
                {},
                kGroup},
      c.network);
  }
};

// The one configuration of GCN training, one process or K ranks.
struct TrainConfig {
  ModelConfig model;  // in_dim and num_classes are taken from the dataset
  AdamConfig adam;
  bool decay_all_layers = false;  // false: weight decay on the first layer only (Kipf & Welling)
  int epochs = 200;
  int64_t batch_size = 0;    // seed nodes per mini-batch (per rank when partitioned); 0 = full graph (all seeds)
  std::vector<int> fanouts;  // one per layer (input layer first) when batch_size > 0; -1 = all neighbours
  bool replace = false;      // sample neighbours with replacement
  int patience = 0;          // stop after this many epochs without a better validation accuracy; 0 = never
  // Evaluate (validation accuracy, best weights, early stopping) after every eval_every-th epoch and always after the
  // last; 0 = after the last epoch only. The best weights are the best of the evaluated epochs.
  int eval_every = 1;
  FeatureNorm normalize_features = FeatureNorm::kNone;  // input scaling (data.h); l1 = Kipf & Welling preprocessing
  std::filesystem::path checkpoint_dir;                 // empty = no checkpoints
  int checkpoint_every = 10;                            // epochs between checkpoints (the last epoch is always saved)
  bool resume = false;                                  // continue from checkpoint_dir when it holds a checkpoint
  bool overlap = true;          // sample and fetch the next mini-batch while the current one computes (same results)
  bool device_sampling = true;  // --device cuda, one process: sample on the GPU (the same blocks as on the CPU)
  FeaturePlacement features_on = FeaturePlacement::kAuto;  // --device cuda, one process: where the features live
  DistOptions dist;                                        // partitioned training only (defaults otherwise)
  // Throws with the flag name and the fix. Partitioned training always samples (fanouts required; batch_size 0 =
  // all of a rank's seeds per step); one process rejects non-default distributed options.
  void Validate(bool partitioned = false) const;
  // Every parameter of Params under its name; partitioned: also dist's and "distributed": true.
  nlohmann::json ToJson(bool partitioned = false) const;
  static TrainConfig FromJson(const nlohmann::json& j);  // absent keys keep the defaults
  // The defaults users see (`tessel train gcn --help`, tessel.train_gcn): the members' defaults with fanouts 10,10,
  // the sampled runs' default, dropped for full-batch runs (batch_size 0 without partitions).
  static TrainConfig UserDefaults() {
    TrainConfig c;
    c.fanouts = {10, 10};
    return c;
  }

  // The training parameters, declared once (core/params.h): `tessel train gcn` options, the config echo in results
  // and checkpoints. The checkpoint and resume settings are run control, not part of the echo.
  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(ParamInfo{"model", "Layer type: gcn (Kipf & Welling) or sage (GraphSAGE-mean)"}, c.model.kind);
    v(ParamInfo{"layers", "Number of graph convolution layers (>= 1)"}, c.model.layers);
    v(ParamInfo{"hidden", "Hidden units per layer (>= 1)"}, c.model.hidden);
    v(ParamInfo{"epochs", "Training epochs (>= 1)"}, c.epochs);
    v(ParamInfo{"lr", "Adam learning rate (> 0)"}, c.adam.lr);
    v(ParamInfo{"dropout", "Dropout probability before each layer, in [0, 1)"}, c.model.dropout);
    v(ParamInfo{"weight_decay", "L2 weight decay (>= 0), first layer unless --decay-all"}, c.adam.weight_decay);
    v(ParamInfo{"decay_all_layers", "Apply weight decay to every layer, not only the first", "--decay-all"},
      c.decay_all_layers);
    v(ParamInfo{"batch_size", "Seed nodes per mini-batch; 0 = full graph"}, c.batch_size);
    v(ParamInfo{"fanouts",
                "Neighbours sampled per layer, input layer first, one per layer (-1 = all); with "
                "--batch-size or --partitions"},
      c.fanouts);
    v(ParamInfo{"replace", "Sample neighbours with replacement"}, c.replace);
    v(ParamInfo{"patience",
                "Stop after N epochs without better validation accuracy (checked when an epoch is evaluated); 0 = "
                "off"},
      c.patience);
    v(ParamInfo{"eval_every",
                "Evaluate (validation accuracy, best weights, --patience) after every N-th epoch and always after the "
                "last; 0 = after the last epoch only. The best weights are the best of the evaluated epochs"},
      c.eval_every);
    v(ParamInfo{"overlap",
                "On by default: sample and fetch the next mini-batch while the current one computes (a second "
                "thread; the same results as --no-overlap for a given seed; CPU, --threads other than 1)",
                "--overlap,!--no-overlap"},
      c.overlap);
    v(ParamInfo{"device_sampling",
                "On by default: with --device cuda (one process), sample mini-batches on the GPU, where the blocks "
                "stay (the same blocks as the CPU sampler's, so the same results); --no-device-sampling samples on "
                "the CPU and uploads every block",
                "--device-sampling,!--no-device-sampling"},
      c.device_sampling);
    v(ParamInfo{"features_on",
                "With --device cuda (one process; ignored on the CPU): where the input features live: device, host "
                "(mapped pinned memory the GPU gathers each step's rows from, for features larger than the GPU; "
                "sampled runs) or auto (host for a sampled run whose features take more than half the GPU's free "
                "memory, else device)"},
      c.features_on);
    v(ParamInfo{"normalize_features",
                "Input feature scaling: none, l1 (rows to unit L1 norm: the Planetoid/Kipf & Welling "
                "preprocessing) or standard (columns to zero mean, unit variance)"},
      c.normalize_features);
    // From the dataset, recorded in checkpoints.
    v(ParamInfo{"in_dim", "Input feature width", {}, {}, false}, c.model.in_dim);
    v(ParamInfo{"num_classes", "Output classes", {}, {}, false}, c.model.num_classes);
    v(ParamInfo{"bias", "Bias terms in every layer", {}, {}, false}, c.model.bias);
  }
};

// The flags ("--skew, --network") of the distributed options (DistOptions::Params) that `pick(ParamInfo)` selects.
template <typename Pick>
std::string DistFlags(const DistOptions& d, Pick pick) {
  std::string flags;
  DistOptions::Params(d, [&](const ParamInfo& p, const auto&) {
    if (pick(p)) flags += (flags.empty() ? "" : ", ") + p.Flag();
  });
  return flags;
}
// Throws naming `flags` unless it is empty: options of distributed training given to one-process training, which
// refuses them rather than ignoring them.
void RefuseDistributedOptions(std::string_view flags);

// The output guard of c.checkpoint_dir (core/output_guard.h): throws when it is, contains or lies inside one of
// `inputs` (--dataset, --partitions) or `other_outputs` (--metrics), is a device, or exists and is neither a tessel
// checkpoint nor an empty folder (even with --resume or --force: it is never deleted); and when it already holds a
// checkpoint and neither c.resume nor `force` says what to do with it. `flag` names the option in messages
// ("checkpoint" from Python).
void CheckCheckpointTarget(const TrainConfig& c, bool force, std::span<const std::filesystem::path> inputs = {},
                           std::span<const std::filesystem::path> other_outputs = {},
                           std::string_view flag = "--checkpoint");

// One epoch as every rank sees it: values are reduced over ranks (sums, or maxima for the seconds), so every rank
// holds the same numbers. One process is the one-rank case.
struct EpochStats {
  int epoch = 0;  // 1-based
  int64_t steps = 0;
  double loss = 0;  // mean loss over every rank's seeds
  // Whether the epoch ended with an evaluation (TrainConfig::eval_every); without one the accuracies are not
  // measured (JSON null) and eval_seconds and eval_bytes are 0.
  bool evaluated = true;
  double train_acc = 0;
  double val_acc = 0;
  // Seconds, the maximum over ranks (the slowest rank sets the pace).
  double train_seconds = 0;      // every step: sampling, fetching, forward, backward, allreduce, update
  double sample_seconds = 0;     // part of train_seconds spent sampling (with its exchanges)
  double fetch_seconds = 0;      // part of train_seconds spent gathering / fetching input rows
  double compute_seconds = 0;    // forward, loss, backward, Adam: the sum of the next three
  double forward_seconds = 0;    // forward pass and loss (sampled dense batches gather their input rows here, fused)
  double backward_seconds = 0;   // backward pass
  double optimizer_seconds = 0;  // Adam steps
  double allreduce_seconds = 0;  // gradient allreduce (0 on one rank: nothing to average)
  double eval_seconds = 0;       // full-neighbour inference for the accuracies
  double epoch_seconds = 0;      // train + eval
  double cpu_seconds = 0;        // process CPU time (all threads) of training and evaluation, summed over ranks
  double eta_seconds = 0;        // time left at this epoch's pace (0 after the last or an early stop)
  // Bytes sent during the epoch, summed over ranks (comm::ByteCounter by purpose); all 0 on one rank.
  uint64_t feature_bytes = 0;   // remote input features (purpose "features", ids included)
  uint64_t sample_bytes = 0;    // remote sampling requests and answers
  uint64_t gradient_bytes = 0;  // purpose "gradients"
  uint64_t eval_bytes = 0;      // the evaluation's exchanges (--eval full: halo rows of each layer)
  uint64_t total_bytes = 0;     // every purpose
  // What feature_bytes, gradient_bytes and eval_bytes would have been without --feature-compress / --grad-compress
  // (equal to them when off), and the seconds spent encoding and decoding, the evaluation's included (maximum over
  // ranks).
  uint64_t feature_raw_bytes = 0;
  uint64_t gradient_raw_bytes = 0;
  uint64_t eval_raw_bytes = 0;
  uint64_t sample_raw_bytes = 0;  // sample_bytes with 8-byte ids and 16-byte picks (the sampler's compact format off)
  double compress_seconds = 0;
  double decompress_seconds = 0;
  // Seconds inside communicator calls (waiting for peers included; maximum over ranks), and with --network the
  // epoch time predicted on that network: per rank, epoch_seconds - comm_seconds + the alpha-beta time of its calls
  // (maximum over ranks; 0 without --network). Overlapped steps count as the longer of their compute and their
  // communicating thread's predicted time (docs/comm.md, "Time model").
  double comm_seconds = 0;
  double predicted_epoch_seconds = 0;
  // Summed over ranks.
  int64_t seed_nodes = 0;          // training nodes visited
  int64_t sampled_edges = 0;       // neighbour picks of the sampled blocks (0 for full-graph steps)
  int64_t remote_input_nodes = 0;  // first-layer source nodes owned by another rank
  int64_t fetched_rows = 0;        // of those, rows received from their owners (not in the halo cache)
  double remote_share = 0;         // remote picks / all picks of the sampler
  // The device runtime's work (core/device.h Counters; 0 on the CPU): allocations asked for and those the caching
  // pool could not serve (cudaMalloc calls), host-to-device and device-to-host copies with their bytes, and
  // synchronisations. Per process, summed over ranks (an MPI rank is a process; ranks that are threads of one
  // process each count the whole process).
  int64_t device_allocations = 0;
  int64_t device_runtime_allocations = 0;
  int64_t h2d_copies = 0;
  uint64_t h2d_bytes = 0;
  int64_t d2h_copies = 0;
  uint64_t d2h_bytes = 0;
  int64_t device_synchronizations = 0;
  int64_t pinned_allocations = 0;  // page-locked host arrays allocated (core/pinned_memory.h; 0 in steady state)
  nlohmann::json ToJson() const;
};

// One rank's memory at the end of training (TrainResult::memory): what the process held and what its part is.
struct RankMemory {
  int64_t peak_rss_bytes = 0;       // getrusage ru_maxrss: the most resident at any time (mapped files included)
  int64_t rss_anon_bytes = 0;       // RssAnon (/proc/self/status) at the end of training; -1 when unknown
  int64_t peak_rss_anon_bytes = 0;  // the largest RssAnon seen after set-up and after each epoch; -1 when unknown
  int64_t part_bytes = 0;           // the bytes of the rank's part (the arrays of its part folder); 0 for one process
};

struct TrainResult {
  std::vector<EpochStats> epochs;  // this run's epochs (after a resume, only the new ones)
  // Per rank, in rank order (threads of one process each report the whole process). JSON "memory": the ranks and
  // the largest peak_rss_bytes / part_bytes.
  std::vector<RankMemory> memory;
  int best_epoch = 0;  // the evaluated epoch of the best validation accuracy (0: none evaluated in any run)
  bool stopped_early = false;
  ClassMetrics train, val, test;  // of the best-validation weights, over the global splits
  uint64_t setup_bytes = 0;       // summed over ranks: weight broadcast, degree and cache exchanges
  // The above plus the per-epoch means and medians, rates and totals over the epochs (every *_bytes and *_seconds).
  nlohmann::json ToJson() const;
};

// Scales each rank's gradients by local_count / total_count and sums them over ranks (purpose "gradients"), so
// every rank holds sum_r (b_r / B) g_r: the gradient of the mean loss over the union batch when g_r is the
// gradient of rank r's mean loss over its b_r seeds. A rank with local_count 0 contributes zeros. Collective.
// With `compress` the sum goes through that compressed allreduce (call number `step`; `stats` collects its bytes
// and seconds); without, through a plain float32 allreduce.
// Every rank's RankMemory (peak RSS and RssAnon now, `peak_anon` the largest RssAnon seen before, `part_bytes`), in
// rank order. Collective (one allgather, purpose "stats").
std::vector<RankMemory> GatherMemory(comm::Communicator& comm, int64_t part_bytes, int64_t peak_anon);

void AverageGradients(comm::Communicator& comm, std::vector<Param>& params, int64_t local_count, int64_t total_count,
                      comm::CompressedAllreduce* compress = nullptr, uint64_t step = 0,
                      comm::CompressStats* stats = nullptr);
// AverageGradients in its three parts: the rank's gradients scaled by local_count / total_count into one flat
// buffer; the sum over ranks in place (collective); the buffer back into the parameters' gradients.
std::vector<float> PackGradients(const std::vector<Param>& params, int64_t local_count, int64_t total_count);
void SumGradients(comm::Communicator& comm, std::vector<float>& buf, comm::CompressedAllreduce* compress = nullptr,
                  uint64_t step = 0, comm::CompressStats* stats = nullptr);
void UnpackGradients(std::span<const float> buf, std::vector<Param>& params);

// What one step computes on: the layer graphs (input layer first), the input rows of the first layer's sources,
// and the rows of the last layer's output that enter the loss with their labels. Made by a GraphSource; the
// spans point into the batch itself or into the source, valid until the source's next MakeBatch.
struct Batch {
  std::vector<sampling::Block> blocks;         // sampled layer graphs, owned here (empty for a whole-graph step)
  std::vector<LayerGraph> graphs;              // one per layer
  FeatureMatrix gathered;                      // input rows gathered for this step (unused when x points elsewhere)
  const FeatureMatrix* x = nullptr;            // the input rows, or (x_rows non-empty) the rows they are read from
  std::span<const int64_t> x_rows;             // dense x: input row i is x's row x_rows[i] (gathered inside the model)
  const Buffer<int64_t>* x_row_ids = nullptr;  // x_rows already on the device (the GPU sampler's), or null
  // Labels and loss rows are Buffers kept from step to step, so on a device they are uploaded only when they change
  // (a whole-graph step's never; a sampled step's labels every step, its rows 0..n-1 when n changes).
  Buffer<int32_t> seed_labels;
  const Buffer<int32_t>* labels = nullptr;  // (*labels)[(*rows)[i]] is the class of loss row i
  Buffer<int64_t> seed_rows;
  const Buffer<int64_t>* rows = nullptr;  // output rows in the loss (null or empty: no seeds in this step)
};

// A sampled batch's loss inputs: seed_labels[i] = label_of(seeds[i]) and seed_rows = 0, 1, ..., rewritten only when
// the count changes (so its device copy stays valid).
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

// Where a rank's share of the graph lives and how batches and predictions are made from it: the trainer's only
// view of the data. Two sources: the whole graph in one process (full-graph or sampled mini-batch steps) and one
// part of a partition folder per rank (sampled steps, remote rows fetched; MakePartSource). Every call of a
// partitioned source is collective.
class GraphSource {
 public:
  virtual ~GraphSource() = default;
  // This rank's training nodes, in the ids MakeBatch takes.
  virtual std::vector<int64_t> TrainNodes() const = 0;
  // True when steps sample neighbourhoods of their seeds (and the seeds are shuffled); false when every step is
  // the whole graph (full batch).
  virtual bool Samples() const = 0;
  // True for a part of a partition folder (the distributed parameters apply; configs record "distributed").
  virtual bool Partitioned() const = 0;
  // Fills *batch for `seeds` (a slice of TrainNodes(); possibly empty on a partitioned rank), drawing samples from
  // the streams of `sample_key`.
  virtual void MakeBatch(const Context& ctx, std::span<const int64_t> seeds, const StreamKey& sample_key, Batch* batch,
                         StepCounters* counters) = 0;
  // Output rows (logits) of every owned node with the current weights: full-neighbour inference, no dropout.
  virtual const Matrix& Logits(const Context& ctx, GcnModel& model) = 0;
  // Metrics of the owned nodes' predictions over the train, val and test splits, summed over ranks.
  virtual void Metrics(std::span<const int32_t> pred, ClassMetrics* train, ClassMetrics* val, ClassMetrics* test) = 0;
  // The input scaling the source applied (fitted over every rank's rows).
  virtual const FeatureScaling& scaling() const = 0;
  // Metrics of the current weights over the train, val and test splits, summed over ranks. `final` asks for the
  // whole train split (the result's) and exact exchanges; an epoch's may estimate the train accuracy on a subset and
  // send its rows through the feature codec (--feature-compress). `counters` (may be null) receives the rows the
  // evaluation sent (feature_bytes, feature_raw_bytes: on the wire and uncompressed) and its coding seconds. The
  // default predicts every owned node (Logits) and calls Metrics. Collective.
  virtual void EvaluateSplits(const Context& ctx, GcnModel& model, int epoch, bool final, ClassMetrics* train,
                              ClassMetrics* val, ClassMetrics* test, StepCounters* counters);
  // The bytes of this rank's input (a part's arrays); 0 when not known.
  virtual int64_t PartBytes() const { return 0; }
};

// The whole dataset in one process (checked with CheckTrainable): full-graph steps when c.batch_size is 0 (the
// normalised adjacency and its transpose, every training node in one step), sampled blocks (NeighborSampler)
// otherwise; evaluation is full-graph inference.
std::unique_ptr<GraphSource> MakeWholeGraphSource(const datasets::NodeDataset& data, const TrainConfig& c,
                                                  const Context& ctx);
// Part comm.Rank() of a partition folder: DistNeighborSampler (skewed by c.dist.skew), DistFeatureStore (halo
// cache of c.dist.feature_cache rows), DistEvaluator. Training node ids are new global ids. Collective; `part`
// and `comm` must outlive the source.
std::unique_ptr<GraphSource> MakePartSource(const partition::LocalPart& part, std::vector<int64_t> offsets,
                                            comm::Communicator& comm, const TrainConfig& c, const Context& ctx);

// The GCN trainer: one epoch loop for one process and for K ranks. Each step takes this rank's slice of the
// (shuffled) training nodes, asks the source for its batch, runs forward and backward, averages the gradients over
// ranks (b_r / B weights, the gradient of the union batch's mean loss; nothing to do on one rank) and applies the
// same Adam step everywhere. Evaluation is full-neighbour inference; early stopping keeps the best-validation
// weights; rank 0 writes atomic checkpoints; every random draw is keyed (seed, rank, epoch, batch, purpose), so a
// resumed run continues exactly. One process is the one-rank case (a local communicator).
class GcnTrainer {
 public:
  // One process over the whole dataset: checks it (features, labels, split, finite features), prepares the
  // adjacency and features; full-batch steps when batch_size is 0, sampled mini-batches otherwise.
  GcnTrainer(const datasets::NodeDataset& data, TrainConfig config, Context ctx);
  // Rank r of K on part r of a partition folder (part.part == comm.Rank(), part.num_parts == comm.Size()),
  // `offsets` the global node ranges (partitions.json "node_ranges"): skewed sampled steps, remote features
  // fetched in batched all-to-alls (DistFeatureStore), evaluation over the 1-hop halo (DistEvaluator); rank 0's
  // initial weights are broadcast. batch_size is seeds per rank and step (0 = all of the rank's seeds in one step)
  // and fanouts are required. Collective; `part` and `comm` must outlive the trainer.
  GcnTrainer(const partition::LocalPart& part, std::vector<int64_t> offsets, comm::Communicator& comm,
             TrainConfig config, Context ctx);
  ~GcnTrainer();
  GcnTrainer(const GcnTrainer&) = delete;
  GcnTrainer& operator=(const GcnTrainer&) = delete;

  // Collective. on_epoch runs on every rank with the same (reduced) statistics.
  TrainResult Train(const std::function<void(const EpochStats&)>& on_epoch = {});

  // One collective training step on this rank's seeds (ids of TrainNodes(); may be empty on a partitioned rank)
  // with union batch size `total_seeds`: batch, forward/backward, AverageGradients, and the Adam update when
  // `update`. Returns this rank's summed loss (mean loss x its seed count). Exposed for tests.
  double Step(std::span<const int64_t> seeds, int64_t total_seeds, int epoch, int64_t batch, bool update);
  // Whether Train overlaps the next batch's sampling and fetching (and, with --grad-staleness 1, the previous
  // step's gradient exchange) with the current step's compute: asked for (config.overlap), sampled steps, more than
  // one step per epoch, CPU, and more than one thread (--threads 1 keeps one thread per rank busy, so a rank never
  // competes with its own communication for a core) unless --grad-staleness 1 asks for the pipeline.
  bool Overlaps() const;
  // Whether epoch (1-based) ends with an evaluation: every config.eval_every-th epoch and the last (--eval-every).
  bool Evaluates(int epoch) const;

  // Predicted class of every owned node (full-neighbour inference, no dropout). Collective.
  std::vector<int32_t> PredictOwned();
  // Class probabilities [num_owned x num_classes] of the current weights (no dropout). Collective.
  Matrix PredictProbabilities();

  GcnModel& model() { return model_; }
  const TrainConfig& config() const { return config_; }

 private:
  struct Setup;
  explicit GcnTrainer(Setup setup);
  void SaveState(int epochs_done) const;
  // The three parts of a step: the batch (sampling and fetching: collective), forward/backward on it (local; may
  // run on a second thread), and the gradient average and update (collective).
  void Prepare(std::span<const int64_t> seeds, int epoch, int64_t batch, Batch* b);
  double Compute(const Batch& b, int64_t seed_count, int epoch, int64_t batch);
  void Finish(int64_t seed_count, int64_t total_seeds, int epoch, int64_t batch, bool update);
  nlohmann::json ConfigJson() const;

  std::unique_ptr<comm::Communicator> own_comm_;  // the local communicator of a one-process run
  comm::Communicator& comm_;
  Context ctx_;
  TrainConfig config_;
  std::unique_ptr<GraphSource> source_;
  GcnModel model_;
  std::unique_ptr<comm::CompressedAllreduce> grad_compress_;  // null: plain float32 gradient allreduce
  comm::CompressStats grad_stats_;                            // this rank's, this epoch
  std::optional<comm::NetworkModel> network_;                 // --network
  Adam adam_;
  BestWeights best_;
  Batch batches_[2];  // the current step's and, when overlapping, the next step's (batches point into themselves)
  std::unique_ptr<BackgroundWorker> worker_;  // runs Compute while this thread prepares the next batch (overlap)
  StepCounters counters_;                     // this rank's, this epoch
  double compute_s_ = 0, allreduce_s_ = 0, forward_s_ = 0, backward_s_ = 0, optimizer_s_ = 0;
  Matrix grad_logits_;  // the loss gradient of a step (reused: same shape every full batch)
  // On a device: this epoch's sum of the steps' weighted losses, kept there, and how many steps added to it.
  Buffer<double> device_loss_;
  int64_t device_loss_steps_ = 0;
  uint64_t gradient_b_ = 0;
  // The time model's view of this epoch's steps (docs/comm.md, "Time model"): per step, this rank's predicted
  // seconds (its wall time with its calls' measured seconds replaced by the model's, an overlapped step as the longer
  // of its two threads), and the wall, measured-call and modelled seconds of all steps together.
  // `work` per step: the CPU seconds this rank needs (its communicating thread and the pipeline's compute thread
  // outside the calls, and the calls' CPU at most for their modelled time; oneTBB's other workers are not counted,
  // so the bound is a lower one), for the CPU bound.
  struct StepTimes {
    std::vector<double> predicted;
    std::vector<double> work;
    int threads = 1;  // threads working in a step (the pipeline's communicating one included)
    double wall = 0, calls = 0, modeled = 0;
  };
  double cores_ = 1;  // the cores this rank can count on (ThreadLimit::CoresPerRank over the communicator's machine)
  StepTimes step_times_;
  // Where a step began: its clock and the communicator's recorded costs.
  struct StepMark {
    std::chrono::steady_clock::time_point t0;
    comm::CallCost cost0;
    double cpu0 = 0;  // ThreadCpuSeconds() of the thread that owns the communicator
  };
  StepMark MarkStep() const;
  // Records step s from `m` to now; `overlap_correction` is what the overlapped pipeline changes in it (0: serial),
  // `worker_cpu` the CPU seconds of the pipeline's compute thread in it (0: serial).
  void EndStep(int64_t s, const StepMark& m, double overlap_correction, double worker_cpu);
  int64_t seeds_ = 0;
  std::vector<int64_t> train_counts_;  // training nodes per rank
  int64_t steps_ = 0;                  // steps per epoch (max over ranks)
  int start_epoch_ = 0;
  uint64_t setup_bytes_ = 0;
  int64_t peak_anon_ = -1;  // the largest RssAnon seen after set-up and after each epoch (RankMemory)
};

// Class probabilities [num_nodes x num_classes] for `data` (features and graph only; labels and split are not
// needed) from a checkpoint's best-validation weights. Throws when the feature width or the class count differ
// from the checkpoint's. *config (optional) receives the checkpoint's training configuration.
Matrix PredictFromCheckpoint(const Context& ctx, const datasets::NodeDataset& data, const std::filesystem::path& dir,
                             TrainConfig* config = nullptr);

}  // namespace tessel::train::gcn

namespace tessel {
TESSEL_ENUM_NAMES(train::gcn::EvalMode, {train::gcn::EvalMode::kSampled, "sampled"},
                  {train::gcn::EvalMode::kFull, "full"});
// The one list of FeaturePlacement's names (core/params.h).
TESSEL_ENUM_NAMES(train::gcn::FeaturePlacement, {train::gcn::FeaturePlacement::kAuto, "auto"},
                  {train::gcn::FeaturePlacement::kDevice, "device"}, {train::gcn::FeaturePlacement::kHost, "host"});
}  // namespace tessel
