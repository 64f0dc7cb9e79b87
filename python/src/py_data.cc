// Datasets in Python: open a native folder, a node-table prefix or LIBSVM text; build a node dataset from edges and
// arrays (the graph through GraphBuilder, as `tessel convert` builds it) or a rows dataset from CSR arrays; every
// array of a loaded dataset as a read-only zero-copy numpy view; save through the native writer (checked, atomic,
// replaced only with force).
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <unordered_set>

#include <fmt/format.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "app/info.h"
#include "core/file_io.h"
#include "datasets/graph_builder.h"
#include "datasets/native_format.h"
#include "datasets/open_node_dataset.h"
#include "datasets/readers.h"
#include "datasets/stats.h"
#include "python/src/py_common.h"
#include "python/src/py_modules.h"

namespace tessel::python {
namespace {

namespace fs = std::filesystem;
using datasets::NodeDataset;
using datasets::SparseRowDataset;

// Whether the first bytes of `p` (neither gzip nor bzip2, which the LIBSVM reader decompresses) hold a NUL or another
// control byte that text does not: binary content, which the reader would quote back as a label that is not a number.
bool LooksBinary(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  char buf[512];
  in.read(buf, sizeof buf);
  const auto n = static_cast<size_t>(in.gcount());
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(buf[i]); };
  if (n >= 2 && byte(0) == 0x1f && byte(1) == 0x8b) return false;               // gzip
  if (n >= 3 && buf[0] == 'B' && buf[1] == 'Z' && buf[2] == 'h') return false;  // bzip2
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = byte(i);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') return true;
  }
  return false;
}

py::object LoadAny(const std::string& path, bool mmap) {
  const fs::path p(path);
  if (fs::exists(p / "manifest.json")) {
    const auto kind = datasets::PeekKind(p);
    // Recorded before the arrays are mapped: a file truncated in between is caught at the first check as well.
    const std::shared_ptr<const MappedFolder> mapped = mmap ? MappedFolder::Record(p) : nullptr;
    if (kind == datasets::DatasetKind::kNode) {
      auto d = RunReleased([&] { return datasets::LoadNodeDataset(p); });
      return py::cast(NodeData{std::make_shared<NodeDataset>(std::move(d)), mapped});
    }
    auto d = RunReleased([&] { return datasets::LoadSparseRowDataset(p); });
    return py::cast(RowData{std::make_shared<SparseRowDataset>(std::move(d)), mapped});
  }
  // A node-table prefix (PREFIX.edges.txt, ...) when its files exist, else LIBSVM text.
  bool node_table = false;
  try {
    datasets::NodeTableFromPrefix(p);
    node_table = true;
  } catch (const Error&) {
  }
  if (node_table) {
    auto d = RunReleased([&] { return datasets::OpenNodeDataset(path); });
    return py::cast(NodeData{std::make_shared<NodeDataset>(std::move(d)), nullptr});
  }
  TESSEL_CHECK(fs::is_regular_file(p),
               "{}: not a native dataset folder (no manifest.json), a node-table prefix or a LIBSVM text file; "
               "convert raw data with `tessel convert` or build a dataset with tessel.node_dataset / "
               "tessel.rows_dataset",
               path);
  TESSEL_CHECK(!LooksBinary(p),
               "{}: a binary file, not a native dataset folder (with manifest.json), a node-table prefix or a LIBSVM "
               "text file; give a dataset folder or LIBSVM text (convert raw data with `tessel convert`)",
               path);
  auto d = RunReleased([&] { return datasets::ReadSparseRows(p); });
  return py::cast(RowData{std::make_shared<SparseRowDataset>(std::move(d)), nullptr});
}

// tessel.load: with mmap=False the array files of a native folder are copied into memory (RunReleased runs on this
// thread, where the copy mode is set), so a file truncated on disk later cannot raise SIGBUS through a view.
py::object Load(const std::string& path, bool mmap) {
  if (mmap) return LoadAny(path, true);
  const ScopedCopyInsteadOfMap copy;
  return LoadAny(path, false);
}

