// The native dataset folder (docs/formats.md): manifest.json with format, version, kind, counts and one
// {file, dtype, count, bytes, xxh3} entry per array; arrays written atomically and mapped back without copies.
#include "datasets/native_format.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>

#include <fmt/format.h>

#include "core/build_config.h"
#include "core/checksum.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/output_guard.h"
#include "core/rng.h"
#include "datasets/readers.h"

namespace tessel::datasets {
namespace {

using OrderedJson = nlohmann::ordered_json;

constexpr const char* kFormatName = "tessel-dataset";
constexpr const char* kFix = "re-run tessel convert to rebuild the dataset";

// Typed access to manifest keys; every failure names the manifest, the key and the fix.
class Manifest {
 public:
  Manifest(const nlohmann::json& j, const fs::path& dir) : j_(j), file_((dir / "manifest.json").string()) {}

  const nlohmann::json& Get(const char* key) const {
    if (!j_.contains(key)) throw Error::InFile(file_, fmt::format("missing key '{}'; {}", key, kFix));
    return j_[key];
  }
  int64_t Int(const char* key, int64_t min_value = 0) const {
    const auto& v = Get(key);
    if (!v.is_number_integer() || v.get<int64_t>() < min_value) {
      throw Error::InFile(file_,
                          fmt::format("'{}' must be an integer >= {}, not {}; {}", key, min_value, v.dump(), kFix));
    }
    return v.get<int64_t>();
  }
  bool Bool(const char* key) const {
    const auto& v = Get(key);
    if (!v.is_boolean()) throw Error::InFile(file_, fmt::format("'{}' must be true or false; {}", key, kFix));
    return v.get<bool>();
  }
  std::string String(const char* key) const {
    const auto& v = Get(key);
    if (!v.is_string()) throw Error::InFile(file_, fmt::format("'{}' must be a string; {}", key, kFix));
    return v.get<std::string>();
  }
  int64_t SplitSize(const char* list) const {
    const auto& s = Get("split");
    if (!s.is_object() || !s.contains(list) || !s[list].is_number_integer() || s[list].get<int64_t>() < 0) {
      throw Error::InFile(file_, fmt::format("'split' must hold integer sizes for train, val and test; {}", kFix));
    }
    return s[list].get<int64_t>();
  }
  [[noreturn]] void Fail(const std::string& what) const {
    throw Error::InFile(file_, fmt::format("{}; {}", what, kFix));
  }

