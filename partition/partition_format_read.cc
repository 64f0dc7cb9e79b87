// Reading the partition folder back: partitions.json checked against itself (ReadPartitionsJson), LoadPart with
// its consistency checks (manifest checksums, counts, halos at their owners), VerifyPartition, the summary `tessel
// info` prints, and CheckPartitionDataset. Writing it is partition_format.cc.
#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/checksum.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "datasets/array_store.h"
#include "partition/partition_format.h"

namespace tessel::partition {
namespace {

using folder::kFormatName;
using folder::kPartFormatName;
using folder::PartDirName;

constexpr const char* kFix = "re-run tessel partition";

// Typed access to a JSON object read from `file`; every failure names the file, the key and the fix.
class Keys {
 public:
  Keys(const nlohmann::json& j, std::string file) : j_(j), file_(std::move(file)) {}
  const nlohmann::json& At(const std::string& key) const {
    if (!j_.is_object() || !j_.contains(key)) Fail(fmt::format("missing key '{}'", key));
    return j_.at(key);
  }
  int64_t Int(const std::string& key, int64_t min_value = 0) const {
    const nlohmann::json& v = At(key);
    if (!v.is_number_integer() || v.get<int64_t>() < min_value) {
      Fail(fmt::format("'{}' must be an integer >= {}, not {}", key, min_value, v.dump()));
    }
    return v.get<int64_t>();
  }
  bool Bool(const std::string& key) const {
    const nlohmann::json& v = At(key);
    if (!v.is_boolean()) Fail(fmt::format("'{}' must be true or false", key));
    return v.get<bool>();
  }
  std::string String(const std::string& key) const {
    const nlohmann::json& v = At(key);
    if (!v.is_string()) Fail(fmt::format("'{}' must be a string", key));
    return v.get<std::string>();
  }
  [[noreturn]] void Fail(const std::string& what) const {
    throw Error::InFile(file_, fmt::format("{}; {}", what, kFix));
  }
  bool Has(const std::string& key) const { return j_.is_object() && j_.contains(key); }
  const std::string& file() const { return file_; }

 private:
  const nlohmann::json& j_;
  std::string file_;
};

nlohmann::json ParseJsonFile(const fs::path& file, const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error::InFile(file.string(), fmt::format("not valid JSON ({}); {}", e.what(), kFix));
  }
}

}  // namespace

namespace {

// partitions.json must agree with itself before any part is checked against it (a checksum proves only that a
// file is the one the summary names, not that either is sane): node ranges rising from 0 to the dataset's node
// count, each part's node count its range, halos within the other parts' nodes, and the parts' counts summing to
// the dataset's.
void CheckSummary(const nlohmann::json& j, const Keys& keys, int64_t k) {
  const Keys ds(keys.At("dataset"), keys.file() + " \"dataset\"");
  const int64_t n = ds.Int("num_nodes", 1);
  (void)ds.Int("num_classes");
  (void)ds.Int("feature_dim");
  const nlohmann::json& ranges = j.at("node_ranges");
  for (int64_t p = 0; p <= k; ++p) {
    const nlohmann::json& r = ranges[static_cast<size_t>(p)];
    const int64_t before = p == 0 ? 0 : ranges[static_cast<size_t>(p) - 1].get<int64_t>();
    if (!r.is_number_integer() || r.get<int64_t>() < before || (p == 0 && r.get<int64_t>() != 0)) {
      keys.Fail(fmt::format("'node_ranges' must rise from 0 (offset {} is {})", p, r.dump()));
    }
  }
  if (ranges[static_cast<size_t>(k)].get<int64_t>() != n) {
    keys.Fail(
        fmt::format("'node_ranges' end at {} nodes but \"dataset\" \"num_nodes\" is {}: the summary disagrees "
                    "with its parts",
                    ranges[static_cast<size_t>(k)].get<int64_t>(), n));
  }
  const char* summed[] = {"edges", "halo", "train", "val", "test"};
  const char* dataset_key[] = {"num_entries", nullptr, "train", "val", "test"};
  int64_t sums[5] = {0, 0, 0, 0, 0};
  for (int64_t p = 0; p < k; ++p) {
    const Keys part(j.at("parts")[static_cast<size_t>(p)], fmt::format("{} \"parts\"[{}]", keys.file(), p));
    const int64_t nodes = part.Int("nodes");
    const int64_t range =
        ranges[static_cast<size_t>(p) + 1].get<int64_t>() - ranges[static_cast<size_t>(p)].get<int64_t>();
    if (nodes != range)
      part.Fail(fmt::format("'nodes' is {} but 'node_ranges' give part {} {} nodes", nodes, p, range));
    for (size_t i = 0; i < 5; ++i) {
      const int64_t v = part.Int(summed[i]);
      if (v > std::numeric_limits<int64_t>::max() - sums[i]) part.Fail(fmt::format("'{}' is too large", summed[i]));
      sums[i] += v;
    }
    if (part.Int("halo") > n - nodes) {
      part.Fail(fmt::format("'halo' is {} but only {} of the {} nodes belong to other parts", part.Int("halo"),
                            n - nodes, n));
    }
  }
  for (size_t i = 0; i < 5; ++i) {
    if (dataset_key[i] == nullptr || !ds.Has(dataset_key[i])) continue;
    if (ds.Int(dataset_key[i]) != sums[i]) {
      ds.Fail(fmt::format("'{}' is {} but the parts' '{}' sum to {}: the summary disagrees with its parts",
                          dataset_key[i], ds.Int(dataset_key[i]), summed[i], sums[i]));
    }
  }
  if (keys.Int("total_halo") != sums[1]) {
    keys.Fail(fmt::format("'total_halo' is {} but the parts' 'halo' sum to {}", keys.Int("total_halo"), sums[1]));
  }
}

}  // namespace

