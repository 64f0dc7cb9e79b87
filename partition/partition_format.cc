// Writing the partition folder: PartitionToFolder (assignment -> stats -> one part at a time -> arrays through
// datasets/array_store -> partitions.json -> rename), the pieces the distributed path shares (folder::), and the
// dataset's fingerprint and summary. Reading it back (LoadPart and its checks) is partition_format_read.cc.
#include "partition/partition_format.h"

#include <chrono>
#include <ctime>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "core/build_config.h"
#include "core/checksum.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "core/output_guard.h"
#include "core/rng.h"
#include "datasets/array_store.h"

namespace tessel::partition {
namespace {

using OrderedJson = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

using folder::PartDirName;

// An existing output is replaced (with --force) only when it is a partition folder or empty; never a device, a
// file or another folder (the output guard, core/output_guard.h; the commands also check it against their inputs).
void CheckReplaceable(const fs::path& dir, bool overwrite) {
  CheckOutputPath(dir, OutputKind::kPartitionFolder, overwrite, "--output");
}

}  // namespace

std::string DatasetFingerprint(const datasets::NodeDataset& data) {
  if (!data.fingerprint.empty()) return data.fingerprint;
  uint64_t h = Mix64(static_cast<uint64_t>(data.num_nodes()));
  auto add = [&h](const auto& buffer) {
    const auto v = buffer.Host();
    h = Mix64(h ^ Checksum64(v.data(), v.size_bytes()));
  };
  std::visit(
      [&](const auto& g) {
        add(g.indptr());
        add(g.indices());
        add(g.weights());
      },
      data.graph);
  const datasets::Features& f = data.features;
  h = Mix64(h ^ static_cast<uint64_t>(f.dim));
  if (f.sparse) {
    add(f.indptr);
    add(f.indices);
    add(f.values);
  } else {
    add(f.dense);
  }
  add(data.labels);
  return fmt::format("{:016x}", h);
}

namespace {

OrderedJson DatasetJson(const DatasetSummary& d) {
  return {{"name", d.name},
          {"num_nodes", d.num_nodes},
          {"num_entries", d.num_entries},
          {"symmetric", d.symmetric},
          {"weighted", d.weighted},
          {"feature_dim", d.feature_dim},
          {"features_sparse", d.features_sparse},
          {"num_classes", d.num_classes},
          {"train", d.train},
          {"val", d.val},
          {"test", d.test},
          {"fingerprint", d.fingerprint}};
}

}  // namespace

DatasetSummary SummarizeDataset(const datasets::NodeDataset& data, bool symmetric) {
  DatasetSummary d;
  d.name = data.name;
  d.num_nodes = data.num_nodes();
  d.num_entries = datasets::NumEntries(data.graph);
  d.symmetric = symmetric;
  d.weighted = std::visit([](const auto& g) { return g.has_weights(); }, data.graph);
  d.feature_dim = data.features.dim;
  d.features_sparse = data.features.sparse;
  d.num_classes = data.num_classes;
  d.train = static_cast<int64_t>(data.train.size());
  d.val = static_cast<int64_t>(data.val.size());
  d.test = static_cast<int64_t>(data.test.size());
  d.fingerprint = DatasetFingerprint(data);
  return d;
}

namespace folder {

std::string PartDirName(int32_t k) { return fmt::format("part-{}", k); }

std::string WritePart(const LocalPart& p, const fs::path& dir) {
  fs::create_directory(dir);
  datasets::ArrayWriter w(dir);
  w.Add("indptr", p.graph.indptr());
  w.Add("indices", p.graph.indices());
  if (p.graph.has_weights()) w.Add("weights", p.graph.weights());
  w.Add("owned_ids", p.owned_ids);
  w.Add("halo_ids", p.halo_ids);
  w.Add("halo_owner", p.halo_owner);
  w.Add("halo_remote", p.halo_remote);
  if (p.features.num_rows > 0 || p.features.dim > 0) {
    if (p.features.sparse) {
      w.Add("feature_indptr", p.features.indptr);
      w.Add("feature_indices", p.features.indices);
      w.Add("feature_values", p.features.values);
    } else {
      w.Add("features", p.features.dense);
    }
  }
  if (!p.labels.empty()) w.Add("labels", p.labels);
  w.Add("train", p.train);
  w.Add("val", p.val);
  w.Add("test", p.test);
  OrderedJson m;
  m["format"] = kPartFormatName;
  m["version"] = kPartitionFormatVersion;
  m["part"] = p.part;
  m["num_parts"] = p.num_parts;
  m["global_offset"] = p.global_offset;
  m["num_owned"] = p.num_owned;
  m["num_halo"] = p.num_halo;
  m["num_entries"] = p.graph.num_entries();
  m["dataset_nodes"] = p.dataset_nodes;
  m["weighted"] = p.graph.has_weights();
  m["has_features"] = p.features.num_rows > 0 || p.features.dim > 0;
  m["feature_dim"] = p.features.dim;
  m["features_sparse"] = p.features.sparse;
  m["num_classes"] = p.num_classes;
  m["arrays"] = w.entries();
  const std::string text = m.dump(2) + "\n";
  WriteFileAtomic(dir / "manifest.json", text);
  return ChecksumHex(text.data(), text.size());
}

nlohmann::ordered_json Describe(const DatasetSummary& dataset, const PartitionOptions& options,
                                const std::string& algorithm, int64_t metis_objective,
                                const std::vector<Constraint>& balance, const std::vector<int64_t>& offsets,
                                const PartitionStats& stats, const std::vector<std::string>& manifest_sums) {
  const auto k = static_cast<int32_t>(offsets.size()) - 1;
  TESSEL_CHECK(k >= 1 && static_cast<int32_t>(manifest_sums.size()) == k && stats.num_parts == k,
               "partition folder: {} node ranges, {} manifests and {} parts in the statistics disagree", offsets.size(),
               manifest_sums.size(), stats.num_parts);
  OrderedJson j;
  j["format"] = kFormatName;
  j["version"] = kPartitionFormatVersion;
  j["dataset"] = DatasetJson(dataset);
  j["method"] = MethodName(options.method);
  j["algorithm"] = algorithm;
  if (options.method == Method::kFile) j["assignment_file"] = options.assignment_file;
  j["num_parts"] = k;
  j["seed"] = options.seed;
  j["objective"] = ObjectiveName(options.objective);
  OrderedJson bal = OrderedJson::array();
  for (Constraint c : balance) bal.push_back(ConstraintName(c));
  j["balance"] = bal;
  j["imbalance_tolerance"] = options.imbalance;
  j["metis_objective"] = metis_objective;
  j["node_ranges"] = offsets;
  OrderedJson st = StatsToJson(stats);
  for (int32_t p = 0; p < k; ++p) {
    OrderedJson& e = st["parts"][static_cast<size_t>(p)];
    e["dir"] = PartDirName(p);
    e["manifest_xxh3"] = manifest_sums[static_cast<size_t>(p)];
  }
  for (auto& [key, value] : st.items()) j[key] = value;
  j["created_by"] = fmt::format("tessel {}", TESSEL_VERSION);
  return j;
}

}  // namespace folder

PartitionResult PartitionToFolder(const datasets::NodeDataset& data, const PartitionOptions& options,
                                  const fs::path& dir, bool overwrite) {
  const auto start = Clock::now();
  const std::clock_t cpu_start = std::clock();
  ValidateOptions(data, options);
  CheckReplaceable(dir, overwrite);
  AtomicDirectory out(dir, overwrite);  // fails now, before any work, when dir exists without --force

  PartitionResult result;
  auto t = Clock::now();
  Assignment a = ComputeAssignment(data, options);
  result.timings.assign = Seconds(t);
  result.timings.prepare = a.prepare_seconds;
  result.timings.metis = a.metis_seconds;
  result.timings.metis_cpu = a.metis_cpu_seconds;
  result.algorithm = a.algorithm;
  result.metis_objective = a.metis_objective;
  const int32_t k = options.num_parts;

  t = Clock::now();
  result.stats = ComputeStats(data, a.part, k, a.symmetric);
  result.timings.stats = Seconds(t);

  const std::vector<Constraint> balance = a.balance;
  const PartitionPlan plan = MakePlan(std::move(a.part), k);
  PartBuilder builder(data, plan);
  std::vector<int64_t> halos(static_cast<size_t>(k), 0);
  std::vector<std::string> manifest_sums(static_cast<size_t>(k));
  const bool chatty = datasets::NumEntries(data.graph) >= 1000000;
  for (int32_t p = 0; p < k; ++p) {
    t = Clock::now();
    const LocalPart part = builder.Build(p);
    result.timings.build += Seconds(t);
    t = Clock::now();
    manifest_sums[p] = folder::WritePart(part, out.path() / PartDirName(p));
    result.timings.write += Seconds(t);
    halos[p] = part.num_halo;
    if (chatty) {
      log::Info("partition: part {}/{} written ({} owned, {} halo, {} entries)", p + 1, k, part.num_owned,
                part.num_halo, part.graph.num_entries());
    }
  }
  SetHalo(&result.stats, halos);

  t = Clock::now();
  OrderedJson j = folder::Describe(SummarizeDataset(data, result.stats.symmetric), options, result.algorithm,
                                   result.metis_objective, balance, plan.offsets, result.stats, manifest_sums);
  WriteFileAtomic(out.path() / "partitions.json", j.dump(2) + "\n");
  out.Commit();
  result.timings.write += Seconds(t);
  result.description = std::move(j);
  result.timings.total = Seconds(start);
  result.timings.cpu_total = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  return result;
}

}  // namespace tessel::partition