// The arguments of BuildNode, checked and converted by tessel/_data.py.
NodeData BuildNode(const I64& src, const I64& dst, int64_t num_nodes, bool directed, bool keep_self_loops,
                   const std::optional<F32>& edge_weights, const std::optional<F32>& dense,
                   const std::optional<I64>& feat_indptr, const std::optional<I32>& feat_indices,
                   const std::optional<F32>& feat_values, int64_t feature_dim, const std::optional<I32>& labels,
                   int64_t num_classes, const std::optional<I64>& train, const std::optional<I64>& val,
                   const std::optional<I64>& test, const std::string& name) {
  TESSEL_CHECK(src.ndim() == 1 && dst.ndim() == 1, "edges: sources and targets must be 1-D arrays");
  TESSEL_CHECK(src.size() == dst.size(), "edges: {} sources but {} targets", src.size(), dst.size());
  TESSEL_CHECK(num_nodes >= 0, "num_nodes={} must not be negative", num_nodes);
  TESSEL_CHECK(feature_dim >= 0 && feature_dim <= datasets::kMaxFeatureDim,
               "features: {} columns; between 0 and {} (32-bit feature ids) are needed", feature_dim,
               datasets::kMaxFeatureDim);
  datasets::EdgeList edges;
  edges.src.assign(src.data(), src.data() + src.size());
  edges.dst.assign(dst.data(), dst.data() + dst.size());
  if (edge_weights) {
    TESSEL_CHECK(edge_weights->size() == src.size(), "edge_weights: {} values for {} edges", edge_weights->size(),
                 src.size());
    edges.weights.assign(edge_weights->data(), edge_weights->data() + edge_weights->size());
  }
  edges.num_nodes = num_nodes;
  auto d = std::make_shared<NodeDataset>();
  d->name = name;
  {
    py::gil_scoped_release release;
    const datasets::BuildOptions options{
        .symmetrize = !directed, .remove_self_loops = !keep_self_loops, .dedupe = true};
    d->graph = datasets::GraphBuilder(options).BuildAny(edges);
  }
  const int64_t n = d->num_nodes();
  if (dense) {
    TESSEL_CHECK(dense->ndim() == 2 && dense->shape(0) == n,
                 "features: {} rows for {} nodes (a [num_nodes x dim] array is needed)", dense->shape(0), n);
    TESSEL_CHECK(dense->shape(1) <= datasets::kMaxFeatureDim,
                 "features: {} columns; at most {} (32-bit feature ids) are supported", dense->shape(1),
                 datasets::kMaxFeatureDim);
    d->features.num_rows = n;
    d->features.dim = dense->shape(1);
    d->features.dense = CopyToBuffer(*dense);
  } else if (feat_indptr) {
    TESSEL_CHECK(feat_indices && feat_values, "sparse features need indptr, indices and values");
    TESSEL_CHECK(feat_indptr->size() == n + 1, "features: {} rows for {} nodes", feat_indptr->size() - 1, n);
    d->features.num_rows = n;
    d->features.dim = feature_dim;
    d->features.sparse = true;
    d->features.indptr = CopyToBuffer(*feat_indptr);
    d->features.indices = CopyToBuffer(*feat_indices);
    d->features.values = CopyToBuffer(*feat_values);
  }
  if (labels) {
    TESSEL_CHECK(labels->size() == n, "labels: {} values for {} nodes", labels->size(), n);
    d->labels = CopyToBuffer(*labels);
    if (num_classes < 0) {
      int32_t top = -1;
      for (const int32_t y : d->labels.Host()) top = std::max(top, y);
      num_classes = int64_t{top} + 1;
    }
    TESSEL_CHECK(num_classes <= std::numeric_limits<int32_t>::max(),
                 "num_classes {} does not fit 32-bit class ids (at most {})", num_classes,
                 std::numeric_limits<int32_t>::max());
    TESSEL_CHECK(num_classes <= datasets::kMaxClassesAlways || num_classes <= n,
                 "num_classes {} exceeds max(nodes, {}); class ids must be dense (0, 1, ...)", num_classes,
                 datasets::kMaxClassesAlways);
    d->num_classes = static_cast<int32_t>(std::max<int64_t>(num_classes, 0));
  }
  if (train) d->train = CopyToBuffer(*train);
  if (val) d->val = CopyToBuffer(*val);
  if (test) d->test = CopyToBuffer(*test);
  d->Validate();
  return NodeData{std::move(d), nullptr};
}

RowData BuildRows(const I64& indptr, const I32& indices, const F64& values, const F64& labels, int64_t num_features,
                  const std::string& name) {
  auto d = std::make_shared<SparseRowDataset>(
      CopyRows(indptr, indices, values, labels, num_features, datasets::kMaxSparseRowFeatures));
  d->name = name;
  d->Validate();
  return RowData{std::move(d), nullptr};
}

