// `tessel train gcn`: single-process GCN / GraphSAGE training, full-batch or sampled mini-batch, with a line per
// epoch (loss, accuracies, time, ETA) on stderr, the final test accuracy on stdout (or --json), checkpoints,
// resume and a JSON-lines metrics file.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "core/parallel.h"
#include "datasets/split.h"
#include "datasets/text_input.h"
#include "kernels/dense.h"
#include "tools/commands.h"
#include "tools/gcn_dataset.h"
#include "train/gcn/trainer.h"

namespace tessel::tools {
namespace {

struct TrainGcnArgs {
  std::string dataset;
  std::string model = "gcn";
  int layers = 2;
  int64_t hidden = 16;
  int epochs = 200;
  float lr = 0.01F;
  float dropout = 0.5F;
  float weight_decay = 5e-4F;
  bool decay_all_layers = false;
  int64_t batch_size = 0;
  std::string fanouts = "10,10";
  bool replace = false;
  int patience = 0;
  uint64_t seed = 0;
  int threads = 0;
  std::string device = "cpu";
  std::string checkpoint;
  int checkpoint_every = 10;
  bool resume = false;
  std::string metrics;
  std::string random_split;
  bool no_normalize = false;
  bool json = false;
};

std::vector<int> ParseFanouts(const std::string& text) {
  std::vector<int> out;
  datasets::Fields fields(text, ',');
  std::string_view f;
  while (fields.Next(&f)) {
    int64_t v = 0;
    TESSEL_CHECK(datasets::ParseInt64(f, &v) && v >= -1 && v <= INT32_MAX,
                 "--fanouts: '{}' is not a fanout; give comma-separated counts, one per layer (e.g. 10,25; -1 = all)",
                 f);
    out.push_back(static_cast<int>(v));
  }
  return out;
}

void RunTrainGcn(const TrainGcnArgs& a) {
  TESSEL_CHECK(a.threads >= 0, "--threads {} must be 0 (all cores) or positive", a.threads);
  train::gcn::TrainConfig c;
  c.model.kind = train::gcn::ParseModelKind(a.model);
  c.model.layers = a.layers;
  c.model.hidden = a.hidden;
  c.model.dropout = a.dropout;
  c.adam.lr = a.lr;
  c.adam.weight_decay = a.weight_decay;
  c.decay_all_layers = a.decay_all_layers;
  c.epochs = a.epochs;
  c.batch_size = a.batch_size;
  if (a.batch_size > 0) c.fanouts = ParseFanouts(a.fanouts);
  c.replace = a.replace;
  c.patience = a.patience;
  c.row_normalize = !a.no_normalize;
  c.checkpoint_dir = a.checkpoint;
  c.checkpoint_every = a.checkpoint_every;
  c.resume = a.resume;
  TESSEL_CHECK(c.model.layers >= 1, "--layers must be >= 1, got {}", c.model.layers);
  TESSEL_CHECK(c.model.hidden >= 1, "--hidden must be >= 1, got {}", c.model.hidden);
  TESSEL_CHECK(c.model.dropout >= 0.0F && c.model.dropout < 1.0F, "--dropout must be in [0, 1), got {}",
               c.model.dropout);
  c.Validate();  // before loading a large dataset
  Context ctx;
  ctx.device = ParseDevice(a.device);
  ctx.seed = a.seed;
  ctx.threads = a.threads;
  ThreadLimit limit(a.threads);
  kernels::SetBlasThreads(a.threads);

  datasets::NodeDataset data = LoadGcnDataset(a.dataset);
  if (!a.random_split.empty()) {
    datasets::AssignRandomSplit(data, datasets::ParseSplitFractions(a.random_split), a.seed);
  }
  log::Info(
      "gcn: {} nodes, {} adjacency entries, {} features ({}), {} classes; split {}/{}/{}; model {} x{} hidden "
      "{}, {} epochs, {}",
      data.num_nodes(), datasets::NumEntries(data.graph), data.features.dim, data.features.sparse ? "sparse" : "dense",
      data.num_classes, data.train.size(), data.val.size(), data.test.size(), a.model, a.layers, a.hidden, a.epochs,
      a.batch_size > 0 ? fmt::format("batch {} fanouts {}", a.batch_size, a.fanouts) : "full batch");
  train::gcn::GcnTrainer trainer(data, c, ctx);
  std::string metrics_lines;
  const train::gcn::TrainResult r = trainer.Train([&](const train::gcn::EpochStats& s) {
    log::Info("epoch {:>4}/{}  loss {:.4f}  train {:.4f}  val {:.4f}  {:.1f} ms  eta {:.1f} s", s.epoch, a.epochs,
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
  if (!a.metrics.empty()) {
    metrics_lines += nlohmann::json{{"final", result}}.dump() + "\n";
    WriteFileAtomic(a.metrics, metrics_lines);
  }
  if (a.json) {
    std::puts(result.dump().c_str());
  } else {
    std::printf("test accuracy %.4f (macro-F1 %.4f) at best validation epoch %d (val %.4f)%s\n", r.test.accuracy,
                r.test.macro_f1, r.best_epoch, r.val.accuracy, r.stopped_early ? ", stopped early" : "");
  }
}

}  // namespace

void RegisterTrainGcn(CLI::App& app) {
  CLI::App* group = GroupCommand(app, "train", "Train a model (gcn, svm)");
  auto args = std::make_shared<TrainGcnArgs>();
  CLI::App* sub = group->add_subcommand("gcn", "Train a GCN (Kipf & Welling) or GraphSAGE-mean node classifier");
  sub->add_option("--dataset", args->dataset, "Native dataset folder, or a node-table prefix (tests/data/cora/cora)")
      ->required();
  sub->add_option("--model", args->model, "Layer type: gcn or sage")->capture_default_str();
  sub->add_option("--layers", args->layers, "Number of graph convolution layers (>= 1)")->capture_default_str();
  sub->add_option("--hidden", args->hidden, "Hidden units per layer (>= 1)")->capture_default_str();
  sub->add_option("--epochs", args->epochs, "Training epochs (>= 1)")->capture_default_str();
  sub->add_option("--lr", args->lr, "Adam learning rate (> 0)")->capture_default_str();
  sub->add_option("--dropout", args->dropout, "Dropout probability before each layer, in [0, 1)")
      ->capture_default_str();
  sub->add_option("--weight-decay", args->weight_decay, "L2 weight decay (>= 0), first layer unless --decay-all")
      ->capture_default_str();
  sub->add_flag("--decay-all", args->decay_all_layers, "Apply weight decay to every layer, not only the first");
  sub->add_option("--batch-size", args->batch_size, "Seed nodes per mini-batch; 0 = full graph")->capture_default_str();
  sub->add_option("--fanouts", args->fanouts,
                  "Neighbours sampled per layer, input layer first, one per layer (-1 = all); with --batch-size")
      ->capture_default_str();
  sub->add_flag("--replace", args->replace, "Sample neighbours with replacement");
  sub->add_option("--patience", args->patience, "Stop after N epochs without better validation accuracy; 0 = off")
      ->capture_default_str();
  sub->add_option("--seed", args->seed, "Seed of every random stream (init, dropout, sampling, shuffling, split)")
      ->capture_default_str();
  sub->add_option("--threads", args->threads, "Worker threads; 0 = all cores")->capture_default_str();
  sub->add_option("--device", args->device, "cpu or cuda")->capture_default_str();
  sub->add_option("--checkpoint", args->checkpoint, "Checkpoint folder, replaced atomically");
  sub->add_option("--checkpoint-every", args->checkpoint_every, "Epochs between checkpoints (>= 1)")
      ->capture_default_str();
  sub->add_flag("--resume", args->resume, "Continue from the checkpoint in --checkpoint when there is one");
  sub->add_option("--metrics", args->metrics, "Write one JSON line per epoch and a final line to FILE.jsonl");
  sub->add_option("--random-split", args->random_split,
                  "Replace the split by a seeded random one over labelled nodes, TRAIN,VAL,TEST (e.g. 0.6,0.2,0.2)");
  sub->add_flag("--no-normalize-features", args->no_normalize, "Keep feature rows as given (default: L1-normalise)");
  sub->add_flag("--json", args->json, "Print the final result as one JSON object");
  SetAction(sub, [args] { RunTrainGcn(*args); });
}

}  // namespace tessel::tools