 private:
  const nlohmann::json& j_;
  std::string file_;
};

OrderedJson Header(DatasetKind kind, const std::string& name) {
  OrderedJson m;
  m["format"] = kFormatName;
  m["version"] = kNativeFormatVersion;
  m["kind"] = KindName(kind);
  m["name"] = name;
  return m;
}

void Finish(AtomicDirectory& out, OrderedJson manifest, const ArrayWriter& writer) {
  manifest["arrays"] = writer.entries();
  manifest["created_by"] = fmt::format("tessel {}", TESSEL_VERSION);
  WriteFileAtomic(out.path() / "manifest.json", manifest.dump(2) + "\n");
  out.Commit();
}

// Hashes every array in parallel and throws the first failure (used by the loaders).
void VerifyAll(const ArrayReader& reader) {
  for (const ArrayCheck& c : reader.CheckAll()) {
    if (!c.ok) throw Error(c.detail);
  }
}

template <typename IdT>
AnyGraph LoadGraph(const ArrayReader& r, int64_t n, int64_t entries) {
  Buffer<int64_t> indptr = r.Map<int64_t>("indptr", false, n + 1);
  Buffer<IdT> indices = r.Map<IdT>("indices", false, entries);
  Buffer<float> weights;
  if (r.Has("weights")) weights = r.Map<float>("weights", false, entries);
  return CsrGraph<IdT>(std::move(indptr), std::move(indices), std::move(weights));
}

void RunValidate(const fs::path& dir, const auto& data) {
  try {
    data.Validate();
  } catch (const Error& e) {
    throw Error::InFile(dir.string(), fmt::format("invalid dataset: {}; {}", e.what(), kFix));
  }
}

}  // namespace

void CheckOutputFolder(const fs::path& dir, const WriteOptions& options, std::span<const fs::path> inputs) {
  CheckOutputPath(dir, OutputKind::kDatasetFolder, options.overwrite, options.flag, inputs);
}

std::string_view KindName(DatasetKind kind) { return kind == DatasetKind::kNode ? "node" : "sparse_rows"; }

nlohmann::json ReadManifest(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw Error::InFile(dir.string(), "no such dataset folder");
  if (!fs::is_directory(dir, ec)) {
    throw Error::InFile(dir.string(), "not a tessel dataset (a dataset is a folder made by tessel convert)");
  }
  const fs::path file = dir / "manifest.json";
  if (!fs::exists(file, ec)) {
    throw Error::InFile(dir.string(), "not a tessel dataset (no manifest.json); create one with tessel convert");
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(ReadFileToString(file));
  } catch (const nlohmann::json::exception& e) {
    throw Error::InFile(file.string(), fmt::format("not valid JSON ({}); {}", e.what(), kFix));
  }
  if (!j.is_object()) throw Error::InFile(file.string(), fmt::format("must hold a JSON object; {}", kFix));
  const Manifest m(j, dir);
  if (m.String("format") != kFormatName) {
    m.Fail(fmt::format("\"format\" is \"{}\", not \"{}\": not a tessel dataset", m.String("format"), kFormatName));
  }
  const auto& version = m.Get("version");
  if (!version.is_number_integer() || version.get<int64_t>() < 1) {
    m.Fail(fmt::format("\"version\" must be a positive integer, not {}", version.dump()));
  }
  if (version.get<int64_t>() > kNativeFormatVersion) {
    throw Error::InFile(file.string(),
                        fmt::format("format version {} is newer than this tessel reads (up to {}); upgrade tessel, "
                                    "or re-run tessel convert with this version",
                                    version.get<int64_t>(), kNativeFormatVersion));
  }
  const std::string kind = m.String("kind");
  if (kind != "node" && kind != "sparse_rows") {
    m.Fail(fmt::format("unknown kind \"{}\" (expected \"node\" or \"sparse_rows\")", kind));
  }
  if (!m.Get("arrays").is_object()) m.Fail("\"arrays\" must be an object");
  return j;
}

DatasetKind PeekKind(const fs::path& dir) {
  return ReadManifest(dir)["kind"].get<std::string>() == "node" ? DatasetKind::kNode : DatasetKind::kSparseRows;
}

void WriteNodeDataset(const NodeDataset& data, const fs::path& dir, const WriteOptions& options) {
  CheckOutputFolder(dir, options);
  data.Validate();
  // What the readers refuse is not written (docs/formats.md, "Limits").
  TESSEL_CHECK(data.features.empty() || data.features.dim <= kMaxFeatureDim,
               "{}: {} feature columns; the native format holds at most {} (int32 column ids)", dir.string(),
               data.features.dim, kMaxFeatureDim);
  AtomicDirectory out(dir, options.overwrite);
  ArrayWriter w(out.path());
  OrderedJson m = Header(DatasetKind::kNode, data.name);
  m["num_nodes"] = data.num_nodes();
  m["num_entries"] = NumEntries(data.graph);
  std::visit(
      [&](const auto& g) {
        using Id = typename std::decay_t<decltype(g)>::Id;
        m["id_dtype"] = DTypeName(DTypeOf<Id>());
        m["weighted"] = g.has_weights();
        w.Add("indptr", g.indptr());
        w.Add("indices", g.indices());
        if (g.has_weights()) w.Add("weights", g.weights());
      },
      data.graph);
  const Features& f = data.features;
  const bool has_features = !f.empty();
  m["feature_dim"] = has_features ? f.dim : 0;
  m["features_sparse"] = has_features && f.sparse;
  m["feature_nnz"] = has_features ? f.NonZeros() : 0;
  if (has_features && f.sparse) {
    w.Add("feat_indptr", f.indptr);
    w.Add("feat_indices", f.indices);
    w.Add("feat_values", f.values);
  } else if (has_features) {
    w.Add("features", f.dense);
  }
  m["num_classes"] = data.has_labels() ? data.num_classes : 0;
  if (data.has_labels()) w.Add("labels", data.labels);
  m["split"] = {{"train", data.train.size()}, {"val", data.val.size()}, {"test", data.test.size()}};
  if (data.has_split()) {
    w.Add("train", data.train);
    w.Add("val", data.val);
    w.Add("test", data.test);
  }
  Finish(out, std::move(m), w);
}

void WriteSparseRowDataset(const SparseRowDataset& data, const fs::path& dir, const WriteOptions& options) {
  CheckOutputFolder(dir, options);
  data.Validate();
  TESSEL_CHECK(data.num_features <= kMaxSparseRowFeatures,
               "{}: {} features; the native format holds at most {} (int32 feature ids)", dir.string(),
               data.num_features, kMaxSparseRowFeatures);
  AtomicDirectory out(dir, options.overwrite);
  ArrayWriter w(out.path());
  OrderedJson m = Header(DatasetKind::kSparseRows, data.name);
  m["num_rows"] = data.num_rows;
  m["num_features"] = data.num_features;
  m["nnz"] = data.NonZeros();
  w.Add("indptr", data.indptr);
  w.Add("indices", data.indices);
  w.Add("values", data.values);
  w.Add("labels", data.labels);
  Finish(out, std::move(m), w);
}

namespace {

// partition::DatasetFingerprint of the dataset, made from the manifest's per-array XXH3 checksums instead of the
// arrays (the same value: each array's part is Mix64(h ^ XXH3(bytes)), and the manifest holds XXH3(bytes); an absent
// array counts as empty). A dataset of millions of nodes is then recognised without reading a byte of it; the
// checksums themselves are verified where the arrays are read with verification.
std::string StoredFingerprint(const ArrayReader& r, int64_t n, int64_t dim, bool sparse) {
  uint64_t h = Mix64(static_cast<uint64_t>(n));
  const uint64_t empty = Checksum64(nullptr, 0);
  auto add = [&](const char* name) {
    uint64_t sum = empty;
    if (r.Has(name)) {
      const std::string hex = r.Entry(name).xxh3;
      const auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), sum, 16);
      if (ec != std::errc() || end != hex.data() + hex.size()) {
        throw Error(fmt::format("array '{}': \"xxh3\" is '{}', not 16 hex digits; re-run tessel convert", name, hex));
      }
    }
    h = Mix64(h ^ sum);
  };
  add("indptr");
  add("indices");
  add("weights");
  h = Mix64(h ^ static_cast<uint64_t>(dim));
  if (sparse) {
    add("feat_indptr");
    add("feat_indices");
    add("feat_values");
  } else {
    add("features");
  }
  add("labels");
  return fmt::format("{:016x}", h);
}

}  // namespace