template <typename IdT>
py::object GraphIndices(const datasets::CsrGraph<IdT>& g, py::handle owner) {
  return View<IdT>(g.indices().Host(), owner);
}

py::object OptionalView(const auto& buffer, py::handle owner) {
  if (buffer.empty()) return py::none();
  return View(buffer.Host(), owner);
}

// repr(NodeData): the name and the counts, e.g. NodeData(name='cora', nodes=2708, edges=10556, features=1433 sparse,
// classes=7, split=140/500/1000). edges counts stored (directed) adjacency entries, as PyG's num_edges does: an
// undirected edge counts twice.
std::string NodeRepr(const NodeDataset& d) {
  const bool weighted = std::visit([](const auto& g) { return g.has_weights(); }, d.graph);
  const std::string features =
      d.features.empty() ? "none" : fmt::format("{} {}", d.features.dim, d.features.sparse ? "sparse" : "dense");
  const std::string classes = d.has_labels() ? std::to_string(d.num_classes) : "none";
  const std::string split =
      d.has_split() ? fmt::format("{}/{}/{}", d.train.size(), d.val.size(), d.test.size()) : "none";
  return fmt::format("NodeData(name={}, nodes={}, edges={}{}, features={}, classes={}, split={})",
                     std::string(py::repr(py::str(d.name))), d.num_nodes(), datasets::NumEntries(d.graph),
                     weighted ? " weighted" : "", features, classes, split);
}

// repr(RowData): e.g. RowData(name='heart_scale', rows=270, features=13, nnz=3378, classes=2), classes being the
// distinct label values (as `tessel info` counts them).
std::string RowRepr(const SparseRowDataset& d) {
  std::unordered_set<double> labels;
  for (const double y : d.labels.Host()) labels.insert(y);
  return fmt::format("RowData(name={}, rows={}, features={}, nnz={}, classes={})",
                     std::string(py::repr(py::str(d.name))), d.num_rows, d.num_features, d.values.size(),
                     labels.size());
}

// save(path, force=False) through the native writer `write`, stats_json() and __repr__ (`repr`) of a dataset handle
// (NodeData, RowData).
template <typename Handle, typename Dataset>
void DefSaveStatsRepr(py::class_<Handle>& c,
                      void (*write)(const Dataset&, const fs::path&, const datasets::WriteOptions&),
                      std::string (*repr)(const Dataset&)) {
  c.def(
       "save",
       [write](const Handle& d, const fs::path& path, bool force) {
         RunReleased([&] { write(d.Checked(), path, {.overwrite = force, .flag = "path"}); });
       },
       py::arg("path"), py::arg("force") = false)
      .def("stats_json", [](const Handle& d) { return datasets::ToJson(datasets::ComputeStats(d.Checked())).dump(); })
      .def("__repr__", [repr](const Handle& d) { return repr(d.Checked()); });
}

}  // namespace

