#include "app/train_gcn.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "app/rank_settings.h"
#include "comm/agree.h"
#include "comm/communicator.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "core/output_guard.h"
#include "core/parallel.h"
#include "datasets/open_node_dataset.h"
#include "datasets/split.h"
#include "partition/merge_parts.h"
#include "partition/partition_format.h"

namespace tessel::app {
namespace {

namespace gcn = train::gcn;

// The training configuration of both modes, checked before any data is loaded or MPI starts.
gcn::TrainConfig MakeTrainConfig(const TrainGcnOptions& a, bool partitioned) {
  // A resumed run appends to its --metrics file (MetricsLog), so it may exist without --force.
  CheckOutputPath(a.metrics, OutputKind::kFile, a.force || a.resume, "--metrics", PathList({a.dataset, a.partitions}),
                  PathList({a.checkpoint}));
  gcn::TrainConfig c = a.config;
  if (c.batch_size == 0 && !partitioned) {  // full batch: no sampling
    TESSEL_CHECK(!(a.given("fanouts") || a.given("replace")),
                 "--fanouts and --replace apply to sampled mini-batches: add --batch-size N (seed nodes per step) or "
                 "drop them (full-batch training uses every neighbour)");
    c.fanouts.clear();
  }
  c.checkpoint_dir = a.checkpoint;
  c.checkpoint_every = a.checkpoint_every;
  c.resume = a.resume;
  gcn::CheckCheckpointTarget(c, a.force, PathList({a.dataset, a.partitions}), PathList({a.metrics}));
  if (!partitioned) {  // an option of distributed training, even at its default, does nothing here: say so
    std::string named = gcn::DistFlags(c.dist, [&](const ParamInfo& p) { return a.given(p.name); });
    if (a.given("timeout")) named += (named.empty() ? "" : ", ") + std::string("--timeout");
    gcn::RefuseDistributedOptions(named);
  }
  if (partitioned) {
    TESSEL_CHECK(a.random_split.empty(),
                 "--random-split cannot be used with --partitions: the split is stored in the parts; make the split "
                 "with `tessel convert --split 0.6,0.2,0.2 --resplit` and partition that dataset");
  }
  c.Validate(partitioned);
  return c;
}

// One line per epoch on stderr; partitioned runs add where the time and the bytes went.
std::string EpochLine(const gcn::EpochStats& s, int epochs, bool partitioned) {
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
comm::Settings RankSettings(const TrainGcnOptions& a, const gcn::TrainConfig& c) {
  comm::Settings s;
  AddParamSettings(c, &s);
  AddParamSettings(c.dist, &s);
  for (auto& [name, value] : s) {  // --threads 1 turns the prefetch thread off, which reorders the collectives
    if (name == "--overlap") {
      name = "--overlap (off with --threads 1)";
      value = c.overlap && a.threads.threads != 1 ? "on" : "off";
    }
  }
  s.emplace_back("--seed", std::to_string(a.seed));
  s.emplace_back("--virtual-ranks", a.virtual_ranks ? "on" : "off");
  s.emplace_back("--device", std::string(DeviceName(a.device.device)));
  s.emplace_back("--math", std::string(EnumName(a.device.math)));
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

// This rank's part: part r of a K-part folder on K ranks; on R < K ranks, a contiguous run of the parts merged into
// part r of an R-part partition (partition/merge_parts.h), e.g. to resume a job on the ranks that are left.
partition::LocalPart LoadRankPart(const std::string& dir, const std::vector<int64_t>& ranges,
                                  const comm::Communicator& comm) {
  const auto parts = static_cast<int32_t>(ranges.size()) - 1;
  if (comm.Size() == parts) return partition::LoadPart(dir, comm.Rank());
  const std::vector<int32_t> first = partition::GroupParts(ranges, comm.Size());
  const int32_t lo = first[static_cast<size_t>(comm.Rank())];
  const int32_t hi = first[static_cast<size_t>(comm.Rank()) + 1];
  std::vector<partition::LocalPart> run;
  for (int32_t p = lo; p < hi; ++p) run.push_back(partition::LoadPart(dir, p));
  log::Info("gcn: {} parts on {} ranks: rank {} holds {}", parts, comm.Size(), comm.Rank(),
            hi - lo == 1 ? fmt::format("part {}", lo) : fmt::format("parts {} to {} as one", lo, hi - 1));
  return partition::MergeParts(run, ranges, first, comm.Rank());
}

// --metrics as the run goes (rank 0): the file is rewritten (temporary name, then rename) with every line added, so
// it always holds whole lines, a job that fails leaves the lines of the epochs it finished, and a reader can follow
// the run. A resumed run keeps the earlier lines and adds one marking the restart before its own.
class MetricsLog {
 public:
  MetricsLog(std::string path, bool active, bool resume) : path_(std::move(path)), active_(active && !path_.empty()) {
    if (active_ && resume && std::filesystem::is_regular_file(path_)) {
      text_ = ReadFileToString(path_);
      if (!text_.empty() && text_.back() != '\n') text_ += '\n';
    }
  }
  void Add(const nlohmann::json& line) {
    if (!active_) return;
    text_ += line.dump() + "\n";
    WriteFileAtomic(path_, text_);
  }

 private:
  std::string path_;
  bool active_;
  std::string text_;
};

// The line a resumed run writes first: where it resumed and on how many ranks (gcn::ResumePoint).
nlohmann::json RestartLine(const gcn::ResumePoint& r, int ranks) {
  return {{"restart",
           {{"after_epoch", r.epochs_done},
            {"epoch_steps_done", r.epoch_steps_done},
            {"adam_steps", r.adam_steps},
            {"ranks", ranks},
            {"checkpoint_ranks", r.ranks},
            {"just_in_time", r.just_in_time}}}};
}

}  // namespace

TrainGcnOutcome TrainGcn(const TrainGcnOptions& a, const TrainGcnHooks& hooks) {
  const bool partitioned = !a.partitions.empty();
  TESSEL_CHECK(partitioned || !a.dataset.empty() || hooks.data != nullptr,
               "give --dataset DIR (one process) or --partitions DIR (distributed: mpirun -np K tessel train gcn "
               "--partitions DIR, K = the number of parts)");
  const gcn::TrainConfig c = MakeTrainConfig(a, partitioned);
  const Context ctx = MakeContext(a.device, a.seed, a.threads.threads);
  ThreadLimit limit(a.threads.threads);

  // What the run trains on: the whole dataset in this process, or this rank's part of a partition folder.
  std::unique_ptr<comm::Communicator> comm;
  std::optional<ThreadLimit> rank_limit;  // --threads 0 under mpirun: this rank's share of the host's cores
  std::shared_ptr<const datasets::NodeDataset> data;
  partition::LocalPart part;
  std::unique_ptr<gcn::GcnTrainer> trainer;
  nlohmann::json about;  // the result's description of the data
  std::string sampling = c.batch_size > 0 || partitioned
                             ? fmt::format("batch {}{} fanouts {}", c.batch_size, partitioned ? " per rank" : "",
                                           fmt::join(c.fanouts, ","))
                             : "full batch";
  if (!partitioned) {
    data = hooks.data != nullptr ? hooks.data
                                 : std::make_shared<const datasets::NodeDataset>(datasets::OpenNodeDataset(a.dataset));
    if (!a.random_split.empty()) {
      data = datasets::WithRandomSplit(data, datasets::ParseSplitFractions(a.random_split), a.seed);
    }
    log::Info("gcn: {} nodes, {} adjacency entries, {} features ({}), {} classes; split {}/{}/{}", data->num_nodes(),
              datasets::NumEntries(data->graph), data->features.dim, data->features.sparse ? "sparse" : "dense",
              data->num_classes, data->train.size(), data->val.size(), data->test.size());
    trainer = std::make_unique<gcn::GcnTrainer>(*data, c, ctx);
    about = {{"dataset", data->name},
             {"split", {{"train", data->train.size()}, {"val", data->val.size()}, {"test", data->test.size()}}}};
  } else {
    // MPI starts here when launched by mpirun; from now on an exception on any rank ends the job (main.cc).
    comm = comm::MakeWorldCommunicator(a.timeout.timeout);
    comm::AgreeOrFail(*comm, RankSettings(a, c));  // the first collective: every rank's options and data agree
    if (a.threads.threads == 0 && comm->LocalSize() > 1) {
      // Each rank's oneTBB pool (and its single-threaded BLAS calls) would otherwise take every core of the host:
      // K ranks on C cores would run K x C workers, each rank waiting in every exchange for descheduled peers.
      rank_limit.emplace(std::max(1, static_cast<int>(ThreadLimit::CoresPerRank(comm->LocalSize()))));
      log::Info("gcn: {} ranks on this host: {} worker thread(s) each (--threads 0)", comm->LocalSize(),
                ThreadLimit::Current());
    }
    const nlohmann::json desc = partition::ReadPartitionsJson(a.partitions);
    const int parts = desc.at("num_parts").get<int>();
    TESSEL_CHECK(comm->Size() <= parts,
                 "{} has {} parts but {} rank(s) are running: start at most one rank per part (mpirun -np {} tessel "
                 "train gcn --partitions {} ...), or re-partition into {} parts (tessel partition --parts {})",
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
    std::vector<int64_t> ranges = desc.at("node_ranges").get<std::vector<int64_t>>();
    comm::OnEveryRankOrFail(*comm, [&] { part = LoadRankPart(a.partitions, ranges, *comm); });
    sampling::VirtualParts virtual_parts;  // --virtual-ranks: each part sampled and weighed as on one rank per part
    if (comm->Size() < parts) {
      const std::vector<int32_t> first = partition::GroupParts(ranges, comm->Size());
      if (a.virtual_ranks) virtual_parts = {.part_offsets = ranges, .first = first};
      ranges = partition::GroupOffsets(ranges, first);
      if (comm->Rank() == 0) {
        log::Info("gcn: {} parts on {} ranks: {}", parts, comm->Size(),
                  a.virtual_ranks ? "virtual ranks (each part steps as on its own rank: the sample path of a run on "
                                    "one rank per part)"
                                  : "merged parts (--no-virtual-ranks: another sample path than one rank per part)");
      }
    }
    const nlohmann::json& ds = desc.at("dataset");
    log::Info("gcn: {} ranks on {} ({} nodes, {} classes, {} features); this rank owns {} nodes and {} halo; {}",
              comm->Size(), a.partitions, ds.value("num_nodes", int64_t{0}), part.num_classes, part.features.dim,
              part.num_owned, part.num_halo,
              c.dist.skew.variance_budget > 0 ? fmt::format("skew from variance budget {} (max {})",
                                                            c.dist.skew.variance_budget, c.dist.skew.max_skew)
                                              : fmt::format("skew {}", c.dist.skew.skew));
    trainer = std::make_unique<gcn::GcnTrainer>(part, std::move(ranges), *comm, c, ctx, std::move(virtual_parts));
    about = {{"dataset", ds.value("name", std::string())}, {"partitions", a.partitions}, {"ranks", comm->Size()}};
    if (comm->Size() < parts) {
      about["parts"] = parts;
      about["virtual_ranks"] = a.virtual_ranks;
    }
  }
  log::Info("gcn: model {} x{} hidden {}, {} epochs, {}; feature scaling {}", gcn::ModelKindName(c.model.kind),
            c.model.layers, c.model.hidden, c.epochs, sampling, gcn::FeatureNormName(c.normalize_features));

  TrainGcnOutcome out;
  out.lead = comm == nullptr || comm->Rank() == 0;
  MetricsLog metrics(a.metrics, out.lead, a.resume);  // one JSON line per epoch, then the final line (rank 0)
  if (trainer->resumed().resumed) metrics.Add(RestartLine(trainer->resumed(), comm == nullptr ? 1 : comm->Size()));
  const gcn::TrainResult r = trainer->Train([&](const gcn::EpochStats& s) {
    log::Info("{}", EpochLine(s, c.epochs, partitioned));
    metrics.Add(s.ToJson());
    if (hooks.on_epoch) hooks.on_epoch(s);
  });
  if (hooks.probabilities) out.probabilities = trainer->PredictProbabilities();
  if (!out.lead) return out;
  out.result = r.ToJson();
  out.result.update(about);
  if (hooks.history) {
    nlohmann::json history = nlohmann::json::array();
    for (const gcn::EpochStats& s : r.epochs) history.push_back(s.ToJson());
    out.result["history"] = std::move(history);
  }
  out.result["config"] = trainer->config().ToJson(partitioned);
  out.result["seed"] = a.seed;
  nlohmann::json final_line = out.result;
  final_line.erase("history");
  metrics.Add(nlohmann::json{{"final", std::move(final_line)}});
  out.line =
      fmt::format("test accuracy {:.4f} (macro-F1 {:.4f}) at best validation epoch {} (val {:.4f}){}", r.test.accuracy,
                  r.test.macro_f1, r.best_epoch, r.val.accuracy, r.stopped_early ? ", stopped early" : "");
  if (partitioned) {
    out.line += fmt::format("; {} rank(s), remote features {:.1f} KB per epoch", comm->Size(),
                            out.result["feature_bytes_per_epoch"].get<double>() / 1024.0);
  }
  return out;
}

}  // namespace tessel::app
