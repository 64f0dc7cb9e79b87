// `tessel train gcn`: single-process GCN / GraphSAGE training (--dataset), full-batch or sampled mini-batch, or
// distributed training on a partition folder under mpirun (--partitions, one rank per part, skewed sampling), with a
// line per epoch on stderr, the final test accuracy on stdout (or --json), checkpoints and a JSON-lines metrics file.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "comm/communicator.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "core/parallel.h"
#include "datasets/split.h"
#include "datasets/text_input.h"
#include "kernels/dense.h"
#include "partition/partition_format.h"
#include "tools/cli_params.h"
#include "tools/commands.h"
#include "tools/gcn_dataset.h"
#include "train/gcn/dist_trainer.h"
#include "train/gcn/trainer.h"

namespace tessel::tools {
namespace {

struct TrainGcnArgs {
  std::string dataset;
  train::gcn::TrainConfig config = [] {  // the training parameters (TrainConfig::Params declares their options)
    train::gcn::TrainConfig c;
    c.fanouts = {10, 10};  // the CLI's default; dropped again for full-batch runs (MakeTrainConfig)
    return c;
  }();
  uint64_t seed = 0;
  int threads = 0;
  std::string device = "cpu";
  int device_id = -1;
  std::string checkpoint;
  int checkpoint_every = 10;
  bool resume = false;
  std::string metrics;
  std::string random_split;
  bool json = false;
  // Distributed training (--partitions).
  std::string partitions;
  train::gcn::DistTrainConfig dist;  // skew and cache (DistTrainConfig::Params); dist.train is unused here
  ParamOptions dist_options;         // to ask which of them were given
  bool skew_given = false;           // set from the parsed command line: --skew and --skew-variance exclude each other
  bool skew_variance_given = false;
  bool dist_option_given = false;
};

// The training configuration shared by both modes, checked before any data is loaded.
train::gcn::TrainConfig MakeTrainConfig(const TrainGcnArgs& a, bool distributed) {
  TESSEL_CHECK(a.threads >= 0, "--threads {} must be 0 (all cores) or positive", a.threads);
  train::gcn::TrainConfig c = a.config;
  if (c.batch_size == 0 && !distributed) c.fanouts.clear();  // full batch: no sampling
  c.checkpoint_dir = a.checkpoint;
  c.checkpoint_every = a.checkpoint_every;
  c.resume = a.resume;
  TESSEL_CHECK(c.model.layers >= 1, "--layers must be >= 1, got {}", c.model.layers);
  TESSEL_CHECK(c.model.hidden >= 1, "--hidden must be >= 1, got {}", c.model.hidden);
  TESSEL_CHECK(c.model.dropout >= 0.0F && c.model.dropout < 1.0F, "--dropout must be in [0, 1), got {}",
               c.model.dropout);
  return c;
}

// The run context of both modes (device, seed, threads).
Context MakeContext(const TrainGcnArgs& a) {
  Context ctx;
  ctx.device = ParseDevice(a.device);
  ctx.device_id = ChooseCudaDevice(a.device_id);
  ctx.seed = a.seed;
  ctx.threads = a.threads;
  return ctx;
}

// "test accuracy ... at best validation epoch ...": the first part of the final line of both modes.
std::string ResultLine(const train::gcn::ClassMetrics& test, const train::gcn::ClassMetrics& val, int best_epoch,
                       bool stopped_early) {
  return fmt::format("test accuracy {:.4f} (macro-F1 {:.4f}) at best validation epoch {} (val {:.4f}){}", test.accuracy,
                     test.macro_f1, best_epoch, val.accuracy, stopped_early ? ", stopped early" : "");
}

// Writes the metrics file (the epoch lines and a final line) when --metrics is given, then prints the result:
// one JSON object with --json, else `line`.
void FinishRun(const TrainGcnArgs& a, const nlohmann::json& result, std::string metrics_lines,
               const std::string& line) {
  if (!a.metrics.empty()) {
    metrics_lines += nlohmann::json{{"final", result}}.dump() + "\n";
    WriteFileAtomic(a.metrics, metrics_lines);
  }
  std::puts(a.json ? result.dump().c_str() : line.c_str());
}

void RunDistTrainGcn(const TrainGcnArgs& a);

void RunTrainGcn(const TrainGcnArgs& a) {
  if (!a.partitions.empty()) {
    RunDistTrainGcn(a);
    return;
  }
  TESSEL_CHECK(!a.dataset.empty(),
               "give --dataset DIR (one process) or --partitions DIR (distributed: mpirun -np K tessel train gcn "
               "--partitions DIR, K = the number of parts)");
  TESSEL_CHECK(!a.dist_option_given,
               "--skew, --skew-variance, --skew-max and --feature-cache apply to distributed training only; add "
               "--partitions DIR (made by `tessel partition`) or drop them");
  train::gcn::TrainConfig c = MakeTrainConfig(a, false);
  c.Validate();  // before loading a large dataset
  const Context ctx = MakeContext(a);
  ThreadLimit limit(a.threads);
  kernels::SetBlasThreads(a.threads);

  datasets::NodeDataset data = LoadGcnDataset(a.dataset);
  if (!a.random_split.empty()) {
    datasets::AssignRandomSplit(data, datasets::ParseSplitFractions(a.random_split), a.seed);
  }
  log::Info(
      "gcn: {} nodes, {} adjacency entries, {} features ({}), {} classes; split {}/{}/{}; model {} x{} hidden "
      "{}, {} epochs, {}; feature scaling {}",
      data.num_nodes(), datasets::NumEntries(data.graph), data.features.dim, data.features.sparse ? "sparse" : "dense",
      data.num_classes, data.train.size(), data.val.size(), data.test.size(), train::gcn::ModelKindName(c.model.kind),
      c.model.layers, c.model.hidden, c.epochs,
      c.batch_size > 0 ? fmt::format("batch {} fanouts {}", c.batch_size, fmt::join(c.fanouts, ",")) : "full batch",
      train::gcn::FeatureNormName(c.normalize_features));
  train::gcn::GcnTrainer trainer(data, c, ctx);
  std::string metrics_lines;
  const train::gcn::TrainResult r = trainer.Train([&](const train::gcn::EpochStats& s) {
    log::Info("epoch {:>4}/{}  loss {:.4f}  train {:.4f}  val {:.4f}  {:.1f} ms  eta {:.1f} s", s.epoch, c.epochs,
              s.loss, s.train_acc, s.val_acc, 1e3 * (s.train_seconds + s.eval_seconds), s.eta_seconds);
    metrics_lines += s.ToJson().dump() + "\n";
  });
  nlohmann::json result = r.ToJson();
  result["dataset"] = data.name;
  result["config"] = c.ToJson();
  result["seed"] = a.seed;
  double train_s = 0;
  double eval_s = 0;
  double cpu_s = 0;
  int64_t seeds = 0;
  int64_t edges = 0;
  for (const auto& e : r.epochs) {
    train_s += e.train_seconds;
    eval_s += e.eval_seconds;
    cpu_s += e.cpu_seconds;
    seeds += e.seed_nodes;
    edges += e.sampled_edges;
  }
  const double n = r.epochs.empty() ? 1.0 : static_cast<double>(r.epochs.size());
  result["mean_epoch_train_seconds"] = train_s / n;
  result["mean_epoch_seconds"] = (train_s + eval_s) / n;
  result["mean_epoch_cpu_seconds"] = cpu_s / n;
  result["train_seed_nodes_per_second"] = train_s > 0 ? static_cast<double>(seeds) / train_s : 0.0;
  result["sampled_edges_per_second"] = train_s > 0 ? static_cast<double>(edges) / train_s : 0.0;
  std::vector<double> epoch_s;
  for (const auto& e : r.epochs) epoch_s.push_back(e.train_seconds + e.eval_seconds);
  std::sort(epoch_s.begin(), epoch_s.end());
  result["median_epoch_seconds"] = epoch_s.empty() ? 0.0 : epoch_s[epoch_s.size() / 2];
  FinishRun(a, result, std::move(metrics_lines), ResultLine(r.test, r.val, r.best_epoch, r.stopped_early));
}

void RunDistTrainGcn(const TrainGcnArgs& a) {
  TESSEL_CHECK(a.random_split.empty(),
               "--random-split cannot be used with --partitions: the split is stored in the parts; make the split "
               "with `tessel convert --split 0.6,0.2,0.2 --resplit` and partition that dataset");
  TESSEL_CHECK(!(a.skew_given && a.skew_variance_given),
               "--skew and --skew-variance exclude each other: give a fixed skew s or a variance budget eps");
  train::gcn::DistTrainConfig dc;
  dc.train = MakeTrainConfig(a, true);
  dc.skew = a.dist.skew;
  dc.feature_cache = a.dist.feature_cache;
  TESSEL_CHECK(!a.skew_variance_given || a.dist.skew.variance_budget > 0,
               "--skew-variance must be > 0 (the allowed relative growth of the estimator's second moment, e.g. "
               "0.5), got {}",
               a.dist.skew.variance_budget);
  dc.Validate();  // before starting MPI and loading anything
  const Context ctx = MakeContext(a);
  ThreadLimit limit(a.threads);
  kernels::SetBlasThreads(a.threads);

  // MPI starts here when launched by mpirun; from now on an exception on any rank ends the job (main.cc).
  std::unique_ptr<comm::Communicator> comm = comm::MakeWorldCommunicator();
  const int rank = comm->Rank();
  const nlohmann::json desc = partition::ReadPartitionsJson(a.partitions);
  const int parts = desc.at("num_parts").get<int>();
  TESSEL_CHECK(comm->Size() == parts,
               "{} has {} parts but {} rank(s) are running: start one rank per part (mpirun -np {} tessel train gcn "
               "--partitions {} ...), or re-partition into {} parts (tessel partition --parts {})",
               a.partitions, parts, comm->Size(), parts, a.partitions, comm->Size(), comm->Size());
  if (!a.dataset.empty()) {  // rank 0 loads the dataset; every rank reports a mismatch
    comm::OnEveryRankOrFail(*comm, [&] {
      if (rank == 0) partition::CheckPartitionDataset(desc, a.partitions, LoadGcnDataset(a.dataset), a.dataset);
    });
  }
  partition::LocalPart part;
  comm::OnEveryRankOrFail(*comm, [&] { part = partition::LoadPart(a.partitions, rank); });
  const auto offsets = desc.at("node_ranges").get<std::vector<int64_t>>();
  const nlohmann::json& ds = desc.at("dataset");
  log::Info(
      "gcn: {} ranks on {} ({} nodes, {} classes, {} features); this rank owns {} nodes and {} halo; model "
      "{} x{} hidden {}, {} epochs, batch {} per rank, fanouts {}, {}; feature scaling {}",
      parts, a.partitions, ds.value("num_nodes", int64_t{0}), part.num_classes, part.features.dim, part.num_owned,
      part.num_halo, train::gcn::ModelKindName(dc.train.model.kind), dc.train.model.layers, dc.train.model.hidden,
      dc.train.epochs, dc.train.batch_size, fmt::join(dc.train.fanouts, ","),
      dc.skew.variance_budget > 0
          ? fmt::format("skew from variance budget {} (max {})", dc.skew.variance_budget, dc.skew.max_skew)
          : fmt::format("skew {}", dc.skew.skew),
      train::gcn::FeatureNormName(dc.train.normalize_features));
  train::gcn::DistGcnTrainer trainer(part, offsets, *comm, dc, ctx);
  std::string metrics_lines;
  const train::gcn::DistTrainResult r = trainer.Train([&](const train::gcn::DistEpochStats& s) {
    log::Info(
        "epoch {:>4}/{}  loss {:.4f}  train {:.4f}  val {:.4f}  | sample {:.0f} fetch {:.0f} compute {:.0f} "
        "allreduce {:.0f} eval {:.0f} ms | features {:.1f} KB  gradients {:.1f} KB  remote share {:.3f}",
        s.epoch, dc.train.epochs, s.loss, s.train_acc, s.val_acc, 1e3 * s.sample_seconds, 1e3 * s.fetch_seconds,
        1e3 * s.compute_seconds, 1e3 * s.allreduce_seconds, 1e3 * s.eval_seconds,
        static_cast<double>(s.feature_bytes) / 1024.0, static_cast<double>(s.gradient_bytes) / 1024.0, s.remote_share);
    if (rank == 0 && !a.metrics.empty()) metrics_lines += s.ToJson().dump() + "\n";
  });
  if (rank != 0) return;
  nlohmann::json result = r.ToJson();
  result["dataset"] = ds.value("name", std::string());
  result["partitions"] = a.partitions;
  result["ranks"] = parts;
  result["config"] = dc.ToJson();
  result["seed"] = a.seed;
  FinishRun(a, result, std::move(metrics_lines),
            ResultLine(r.test, r.val, r.best_epoch, r.stopped_early) +
                fmt::format("; {} rank(s), remote features {:.1f} KB per epoch", parts,
                            result["feature_bytes_per_epoch"].get<double>() / 1024.0));
}

}  // namespace

void RegisterTrainGcn(CLI::App& app) {
  CLI::App* group = GroupCommand(app, "train", "Train a model (gcn, svm)");
  auto args = std::make_shared<TrainGcnArgs>();
  CLI::App* sub = group->add_subcommand("gcn", "Train a GCN (Kipf & Welling) or GraphSAGE-mean node classifier");
  sub->add_option("--dataset", args->dataset,
                  "Native dataset folder, or a node-table prefix (tests/data/cora/cora); with --partitions: checked "
                  "to be the partitioned dataset");
  AddParams(sub, &args->config);
  sub->add_option("--seed", args->seed, "Seed of every random stream (init, dropout, sampling, shuffling, split)")
      ->capture_default_str();
  sub->add_option("--threads", args->threads, "Worker threads; 0 = all cores")->capture_default_str();
  sub->add_option("--device", args->device, "cpu or cuda")->capture_default_str();
  sub->add_option("--device-id", args->device_id,
                  "CUDA device ordinal; -1 = the rank's local rank modulo the visible GPUs (one GPU per rank)")
      ->capture_default_str()
      ->check(CLI::Range(-1, 1 << 20).description(""));
  sub->add_option("--checkpoint", args->checkpoint, "Checkpoint folder, replaced atomically");
  sub->add_option("--checkpoint-every", args->checkpoint_every, "Epochs between checkpoints (>= 1)")
      ->capture_default_str();
  sub->add_flag("--resume", args->resume, "Continue from the checkpoint in --checkpoint when there is one");
  sub->add_option("--metrics", args->metrics, "Write one JSON line per epoch and a final line to FILE.jsonl");
  sub->add_option("--random-split", args->random_split,
                  "Replace the split by a seeded random one over labelled nodes, TRAIN,VAL,TEST (e.g. 0.6,0.2,0.2)");
  sub->add_flag("--json", args->json, "Print the final result as one JSON object");
  sub->add_option("--partitions", args->partitions,
                  "Partition folder from `tessel partition`: train on it with one rank per part")
      ->group(std::string(train::gcn::DistTrainConfig::kGroup));
  args->dist_options = AddParams(sub, &args->dist);
  SetAction(sub, [args] {
    args->skew_given = args->dist_options.Given("skew");
    args->skew_variance_given = args->dist_options.Given("skew_variance");
    args->dist_option_given = args->skew_given || args->skew_variance_given || args->dist_options.Given("skew_max") ||
                              args->dist_options.Given("feature_cache");
    RunTrainGcn(*args);
  });
}

}  // namespace tessel::tools