std::shared_ptr<const MappedFolder> MappedFolder::Record(const fs::path& folder) {
  auto m = std::make_shared<MappedFolder>();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder, ec)) {
    struct stat st {};
    if (::stat(e.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    m->files.push_back({e.path(), static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                        static_cast<int64_t>(st.st_size)});
  }
  return m;
}

void MappedFolder::CheckUnchanged() const {
  for (const File& f : files) {
    struct stat st {};
    if (::stat(f.path.c_str(), &st) != 0) continue;  // removed: the mapping keeps the old file readable
    if (static_cast<uint64_t>(st.st_dev) != f.device || static_cast<uint64_t>(st.st_ino) != f.inode) continue;
    if (static_cast<int64_t>(st.st_size) >= f.bytes) continue;
    throw Error::InFile(f.path.string(),
                        fmt::format("has {} bytes now, {} when the dataset was loaded: it was truncated on disk while "
                                    "memory-mapped, and reading it would end the interpreter (SIGBUS); restore the "
                                    "folder and load it again, or load with tessel.load(path, mmap=False) to copy it",
                                    st.st_size, f.bytes));
  }
}

const NodeDataset& NodeData::Checked() const {
  if (mapped) mapped->CheckUnchanged();
  return *data;
}

const SparseRowDataset& RowData::Checked() const {
  if (mapped) mapped->CheckUnchanged();
  return *data;
}

void RegisterData(py::module_& m) {
  m.def("load", &Load, py::arg("path"), py::arg("mmap") = true,
        "Opens a native dataset folder (memory-mapped, or copied with mmap=False; checksums verified), a node-table "
        "prefix or LIBSVM text");
  m.def(
      "info",
      [](const std::string& path, bool verify) {
        app::InfoOptions o;
        o.path = path;
        o.json = true;
        o.verify = verify;
        std::string out;
        const app::Printer say([&out](std::string_view text) { out += text; });
        RunReleased([&] { app::Info(o, say); });
        return out;
      },
      py::arg("path"), py::arg("verify") = true,
      "`tessel info --json PATH`: a dataset, partition folder, GCN or SVM checkpoint or SVM model described, as JSON");
  m.def("build_node", &BuildNode);
  m.def("build_rows", &BuildRows);

  py::class_<NodeData> node_data(m, "NodeData", "A node dataset: graph, node features, labels and split");
  node_data.def_property_readonly("name", [](const NodeData& d) { return d.data->name; })
      .def_property_readonly("num_nodes", [](const NodeData& d) { return d.data->num_nodes(); })
      .def_property_readonly("num_entries", [](const NodeData& d) { return datasets::NumEntries(d.Checked().graph); })
      .def_property_readonly("num_classes", [](const NodeData& d) { return d.data->num_classes; })
      .def_property_readonly("feature_dim", [](const NodeData& d) { return d.data->features.dim; })
      .def_property_readonly("features_sparse", [](const NodeData& d) { return d.data->features.sparse; })
      .def_property_readonly("indptr",
                             [](py::object self) {
                               const auto& d = self.cast<const NodeData&>().Checked();
                               return std::visit([&](const auto& g) { return View(g.indptr().Host(), self); }, d.graph);
                             })
      .def_property_readonly("indices",
                             [](py::object self) {
                               const auto& d = self.cast<const NodeData&>().Checked();
                               return std::visit([&](const auto& g) { return GraphIndices(g, self); }, d.graph);
                             })
      .def_property_readonly("edge_weights",
                             [](py::object self) {
                               const auto& d = self.cast<const NodeData&>().Checked();
                               return std::visit([&](const auto& g) { return OptionalView(g.weights(), self); },
                                                 d.graph);
                             })
      .def_property_readonly("dense_features",
                             [](py::object self) -> py::object {
                               const auto& f = self.cast<const NodeData&>().Checked().features;
                               if (f.sparse || f.empty()) return py::none();
                               return View(f.dense.Host(), self, {f.num_rows, f.dim});
                             })
      .def_property_readonly(
          "feature_indptr",
          [](py::object self) { return OptionalView(self.cast<const NodeData&>().Checked().features.indptr, self); })
      .def_property_readonly(
          "feature_indices",
          [](py::object self) { return OptionalView(self.cast<const NodeData&>().Checked().features.indices, self); })
      .def_property_readonly(
          "feature_values",
          [](py::object self) { return OptionalView(self.cast<const NodeData&>().Checked().features.values, self); })
      .def_property_readonly(
          "labels", [](py::object self) { return OptionalView(self.cast<const NodeData&>().Checked().labels, self); })
      .def_property_readonly(
          "train", [](py::object self) { return View(self.cast<const NodeData&>().Checked().train.Host(), self); })
      .def_property_readonly(
          "val", [](py::object self) { return View(self.cast<const NodeData&>().Checked().val.Host(), self); })
      .def_property_readonly(
          "test", [](py::object self) { return View(self.cast<const NodeData&>().Checked().test.Host(), self); });
  DefSaveStatsRepr(node_data, &datasets::WriteNodeDataset, &NodeRepr);

  py::class_<RowData> row_data(m, "RowData", "Sparse rows with real labels (LIBSVM's data model)");
  row_data.def_property_readonly("name", [](const RowData& d) { return d.data->name; })
      .def_property_readonly("num_rows", [](const RowData& d) { return d.data->num_rows; })
      .def_property_readonly("num_features", [](const RowData& d) { return d.data->num_features; })
      .def_property_readonly(
          "indptr", [](py::object self) { return View(self.cast<const RowData&>().Checked().indptr.Host(), self); })
      .def_property_readonly(
          "indices", [](py::object self) { return View(self.cast<const RowData&>().Checked().indices.Host(), self); })
      .def_property_readonly(
          "values", [](py::object self) { return View(self.cast<const RowData&>().Checked().values.Host(), self); })
      .def_property_readonly(
          "labels", [](py::object self) { return View(self.cast<const RowData&>().Checked().labels.Host(), self); });
  DefSaveStatsRepr(row_data, &datasets::WriteSparseRowDataset, &RowRepr);
}

}  // namespace tessel::python