NodeDataset LoadNodeDataset(const fs::path& dir, const LoadOptions& options) {
  const nlohmann::json j = ReadManifest(dir);
  const Manifest m(j, dir);
  if (m.String("kind") != "node") {
    throw Error::InFile(dir.string(),
                        "is a sparse_rows dataset (LIBSVM-style rows for SVM), not a node dataset (graph)");
  }
  const ArrayReader r(dir, j["arrays"], kFix);
  NodeDataset d;
  d.name = m.String("name");
  // Every count of the manifest is checked against what the format can hold before any array is mapped or sized
  // (docs/formats.md, "Limits"): a damaged or hostile count is a message naming the key, never a wrapped product.
  const int64_t n = m.Int("num_nodes");
  const int64_t entries = m.Int("num_entries");
  if (n > kMaxNativeCount)
    m.Fail(fmt::format("\"num_nodes\" is {}, beyond the {} the format allows", n, kMaxNativeCount));
  if (entries > kMaxNativeCount) {
    m.Fail(fmt::format("\"num_entries\" is {}, beyond the {} the format allows", entries, kMaxNativeCount));
  }
  const std::string id_dtype = m.String("id_dtype");
  if (id_dtype != "int32" && id_dtype != "int64") {
    m.Fail(fmt::format("\"id_dtype\" is \"{}\"; expected int32 or int64", id_dtype));
  }
  if (id_dtype == "int32" && n - 1 > std::numeric_limits<int32_t>::max()) {
    m.Fail(
        fmt::format("\"id_dtype\" is int32 but \"num_nodes\" is {}: int32 ids reach {} nodes at most (more nodes "
                    "are stored with int64 ids)",
                    n, int64_t{std::numeric_limits<int32_t>::max()} + 1));
  }
  const int64_t dim = m.Int("feature_dim");
  // Kernels index columns with int32, and num_nodes x feature_dim must not wrap around before it is compared.
  if (dim > kMaxFeatureDim || (n > 0 && dim > std::numeric_limits<int64_t>::max() / n)) {
    m.Fail(
        fmt::format("\"feature_dim\" is {} (with {} nodes); at most {} columns are supported", dim, n, kMaxFeatureDim));
  }
  // Classes beyond the node count (and 65536) cannot all occur; such a count is damage, and tools size per-class
  // tables by it. Class ids are int32.
  const int64_t classes = m.Int("num_classes");
  const int64_t most_classes =
      std::min<int64_t>(std::max<int64_t>(n, kMaxClassesAlways), std::numeric_limits<int32_t>::max());
  if (classes > most_classes) {
    m.Fail(fmt::format("\"num_classes\" is {} but the dataset has {} nodes (at most {} classes are accepted)", classes,
                       n, most_classes));
  }
  if (options.verify_checksums) VerifyAll(r);
  if (id_dtype == "int32") {
    d.graph = LoadGraph<int32_t>(r, n, entries);
  } else {
    d.graph = LoadGraph<int64_t>(r, n, entries);
  }
  if (m.Bool("weighted") != r.Has("weights")) m.Fail("\"weighted\" disagrees with the presence of array 'weights'");
  if (dim == 0 && (r.Has("features") || r.Has("feat_indptr") || r.Has("feat_indices") || r.Has("feat_values"))) {
    m.Fail("\"feature_dim\" is 0 but the folder has feature arrays: the manifest is damaged");
  }
  if (dim > 0) {
    d.features.num_rows = n;
    d.features.dim = dim;
    d.features.sparse = m.Bool("features_sparse");
    if (d.features.sparse) {
      const int64_t nnz = m.Int("feature_nnz");
      d.features.indptr = r.Map<int64_t>("feat_indptr", false, n + 1);
      d.features.indices = r.Map<int32_t>("feat_indices", false, nnz);
      d.features.values = r.Map<float>("feat_values", false, nnz);
    } else {
      d.features.dense = r.Map<float>("features", false, n * dim);
    }
  }
  d.num_classes = static_cast<int32_t>(classes);
  if (r.Has("labels")) {
    if (d.num_classes <= 0) m.Fail("array 'labels' is present but \"num_classes\" is 0");
    d.labels = r.Map<int32_t>("labels", false, n);
  }
  if (r.Has("train") || r.Has("val") || r.Has("test")) {
    d.train = r.Map<int64_t>("train", false, m.SplitSize("train"));
    d.val = r.Map<int64_t>("val", false, m.SplitSize("val"));
    d.test = r.Map<int64_t>("test", false, m.SplitSize("test"));
  }
  d.fingerprint = StoredFingerprint(r, n, dim, dim > 0 && d.features.sparse);
  if (options.validate) {
    RunValidate(dir, d);
    // The format promises rows sorted ascending without duplicates (docs/formats.md); samplers and the symmetry
    // check rely on it, so a row out of order is damage even when its checksum was recomputed to match.
    std::visit(
        [&](const auto& g) {
          const int64_t row = g.FirstUnsortedRow();
          if (row >= 0) {
            throw Error::InFile(dir.string(),
                                fmt::format("invalid dataset: adjacency row {} is not sorted ascending without "
                                            "duplicates, as the format requires; {}",
                                            row, kFix));
          }
        },
        d.graph);
  }
  return d;
}

