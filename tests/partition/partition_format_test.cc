// The partition folder: write + LoadPart round trip equals the in-memory build, byte-identical folders for equal
// seeds, --force rules, nothing half-written on failure, corruption detected on load, and real datasets.
#include "partition/partition_format.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include "core/checksum.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/parallel.h"
#include "datasets/readers.h"
#include "tests/partition/invariants.h"
#include "tests/partition/scratch_test.h"
#include "tests/partition/test_graphs.h"

namespace tessel::partition {
namespace {

namespace fs = std::filesystem;
using fixtures::GraphSpec;
using fixtures::RandomDataset;

class PartitionFormatTest : public fixtures::ScratchTest {
 protected:
  // Names in root_ (to find leftovers of a failed write).
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(root_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

PartitionOptions Options(Method m, int32_t k, uint64_t seed = 5) {
  PartitionOptions o;
  o.method = m;
  o.num_parts = k;
  o.seed = seed;
  return o;
}

void ExpectSameGraph(const datasets::CsrGraph32& a, const datasets::CsrGraph32& b) {
  EXPECT_EQ(a.indptr().ToVector(), b.indptr().ToVector());
  EXPECT_EQ(a.indices().ToVector(), b.indices().ToVector());
  EXPECT_EQ(a.weights().ToVector(), b.weights().ToVector());
}

TEST_F(PartitionFormatTest, LoadedPartsEqualTheInMemoryBuild) {
  for (int which = 0; which < 2; ++which) {
    GraphSpec spec;
    spec.directed = which == 1;
    spec.weighted = which == 1;
    spec.self_loops = which == 1;
    spec.sparse_features = which == 1;
    const datasets::NodeDataset d = RandomDataset(spec);
    const fs::path dir = root_ / fmt::format("out{}", which);
    const PartitionResult r = PartitionToFolder(d, Options(Method::kMetis, 3), dir, false);
    const Assignment a = ComputeAssignment(d, Options(Method::kMetis, 3));
    const std::vector<LocalPart> expected = fixtures::BuildAll(d, a.part, 3);
    std::vector<LocalPart> loaded;
    for (int32_t p = 0; p < 3; ++p) loaded.push_back(LoadPart(dir, p));
    fixtures::CheckParts(d, a.part, 3, loaded);
    for (int32_t p = 0; p < 3; ++p) {
      const LocalPart& x = loaded[p];
      const LocalPart& y = expected[p];
      ExpectSameGraph(x.graph, y.graph);
      EXPECT_EQ(x.owned_ids.ToVector(), y.owned_ids.ToVector());
      EXPECT_EQ(x.halo_ids.ToVector(), y.halo_ids.ToVector());
      EXPECT_EQ(x.halo_owner.ToVector(), y.halo_owner.ToVector());
      EXPECT_EQ(x.halo_remote.ToVector(), y.halo_remote.ToVector());
      EXPECT_EQ(x.features.sparse, y.features.sparse);
      EXPECT_EQ(x.features.dense.ToVector(), y.features.dense.ToVector());
      EXPECT_EQ(x.features.values.ToVector(), y.features.values.ToVector());
      EXPECT_EQ(x.labels.ToVector(), y.labels.ToVector());
      EXPECT_EQ(x.train.ToVector(), y.train.ToVector());
      EXPECT_EQ(x.test.ToVector(), y.test.ToVector());
      EXPECT_EQ(x.global_offset, y.global_offset);
    }
    // partitions.json agrees with the statistics computed from scratch.
    const nlohmann::json j = ReadPartitionsJson(dir);
    PartitionStats s = ComputeStats(d, a.part, 3);
    EXPECT_EQ(j["edge_cut"].get<int64_t>(), s.edge_cut);
    EXPECT_EQ(j["num_parts"].get<int>(), 3);
    EXPECT_EQ(j["method"].get<std::string>(), "metis");
    EXPECT_EQ(j["node_ranges"][3].get<int64_t>(), d.num_nodes());
    EXPECT_EQ(j["dataset"]["symmetric"].get<bool>(), which == 0);
    EXPECT_EQ(r.stats.edge_cut, s.edge_cut);
    int64_t halo = 0;
    for (const LocalPart& p : loaded) halo += p.num_halo;
    EXPECT_EQ(j["total_halo"].get<int64_t>(), halo);
    const std::string summary = FormatPartitionSummary(DescribePartition(dir));
    EXPECT_NE(summary.find("edge cut"), std::string::npos);
    EXPECT_NE(summary.find("replication"), std::string::npos);
    EXPECT_TRUE(IsPartitionFolder(dir));
  }
}

TEST_F(PartitionFormatTest, SameSeedGivesByteIdenticalFolders) {
  GraphSpec spec;
  spec.nodes = 500;
  spec.edges = 3000;
  const datasets::NodeDataset d = RandomDataset(spec);
  for (Method m : {Method::kMetis, Method::kRandom, Method::kHash}) {
    const std::string name(MethodName(m));
    PartitionToFolder(d, Options(m, 4, 9), root_ / (name + "a"), false);
    PartitionToFolder(d, Options(m, 4, 9), root_ / (name + "b"), false);
    const auto a = Files(root_ / (name + "a"));
    EXPECT_EQ(a.size(), 1 + 4 * 12U) << name;  // partitions.json + per part manifest and 11 arrays
    EXPECT_TRUE(a == Files(root_ / (name + "b"))) << name;
    {
      const ThreadLimit one_thread(1);  // the output does not depend on the thread count
      PartitionToFolder(d, Options(m, 4, 9), root_ / (name + "t"), false);
    }
    EXPECT_TRUE(a == Files(root_ / (name + "t"))) << name;
    if (m != Method::kHash) {
      PartitionToFolder(d, Options(m, 4, 10), root_ / (name + "c"), false);
      EXPECT_FALSE(a == Files(root_ / (name + "c"))) << name;
    }
  }
}

TEST_F(PartitionFormatTest, ExistingOutputNeedsForceAndOnlyReplacesPartitions) {
  const datasets::NodeDataset d = RandomDataset(GraphSpec{});
  const fs::path dir = root_ / "out";
  PartitionToFolder(d, Options(Method::kHash, 2), dir, false);
  const auto before = Files(dir);
  EXPECT_NE(ErrorOf([&] { PartitionToFolder(d, Options(Method::kHash, 4), dir, false); }).find("pass --force"),
            std::string::npos);
  EXPECT_TRUE(Files(dir) == before);
  PartitionToFolder(d, Options(Method::kHash, 4), dir, true);
  EXPECT_EQ(ReadPartitionsJson(dir)["num_parts"].get<int>(), 4);
  // A folder that is not a partition is never replaced.
  const fs::path other = root_ / "other";
  fs::create_directories(other);
  WriteFileAtomic(other / "notes.txt", std::string_view("keep me"));
  EXPECT_NE(ErrorOf([&] { PartitionToFolder(d, Options(Method::kHash, 2), other, true); }).find("not a partition"),
            std::string::npos);
  EXPECT_EQ(ReadFileToString(other / "notes.txt"), "keep me");
  EXPECT_EQ(Entries(), (std::vector<std::string>{"other", "out"}));
}

TEST_F(PartitionFormatTest, FailuresLeaveNothingBehind) {
  GraphSpec spec;
  spec.split = false;
  const datasets::NodeDataset d = RandomDataset(spec);
  EXPECT_NE(ErrorOf([&] { PartitionToFolder(d, Options(Method::kMetis, 0), root_ / "a", false); }).find("--parts"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { PartitionToFolder(d, Options(Method::kMetis, 201), root_ / "b", false); }).find("only 200"),
            std::string::npos);
  PartitionOptions o = Options(Method::kMetis, 2);
  o.balance = {Constraint::kTrain};
  EXPECT_NE(ErrorOf([&] { PartitionToFolder(d, o, root_ / "c", false); }).find("no training split"), std::string::npos);
  EXPECT_TRUE(Entries().empty());
}

TEST_F(PartitionFormatTest, LoadDetectsCorruptionAndMismatches) {
  const datasets::NodeDataset d = RandomDataset(GraphSpec{});
  const fs::path dir = root_ / "out";
  PartitionToFolder(d, Options(Method::kMetis, 3), dir, false);
  // A flipped byte in an array.
  {
    std::fstream f(dir / "part-1" / "indices.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(5);
    f.put('\x7f');
  }
  EXPECT_NE(ErrorOf([&] { LoadPart(dir, 1); }).find("indices"), std::string::npos);
  EXPECT_NO_THROW(LoadPart(dir, 0));
  const nlohmann::ordered_json checks = VerifyPartition(dir);
  ASSERT_EQ(checks.size(), 3U);
  EXPECT_TRUE(checks[0]["ok"].get<bool>());
  EXPECT_FALSE(checks[1]["ok"].get<bool>());
  EXPECT_TRUE(checks[2]["ok"].get<bool>());
  // An edited part manifest.
  const fs::path m = dir / "part-2" / "manifest.json";
  std::string text = ReadFileToString(m);
  text.insert(text.size() - 2, " ");
  WriteFileAtomic(m, std::string_view(text));
  EXPECT_NE(ErrorOf([&] { LoadPart(dir, 2); }).find("differs from"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { LoadPart(dir, 3); }).find("holds 3 parts"), std::string::npos);
  fs::remove_all(dir / "part-0");
  EXPECT_NE(ErrorOf([&] { LoadPart(dir, 0); }).find("incomplete"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { LoadPart(root_, 0); }).find("not a partition folder"), std::string::npos);
  WriteFileAtomic(dir / "partitions.json", std::string_view("{\"format\": 1"));
  EXPECT_NE(ErrorOf([&] { LoadPart(dir, 0); }).find("not valid JSON"), std::string::npos);
}

// A part manifest whose counts are impossible is refused before any array is sized by them, even when the forger
// recomputed the checksum partitions.json keeps of it and edited the summary to agree.
TEST_F(PartitionFormatTest, ImpossibleCountsAreRefusedEvenWithMatchingChecksums) {
  const datasets::NodeDataset d = RandomDataset(GraphSpec{});
  const fs::path dir = root_ / "out";
  PartitionToFolder(d, Options(Method::kMetis, 2), dir, false);
  const std::string part_text = ReadFileToString(dir / "part-1" / "manifest.json");
  const std::string top_text = ReadFileToString(dir / "partitions.json");
  auto forge = [&](const std::string& key, const nlohmann::json& value, const std::string& summary_key) {
    nlohmann::json part = nlohmann::json::parse(part_text);
    part[key] = value;
    const std::string text = part.dump(2);
    WriteFileAtomic(dir / "part-1" / "manifest.json", std::string_view(text));
    nlohmann::json top = nlohmann::json::parse(top_text);
    top["parts"][1]["manifest_xxh3"] = ChecksumHex(text.data(), text.size());
    if (!summary_key.empty()) top["parts"][1][summary_key] = value;
    const std::string top_dump = top.dump(2);
    WriteFileAtomic(dir / "partitions.json", std::string_view(top_dump));
  };
  // partitions.json refuses a halo larger than the other parts' nodes; the part, classes other than the dataset's.
  forge("num_halo", int64_t{1000000000}, "halo");
  EXPECT_NE(ErrorOf([&] { LoadPart(dir, 1); }).find("'halo' is 1000000000"), std::string::npos);
  forge("num_classes", int64_t{100000000}, "");
  EXPECT_NE(ErrorOf([&] { LoadPart(dir, 1); }).find("'num_classes' is 100000000"), std::string::npos);
  {  // the same count forged into the summary too is still impossible
    nlohmann::json top = nlohmann::json::parse(ReadFileToString(dir / "partitions.json"));
    top["dataset"]["num_classes"] = int64_t{100000000};
    WriteFileAtomic(dir / "partitions.json", std::string_view(top.dump(2)));
    EXPECT_NE(ErrorOf([&] { LoadPart(dir, 1); }).find("impossible counts"), std::string::npos);
  }
  // The forgery itself is consistent: the untouched manifest, re-checksummed, loads.
  forge("num_halo", nlohmann::json::parse(part_text)["num_halo"], "halo");
  EXPECT_NO_THROW(LoadPart(dir, 1));
}

// A part whose files are missing is reported as that part's failure alone: the parts whose halos it owns say their
// halos there were not checked (found by probing: `info` reported every part failed, with part 1's error).
TEST_F(PartitionFormatTest, VerifyBlamesTheDamagedPartOnly) {
  const datasets::NodeDataset d = RandomDataset(GraphSpec{});
  const fs::path dir = root_ / "out";
  PartitionToFolder(d, Options(Method::kMetis, 3), dir, false);
  fs::remove(dir / "part-1" / "manifest.json");
  const nlohmann::ordered_json checks = VerifyPartition(dir);
  ASSERT_EQ(checks.size(), 3U);
  EXPECT_FALSE(checks[1]["ok"].get<bool>());
  EXPECT_NE(checks[1]["detail"].get<std::string>().find("part-1"), std::string::npos) << checks[1].dump();
  for (const int p : {0, 2}) {
    EXPECT_TRUE(checks[p]["ok"].get<bool>()) << checks[p].dump();
    const std::string detail = checks[p]["detail"].get<std::string>();
    EXPECT_TRUE(detail == "ok" || detail.find("part 1 is damaged") != std::string::npos) << detail;
  }
  EXPECT_THROW(LoadPart(dir, 0), Error);  // loading for training still refuses: its halo cannot be checked
}

// partitions.json is checked against itself and against every part's manifest, even when every checksum matches:
// node count, node ranges, per-part counts and their sums, classes, feature width.
TEST_F(PartitionFormatTest, SummaryDisagreeingWithItsPartsIsRefused) {
  const datasets::NodeDataset d = RandomDataset(GraphSpec{});
  const fs::path dir = root_ / "out";
  PartitionToFolder(d, Options(Method::kMetis, 3), dir, false);
  const std::string top_text = ReadFileToString(dir / "partitions.json");
  const auto edit_top = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json top = nlohmann::json::parse(top_text);
    edit(top);
    WriteFileAtomic(dir / "partitions.json", std::string_view(top.dump(2)));
  };
  const auto expect_refused = [&](const std::string& needle) {
    for (int32_t p = 0; p < 3; ++p) {
      const std::string what = ErrorOf([&] { LoadPart(dir, p); });
      EXPECT_NE(what.find(needle), std::string::npos) << "part " << p << ": " << what;
      EXPECT_NE(what.find(dir.string()), std::string::npos) << what;
      EXPECT_NE(what.find("re-run tessel partition"), std::string::npos) << what;
    }
    // `tessel info` (VerifyPartition): every part fails, or partitions.json itself is refused.
    try {
      for (const auto& check : VerifyPartition(dir)) EXPECT_FALSE(check["ok"].get<bool>()) << check.dump();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  edit_top([](nlohmann::json& j) { j["dataset"]["num_nodes"] = j["dataset"]["num_nodes"].get<int64_t>() + 7; });
  expect_refused("num_nodes");
  EXPECT_NE(ErrorOf([&] { ReadPartitionsJson(dir); }).find("num_nodes"), std::string::npos);
  edit_top([](nlohmann::json& j) { j["dataset"]["num_classes"] = j["dataset"]["num_classes"].get<int64_t>() + 3; });
  expect_refused("num_classes");
  edit_top([](nlohmann::json& j) { j["dataset"]["feature_dim"] = j["dataset"]["feature_dim"].get<int64_t>() + 1; });
  expect_refused("feature_dim");
  edit_top([](nlohmann::json& j) { j["dataset"]["train"] = j["dataset"]["train"].get<int64_t>() + 1; });
  expect_refused("'train'");
  edit_top([](nlohmann::json& j) { j["dataset"]["num_entries"] = j["dataset"]["num_entries"].get<int64_t>() - 2; });
  expect_refused("num_entries");
  // Ranges that overlap, and a part whose node count is not its range (the total unchanged).
  edit_top([](nlohmann::json& j) {
    j["node_ranges"][2] = j["node_ranges"][0].get<int64_t>();
    j["node_ranges"][1] = j["node_ranges"][1].get<int64_t>() + 1;
  });
  expect_refused("node_ranges");
  edit_top([](nlohmann::json& j) {
    j["node_ranges"][1] = j["node_ranges"][1].get<int64_t>() + 1;
    j["parts"][0]["nodes"] = j["parts"][0]["nodes"].get<int64_t>() + 1;
    j["parts"][1]["nodes"] = j["parts"][1]["nodes"].get<int64_t>() - 1;
  });
  EXPECT_NE(ErrorOf([&] { LoadPart(dir, 0); }).find("counts disagree"), std::string::npos);
  edit_top([](nlohmann::json& j) { j["total_halo"] = j["total_halo"].get<int64_t>() + 1; });
  expect_refused("total_halo");
  // The untouched summary loads.
  edit_top([](nlohmann::json&) {});
  for (int32_t p = 0; p < 3; ++p) EXPECT_NO_THROW(LoadPart(dir, p));
}

// A halo node must be, on its owner part, the node its remote id names: the same dataset node, inside the owner's
// node range. Forged arrays with recomputed checksums (array, manifest, partitions.json) are refused.
TEST_F(PartitionFormatTest, HaloThatNoLongerMatchesItsOwnerIsRefused) {
  const datasets::NodeDataset d = RandomDataset(GraphSpec{});
  const fs::path dir = root_ / "out";
  PartitionToFolder(d, Options(Method::kMetis, 3), dir, false);
  const auto saved = Files(dir);
  const auto restore = [&] {
    for (const auto& [rel, bytes] : saved) WriteFileAtomic(dir / rel, std::string_view(bytes));
  };
  // Rewrites element 0 of part 0's array `name` (of T) with fn(old value) and every checksum that guards it.
  const auto forge = [&](const std::string& name, auto tag, const auto& fn) {
    using T = decltype(tag);
    const fs::path part = dir / "part-0";
    nlohmann::json m = nlohmann::json::parse(ReadFileToString(part / "manifest.json"));
    nlohmann::json& entry = m["arrays"][name];
    const fs::path file = part / entry["file"].get<std::string>();
    std::string bytes = ReadFileToString(file);
    ASSERT_GE(bytes.size(), sizeof(T));
    T v;
    std::memcpy(&v, bytes.data(), sizeof(T));
    v = fn(v);
    std::memcpy(bytes.data(), &v, sizeof(T));
    WriteFileAtomic(file, std::string_view(bytes));
    entry["xxh3"] = ChecksumHex(bytes.data(), bytes.size());
    const std::string text = m.dump(2) + "\n";
    WriteFileAtomic(part / "manifest.json", std::string_view(text));
    nlohmann::json top = nlohmann::json::parse(ReadFileToString(dir / "partitions.json"));
    top["parts"][0]["manifest_xxh3"] = ChecksumHex(text.data(), text.size());
    WriteFileAtomic(dir / "partitions.json", std::string_view(top.dump(2)));
  };
  ASSERT_GT(LoadPart(dir, 0).num_halo, 0);
  const LocalPart before = LoadPart(dir, 0);
  const int32_t owner = before.halo_owner[0];
  const int64_t owner_nodes = LoadPart(dir, owner).num_owned;
  // The remote id moved to another node of the same owner.
  forge("halo_remote", int64_t{}, [&](int64_t r) { return r + 1 < owner_nodes ? r + 1 : r - 1; });
  std::string what = ErrorOf([&] { LoadPart(dir, 0); });
  EXPECT_NE(what.find("no longer matches its owner"), std::string::npos) << what;
  EXPECT_NE(what.find("re-run tessel partition"), std::string::npos) << what;
  EXPECT_FALSE(VerifyPartition(dir)[0]["ok"].get<bool>());
  restore();
  // The remote id beyond its owner's node range.
  forge("halo_remote", int64_t{}, [&](int64_t) { return owner_nodes; });
  what = ErrorOf([&] { LoadPart(dir, 0); });
  EXPECT_NE(what.find("its owner part " + std::to_string(owner) + " has"), std::string::npos) << what;
  restore();
  // Another owner (the third part), and this part itself.
  forge("halo_owner", int32_t{}, [&](int32_t o) { return o == 1 ? 2 : 1; });
  what = ErrorOf([&] { LoadPart(dir, 0); });
  EXPECT_FALSE(what.empty());
  EXPECT_NE(what.find("halo"), std::string::npos) << what;
  restore();
  forge("halo_owner", int32_t{}, [&](int32_t) { return 0; });
  what = ErrorOf([&] { LoadPart(dir, 0); });
  EXPECT_NE(what.find("owner part 0"), std::string::npos) << what;
  restore();
  EXPECT_NO_THROW(LoadPart(dir, 0));
}

// Real data (skipped when ../shared/data is absent): Cora and a METIS example mesh.
TEST_F(PartitionFormatTest, RealGraphsKeepTheInvariants) {
  const fs::path shared = TESSEL_SHARED_DATA;
  const fs::path cora = shared / "graphs" / "cora";
  const fs::path mesh = shared / "graphs" / "metis_examples" / "4elt.graph";
  if (!fs::exists(cora / "cora.content") || !fs::exists(mesh)) GTEST_SKIP() << "no shared data at " << shared;
  datasets::NodeDataset c = datasets::ReadLinqs(cora / "cora.content", cora / "cora.cites");
  datasets::NodeDataset m;
  m.name = "4elt";
  m.graph = datasets::ReadMetisGraph(mesh).graph;
  for (const datasets::NodeDataset* d : {&c, &m}) {
    for (int32_t k : {4, 8}) {
      SCOPED_TRACE(::testing::Message() << d->name << " k=" << k);
      PartitionOptions o = Options(Method::kMetis, k);
      o.balance = {Constraint::kNodes, Constraint::kEdges};
      const fs::path dir = root_ / fmt::format("{}-{}", d->name, k);
      const PartitionResult r = PartitionToFolder(*d, o, dir, false);
      EXPECT_LE(r.stats.imbalance_nodes, 1.05 + 1e-9);
      EXPECT_LE(r.stats.imbalance_edges, 1.05 + 1e-9);
      std::vector<LocalPart> parts;
      for (int32_t p = 0; p < k; ++p) parts.push_back(LoadPart(dir, p));
      fixtures::CheckParts(*d, ComputeAssignment(*d, o).part, k, parts);
      // METIS cuts far fewer edges than hashing on real graphs.
      EXPECT_LT(r.stats.edge_cut * 2,
                ComputeStats(*d, ComputeAssignment(*d, Options(Method::kHash, k)).part, k).edge_cut);
    }
  }
}

}  // namespace
}  // namespace tessel::partition