nlohmann::json ReadPartitionsJson(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error::InFile(dir.string(), "no such partition folder");
  const fs::path file = dir / "partitions.json";
  if (!fs::exists(file, ec)) {
    throw Error::InFile(dir.string(), "not a partition folder (no partitions.json); create one with tessel partition");
  }
  nlohmann::json j = ParseJsonFile(file, ReadFileToString(file));
  const Keys keys(j, file.string());
  if (keys.String("format") != kFormatName) {
    keys.Fail(fmt::format("\"format\" is \"{}\", not \"{}\"", keys.String("format"), kFormatName));
  }
  const int64_t version = keys.Int("version", 1);
  if (version > kPartitionFormatVersion) {
    throw Error::InFile(file.string(), fmt::format("format version {} is newer than this tessel reads (up to {}); "
                                                   "upgrade tessel",
                                                   version, kPartitionFormatVersion));
  }
  const int64_t k = keys.Int("num_parts", 1);
  const nlohmann::json& parts = keys.At("parts");
  if (!parts.is_array() || static_cast<int64_t>(parts.size()) != k) {
    keys.Fail(fmt::format("'parts' must list {} parts", k));
  }
  const nlohmann::json& ranges = keys.At("node_ranges");
  if (!ranges.is_array() || static_cast<int64_t>(ranges.size()) != k + 1) {
    keys.Fail(fmt::format("'node_ranges' must hold {} offsets", k + 1));
  }
  CheckSummary(j, keys, k);
  // The keys `tessel info` prints: typed here, so a damaged one is named instead of failing in the printer.
  for (const char* key : {"algorithm", "objective"}) {
    if (keys.Has(key)) (void)keys.String(key);
  }
  (void)keys.String("method");
  if (!keys.At("seed").is_number_unsigned()) {
    keys.Fail(fmt::format("'seed' must be an integer >= 0, not {}", keys.At("seed").dump()));
  }
  // The dataset's description: every key tessel writes, with its type (a damaged one is named here, never read as
  // a default or failing later in a printer).
  const Keys ds(keys.At("dataset"), file.string() + " (key \"dataset\")");
  (void)ds.String("name");
  (void)ds.String("fingerprint");
  for (const char* key : {"symmetric", "weighted", "features_sparse"}) (void)ds.Bool(key);
  for (const char* key : {"edge_cut", "cut_entries", "metis_objective"}) {
    if (keys.Has(key)) (void)keys.Int(key, std::numeric_limits<int64_t>::min());
  }
  for (const char* key : {"imbalance_tolerance", "cut_fraction", "halo_replication"}) {
    if (keys.Has(key) && !keys.At(key).is_number()) keys.Fail(fmt::format("'{}' must be a number", key));
  }
  if (keys.Has("balance")) {
    const nlohmann::json& b = keys.At("balance");
    if (!b.is_array() || !std::all_of(b.begin(), b.end(), [](const nlohmann::json& x) { return x.is_string(); })) {
      keys.Fail("'balance' must be a list of strings");
    }
  }
  if (keys.Has("imbalance")) {
    const nlohmann::json& b = keys.At("imbalance");
    if (!b.is_object() || !std::all_of(b.begin(), b.end(), [](const nlohmann::json& x) { return x.is_number(); })) {
      keys.Fail("'imbalance' must be an object of numbers");
    }
  }
  return j;
}

