#include "app/partition.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/info.h"
#include "app/rank_settings.h"
#include "comm/agree.h"
#include "comm/communicator.h"
#include "core/error.h"
#include "core/log.h"
#include "core/memory_budget.h"
#include "core/output_guard.h"
#include "core/parallel.h"
#include "core/progress.h"
#include "datasets/native_format.h"
#include "partition/dist_partition.h"
#include "partition/partition_format.h"

namespace tessel::app {
namespace {

namespace fs = std::filesystem;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Prints `j` as JSON (--json: returns true) or as the summary table (returns false; the caller adds its lines).
bool PrintJsonOrSummary(const Printer& say, const nlohmann::ordered_json& j, bool json) {
  if (json) {
    say("{}\n", j.dump(2));
    return true;
  }
  say("{}", partition::FormatPartitionSummary(nlohmann::json::parse(j.dump())));
  return false;
}

// What the ranks of `mpirun tessel partition` must agree on: every option that shapes the folder, and the dataset's
// content (its manifest, which holds the arrays' checksums), never its path.
comm::Settings RankSettings(const PartitionOptions& s) {
  comm::Settings out;
  out.emplace_back("--parts", std::to_string(s.parts));
  out.emplace_back("--method", s.method);
  out.emplace_back("--balance", s.balance);
  out.emplace_back("--objective", s.objective);
  out.emplace_back("--metis-algorithm", s.metis_algorithm);
  out.emplace_back("--seed", std::to_string(s.seed));
  out.emplace_back("--imbalance", fmt::format("{}", s.imbalance));
  out.emplace_back("--dist-partitioner", s.dist_partitioner);
  out.emplace_back("--force", s.force ? "true" : "false");
  out.emplace_back("dataset", ContentFingerprint(s.dataset));
  return out;
}

// `mpirun -np K tessel partition`: every rank reads a block of rows, ParMETIS (PT-Scotch) or the hash assigns, the
// rows move to their parts, each rank writes its parts (partition/dist_partition.h). Rank 0 prints.
void RunDistPartition(comm::Communicator& comm, const PartitionOptions& s, const partition::PartitionOptions& o,
                      const Printer& say) {
  const auto start = std::chrono::steady_clock::now();
  comm::OnEveryRankOrFail(comm, [&] {
    if (comm.Rank() == 0) {
      CheckOutputPath(s.output, OutputKind::kPartitionFolder, s.force, "--output", PathList({s.dataset}));
    }
  });
  ThreadLimit limit(s.threads.threads);
  // The partitioner's rounds allocate and free arrays of megabytes; reusing them saved 15-20% of the page faults at
  // 1M CSBM nodes, K = 4 (each step still returns its free pages: LogMemory).
  memory::KeepFreedHeap();
  log::Info("partition: {} ranks partition {} into {} parts ({})", comm.Size(), s.dataset, s.parts, s.method);
  const partition::DistPartitionResult r = partition::DistPartitionToFolder(comm, s.dataset, o, s.output, s.force);
  const partition::DistPartitionTimings& t = r.timings;
  // Per-rank figures, gathered: peak memory, rows read, and the slowest rank's time of each step.
  std::vector<int64_t> mine{r.peak_rss_bytes >= 0 ? r.peak_rss_bytes : memory::PeakResidentBytes(),
                            r.block_rows,
                            r.block_entries,
                            r.parts_written,
                            r.partitioner_rss_bytes,
                            r.peak_rss_outside_partitioner_bytes};
  std::vector<int64_t> all(mine.size() * static_cast<size_t>(comm.Size()));
  comm.Allgather<int64_t>(mine, all, "stats").ThrowIfError();
  std::vector<double> steps{t.read, t.symmetry, t.assign, t.parmetis, t.relabel, t.move, t.build, t.write, t.total};
  comm.Allreduce<double>(steps, comm::ReduceOp::kMax, "stats").ThrowIfError();
  if (comm.Rank() != 0) return;
  nlohmann::ordered_json j = r.description;
  j["path"] = fs::absolute(s.output).string();
  j["distributed"] = {
      {"ranks", comm.Size()},
      {"partitioner", r.algorithm == "parmetis-kway"      ? "ParMETIS_V3_PartKway (PT-Scotch)"
                      : r.algorithm == "lp-coarsen-metis" ? "label-propagation coarsening, METIS on rank 0, refinement"
                                                          : r.algorithm}};
  if (r.coarse_vertices >= 0) {
    j["distributed"]["clusters"] = r.coarse_vertices;
    j["distributed"]["cluster_graph_entries"] = r.coarse_entries;
    j["distributed"]["refinement_rounds"] = r.refinement_rounds;
  }
  const char* names[] = {"read", "symmetry", "assign", "parmetis",       "relabel",
                         "move", "build",    "write",  "partition_total"};
  nlohmann::ordered_json timings;
  for (size_t i = 0; i < steps.size(); ++i) timings[names[i]] = steps[i];
  timings["total"] = Seconds(start);
  j["seconds"] = timings;  // the slowest rank's time of each step
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  int64_t peak = 0;
  for (int k = 0; k < comm.Size(); ++k) {
    const int64_t* v = &all[static_cast<size_t>(k) * mine.size()];
    ranks.push_back({{"rank", k},
                     {"peak_rss_bytes", v[0]},
                     {"partitioner_rss_bytes", v[4]},
                     {"peak_rss_outside_partitioner_bytes", v[5]},
                     {"rows", v[1]},
                     {"entries", v[2]},
                     {"parts_written", v[3]}});
    peak = std::max(peak, v[0]);
  }
  j["ranks"] = ranks;
  j["peak_rss_bytes"] = peak;  // the largest over ranks
  if (PrintJsonOrSummary(say, j, s.json)) return;
  say("time        {:.2f} s on {} ranks, slowest rank per step: read {:.2f} s, symmetry {:.2f} s, assignment {:.2f} s "
      "(ParMETIS "
      "{:.2f} s), relabel {:.2f} s, move {:.2f} s, build {:.2f} s, write {:.2f} s; peak memory {:.0f} MiB (largest "
      "rank)\n",
      steps[8], comm.Size(), steps[0], steps[1], steps[2], steps[3], steps[4], steps[5], steps[6], steps[7],
      static_cast<double>(peak) / (1024.0 * 1024.0));
}

// The engine's options from the command's (method, balance, objective and algorithm parsed once, here).
partition::PartitionOptions EngineOptions(const PartitionOptions& s) {
  partition::PartitionOptions o;
  o.method = partition::ParseMethod(s.method);
  o.num_parts = s.parts;
  if (s.balance != "auto") o.balance = partition::ParseBalance(s.balance);
  o.objective = partition::ParseObjective(s.objective);
  o.metis_algorithm = partition::ParseMetisAlgorithm(s.metis_algorithm);
  o.seed = s.seed;
  o.imbalance = s.imbalance;
  o.dist_algorithm = partition::ParseDistAlgorithm(s.dist_partitioner);
  o.assignment_file = s.assignment;
  partition::CheckAssignmentOption(o);
  TESSEL_CHECK(s.parts >= 1, "--parts is {}; it must be at least 1", s.parts);
  return o;
}

// The output checked before anything is read, and the thread limit of the run.
ThreadLimit Prepare(const PartitionOptions& s) {
  CheckOutputPath(s.output, OutputKind::kPartitionFolder, s.force, "--output", PathList({s.dataset}));
  return ThreadLimit(s.threads.threads);
}

partition::PartitionResult PartitionLoaded(const PartitionOptions& s, const partition::PartitionOptions& o,
                                           const datasets::NodeDataset& data) {
  Progress progress(fmt::format("partition: {} into {} parts", s.method, s.parts));
  return partition::PartitionToFolder(data, o, s.output, s.force);
}

}  // namespace

partition::PartitionResult PartitionData(const PartitionOptions& s, const datasets::NodeDataset& data) {
  const partition::PartitionOptions o = EngineOptions(s);
  const ThreadLimit limit = Prepare(s);
  return PartitionLoaded(s, o, data);
}

void Partition(const PartitionOptions& s, const Printer& say) {
  const partition::PartitionOptions o = EngineOptions(s);
  // Under mpirun with several ranks: the distributed path (MPI starts here; an exception on any rank ends the job).
  const std::unique_ptr<comm::Communicator> comm = comm::MakeWorldCommunicator();
  if (comm->Size() > 1) {
    comm::AgreeOrFail(*comm, RankSettings(s));
    RunDistPartition(*comm, s, o, say);
    return;
  }
  const ThreadLimit limit = Prepare(s);

  const auto start = std::chrono::steady_clock::now();
  TESSEL_CHECK(datasets::PeekKind(s.dataset) == datasets::DatasetKind::kNode,
               "{}: is a sparse-row (SVM) dataset; tessel partition needs a graph dataset from tessel convert or "
               "tessel generate",
               s.dataset);
  log::Info("partition: loading {}", s.dataset);
  std::optional<memory::Activity> activity(std::in_place, fmt::format("loading {}", s.dataset));
  const datasets::NodeDataset data = datasets::LoadNodeDataset(s.dataset);
  activity.emplace(fmt::format("partitioning {} into {} parts", s.dataset, s.parts));
  const double load_s = Seconds(start);
  log::Info("partition: {} nodes, {} adjacency entries loaded in {:.2f} s; {} into {} parts", data.num_nodes(),
            datasets::NumEntries(data.graph), load_s, s.method, s.parts);

  const partition::PartitionResult r = PartitionLoaded(s, o, data);
  const partition::PartitionTimings& t = r.timings;
  nlohmann::ordered_json j = r.description;
  j["path"] = fs::absolute(s.output).string();
  j["seconds"] = nlohmann::ordered_json{{"load", load_s},         {"prepare_metis_input", t.prepare},
                                        {"metis", t.metis},       {"assign", t.assign},
                                        {"stats", t.stats},       {"build", t.build},
                                        {"write", t.write},       {"partition_total", t.total},
                                        {"total", Seconds(start)}};
  j["cpu_seconds"] = {{"metis", t.metis_cpu}, {"partition_total", t.cpu_total}};
  j["metis_share"] = t.total > 0 ? t.metis / t.total : 0.0;
  j["metis_cpu_share"] = t.cpu_total > 0 ? t.metis_cpu / t.cpu_total : 0.0;
  j["peak_rss_bytes"] = memory::PeakResidentBytes();
  if (PrintJsonOrSummary(say, j, s.json)) return;
  say("time        {:.2f} s partitioning ({:.2f} s assignment of which {:.2f} s inside METIS = {:.0f}%, {:.2f} s "
      "stats, "
      "{:.2f} s build, {:.2f} s write) + {:.2f} s loading; CPU {:.2f} s of which METIS {:.2f} s = {:.0f}%; peak memory "
      "{:.0f} MiB\n",
      t.total, t.assign, t.metis, 100.0 * (t.total > 0 ? t.metis / t.total : 0.0), t.stats, t.build, t.write, load_s,
      t.cpu_total, t.metis_cpu, 100.0 * (t.cpu_total > 0 ? t.metis_cpu / t.cpu_total : 0.0),
      static_cast<double>(memory::PeakResidentBytes()) / (1024.0 * 1024.0));
}

// `tessel info PARTITION_DIR` (called by app/info.cc when the folder holds partitions.json): the statistics
// of partitions.json, and with `verify` every part loaded with its checksums and structure checked.
void PartitionInfo(const std::string& path, bool json, bool verify, const Printer& say) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(partition::DescribePartition(path).dump());
  size_t failed = 0;
  nlohmann::ordered_json checks = nlohmann::ordered_json::array();
  if (verify) {
    log::Info("{}: verifying {} parts", path, j["num_parts"].get<int>());
    checks = partition::VerifyPartition(path);
    for (const auto& c : checks) failed += c["ok"].get<bool>() ? 0 : 1;
  }
  j["checksums"] = {
      {"verified", verify}, {"ok", verify ? nlohmann::ordered_json(failed == 0) : nullptr}, {"parts", checks}};
  const bool printed_json = PrintJsonOrSummary(say, j, json);
  std::vector<ItemCheck> items;
  for (const auto& c : checks) {
    items.push_back(
        {fmt::format("part {}", c["part"].get<int>()), c["ok"].get<bool>(), c["detail"].get<std::string>()});
  }
  ReportChecks(say, !printed_json, verify, items,
               {.path = path,
                .label = "checksums   ",
                .unit = "parts",
                .failure = "failed verification",
                .fix = "tessel partition"});
}

}  // namespace tessel::app
