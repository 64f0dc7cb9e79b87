// The native dataset folder: random node datasets (int32/int64 ids, weights, dense/sparse features, labels,
// splits) and sparse-row datasets round-trip exactly; corruption, truncation and manifest problems are errors.
#include "datasets/native_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <tuple>

#include "core/checksum.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/rng.h"
#include "datasets/graph_builder.h"
#include "datasets/split.h"

namespace tessel::datasets {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A folder name per test and process (parameterised test names hold '/'; builds may run the tests at once).
fs::path UniqueTempDir(const std::string& prefix) {
  std::string name = prefix + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(name.begin(), name.end(), '/', '_');
  return fs::temp_directory_path() / (name + "." + std::to_string(::getpid()));
}

enum class Feat { kNone, kDense, kSparse };

template <typename IdT>
CsrGraph<IdT> RandomGraph(Rng& rng, int64_t n, int64_t m, bool weighted) {
  EdgeList e;
  e.num_nodes = n;
  for (int64_t i = 0; i < m; ++i) {
    e.Add(static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(n))),
          static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(n))));
    if (weighted) e.weights.push_back(static_cast<float>(rng.Uniform()));
  }
  return GraphBuilder().Build<IdT>(e);
}

NodeDataset RandomNodeDataset(uint64_t seed, bool int64_ids, bool weighted, Feat feat, bool labels, bool split) {
  Rng rng(seed);
  const int64_t n = 40 + static_cast<int64_t>(rng.UniformInt(60));
  NodeDataset d;
  d.name = "random-" + std::to_string(seed);
  if (int64_ids) {
    d.graph = RandomGraph<int64_t>(rng, n, 3 * n, weighted);
  } else {
    d.graph = RandomGraph<int32_t>(rng, n, 3 * n, weighted);
  }
  if (feat != Feat::kNone) {
    d.features.num_rows = n;
    d.features.dim = 17;
    d.features.sparse = feat == Feat::kSparse;
    std::vector<float> dense(static_cast<size_t>(n * 17), 0.0F);
    std::vector<int64_t> ptr = {0};
    std::vector<int32_t> idx;
    std::vector<float> val;
    for (int64_t r = 0; r < n; ++r) {
      for (int32_t c = 0; c < 17; ++c) {
        if (rng.Uniform() < 0.3) {
          const auto x = static_cast<float>(rng.Normal());
          dense[static_cast<size_t>(r * 17 + c)] = x;
          idx.push_back(c);
          val.push_back(x);
        }
      }
      ptr.push_back(static_cast<int64_t>(idx.size()));
    }
    if (d.features.sparse) {
      d.features.indptr = Buffer<int64_t>(std::move(ptr));
      d.features.indices = Buffer<int32_t>(std::move(idx));
      d.features.values = Buffer<float>(std::move(val));
    } else {
      d.features.dense = Buffer<float>(std::move(dense));
    }
  }
  if (labels) {
    d.num_classes = 5;
    std::vector<int32_t> l(static_cast<size_t>(n));
    for (auto& x : l) x = rng.Uniform() < 0.1 ? kNoLabel : static_cast<int32_t>(rng.UniformInt(5));
    d.labels = Buffer<int32_t>(std::move(l));
  }
  if (split) AssignRandomSplit(d, {0.5, 0.25, 0.25}, seed);
  return d;
}

SparseRowDataset RandomSparseRows(uint64_t seed, int64_t rows) {
  Rng rng(seed);
  SparseRowDataset d;
  d.name = "rows";
  d.num_rows = rows;
  d.num_features = 30;
  std::vector<int64_t> ptr = {0};
  std::vector<int32_t> idx;
  std::vector<double> val;
  std::vector<double> lab;
  for (int64_t r = 0; r < rows; ++r) {
    for (int32_t c = 0; c < 30; ++c) {
      if (rng.Uniform() < 0.2) {
        idx.push_back(c);
        val.push_back(rng.Normal());
      }
    }
    ptr.push_back(static_cast<int64_t>(idx.size()));
    lab.push_back(rng.Uniform() < 0.5 ? -1.0 : 1.0);
  }
  d.indptr = Buffer<int64_t>(std::move(ptr));
  d.indices = Buffer<int32_t>(std::move(idx));
  d.values = Buffer<double>(std::move(val));
  d.labels = Buffer<double>(std::move(lab));
  return d;
}