bool IsPartitionFolder(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::exists(dir / "partitions.json", ec);
}

namespace {

// A part's manifest, read and checked against partitions.json (`top`, as ReadPartitionsJson returns it).
struct Manifest {
  fs::path dir;   // the part's folder
  fs::path file;  // its manifest.json
  nlohmann::json json;
};

// Reads part `rank`'s manifest and checks that it is the one partitions.json names (checksum) and that it
// describes the same dataset: node count, classes, feature width and kind, weights. Node ranges and counts are
// LoadPart's.
Manifest ReadManifest(const fs::path& dir, const nlohmann::json& top, int32_t rank) {
  const std::string top_file = (dir / "partitions.json").string();
  const auto k = top["num_parts"].get<int32_t>();
  const nlohmann::json& entry = top["parts"][static_cast<size_t>(rank)];
  const Keys entry_keys(entry, top_file);
  const std::string sub = entry_keys.String("dir");
  if (sub != PartDirName(rank)) entry_keys.Fail(fmt::format("part {} must live in '{}'", rank, PartDirName(rank)));
  Manifest out;
  out.dir = dir / sub;
  out.file = out.dir / "manifest.json";
  std::error_code ec;
  if (!fs::exists(out.file, ec)) {
    throw Error::InFile(out.file.string(), fmt::format("missing; the partition folder is incomplete; {}", kFix));
  }
  const std::string text = ReadFileToString(out.file);
  const std::string sum = ChecksumHex(text.data(), text.size());
  if (sum != entry_keys.String("manifest_xxh3")) {
    throw Error::InFile(out.file.string(),
                        fmt::format("checksum {} differs from {} in partitions.json: the part was modified or comes "
                                    "from another run; {}",
                                    sum, entry_keys.String("manifest_xxh3"), kFix));
  }
  out.json = ParseJsonFile(out.file, text);
  const Keys mk(out.json, out.file.string());
  if (mk.String("format") != kPartFormatName || mk.Int("part") != rank || mk.Int("num_parts", 1) != k) {
    mk.Fail(fmt::format("not part {} of {} of a tessel partition", rank, k));
  }
  // The dataset as partitions.json describes it (ReadPartitionsJson checked these keys).
  const nlohmann::json& ds = top["dataset"];
  const auto differs = [&](const std::string& key, const std::string& ours, const std::string& ds_key) {
    mk.Fail(fmt::format("'{}' is {} but partitions.json has \"dataset\" '{}' {}: the part and the summary disagree",
                        key, ours, ds_key, ds[ds_key].dump()));
  };
  if (mk.Int("dataset_nodes") != ds["num_nodes"].get<int64_t>()) {
    differs("dataset_nodes", std::to_string(mk.Int("dataset_nodes")), "num_nodes");
  }
  if (mk.Int("num_classes") != ds["num_classes"].get<int64_t>()) {
    differs("num_classes", std::to_string(mk.Int("num_classes")), "num_classes");
  }
  if (mk.Int("feature_dim") != ds["feature_dim"].get<int64_t>()) {
    differs("feature_dim", std::to_string(mk.Int("feature_dim")), "feature_dim");
  }
  if (mk.Bool("has_features") != (mk.Int("feature_dim") > 0)) {
    mk.Fail(
        fmt::format("'has_features' is {} but 'feature_dim' is {}", mk.Bool("has_features"), mk.Int("feature_dim")));
  }
  for (const char* key : {"features_sparse", "weighted"}) {
    if (ds.contains(key) && ds[key].is_boolean() && mk.Bool(key) != ds[key].get<bool>()) {
      differs(key, mk.Bool(key) ? "true" : "false", key);
    }
  }
  return out;
}

}  // namespace