SparseRowDataset LoadSparseRowDataset(const fs::path& dir, const LoadOptions& options) {
  const nlohmann::json j = ReadManifest(dir);
  const Manifest m(j, dir);
  if (m.String("kind") != "sparse_rows") {
    throw Error::InFile(dir.string(), "is a node dataset (graph), not a sparse_rows dataset (LIBSVM-style rows)");
  }
  const ArrayReader r(dir, j["arrays"], kFix);
  SparseRowDataset d;
  d.name = m.String("name");
  d.num_rows = m.Int("num_rows");
  d.num_features = m.Int("num_features");
  const int64_t nnz = m.Int("nnz");
  if (d.num_rows > kMaxNativeCount) {
    m.Fail(fmt::format("\"num_rows\" is {}, beyond the {} the format allows", d.num_rows, kMaxNativeCount));
  }
  if (nnz > kMaxNativeCount)
    m.Fail(fmt::format("\"nnz\" is {}, beyond the {} the format allows", nnz, kMaxNativeCount));
  // Feature ids are int32 in [0, num_features).
  if (d.num_features > kMaxSparseRowFeatures) {
    m.Fail(fmt::format("\"num_features\" is {}; int32 feature ids allow at most {}", d.num_features,
                       kMaxSparseRowFeatures));
  }
  if (options.verify_checksums) VerifyAll(r);
  d.indptr = r.Map<int64_t>("indptr", false, d.num_rows + 1);
  d.indices = r.Map<int32_t>("indices", false, nnz);
  d.values = r.Map<double>("values", false, nnz);
  d.labels = r.Map<double>("labels", false, d.num_rows);
  if (options.validate) RunValidate(dir, d);
  return d;
}

std::vector<ArrayCheck> VerifyChecksums(const fs::path& dir) {
  const nlohmann::json j = ReadManifest(dir);
  return ArrayReader(dir, j["arrays"], kFix).CheckAll();
}

SparseRowDataset ReadSparseRows(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return ReadLibsvm(path);
  const DatasetKind kind = PeekKind(path);
  TESSEL_CHECK(kind == DatasetKind::kSparseRows,
               "{}: a {} dataset folder; the SVM needs rows (tessel convert --from libsvm or --from idx)",
               path.string(), KindName(kind));
  return LoadSparseRowDataset(path);
}

}  // namespace tessel::datasets
