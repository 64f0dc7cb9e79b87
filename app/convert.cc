#include "app/convert.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/file_io.h"
#include "core/log.h"
#include "core/memory_budget.h"
#include "core/output_guard.h"
#include "core/parallel.h"
#include "core/progress.h"
#include "datasets/native_format.h"
#include "datasets/readers.h"
#include "datasets/split.h"
#include "datasets/stats.h"
#include "datasets/text_input.h"

namespace tessel::app {
namespace {

namespace ds = datasets;
namespace fs = std::filesystem;

std::vector<double> ParseClassList(const std::string& text, const char* flag) {
  std::vector<double> out;
  ds::Fields fields(text, ',');
  std::string_view field;
  while (fields.Next(&field)) {
    double v = 0;
    TESSEL_CHECK(ds::ParseDouble(field, &v), "{}: '{}' is not a class label (e.g. {} 0,2,4,6)", flag, field, flag);
    out.push_back(v);
  }
  TESSEL_CHECK(!out.empty(), "{} needs at least one class label (e.g. {} 0,2,4,6)", flag, flag);
  return out;
}

// Whether the option `flag` ("--keep-self-loops") was given: its parameter name is the flag without the dashes,
// '-' read as '_'.
bool GivenFlag(const ConvertOptions& a, std::string_view flag) {
  std::string name(flag.substr(2));
  for (char& ch : name) ch = ch == '-' ? '_' : ch;
  return a.given(name);
}

// Which formats accept an option; "--x applies to --from a or b only" otherwise.
void Require(const ConvertOptions& a, const char* option, std::initializer_list<const char*> formats, const char* why) {
  if (!GivenFlag(a, option)) return;
  for (const char* f : formats) {
    if (a.from == f) return;
  }
  std::string list;
  for (const char* f : formats) list += (list.empty() ? "" : " or ") + std::string(f);
  throw Error(fmt::format("{} applies to --from {} only, not {} ({})", option, list, a.from, why));
}

void CheckFile(const std::string& option, const std::string& path) {
  std::error_code ec;
  TESSEL_CHECK(!fs::is_directory(path, ec),
               "{} '{}' is a folder; give the file inside it (for a native dataset folder use tessel info or "
               "--dataset, not convert)",
               option, path);
  CheckInputIsFile(path, option);  // names a device, pipe or socket as what it is, not as missing
}

char ParseDelimiter(const std::string& d) {
  if (d.empty()) return 0;
  if (d == "tab" || d == "\\t" || d == "\t") return '\t';
  if (d == "space") return ' ';
  TESSEL_CHECK(d.size() == 1, "--delimiter '{}' must be one character (for example , or ;), 'tab' or 'space'", d);
  return d[0];
}

// The formats --from takes.
constexpr std::array<std::string_view, 7> kFormats = {"edgelist", "metis",  "linqs", "nodetable",
                                                      "ogb",      "libsvm", "idx"};

void ValidateArgs(const ConvertOptions& a) {
  TESSEL_CHECK(std::find(kFormats.begin(), kFormats.end(), a.from) != kFormats.end(),
               "--from {}: not a format tessel converts; give one of {}", PrintableText(a.from),
               fmt::join(kFormats, ", "));
  Require(a, "--directed", {"edgelist", "nodetable"}, "other formats define their own symmetry");
  Require(a, "--keep-self-loops", {"edgelist", "nodetable"}, "other formats build a loop-free graph");
  Require(a, "--one-based", {"edgelist"}, "the other formats fix their id base");
  Require(a, "--weighted", {"edgelist"}, "the other formats carry their own weights, METIS in its header");
  Require(a, "--delimiter", {"edgelist"}, "the other readers detect theirs");
  for (const char* opt : {"--edges", "--features", "--train", "--val", "--test"}) {
    Require(a, opt, {"nodetable"}, "it overrides one file of a node table");
  }
  Require(a, "--labels", {"nodetable", "idx"}, "it names the labels file");
  Require(a, "--positive", {"libsvm", "idx"}, "it turns class labels into a binary task");
  TESSEL_CHECK(a.from != "idx" || !a.labels.empty(),
               "--from idx needs the labels file too: --labels train-labels-idx1-ubyte.gz");
  Require(a, "--negative", {"libsvm", "idx"}, "it turns class labels into a binary task");
  TESSEL_CHECK(a.negative.empty() || !a.positive.empty(), "--negative needs --positive (the other side of the task)");
  if (!a.positive.empty()) ParseClassList(a.positive, "--positive");
  if (!a.negative.empty()) ParseClassList(a.negative, "--negative");
  Require(a, "--ogb-split", {"ogb"}, "it names a folder under split/ of an OGB dataset");
  Require(a, "--num-features", {"libsvm"}, "it fixes the width of LIBSVM rows");
  const bool rows = a.from == "libsvm" || a.from == "idx";
  TESSEL_CHECK(!(rows && a.given("split")),
               "--split needs a graph dataset; LIBSVM and IDX rows have no node split (keep a separate test file)");
  TESSEL_CHECK(!a.given("resplit") || a.given("split"),
               "--resplit replaces the input's split by a random one: give the fractions with --split too");
  TESSEL_CHECK(!a.given("seed") || a.given("split"),
               "--seed only seeds the random split: add --split 0.6,0.2,0.2 (or drop --seed)");
  if (!a.split.empty()) ds::ParseSplitFractions(a.split);  // throws with an example of a valid value
  if (a.given("num_features")) {
    TESSEL_CHECK(a.num_features >= 1, "--num-features must be >= 1 (the number of feature columns), got {}",
                 a.num_features);
  }
  ParseDelimiter(a.delimiter);
  TESSEL_CHECK(!a.output.empty(), "--output must name the dataset folder to write");
  for (const auto& [opt, path] : {std::pair<const char*, const std::string*>{"--edges", &a.edges},
                                  {"--features", &a.features},
                                  {"--labels", &a.labels},
                                  {"--train", &a.train},
                                  {"--val", &a.val},
                                  {"--test", &a.test}}) {
    if (!path->empty()) CheckFile(opt, *path);
  }
  std::error_code ec;
  if (a.from == "edgelist" || a.from == "metis" || a.from == "libsvm") {
    CheckFile("INPUT", a.input);
  } else if (a.from == "ogb") {
    TESSEL_CHECK(fs::is_directory(a.input, ec), "INPUT '{}': no such folder (--from ogb reads an OGB dataset folder)",
                 a.input);
  }
}

// The PREFIX.* files of a node table; with --edges the prefix need not have an edges file.
ds::NodeTablePaths NodeTablePathsFor(const ConvertOptions& a) {
  ds::NodeTablePaths p;
  if (a.edges.empty()) {
    p = ds::NodeTableFromPrefix(a.input);
  } else {
    auto find = [&](const char* suffix) -> fs::path {
      std::error_code ec;
      for (const char* ext : {"", ".gz", ".bz2"}) {
        const fs::path candidate = a.input + suffix + ext;
        if (fs::is_regular_file(candidate, ec)) return candidate;
      }
      return {};
    };
    p.features = find(".features.txt");
    p.labels = find(".labels.txt");
    p.train = find(".train.txt");
    p.val = find(".val.txt");
    p.test = find(".test.txt");
    p.edges = a.edges;
  }
  if (!a.features.empty()) p.features = a.features;
  if (!a.labels.empty()) p.labels = a.labels;
  if (!a.train.empty()) p.train = a.train;
  if (!a.val.empty()) p.val = a.val;
  if (!a.test.empty()) p.test = a.test;
  return p;
}

// PREFIX.content + PREFIX.cites, or the one pair inside a folder.
std::pair<fs::path, fs::path> LinqsFiles(const std::string& input) {
  std::error_code ec;
  if (fs::is_directory(input, ec)) {
    std::vector<fs::path> content;
    std::vector<fs::path> cites;
    for (const auto& e : fs::directory_iterator(input)) {
      if (e.path().extension() == ".content") content.push_back(e.path());
      if (e.path().extension() == ".cites") cites.push_back(e.path());
    }
    TESSEL_CHECK(content.size() == 1 && cites.size() == 1,
                 "INPUT '{}': a LINQS folder must hold exactly one *.content and one *.cites file (found {} and {}); "
                 "give the prefix instead, e.g. {}/cora",
                 input, content.size(), cites.size(), input);
    return {content[0], cites[0]};
  }
  return {ds::FindWithCompression(input + ".content"), ds::FindWithCompression(input + ".cites")};
}

// METIS graphs come with 64-bit ids; store 32-bit ids while the node count allows (as GraphBuilder does).
ds::AnyGraph Narrow(ds::CsrGraph64 g) {
  if (g.num_nodes() > std::numeric_limits<int32_t>::max()) return g;
  auto wide = g.indices().Host();
  std::vector<int32_t> narrow(wide.size());
  parallel_for<size_t>(0, wide.size(), 1 << 16, [&](size_t i) { narrow[i] = static_cast<int32_t>(wide[i]); });
  return ds::CsrGraph32(g.indptr().Clone(), Buffer<int32_t>(std::move(narrow)), g.weights().Clone());
}

// "soc-slashdot0902.edges.txt.gz" -> "soc-slashdot0902", "4elt.graph" -> "4elt".
std::string NameOf(const std::string& input) {
  std::string name = fs::path(input).filename().string();
  bool stripped = true;
  while (stripped) {
    stripped = false;
    for (std::string_view ext : {".gz", ".bz2", ".txt", ".csv", ".tsv", ".edges", ".graph", ".metis"}) {
      if (name.size() > ext.size() && name.ends_with(ext)) {
        name.resize(name.size() - ext.size());
        stripped = true;
      }
    }
  }
  return name;
}

ds::BuildOptions GraphOptions(const ConvertOptions& a) {
  return ds::BuildOptions{.symmetrize = !a.directed, .remove_self_loops = !a.keep_self_loops, .dedupe = true};
}

ds::NodeDataset ReadNodes(const ConvertOptions& a) {
  if (a.from == "edgelist") {
    ds::EdgeListOptions o;
    o.delimiter = ParseDelimiter(a.delimiter);
    o.one_based = a.one_based;
    o.weighted = a.weighted;
    const ds::EdgeList edges = ds::ReadEdgeList(a.input, o);
    log::Info("{}: {} edges read; building the graph", a.input, edges.size());
    ds::NodeDataset d;
    d.name = NameOf(a.input);
    d.graph = ds::GraphBuilder(GraphOptions(a)).BuildAny(edges);
    return d;
  }
  if (a.from == "metis") {
    ds::MetisGraph m = ds::ReadMetisGraph(a.input);
    if (m.ncon > 0) log::Warn("{}: {} vertex weight(s) per vertex are not stored in the dataset", a.input, m.ncon);
    ds::NodeDataset d;
    d.name = NameOf(a.input);
    d.graph = Narrow(std::move(m.graph));
    return d;
  }
  if (a.from == "linqs") {
    const auto [content, cites] = LinqsFiles(a.input);
    return ds::ReadLinqs(content, cites);
  }
  if (a.from == "ogb") return ds::ReadOgbNodeFolder(a.input, a.ogb_split);
  // nodetable
  const ds::NodeTablePaths paths = NodeTablePathsFor(a);
  ds::NodeDataset d = ds::ReadNodeTable(paths);
  d.name = fs::path(a.input).filename().string();
  if (a.given("directed") || a.given("keep_self_loops")) {
    ds::EdgeList edges = ds::ReadEdgeList(paths.edges);
    edges.num_nodes = d.num_nodes();
    log::Info("{}: rebuilding the graph ({}, {})", paths.edges.string(), a.directed ? "directed" : "symmetrised",
              a.keep_self_loops ? "self-loops kept" : "self-loops removed");
    d.graph = ds::GraphBuilder(GraphOptions(a)).BuildAny(edges);
  }
  return d;
}

std::string SplitText(int64_t train, int64_t val, int64_t test) {
  return train + val + test == 0 ? "none" : fmt::format("{}/{}/{}", train, val, test);
}

}  // namespace

std::string Convert(const ConvertOptions& a) {
  ValidateArgs(a);
  const auto t0 = std::chrono::steady_clock::now();
  const ds::WriteOptions write{.overwrite = a.force};
  // Fail before reading a large input; never over an input (--input may be a file, a folder or a prefix).
  ds::CheckOutputFolder(a.output, write, PathList({a.input, a.edges, a.features, a.labels, a.train, a.val, a.test}));
  log::Info("reading {} ({})", a.input, a.from);
  std::optional<memory::Activity> activity(std::in_place, fmt::format("reading {} as {}", a.input, a.from));
  const Progress progress(fmt::format("convert: {}", a.input));  // a line every 10 s on large inputs
  if (a.from == "libsvm" || a.from == "idx") {
    ds::SparseRowDataset d =
        a.from == "libsvm" ? ds::ReadLibsvm(a.input, a.num_features) : ds::ReadIdx(a.input, a.labels);
    activity.emplace(fmt::format("writing {}", a.output));
    if (!a.positive.empty()) {
      ds::MakeBinaryTask(d, ParseClassList(a.positive, "--positive"),
                         a.negative.empty() ? std::vector<double>{} : ParseClassList(a.negative, "--negative"));
    }
    if (!a.name.empty()) d.name = a.name;
    log::Info("writing {}", a.output);
    ds::WriteSparseRowDataset(d, a.output, write);
    const ds::SparseRowStats s = ds::ComputeStats(d);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return fmt::format(
        "converted {} ({}) -> {} in {:.2f} s\n  rows {}, features {}, non-zeros {}, {} distinct labels\n", d.name,
        a.from, a.output, seconds, s.num_rows, s.num_features, s.nnz, s.label_counts.size());
  }
  ds::NodeDataset d = ReadNodes(a);
  activity.emplace(fmt::format("writing {}", a.output));
  if (!a.name.empty()) d.name = a.name;
  if (!a.split.empty()) {
    if (d.has_split() && !a.resplit) {
      throw Error(fmt::format(
          "{} already has a split ({} train / {} val / {} test); pass --resplit to replace it by a random one, or "
          "drop --split to keep it",
          a.input, d.train.size(), d.val.size(), d.test.size()));
    }
    ds::AssignRandomSplit(d, ds::ParseSplitFractions(a.split), a.seed);
    log::Info("random split {} with seed {}: {}/{}/{} {} nodes", a.split, a.seed, d.train.size(), d.val.size(),
              d.test.size(), d.has_labels() ? "labelled" : "");
  }
  if (d.has_labels() && d.has_split()) {
    // The dataset's own split may list nodes without a class: the dataset is still one (partition and predict take
    // it), but train gcn refuses it, so convert says so now instead of leaving it to the first training.
    const auto labels = d.labels.Host();
    for (const auto& [list_name, list] : {std::pair{"train", &d.train}, {"val", &d.val}, {"test", &d.test}}) {
      int64_t unlabelled = 0;
      int64_t first = -1;
      for (const int64_t u : list->Host()) {
        if (labels[static_cast<size_t>(u)] != ds::kNoLabel) continue;
        if (unlabelled++ == 0) first = u;
      }
      if (unlabelled == 0) continue;
      log::Warn(
          "{}: the {} split lists {} node(s) without a label (-1; node {} first): train gcn refuses such a "
          "split; label them, leave them out of the split, or pass --split 0.6,0.2,0.2 --resplit (a random "
          "split of the labelled nodes)",
          a.input, list_name, unlabelled, first);
    }
  }
  log::Info("writing {}", a.output);
  ds::WriteNodeDataset(d, a.output, write);
  const ds::NodeDatasetStats s = ds::ComputeStats(d);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string features = s.feature_dim == 0 ? "none"
                                                  : fmt::format("{} ({}, {} non-zeros)", s.feature_dim,
                                                                s.features_sparse ? "sparse" : "dense", s.feature_nnz);
  return fmt::format(
      "converted {} ({}) -> {} in {:.2f} s\n  nodes {}, {} edges {} ({} adjacency entries, {} self-loops), ids {}{}\n"
      "  features {}, classes {}, split {}\n",
      d.name, a.from, a.output, seconds, s.num_nodes, s.symmetric ? "undirected" : "directed", s.num_edges,
      s.num_entries, s.self_loops, s.id_dtype, s.weighted ? ", weighted" : "", features, s.num_classes,
      SplitText(s.train, s.val, s.test));
}

}  // namespace tessel::app