LocalPart LoadPart(const fs::path& dir, int32_t rank, const LoadPartOptions& options) {
  const nlohmann::json top = ReadPartitionsJson(dir);
  const std::string top_file = (dir / "partitions.json").string();
  const Keys top_keys(top, top_file);
  const auto k = static_cast<int32_t>(top_keys.Int("num_parts", 1));
  TESSEL_CHECK(rank >= 0 && rank < k, "{}: rank {} has no part: the folder holds {} parts (0..{}); run {} ranks",
               dir.string(), rank, k, k - 1, k);
  const Keys entry_keys(top["parts"][static_cast<size_t>(rank)], top_file);
  const Manifest manifest = ReadManifest(dir, top, rank);
  const fs::path& part_dir = manifest.dir;
  const fs::path& manifest_file = manifest.file;
  const nlohmann::json& m = manifest.json;
  const Keys mk(m, manifest_file.string());
  LocalPart p;
  p.part = rank;
  p.num_parts = k;
  p.global_offset = mk.Int("global_offset");
  p.num_owned = mk.Int("num_owned");
  p.num_halo = mk.Int("num_halo");
  p.dataset_nodes = mk.Int("dataset_nodes");
  p.num_classes = static_cast<int32_t>(mk.Int("num_classes"));
  const int64_t entries = mk.Int("num_entries");
  // The part must agree with the summary the other ranks read.
  const int64_t range_begin = top["node_ranges"][static_cast<size_t>(rank)].get<int64_t>();
  const int64_t range_end = top["node_ranges"][static_cast<size_t>(rank) + 1].get<int64_t>();
  if (p.global_offset != range_begin || p.num_owned != range_end - range_begin ||
      p.num_owned != entry_keys.Int("nodes") || p.num_halo != entry_keys.Int("halo") ||
      entries != entry_keys.Int("edges")) {
    mk.Fail("counts disagree with partitions.json");
  }
  // Counts are checked against each other before any array is mapped or sized by them: checksums prove only that
  // the files were not changed after the manifest was written, not that the manifest is sane.
  const int64_t max_classes = std::max<int64_t>(p.dataset_nodes, datasets::kMaxClassesAlways);
  if (p.dataset_nodes < 1 || p.num_owned < 0 || p.num_owned > p.dataset_nodes || p.num_halo < 0 ||
      p.num_halo > p.dataset_nodes - p.num_owned || entries < 0 || p.num_classes < 0 ||
      mk.Int("num_classes") > max_classes) {
    mk.Fail(fmt::format("impossible counts: {} owned + {} halo nodes of a {}-node dataset, {} entries, {} classes",
                        p.num_owned, p.num_halo, p.dataset_nodes, entries, mk.Int("num_classes")));
  }
  if (p.num_owned + p.num_halo > std::numeric_limits<int32_t>::max()) {
    mk.Fail(
        fmt::format("{} owned + {} halo nodes do not fit the 32-bit local ids of a part; partition into more "
                    "parts",
                    p.num_owned, p.num_halo));
  }
  const datasets::ArrayReader r(part_dir, m.contains("arrays") ? m["arrays"] : nlohmann::json(), kFix);
  const bool verify = options.verify_checksums;
  const int64_t local = p.num_local();
  p.graph =
      datasets::CsrGraph32(r.Map<int64_t>("indptr", verify, local + 1), r.Map<int32_t>("indices", verify, entries),
                           mk.Bool("weighted") ? r.Map<float>("weights", verify, entries) : Buffer<float>());
  p.owned_ids = r.Map<int64_t>("owned_ids", verify, p.num_owned);
  p.halo_ids = r.Map<int64_t>("halo_ids", verify, p.num_halo);
  p.halo_owner = r.Map<int32_t>("halo_owner", verify, p.num_halo);
  p.halo_remote = r.Map<int64_t>("halo_remote", verify, p.num_halo);
  if (mk.Bool("has_features")) {
    p.features.num_rows = p.num_owned;
    p.features.dim = mk.Int("feature_dim");
    if (p.features.dim < 1 || p.features.dim > std::numeric_limits<int32_t>::max()) {
      mk.Fail(fmt::format("\"feature_dim\" is {} but \"has_features\" is true; it must be in [1, {}]", p.features.dim,
                          std::numeric_limits<int32_t>::max()));
    }
    p.features.sparse = mk.Bool("features_sparse");
    if (p.features.sparse) {
      p.features.indptr = r.Map<int64_t>("feature_indptr", verify, p.num_owned + 1);
      p.features.indices = r.Map<int32_t>("feature_indices", verify);
      p.features.values = r.Map<float>("feature_values", verify, static_cast<int64_t>(p.features.indices.size()));
    } else {
      p.features.dense = r.Map<float>("features", verify, p.num_owned * p.features.dim);
    }
  }
  if (r.Has("labels")) p.labels = r.Map<int32_t>("labels", verify, p.num_owned);
  p.train = r.Map<int64_t>("train", verify, entry_keys.Int("train"));
  p.val = r.Map<int64_t>("val", verify, entry_keys.Int("val"));
  p.test = r.Map<int64_t>("test", verify, entry_keys.Int("test"));
  if (options.validate) {
    // A halo node must be the node its owner holds at the halo's remote id: inside the owner's node range
    // (node_ranges), and the same dataset node there (the owner's owned_ids, mapped from its part folder, whose
    // manifest must be the one partitions.json names).
    // One owner part at a time (its owned_ids mapped, checked, unmapped), so a rank never holds more than one other
    // part's ids: the check is sized by a part, not by the dataset.
    std::vector<std::vector<int64_t>> by_owner(static_cast<size_t>(k));
    for (int64_t j = 0; j < p.num_halo; ++j) {
      const int32_t owner = p.halo_owner[static_cast<size_t>(j)];
      if (owner < 0 || owner >= k || owner == rank) continue;  // Validate names it
      by_owner[static_cast<size_t>(owner)].push_back(j);
    }
    for (int32_t owner = 0; owner < k; ++owner) {
      const std::vector<int64_t>& halo = by_owner[static_cast<size_t>(owner)];
      if (halo.empty()) continue;
      const int64_t owner_nodes = top["node_ranges"][static_cast<size_t>(owner) + 1].get<int64_t>() -
                                  top["node_ranges"][static_cast<size_t>(owner)].get<int64_t>();
      for (int64_t j : halo) {
        const int64_t remote = p.halo_remote[static_cast<size_t>(j)];
        if (remote < 0 || remote >= owner_nodes) {
          throw Error::InFile(part_dir.string(),
                              fmt::format("invalid part: halo node {} has remote id {} but its owner part {} has {} "
                                          "nodes; {}",
                                          j, remote, owner, owner_nodes, kFix));
        }
      }
      const Manifest om = ReadManifest(dir, top, owner);
      const datasets::ArrayReader owner_arrays(om.dir,
                                               om.json.contains("arrays") ? om.json["arrays"] : nlohmann::json(), kFix);
      const Buffer<int64_t> owned = owner_arrays.Map<int64_t>("owned_ids", verify, owner_nodes);
      for (int64_t j : halo) {
        const auto jj = static_cast<size_t>(j);
        const int64_t remote = p.halo_remote[jj];
        if (owned[static_cast<size_t>(remote)] != p.halo_ids[jj]) {
          throw Error::InFile(part_dir.string(),
                              fmt::format("invalid part: halo node {} is dataset node {} but its owner part {} holds "
                                          "dataset node {} at remote id {}; the halo no longer matches its owner; {}",
                                          j, p.halo_ids[jj], owner, owned[static_cast<size_t>(remote)], remote, kFix));
        }
      }
    }
    try {
      p.Validate();
    } catch (const Error& e) {
      throw Error::InFile(part_dir.string(), fmt::format("invalid part: {}; {}", e.what(), kFix));
    }
  }
  return p;
}