template <typename T>
void ExpectSame(const Buffer<T>& a, const Buffer<T>& b, const char* what) {
  EXPECT_EQ(a.ToVector(), b.ToVector()) << what;
}

void ExpectSameDataset(const NodeDataset& a, const NodeDataset& b) {
  EXPECT_EQ(a.name, b.name);
  ASSERT_EQ(a.graph.index(), b.graph.index()) << "id width changed";
  std::visit(
      [&](const auto& ga) {
        const auto& gb = std::get<std::decay_t<decltype(ga)>>(b.graph);
        ExpectSame(ga.indptr(), gb.indptr(), "indptr");
        ExpectSame(ga.indices(), gb.indices(), "indices");
        ExpectSame(ga.weights(), gb.weights(), "weights");
      },
      a.graph);
  EXPECT_EQ(a.features.num_rows, b.features.num_rows);
  EXPECT_EQ(a.features.dim, b.features.dim);
  EXPECT_EQ(a.features.sparse, b.features.sparse);
  ExpectSame(a.features.dense, b.features.dense, "dense features");
  ExpectSame(a.features.indptr, b.features.indptr, "feature indptr");
  ExpectSame(a.features.indices, b.features.indices, "feature indices");
  ExpectSame(a.features.values, b.features.values, "feature values");
  EXPECT_EQ(a.num_classes, b.num_classes);
  ExpectSame(a.labels, b.labels, "labels");
  ExpectSame(a.train, b.train, "train");
  ExpectSame(a.val, b.val, "val");
  ExpectSame(a.test, b.test, "test");
}

class NativeFormatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = UniqueTempDir("tessel_native_");
    fs::remove_all(root_);
    fs::create_directories(root_);
    dir_ = root_ / "ds";
  }
  void TearDown() override { fs::remove_all(root_); }
  // Entries of root_ other than the dataset itself (temporary folders must never stay behind).
  std::vector<std::string> Leftovers() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(root_)) {
      if (e.path() != dir_) out.push_back(e.path().filename().string());
    }
    return out;
  }
  void EditManifest(const std::function<void(nlohmann::json&)>& edit) const {
    nlohmann::json j = ReadManifest(dir_);
    edit(j);
    std::ofstream(dir_ / "manifest.json") << j.dump(2);
  }
  std::string LoadError() const {
    try {
      LoadNodeDataset(dir_);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
  fs::path root_;
  fs::path dir_;
};

class NodeRoundTrip : public NativeFormatTest,
                      public ::testing::WithParamInterface<std::tuple<bool, bool, Feat, bool, bool>> {};

TEST_P(NodeRoundTrip, WriteThenLoadGivesIdenticalArrays) {
  const auto [int64_ids, weighted, feat, labels, split] = GetParam();
  const NodeDataset d = RandomNodeDataset(11, int64_ids, weighted, feat, labels, split);
  WriteNodeDataset(d, dir_);
  EXPECT_EQ(PeekKind(dir_), DatasetKind::kNode);
  ExpectSameDataset(d, LoadNodeDataset(dir_));
  for (const ArrayCheck& c : VerifyChecksums(dir_)) EXPECT_TRUE(c.ok) << c.name << ": " << c.detail;
  EXPECT_TRUE(Leftovers().empty());

  const nlohmann::json m = ReadManifest(dir_);
  EXPECT_EQ(m["format"].get<std::string>(), "tessel-dataset");
  EXPECT_EQ(m["version"].get<int64_t>(), kNativeFormatVersion);
  EXPECT_EQ(m["kind"].get<std::string>(), "node");
  EXPECT_EQ(m["num_nodes"].get<int64_t>(), d.num_nodes());
  EXPECT_EQ(m["num_entries"].get<int64_t>(), NumEntries(d.graph));
  EXPECT_EQ(m["id_dtype"].get<std::string>(), int64_ids ? "int64" : "int32");
  EXPECT_EQ(m["split"]["train"].get<size_t>(), d.train.size());
  EXPECT_EQ(m["arrays"].contains("weights"), weighted);
  EXPECT_EQ(m["arrays"].contains("labels"), labels);
  EXPECT_EQ(m["arrays"].contains("features"), feat == Feat::kDense);
  EXPECT_EQ(m["arrays"].contains("feat_values"), feat == Feat::kSparse);
  if (feat != Feat::kNone) {
    EXPECT_EQ(m["feature_nnz"], d.features.NonZeros());
  }
  // Every entry describes its file exactly.
  for (const auto& [name, e] : m["arrays"].items()) {
    const fs::path file = dir_ / e["file"].get<std::string>();
    ASSERT_TRUE(fs::exists(file)) << name;
    EXPECT_EQ(fs::file_size(file), e["bytes"].get<uint64_t>()) << name;
    const std::string bytes = ReadFileToString(file);
    EXPECT_EQ(ChecksumHex(bytes.data(), bytes.size()), e["xxh3"]) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(AllShapes, NodeRoundTrip,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool(),
                                            ::testing::Values(Feat::kNone, Feat::kDense, Feat::kSparse),
                                            ::testing::Bool(), ::testing::Bool()));

TEST_F(NativeFormatTest, SparseRowsRoundTrip) {
  for (int64_t rows : {0, 1, 57}) {
    const SparseRowDataset d = RandomSparseRows(static_cast<uint64_t>(rows), rows);
    WriteSparseRowDataset(d, dir_, {.overwrite = true});
    EXPECT_EQ(PeekKind(dir_), DatasetKind::kSparseRows);
    const SparseRowDataset got = LoadSparseRowDataset(dir_);
    EXPECT_EQ(got.name, d.name);
    EXPECT_EQ(got.num_rows, d.num_rows);
    EXPECT_EQ(got.num_features, d.num_features);
    ExpectSame(got.indptr, d.indptr, "indptr");
    ExpectSame(got.indices, d.indices, "indices");
    ExpectSame(got.values, d.values, "values");
    ExpectSame(got.labels, d.labels, "labels");
    EXPECT_EQ(ReadManifest(dir_)["nnz"], d.NonZeros());
  }
  EXPECT_THAT([&] { LoadNodeDataset(dir_); }, ::testing::ThrowsMessage<Error>(HasSubstr("not a node dataset")));
  EXPECT_TRUE(Leftovers().empty());
}

TEST_F(NativeFormatTest, EveryFlippedByteIsAChecksumErrorNamingArrayAndFile) {
  const NodeDataset d = RandomNodeDataset(3, false, true, Feat::kSparse, true, true);
  WriteNodeDataset(d, dir_);
  const nlohmann::json m = ReadManifest(dir_);
  for (const auto& [name, e] : m["arrays"].items()) {
    if (e["bytes"].get<int64_t>() == 0) continue;
    const fs::path file = dir_ / e["file"].get<std::string>();
    const std::string original = ReadFileToString(file);
    std::string bad = original;
    bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 0x01);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bad;
    const std::string err = LoadError();
    EXPECT_THAT(err, HasSubstr("checksum mismatch for array '" + name + "'"));
    EXPECT_THAT(err, HasSubstr(e["file"].get<std::string>()));
    EXPECT_THAT(err, HasSubstr("re-run tessel convert"));
    for (const ArrayCheck& c : VerifyChecksums(dir_)) EXPECT_EQ(c.ok, c.name != name) << c.name;
    std::ofstream(file, std::ios::binary | std::ios::trunc) << original;
  }
  EXPECT_NO_THROW(LoadNodeDataset(dir_));
}

TEST_F(NativeFormatTest, VerifyOffLoadsAQuietlyCorruptedWeight) {
  const NodeDataset d = RandomNodeDataset(5, false, true, Feat::kNone, false, false);
  WriteNodeDataset(d, dir_);
  {
    std::fstream f(dir_ / "weights.bin", std::ios::in | std::ios::out | std::ios::binary);
    const char low = static_cast<char>(f.get());  // lowest mantissa byte of weight 0: flipping it keeps it finite
    f.seekp(0);
    f.put(static_cast<char>(low ^ 0x01));
  }
  EXPECT_THAT(LoadError(), HasSubstr("checksum mismatch for array 'weights'"));
  const NodeDataset got = LoadNodeDataset(dir_, {.verify_checksums = false});
  EXPECT_NE(std::get<CsrGraph32>(got.graph).weights()[0], std::get<CsrGraph32>(d.graph).weights()[0]);
}

// Structural invariants hold even when the checksums match the damage (here: not verified, the same as a forger
// who recomputed them): a row out of order, and a manifest that hides the feature arrays behind feature_dim 0.
TEST_F(NativeFormatTest, StructuralDamageIsRefusedWhateverTheChecksums) {
  const NodeDataset d = RandomNodeDataset(8, false, false, Feat::kDense, true, false);
  WriteNodeDataset(d, dir_);
  const CsrGraph32& g = std::get<CsrGraph32>(d.graph);
  int64_t row = -1;
  for (int64_t u = 0; u < g.num_nodes() && row < 0; ++u) {
    if (g.Degree(u) >= 2) row = u;
  }
  ASSERT_GE(row, 0);
  {
    // Swap the first two neighbours of `row`: same multiset, same sizes, rows no longer ascending.
    const auto off = static_cast<std::streamoff>(g.indptr()[static_cast<size_t>(row)] * 4);
    std::fstream f(dir_ / "indices.bin", std::ios::in | std::ios::out | std::ios::binary);
    int32_t pair[2];
    f.seekg(off);
    f.read(reinterpret_cast<char*>(pair), sizeof(pair));
    std::swap(pair[0], pair[1]);
    f.seekp(off);
    f.write(reinterpret_cast<const char*>(pair), sizeof(pair));
  }
  EXPECT_THAT(LoadError(), HasSubstr("checksum mismatch for array 'indices'"));
  try {
    LoadNodeDataset(dir_, {.verify_checksums = false});
    ADD_FAILURE() << "an unsorted adjacency row was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(fmt::format("adjacency row {} is not sorted ascending", row)));
  }
  fs::remove_all(dir_);
  WriteNodeDataset(d, dir_);
  EditManifest([](nlohmann::json& j) { j["feature_dim"] = 0; });
  EXPECT_THAT(LoadError(), HasSubstr("\"feature_dim\" is 0 but the folder has feature arrays"));
  EditManifest([](nlohmann::json& j) { j["feature_dim"] = -3; });
  EXPECT_THAT(LoadError(), HasSubstr("'feature_dim' must be an integer >= 0, not -3"));
}

// A forged offset in the middle of indptr (monotone up to there, the last offset right) is refused before the row
// scan reads past the end of the entries (ASan would report the read).
TEST(SparseRowValidation, AnOffsetBeyondTheEntriesIsRefusedBeforeReading) {
  SparseRowDataset d;
  d.num_rows = 2;
  d.num_features = 4;
  d.indptr = Buffer<int64_t>(std::vector<int64_t>{0, 1000, 2});
  d.indices = Buffer<int32_t>(std::vector<int32_t>{0, 1});
  d.values = Buffer<double>(std::vector<double>{1, 1});
  d.labels = Buffer<double>(std::vector<double>{1, -1});
  try {
    d.Validate();
    ADD_FAILURE() << "a forged offset was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("is malformed (offsets decrease"));
  }
  d.indptr = Buffer<int64_t>(std::vector<int64_t>{0, 1, 2});
  EXPECT_NO_THROW(d.Validate());
}

TEST_F(NativeFormatTest, TruncatedAndMissingFilesAreSizeErrors) {
  WriteNodeDataset(RandomNodeDataset(4, true, false, Feat::kDense, true, false), dir_);
  const std::string features = ReadFileToString(dir_ / "features.bin");
  fs::resize_file(dir_ / "features.bin", features.size() - 3);
  EXPECT_THAT(LoadError(), HasSubstr("features.bin: array 'features' has"));
  EXPECT_THAT(LoadError(), HasSubstr("(truncated or replaced)"));
  // Without checksum verification the size check still applies.
  EXPECT_THROW(LoadNodeDataset(dir_, {.verify_checksums = false}), Error);
  std::ofstream(dir_ / "features.bin", std::ios::binary | std::ios::trunc) << features;
  fs::remove(dir_ / "labels.bin");
  EXPECT_THAT(LoadError(), HasSubstr("file of array 'labels' is missing"));
}

TEST_F(NativeFormatTest, ManifestProblemsNameTheFolderAndTheFix) {
  EXPECT_THAT(LoadError(), HasSubstr("no such dataset folder"));
  fs::create_directories(dir_);
  EXPECT_THAT(LoadError(), HasSubstr("not a tessel dataset (no manifest.json)"));
  fs::remove_all(dir_);
  WriteNodeDataset(RandomNodeDataset(6, false, false, Feat::kNone, true, true), dir_);
  const std::string good = ReadFileToString(dir_ / "manifest.json");
  auto reset = [&] { std::ofstream(dir_ / "manifest.json") << good; };

  std::ofstream(dir_ / "manifest.json") << "{ not json";
  EXPECT_THAT(LoadError(), HasSubstr("manifest.json: not valid JSON"));
  reset();
  EditManifest([](nlohmann::json& j) { j["format"] = "something-else"; });
  EXPECT_THAT(LoadError(), HasSubstr("not a tessel dataset"));
  reset();
  EditManifest([](nlohmann::json& j) { j["version"] = kNativeFormatVersion + 1; });
  EXPECT_THAT(LoadError(), HasSubstr("is newer than this tessel reads"));
  reset();
  EditManifest([](nlohmann::json& j) { j.erase("num_nodes"); });
  EXPECT_THAT(LoadError(), HasSubstr("missing key 'num_nodes'; re-run tessel convert"));
  reset();
  EditManifest([](nlohmann::json& j) { j["arrays"]["indices"]["dtype"] = "int16"; });
  EXPECT_THAT(LoadError(), HasSubstr("unknown dtype \"int16\""));
  reset();
  EditManifest([](nlohmann::json& j) { j["kind"] = "graph"; });
  EXPECT_THAT(LoadError(), HasSubstr("unknown kind \"graph\""));
  reset();
  EditManifest([](nlohmann::json& j) { j["num_nodes"] = j["num_nodes"].get<int64_t>() + 1; });
  EXPECT_THAT(LoadError(), HasSubstr("array 'indptr' has"));
  reset();
  // A class count no labels can fill (tools size per-class tables by it) is refused before anything is sized.
  EditManifest([](nlohmann::json& j) { j["num_classes"] = 100000000; });
  EXPECT_THAT(LoadError(), HasSubstr("\"num_classes\" is 100000000 but the dataset has"));
  reset();
  EditManifest([](nlohmann::json& j) { j["feature_dim"] = int64_t{1} << 40; });
  EXPECT_THAT(LoadError(), HasSubstr("\"feature_dim\" is 1099511627776"));
  reset();
  EXPECT_NO_THROW(LoadNodeDataset(dir_));
}

// Whole-graph counts beyond 2^31 (ogbn-papers100M has 3.2e9 adjacency entries and 57 GB of features) are read,
// compared and reported as 64-bit numbers: a manifest that claims them over tiny files is refused with the exact
// byte counts (never a 32-bit wrap or a crash), and counts beyond what the format holds are refused by name before
// any array is mapped.
TEST_F(NativeFormatTest, CountsBeyond32BitsAreComparedExactly) {
  WriteNodeDataset(RandomNodeDataset(12, false, false, Feat::kDense, true, false), dir_);
  const std::string good = ReadFileToString(dir_ / "manifest.json");
  auto reset = [&] { std::ofstream(dir_ / "manifest.json") << good; };
  auto load_error = [&](bool verify) -> std::string {
    try {
      LoadNodeDataset(dir_, {.verify_checksums = verify});
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  constexpr int64_t kEntries = 3'000'000'000;  // > 2^31 and its int32 wrap-around is negative
  const auto indices_bytes = fs::file_size(dir_ / "indices.bin");

  // 3e9 int32 entries claimed: 12e9 bytes expected, the file has a few hundred. With and without checksums.
  EditManifest([&](nlohmann::json& j) {
    j["num_entries"] = kEntries;
    j["arrays"]["indices"]["count"] = kEntries;
    j["arrays"]["indices"]["bytes"] = 4 * kEntries;
  });
  for (const bool verify : {true, false}) {
    const std::string e = load_error(verify);
    EXPECT_THAT(e,
                HasSubstr(fmt::format("array 'indices' has {} bytes but the manifest says 12000000000", indices_bytes)))
        << verify;
    EXPECT_THAT(e, HasSubstr("re-run tessel convert")) << verify;
  }
  reset();
  // The entry's bytes must be count x 4 computed in 64 bits: a product wrapped to 32 bits (12e9 mod 2^32 = 3410065408)
  // is refused.
  EditManifest([&](nlohmann::json& j) {
    j["num_entries"] = kEntries;
    j["arrays"]["indices"]["count"] = kEntries;
    j["arrays"]["indices"]["bytes"] = (4 * kEntries) % (int64_t{1} << 32);
  });
  EXPECT_THAT(load_error(false), HasSubstr("\"bytes\" is 3410065408 but 3000000000 int32 values take 12000000000"));
  reset();

  // More nodes than int32 ids can name, stored with int32 ids: refused by name (the ids could not reach them).
  EditManifest([&](nlohmann::json& j) { j["num_nodes"] = kEntries; });
  EXPECT_THAT(load_error(true),
              HasSubstr("\"id_dtype\" is int32 but \"num_nodes\" is 3000000000: int32 ids reach 2147483648 nodes"));
  reset();
  // Exactly 2^31 nodes still fit int32 ids (ids 0 .. 2^31 - 1): the next complaint is the indptr file's size.
  EditManifest([&](nlohmann::json& j) {
    j["num_nodes"] = int64_t{1} << 31;
    j["arrays"]["indptr"]["count"] = (int64_t{1} << 31) + 1;
    j["arrays"]["indptr"]["bytes"] = 8 * ((int64_t{1} << 31) + 1);
  });
  EXPECT_THAT(load_error(false), HasSubstr("array 'indptr' has"));
  EXPECT_THAT(load_error(false), HasSubstr("but the manifest says 17179869192"));
  reset();

  // 3e9 nodes with int64 ids: the indptr (3e9 + 1 offsets) and the dense features (3e9 x 17 floats) are compared
  // with their 64-bit sizes.
  EditManifest([&](nlohmann::json& j) {
    j["num_nodes"] = kEntries;
    j["id_dtype"] = "int64";
    j["arrays"]["indptr"]["count"] = kEntries + 1;
    j["arrays"]["indptr"]["bytes"] = 8 * (kEntries + 1);
  });
  EXPECT_THAT(load_error(false), HasSubstr("but the manifest says 24000000008"));
  EXPECT_THAT(load_error(true), HasSubstr("but the manifest says 24000000008"));
  reset();
  EditManifest([&](nlohmann::json& j) {
    j["num_nodes"] = kEntries;
    j["id_dtype"] = "int64";
    j["arrays"]["indptr"]["count"] = kEntries + 1;
  });
  // The features' expected count is num_nodes x feature_dim = 51e9, in 64 bits.
  EditManifest([&](nlohmann::json& j) {
    j["arrays"]["indptr"]["bytes"] = 8 * (kEntries + 1);
    j["arrays"]["features"]["count"] = 17 * kEntries;
    j["arrays"]["features"]["bytes"] = 4 * 17 * kEntries;
  });
  EXPECT_THAT(load_error(true), HasSubstr("array 'features' has"));
  EXPECT_THAT(load_error(true), HasSubstr("but the manifest says 204000000000"));
  reset();

  // Class ids are int32: 3e9 classes (with 3e9 nodes) would wrap around; refused before anything is mapped.
  EditManifest([&](nlohmann::json& j) {
    j["num_nodes"] = kEntries;
    j["id_dtype"] = "int64";
    j["num_classes"] = kEntries;
  });
  EXPECT_THAT(load_error(false),
              HasSubstr("\"num_classes\" is 3000000000 but the dataset has 3000000000 nodes (at most 2147483647"));
  reset();
  // Feature columns are int32 ids: 2^31 columns are one too many.
  EditManifest([&](nlohmann::json& j) { j["feature_dim"] = int64_t{1} << 31; });
  EXPECT_THAT(load_error(false), HasSubstr("\"feature_dim\" is 2147483648"));
  EXPECT_THAT(load_error(false), HasSubstr("at most 2147483647 columns"));
  reset();
  // A count so large that count + 1 or count x 8 would wrap int64 is refused by name.
  EditManifest([&](nlohmann::json& j) {
    j["num_nodes"] = std::numeric_limits<int64_t>::max();
    j["id_dtype"] = "int64";
  });
  EXPECT_THAT(load_error(false), HasSubstr("\"num_nodes\" is 9223372036854775807, beyond the 4611686018427387904"));
  reset();
  EditManifest([&](nlohmann::json& j) { j["num_entries"] = std::numeric_limits<int64_t>::max(); });
  EXPECT_THAT(load_error(false), HasSubstr("\"num_entries\" is 9223372036854775807, beyond"));
  reset();
  EXPECT_NO_THROW(LoadNodeDataset(dir_));
}

TEST_F(NativeFormatTest, SparseRowCountsBeyond32BitsAreComparedExactly) {
  WriteSparseRowDataset(RandomSparseRows(5, 20), dir_);
  const std::string good = ReadFileToString(dir_ / "manifest.json");
  auto reset = [&] { std::ofstream(dir_ / "manifest.json") << good; };
  auto load_error = [&](bool verify) -> std::string {
    try {
      LoadSparseRowDataset(dir_, {.verify_checksums = verify});
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  constexpr int64_t kNnz = 3'000'000'000;
  EditManifest([&](nlohmann::json& j) {
    j["nnz"] = kNnz;
    j["arrays"]["values"]["count"] = kNnz;
    j["arrays"]["values"]["bytes"] = 8 * kNnz;
    j["arrays"]["indices"]["count"] = kNnz;
    j["arrays"]["indices"]["bytes"] = 4 * kNnz;
  });
  for (const bool verify : {true, false}) {
    EXPECT_THAT(load_error(verify), HasSubstr("but the manifest says 12000000000")) << verify;
  }
  reset();
  // Feature ids are int32 in [0, num_features): 2^31 features are the most (LIBSVM index 2^31), 2^31 + 1 too many.
  EditManifest([&](nlohmann::json& j) { j["num_features"] = (int64_t{1} << 31) + 1; });
  EXPECT_THAT(load_error(false),
              HasSubstr("\"num_features\" is 2147483649; int32 feature ids allow at most 2147483648"));
  reset();
  EditManifest([&](nlohmann::json& j) { j["num_features"] = int64_t{1} << 31; });
  EXPECT_EQ(LoadSparseRowDataset(dir_).num_features, int64_t{1} << 31);
  reset();
  EditManifest([&](nlohmann::json& j) { j["num_rows"] = std::numeric_limits<int64_t>::max(); });
  EXPECT_THAT(load_error(false), HasSubstr("\"num_rows\" is 9223372036854775807, beyond"));
}

// The writers refuse what the readers would refuse, before writing anything.
TEST_F(NativeFormatTest, WritersRefuseFeatureCountsBeyondInt32Ids) {
  NodeDataset d = RandomNodeDataset(13, false, false, Feat::kNone, false, false);
  d.features.num_rows = d.num_nodes();
  d.features.dim = int64_t{1} << 31;  // no stored entries: only the column count is too large
  d.features.sparse = true;
  d.features.indptr = Buffer<int64_t>(std::vector<int64_t>(static_cast<size_t>(d.num_nodes()) + 1, 0));
  try {
    WriteNodeDataset(d, dir_);
    ADD_FAILURE() << "a 2^31-column dataset was written";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("2147483648 feature columns; the native format holds at most 2147483647"));
  }
  EXPECT_FALSE(fs::exists(dir_));
  d.features.dim = (int64_t{1} << 31) - 1;
  WriteNodeDataset(d, dir_);
  EXPECT_EQ(LoadNodeDataset(dir_).features.dim, (int64_t{1} << 31) - 1);

  SparseRowDataset rows = RandomSparseRows(6, 10);
  rows.num_features = (int64_t{1} << 31) + 1;
  EXPECT_THROW(WriteSparseRowDataset(rows, root_ / "rows"), Error);
  EXPECT_FALSE(fs::exists(root_ / "rows"));
}

TEST_F(NativeFormatTest, ExistingOutputNeedsOverwriteAndOnlyDatasetsAreReplaced) {
  const NodeDataset a = RandomNodeDataset(8, false, false, Feat::kNone, false, false);
  const NodeDataset b = RandomNodeDataset(9, true, true, Feat::kDense, true, true);
  WriteNodeDataset(a, dir_);
  EXPECT_THAT([&] { WriteNodeDataset(b, dir_); }, ::testing::ThrowsMessage<Error>(HasSubstr("--force")));
  ExpectSameDataset(a, LoadNodeDataset(dir_));
  WriteNodeDataset(b, dir_, {.overwrite = true});
  ExpectSameDataset(b, LoadNodeDataset(dir_));
  EXPECT_TRUE(Leftovers().empty());

  const fs::path other = root_ / "notes";
  fs::create_directories(other);
  std::ofstream(other / "keep.txt") << "mine";
  EXPECT_THAT([&] { WriteNodeDataset(a, other, {.overwrite = true}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("is not a tessel dataset")));
  EXPECT_TRUE(fs::exists(other / "keep.txt"));
}

TEST_F(NativeFormatTest, FailedWritesLeaveNothingBehind) {
  NodeDataset bad = RandomNodeDataset(10, false, false, Feat::kNone, true, false);
  bad.labels.MutableHost()[0] = 99;  // outside [0, num_classes)
  EXPECT_THROW(WriteNodeDataset(bad, dir_), Error);
  EXPECT_FALSE(fs::exists(dir_));
  EXPECT_TRUE(Leftovers().empty());

  // A write that fails half way (file size limit reached) removes its temporary folder.
  const NodeDataset big = RandomNodeDataset(12, false, false, Feat::kDense, true, true);
  struct rlimit old {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto* previous = signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 1024;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string err;
  try {
    WriteNodeDataset(big, dir_);
  } catch (const Error& e) {
    err = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, previous);
  EXPECT_THAT(err, HasSubstr("write failed"));
  EXPECT_FALSE(fs::exists(dir_));
  EXPECT_TRUE(Leftovers().empty()) << ::testing::PrintToString(Leftovers());
}

}  // namespace
}  // namespace tessel::datasets
