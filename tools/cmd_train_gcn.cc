// `tessel train gcn`: GCN / GraphSAGE training in one process (--dataset; full-batch or sampled mini-batch) or on a
// partition folder under mpirun (--partitions, one rank per part, skewed sampling), both through the one
// GcnTrainer, with a line per epoch on stderr, the final test accuracy on stdout (or --json), checkpoints and a
// JSON-lines metrics file.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "comm/agree.h"
#include "comm/communicator.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "core/output_guard.h"
#include "core/parallel.h"
#include "datasets/open_node_dataset.h"
#include "datasets/split.h"
#include "datasets/text_input.h"
#include "partition/partition_format.h"
#include "tools/cli_params.h"
#include "tools/commands.h"
#include "tools/rank_settings.h"
#include "train/gcn/trainer.h"

namespace tessel::tools {
namespace {

struct TrainGcnArgs {
  std::string dataset;
  // The training parameters (TrainConfig::Params and DistOptions::Params); fanouts are dropped again for full-batch
  // runs (MakeTrainConfig).
  train::gcn::TrainConfig config = train::gcn::TrainConfig::UserDefaults();
  uint64_t seed = 0;
  int threads = 0;
  std::string device = "cpu";
  int device_id = -1;
  std::string math = "fp32";
  std::string checkpoint;
  int checkpoint_every = 10;
  bool resume = false;
  std::string metrics;
  bool force = false;  // replace an existing --metrics file
  std::string random_split;
  bool json = false;
  std::string partitions;      // distributed training on this partition folder
  double timeout = 0;          // --timeout (set by AddTimeoutOption)
  ParamOptions train_options;  // to ask which training options were given
  ParamOptions dist_options;   // and which distributed ones
};

// The training configuration of both modes, checked before any data is loaded or MPI starts.
train::gcn::TrainConfig MakeTrainConfig(const TrainGcnArgs& a, bool partitioned) {
  TESSEL_CHECK(a.threads >= 0, "--threads {} must be 0 (all cores) or positive", a.threads);
  CheckTimeout(a.timeout);
  CheckOutputFile(a.metrics, a.force, "--metrics", {a.dataset, a.partitions}, {a.checkpoint});
  train::gcn::TrainConfig c = a.config;
  if (c.batch_size == 0 && !partitioned) c.fanouts.clear();  // full batch: no sampling
  c.checkpoint_dir = a.checkpoint;
  c.checkpoint_every = a.checkpoint_every;
  c.resume = a.resume;
  train::gcn::CheckCheckpointTarget(c, a.force, PathList({a.dataset, a.partitions}), PathList({a.metrics}));
  if (partitioned) {
    TESSEL_CHECK(a.random_split.empty(),
                 "--random-split cannot be used with --partitions: the split is stored in the parts; make the split "
                 "with `tessel convert --split 0.6,0.2,0.2 --resplit` and partition that dataset");
    TESSEL_CHECK(!(a.dist_options.Given("skew") && a.dist_options.Given("skew_variance")),
                 "--skew and --skew-variance exclude each other: give a fixed skew s or a variance budget eps");
    TESSEL_CHECK(!a.dist_options.Given("skew_variance") || c.dist.skew.variance_budget > 0,
                 "--skew-variance must be > 0 (the allowed relative growth of the estimator's second moment, e.g. "
                 "0.5), got {}",
                 c.dist.skew.variance_budget);
  } else {
    TESSEL_CHECK(!a.dataset.empty(),
                 "give --dataset DIR (one process) or --partitions DIR (distributed: mpirun -np K tessel train gcn "
                 "--partitions DIR, K = the number of parts)");
    TESSEL_CHECK(c.batch_size > 0 || !(a.train_options.Given("fanouts") || a.train_options.Given("replace")),
                 "--fanouts and --replace apply to sampled mini-batches: add --batch-size N (seed nodes per step) or "
                 "drop them (full-batch training uses every neighbour)");
    TESSEL_CHECK(!a.dist_options.Any(),
                 "--skew, --skew-variance, --skew-max, --feature-cache, --feature-cache-budget, --eval, "
                 "--grad-compress, --feature-compress and --network apply to distributed training only; add "
                 "--partitions DIR (made by `tessel partition`) or drop them");
  }
  c.Validate(partitioned);
  return c;
}

// One line per epoch on stderr; partitioned runs add where the time and the bytes went.
std::string EpochLine(const train::gcn::EpochStats& s, int epochs, bool partitioned) {
  // An epoch without an evaluation (--eval-every) shows "-" for its accuracies.
  const auto acc = [&](double a) { return s.evaluated ? fmt::format("{:.4f}", a) : std::string("-     "); };
  std::string line =
      fmt::format("epoch {:>4}/{}  loss {:.4f}  train {}  val {}  {:.1f} ms  eta {:.1f} s", s.epoch, epochs, s.loss,
                  acc(s.train_acc), acc(s.val_acc), 1e3 * s.epoch_seconds, s.eta_seconds);
  if (partitioned) {
    line += fmt::format(
        "  | sample {:.0f} fetch {:.0f} compute {:.0f} allreduce {:.0f} eval {:.0f} ms | features {:.1f} KB  "
        "gradients {:.1f} KB  remote share {:.3f}",
        1e3 * s.sample_seconds, 1e3 * s.fetch_seconds, 1e3 * s.compute_seconds, 1e3 * s.allreduce_seconds,
        1e3 * s.eval_seconds, static_cast<double>(s.feature_bytes) / 1024.0,
        static_cast<double>(s.gradient_bytes) / 1024.0, s.remote_share);
    if (s.predicted_epoch_seconds > 0) line += fmt::format("  | predicted {:.1f} ms", 1e3 * s.predicted_epoch_seconds);
  }
  return line;
}

// What every rank of a partitioned run must share (comm/agree.h): the training and distributed parameters, seed,
// device kind and math, and the content of --partitions, --dataset and a resumed checkpoint. Per-rank settings
// (--device-id, --timeout, --threads other than whether it is 1) and what rank 0 alone writes (--metrics, --json,
// checkpoints) may differ.
comm::Settings RankSettings(const TrainGcnArgs& a, const train::gcn::TrainConfig& c) {
  comm::Settings s;
  AddParamSettings(c, &s);
  AddParamSettings(c.dist, &s);
  for (auto& [name, value] : s) {  // --threads 1 turns the prefetch thread off, which reorders the collectives
    if (name == "--overlap") {
      name = "--overlap (off with --threads 1)";
      value = c.overlap && a.threads != 1 ? "on" : "off";
    }
  }
  s.emplace_back("--seed", std::to_string(a.seed));
  s.emplace_back("--device", a.device);
  s.emplace_back("--math", a.math);
  s.emplace_back("--partitions", ContentFingerprint(a.partitions));
  s.emplace_back("--dataset", a.dataset.empty() ? "not given" : ContentFingerprint(a.dataset));
  // The one test of "is a checkpoint" (core/output_guard.h); its checkpoint.json holds the tensors' checksum.
  std::string resume = "off";
  if (a.resume) {
    resume = HoldsOutputOf(a.checkpoint, OutputKind::kCheckpointFolder)
                 ? ContentFingerprint(std::filesystem::path(a.checkpoint) / "checkpoint.json")
                 : "on, but no checkpoint in its --checkpoint folder";
  }
  s.emplace_back("--resume", resume);
  return s;
}

void RunTrainGcn(const TrainGcnArgs& a) {
  const bool partitioned = !a.partitions.empty();
  const train::gcn::TrainConfig c = MakeTrainConfig(a, partitioned);
  Context ctx;
  ctx.device = ParseDevice(a.device);
  ctx.gemm_math = ParseGemmMath(a.math);
  ctx.device_id = ChooseCudaDevice(a.device_id);
  ctx.seed = a.seed;
  ctx.threads = a.threads;
  ThreadLimit limit(a.threads);

  // What the run trains on: the whole dataset in this process, or this rank's part of a partition folder.
  std::unique_ptr<comm::Communicator> comm;
  datasets::NodeDataset data;
  partition::LocalPart part;
  std::unique_ptr<train::gcn::GcnTrainer> trainer;
  nlohmann::json about;  // the result's description of the data
  std::string sampling = c.batch_size > 0 || partitioned
                             ? fmt::format("batch {}{} fanouts {}", c.batch_size, partitioned ? " per rank" : "",
                                           fmt::join(c.fanouts, ","))
                             : "full batch";
  if (!partitioned) {
    data = datasets::OpenNodeDataset(a.dataset);
    if (!a.random_split.empty()) {
      datasets::AssignRandomSplit(data, datasets::ParseSplitFractions(a.random_split), a.seed);
    }
    log::Info("gcn: {} nodes, {} adjacency entries, {} features ({}), {} classes; split {}/{}/{}", data.num_nodes(),
              datasets::NumEntries(data.graph), data.features.dim, data.features.sparse ? "sparse" : "dense",
              data.num_classes, data.train.size(), data.val.size(), data.test.size());
    trainer = std::make_unique<train::gcn::GcnTrainer>(data, c, ctx);
    about = {{"dataset", data.name}};
  } else {
    // MPI starts here when launched by mpirun; from now on an exception on any rank ends the job (main.cc).
    comm = comm::MakeWorldCommunicator(a.timeout);
    comm::AgreeOrFail(*comm, RankSettings(a, c));  // the first collective: every rank's options and data agree
    const nlohmann::json desc = partition::ReadPartitionsJson(a.partitions);
    const int parts = desc.at("num_parts").get<int>();
    TESSEL_CHECK(comm->Size() == parts,
                 "{} has {} parts but {} rank(s) are running: start one rank per part (mpirun -np {} tessel train "
                 "gcn --partitions {} ...), or re-partition into {} parts (tessel partition --parts {})",
                 a.partitions, parts, comm->Size(), parts, a.partitions, comm->Size(), comm->Size());
    // Rank 0 compares --dataset with the partition's; every rank reports a mismatch. A native dataset is mapped
    // unread: its fingerprint comes from its manifest's checksums (NodeDataset::fingerprint), so no rank reads the
    // whole graph and feature matrix to check it.
    if (!a.dataset.empty()) {
      comm::OnEveryRankOrFail(*comm, [&] {
        if (comm->Rank() == 0) {
          partition::CheckPartitionDataset(
              desc, a.partitions, datasets::OpenNodeDataset(a.dataset, {.verify_checksums = false, .validate = false}),
              a.dataset);
        }
      });
    }
    comm::OnEveryRankOrFail(*comm, [&] { part = partition::LoadPart(a.partitions, comm->Rank()); });
    const nlohmann::json& ds = desc.at("dataset");
    log::Info("gcn: {} ranks on {} ({} nodes, {} classes, {} features); this rank owns {} nodes and {} halo; {}", parts,
              a.partitions, ds.value("num_nodes", int64_t{0}), part.num_classes, part.features.dim, part.num_owned,
              part.num_halo,
              c.dist.skew.variance_budget > 0 ? fmt::format("skew from variance budget {} (max {})",
                                                            c.dist.skew.variance_budget, c.dist.skew.max_skew)
                                              : fmt::format("skew {}", c.dist.skew.skew));
    trainer = std::make_unique<train::gcn::GcnTrainer>(part, desc.at("node_ranges").get<std::vector<int64_t>>(), *comm,
                                                       c, ctx);
    about = {{"dataset", ds.value("name", std::string())}, {"partitions", a.partitions}, {"ranks", parts}};
  }
  log::Info("gcn: model {} x{} hidden {}, {} epochs, {}; feature scaling {}", train::gcn::ModelKindName(c.model.kind),
            c.model.layers, c.model.hidden, c.epochs, sampling, train::gcn::FeatureNormName(c.normalize_features));

  const bool lead = comm == nullptr || comm->Rank() == 0;
  std::string metrics_lines;  // one JSON line per epoch, then the final line (rank 0)
  const train::gcn::TrainResult r = trainer->Train([&](const train::gcn::EpochStats& s) {
    log::Info("{}", EpochLine(s, c.epochs, partitioned));
    if (lead && !a.metrics.empty()) metrics_lines += s.ToJson().dump() + "\n";
  });
  if (!lead) return;
  nlohmann::json result = r.ToJson();
  result.update(about);
  result["config"] = trainer->config().ToJson(partitioned);
  result["seed"] = a.seed;
  if (!a.metrics.empty()) {
    metrics_lines += nlohmann::json{{"final", result}}.dump() + "\n";
    WriteFileAtomic(a.metrics, metrics_lines);
  }
  std::string line =
      fmt::format("test accuracy {:.4f} (macro-F1 {:.4f}) at best validation epoch {} (val {:.4f}){}", r.test.accuracy,
                  r.test.macro_f1, r.best_epoch, r.val.accuracy, r.stopped_early ? ", stopped early" : "");
  if (partitioned) {
    line += fmt::format("; {} rank(s), remote features {:.1f} KB per epoch", comm->Size(),
                        result["feature_bytes_per_epoch"].get<double>() / 1024.0);
  }
  std::puts(a.json ? result.dump().c_str() : line.c_str());
}

}  // namespace

void RegisterTrainGcn(CLI::App& app) {
  CLI::App* group = GroupCommand(app, "train", "Train a model (gcn, svm)");
  auto args = std::make_shared<TrainGcnArgs>();
  CLI::App* sub = group->add_subcommand("gcn", "Train a GCN (Kipf & Welling) or GraphSAGE-mean node classifier");
  AddOption(sub, "--dataset", &args->dataset,
            "Native dataset folder, or a node-table prefix (tests/data/cora/cora); with --partitions: checked "
            "to be the partitioned dataset");
  args->train_options = AddParams(sub, &args->config);
  AddOption(sub, "--seed", &args->seed, "Seed of every random stream (init, dropout, sampling, shuffling, split)")
      ->capture_default_str();
  AddOption(sub, "--threads", &args->threads, "Worker threads; 0 = all cores", {0, kMaxThreads})->capture_default_str();
  AddOption(sub, "--device", &args->device, "cpu or cuda")->capture_default_str();
  AddOption(sub, "--math", &args->math,
            "Dense products on CUDA: fp32 (exact float32) or tf32 (tensor cores: inputs rounded to 10 mantissa "
            "bits, faster on Ampere and later); the CPU always computes float32")
      ->capture_default_str()
      ->check(CLI::IsMember({"fp32", "tf32"}));
  AddOption(sub, "--device-id", &args->device_id,
            "CUDA device ordinal; -1 = the rank's local rank modulo the visible GPUs (one GPU per rank)", {-1, 1 << 20})
      ->capture_default_str();
  AddOption(sub, "--checkpoint", &args->checkpoint, "Checkpoint folder, replaced atomically");
  AddOption(sub, "--checkpoint-every", &args->checkpoint_every, "Epochs between checkpoints (>= 1)")
      ->capture_default_str();
  sub->add_flag("--resume", args->resume, "Continue from the checkpoint in --checkpoint when there is one");
  AddOption(sub, "--metrics", &args->metrics, "Write one JSON line per epoch and a final line to FILE.jsonl");
  sub->add_flag("--force", args->force,
                "Replace an existing --metrics file, or a --checkpoint folder that holds a tessel checkpoint (never "
                "another folder or file, a device, or an input of the run)");
  AddOption(sub, "--random-split", &args->random_split,
            "Replace the split by a seeded random one over labelled nodes, TRAIN,VAL,TEST (e.g. 0.6,0.2,0.2)");
  sub->add_flag("--json", args->json, "Print the final result as one JSON object");
  AddOption(sub, "--partitions", &args->partitions,
            "Partition folder from `tessel partition`: train on it with one rank per part")
      ->group(std::string(train::gcn::DistOptions::kGroup));
  AddTimeoutOption(sub, &args->timeout)->group(std::string(train::gcn::DistOptions::kGroup));
  args->dist_options = AddParams(sub, &args->config.dist);
  SetAction(sub, [args] { RunTrainGcn(*args); });
}

}  // namespace tessel::tools