nlohmann::ordered_json VerifyPartition(const fs::path& dir) {
  const nlohmann::json top = ReadPartitionsJson(dir);
  const auto k = top["num_parts"].get<int32_t>();
  // First every part's own files (its manifest and the checksums of its arrays), then, for the parts whose files
  // are sound, their structure and halos at their owners (which read the owners' ids). A halo check that fails on a
  // damaged owner is that owner's failure: it is reported there, not as every part that has a halo node in it.
  std::vector<std::string> own(static_cast<size_t>(k), "ok");
  for (int32_t p = 0; p < k; ++p) {
    try {
      LoadPart(dir, p, {.verify_checksums = true, .validate = false});
    } catch (const Error& e) {
      own[static_cast<size_t>(p)] = e.what();
    }
  }
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (int32_t p = 0; p < k; ++p) {
    std::string detail = own[static_cast<size_t>(p)];
    if (detail == "ok") {
      try {
        LoadPart(dir, p, {.verify_checksums = false, .validate = true});  // the checksums were verified above
      } catch (const Error& e) {
        detail = e.what();
        for (int32_t q = 0; q < k; ++q) {
          const std::string q_dir = (dir / folder::PartDirName(q)).string() + "/";
          if (q != p && own[static_cast<size_t>(q)] != "ok" && detail.find(q_dir) != std::string::npos) {
            detail = fmt::format("ok; its halo nodes owned by part {} were not checked: part {} is damaged", q, q);
            break;
          }
        }
      }
    }
    out.push_back({{"part", p}, {"ok", detail.starts_with("ok")}, {"detail", detail}});
  }
  return out;
}

nlohmann::json DescribePartition(const fs::path& dir) {
  nlohmann::json j = ReadPartitionsJson(dir);
  j["path"] = dir.string();
  return j;
}

std::string FormatPartitionSummary(const nlohmann::json& d) {
  const auto get = [&](const char* key) -> const nlohmann::json& {
    static const nlohmann::json kNull;
    return d.contains(key) ? d.at(key) : kNull;
  };
  const nlohmann::json& ds = get("dataset");
  std::string balance;
  for (const auto& c : get("balance")) {
    if (!balance.empty()) balance.push_back(',');
    balance.append(c.get<std::string>());
  }
  std::string out;
  if (d.contains("path")) out += fmt::format("partition   {}\n", d["path"].get<std::string>());
  out += fmt::format("method      {} ({}), {} parts, seed {}, objective {}, balance {}, imbalance <= {}\n",
                     d.value("method", std::string("?")), d.value("algorithm", std::string("?")),
                     d.value("num_parts", int64_t{0}), d.value("seed", uint64_t{0}),
                     d.value("objective", std::string("?")), balance, d.value("imbalance_tolerance", 0.0));
  out += fmt::format("dataset     {}: {} nodes, {} adjacency entries ({})\n", ds.value("name", std::string()),
                     ds.value("num_nodes", int64_t{0}), ds.value("num_entries", int64_t{0}),
                     ds.value("symmetric", true) ? "symmetric" : "directed");
  out += fmt::format("edge cut    {} {} edges ({:.2f}% of adjacency entries cross parts)\n",
                     d.value("edge_cut", int64_t{0}), ds.value("symmetric", true) ? "undirected" : "directed",
                     100.0 * d.value("cut_fraction", 0.0));
  out += fmt::format("halo        replication {:.4f} ({} halo copies over all parts)\n",
                     d.value("halo_replication", 0.0), d.value("total_halo", int64_t{0}));
  std::string imb;
  for (const char* name : {"nodes", "edges", "train"}) {
    if (!get("imbalance").contains(name)) continue;
    imb += fmt::format("{}{} {:.4f}", imb.empty() ? "" : ", ", name, get("imbalance")[name].get<double>());
  }
  out += fmt::format("imbalance   {} (largest part / average)\n", imb);
  out += fmt::format("{:>6} {:>12} {:>14} {:>12} {:>10} {:>10} {:>10}\n", "part", "nodes", "edges", "halo", "train",
                     "val", "test");
  for (const auto& p : get("parts")) {
    out += fmt::format("{:>6} {:>12} {:>14} {:>12} {:>10} {:>10} {:>10}\n", p.value("part", int64_t{0}),
                       p.value("nodes", int64_t{0}), p.value("edges", int64_t{0}), p.value("halo", int64_t{0}),
                       p.value("train", int64_t{0}), p.value("val", int64_t{0}), p.value("test", int64_t{0}));
  }
  return out;
}

void CheckPartitionDataset(const nlohmann::json& desc, const std::string& dir, const datasets::NodeDataset& data,
                           const std::string& path) {
  const nlohmann::json& d = desc.at("dataset");
  const auto fail = [&](const std::string& what, const std::string& theirs, const std::string& ours) {
    throw Error(fmt::format(
        "--dataset {} is not the dataset the partition {} was made from: {} is {} in the partition but {} in the "
        "dataset; pass the dataset that was given to `tessel partition`, or partition this one",
        path, dir, what, theirs, ours));
  };
  const std::string name = d.value("name", std::string());
  if (!name.empty() && !data.name.empty() && name != data.name) fail("the name", name, data.name);
  const auto count = [&](const char* key, int64_t ours) {
    if (d.contains(key) && d.at(key).get<int64_t>() != ours) {
      fail(fmt::format("\"{}\"", key), std::to_string(d.at(key).get<int64_t>()), std::to_string(ours));
    }
  };
  count("num_nodes", data.num_nodes());
  count("num_entries", datasets::NumEntries(data.graph));
  count("feature_dim", data.features.dim);
  count("num_classes", data.num_classes);
  if (d.contains("fingerprint")) {
    const std::string ours = partition::DatasetFingerprint(data);
    if (d.at("fingerprint").get<std::string>() != ours) {
      fail("the fingerprint of graph, features and labels", d.at("fingerprint").get<std::string>(), ours);
    }
  } else {
    log::Warn("{}: partitions.json has no dataset fingerprint (an older partition); only name and counts checked", dir);
  }
}

}  // namespace tessel::partition
