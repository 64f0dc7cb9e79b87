// `tessel convert --from FORMAT INPUT --output DIR`: a raw dataset (edge list, METIS, LINQS, node table, OGB,
// LIBSVM, IDX images) to a native dataset folder, with an optional seeded random split; every option checked up front.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/log.h"
#include "core/memory_budget.h"
#include "core/parallel.h"
#include "core/progress.h"
#include "datasets/native_format.h"
#include "datasets/readers.h"
#include "datasets/split.h"
#include "datasets/stats.h"
#include "datasets/text_input.h"
#include "tools/cli_params.h"
#include "tools/commands.h"

namespace tessel::tools {
namespace {

namespace ds = datasets;
namespace fs = std::filesystem;

struct ConvertArgs {
  std::string from;
  std::string input;
  std::string output;
  bool force = false;
  std::string name;
  std::string split;
  bool resplit = false;
  uint64_t seed = 1;
  bool directed = false;
  bool keep_self_loops = false;
  bool one_based = false;
  bool weighted = false;
  std::string delimiter;
  std::string edges, features, labels, train, val, test;
  std::string ogb_split;
  int64_t num_features = -1;
  std::string positive;  // LABEL,LABEL,...: a binary task (+1 for these classes, -1 for the rest)
  std::string negative;  // LABEL,...: -1 for these classes only, rows of other classes dropped
};

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

// Which formats accept an option; "--x applies to --from a or b only" otherwise.
void Require(const CLI::App& sub, const ConvertArgs& a, const char* option, std::initializer_list<const char*> formats,
             const char* why) {
  if (sub.count(option) == 0) return;
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
  TESSEL_CHECK(fs::is_regular_file(path, ec), "{} '{}': no such file", option, path);
}

char ParseDelimiter(const std::string& d) {
  if (d.empty()) return 0;
  if (d == "tab" || d == "\\t" || d == "\t") return '\t';
  if (d == "space") return ' ';
  TESSEL_CHECK(d.size() == 1, "--delimiter '{}' must be one character (for example , or ;), 'tab' or 'space'", d);
  return d[0];
}

void ValidateArgs(const CLI::App& sub, const ConvertArgs& a) {
  Require(sub, a, "--directed", {"edgelist", "nodetable"}, "other formats define their own symmetry");
  Require(sub, a, "--keep-self-loops", {"edgelist", "nodetable"}, "other formats build a loop-free graph");
  Require(sub, a, "--one-based", {"edgelist"}, "the other formats fix their id base");
  Require(sub, a, "--weighted", {"edgelist"}, "the other formats carry their own weights, METIS in its header");
  Require(sub, a, "--delimiter", {"edgelist"}, "the other readers detect theirs");
  for (const char* opt : {"--edges", "--features", "--train", "--val", "--test"}) {
    Require(sub, a, opt, {"nodetable"}, "it overrides one file of a node table");
  }
  Require(sub, a, "--labels", {"nodetable", "idx"}, "it names the labels file");
  Require(sub, a, "--positive", {"libsvm", "idx"}, "it turns class labels into a binary task");
  TESSEL_CHECK(a.from != "idx" || !a.labels.empty(),
               "--from idx needs the labels file too: --labels train-labels-idx1-ubyte.gz");
  Require(sub, a, "--negative", {"libsvm", "idx"}, "it turns class labels into a binary task");
  TESSEL_CHECK(a.negative.empty() || !a.positive.empty(), "--negative needs --positive (the other side of the task)");
  if (!a.positive.empty()) ParseClassList(a.positive, "--positive");
  if (!a.negative.empty()) ParseClassList(a.negative, "--negative");
  Require(sub, a, "--ogb-split", {"ogb"}, "it names a folder under split/ of an OGB dataset");
  Require(sub, a, "--num-features", {"libsvm"}, "it fixes the width of LIBSVM rows");
  const bool rows = a.from == "libsvm" || a.from == "idx";
  TESSEL_CHECK(!(rows && sub.count("--split") > 0),
               "--split needs a graph dataset; LIBSVM and IDX rows have no node split (keep a separate test file)");
  TESSEL_CHECK(sub.count("--resplit") == 0 || sub.count("--split") > 0,
               "--resplit replaces the input's split by a random one: give the fractions with --split too");
  TESSEL_CHECK(sub.count("--seed") == 0 || sub.count("--split") > 0,
               "--seed only seeds the random split: add --split 0.6,0.2,0.2 (or drop --seed)");
  if (!a.split.empty()) ds::ParseSplitFractions(a.split);  // throws with an example of a valid value
  if (sub.count("--num-features") > 0) {
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
ds::NodeTablePaths NodeTablePathsFor(const ConvertArgs& a) {
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

ds::BuildOptions GraphOptions(const ConvertArgs& a) {
  return ds::BuildOptions{.symmetrize = !a.directed, .remove_self_loops = !a.keep_self_loops, .dedupe = true};
}

ds::NodeDataset ReadNodes(const CLI::App& sub, const ConvertArgs& a) {
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
  if (sub.count("--directed") > 0 || sub.count("--keep-self-loops") > 0) {
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

void RunConvert(const CLI::App& sub, const ConvertArgs& a) {
  ValidateArgs(sub, a);
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
    std::printf("converted %s (%s) -> %s in %.2f s\n", d.name.c_str(), a.from.c_str(), a.output.c_str(), seconds);
    std::printf("  rows %lld, features %lld, non-zeros %lld, %zu distinct labels\n", static_cast<long long>(s.num_rows),
                static_cast<long long>(s.num_features), static_cast<long long>(s.nnz), s.label_counts.size());
    return;
  }
  ds::NodeDataset d = ReadNodes(sub, a);
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
  log::Info("writing {}", a.output);
  ds::WriteNodeDataset(d, a.output, write);
  const ds::NodeDatasetStats s = ds::ComputeStats(d);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("converted %s (%s) -> %s in %.2f s\n", d.name.c_str(), a.from.c_str(), a.output.c_str(), seconds);
  std::printf("  nodes %lld, %s edges %lld (%lld adjacency entries, %lld self-loops), ids %s%s\n",
              static_cast<long long>(s.num_nodes), s.symmetric ? "undirected" : "directed",
              static_cast<long long>(s.num_edges), static_cast<long long>(s.num_entries),
              static_cast<long long>(s.self_loops), s.id_dtype.c_str(), s.weighted ? ", weighted" : "");
  std::printf("  features %s, classes %d, split %s\n",
              s.feature_dim == 0 ? "none"
                                 : fmt::format("{} ({}, {} non-zeros)", s.feature_dim,
                                               s.features_sparse ? "sparse" : "dense", s.feature_nnz)
                                       .c_str(),
              s.num_classes, SplitText(s.train, s.val, s.test).c_str());
}

}  // namespace

void RegisterConvert(CLI::App& app) {
  auto args = std::make_shared<ConvertArgs>();
  ConvertArgs& a = *args;
  CLI::App* sub = app.add_subcommand("convert", "Convert a raw dataset into the native format (docs/formats.md)");
  AddOption(sub, "--from", &a.from, "Input format")
      ->required()
      ->check(CLI::IsMember({"edgelist", "metis", "linqs", "nodetable", "ogb", "libsvm", "idx"}));
  AddOption(sub, "input", &a.input,
            "INPUT: a file (edgelist, metis, libsvm; idx: the images file, with --labels), a prefix or folder "
            "(linqs: PREFIX.content + PREFIX.cites), a prefix (nodetable: PREFIX.edges.txt, ...) or a folder (ogb)")
      ->required();
  AddOption(sub, "--output,-o", &a.output, "Dataset folder to write")->required();
  sub->add_flag(
      "--force", a.force,
      "Replace an existing tessel dataset folder (never another folder or file, a device, or an input of the run)");
  AddOption(sub, "--name", &a.name, "Dataset name stored in the manifest (default: from the input name)");
  AddOption(sub, "--split", &a.split, "Random train,val,test fractions of the labelled nodes, e.g. 0.6,0.2,0.2");
  sub->add_flag("--resplit", a.resplit, "With --split: replace the split the input already has");
  AddOption(sub, "--seed", &a.seed, "Seed of the random split")->capture_default_str();
  sub->add_flag("--directed", a.directed, "Keep edge directions (default: symmetrise)");
  sub->add_flag("--keep-self-loops", a.keep_self_loops, "Keep (u, u) edges (default: drop them)");
  sub->add_flag("--one-based", a.one_based, "Edge-list ids start at 1");
  sub->add_flag("--weighted", a.weighted, "The edge list has a third column of weights");
  AddOption(sub, "--delimiter", &a.delimiter,
            "Edge-list field separator: one character, 'tab' or 'space' "
            "(default: comma if the first line has one, else whitespace)");
  AddOption(sub, "--edges", &a.edges, "nodetable: the edges file (instead of PREFIX.edges.txt)");
  AddOption(sub, "--features", &a.features, "nodetable: the features file (instead of PREFIX.features.txt)");
  AddOption(sub, "--labels", &a.labels,
            "nodetable: the labels file (instead of PREFIX.labels.txt); idx: the labels file of the images");
  AddOption(sub, "--positive", &a.positive,
            "libsvm, idx: a binary task, +1 for these class labels and -1 for the rest (e.g. 0,2,4,6)");
  AddOption(sub, "--negative", &a.negative,
            "libsvm, idx: with --positive, -1 for these class labels only; rows of other classes are dropped");
  AddOption(sub, "--train", &a.train, "nodetable: the train list (instead of PREFIX.train.txt)");
  AddOption(sub, "--val", &a.val, "nodetable: the validation list (instead of PREFIX.val.txt)");
  AddOption(sub, "--test", &a.test, "nodetable: the test list (instead of PREFIX.test.txt)");
  AddOption(sub, "--ogb-split", &a.ogb_split, "ogb: the folder under split/ (default: the only one)");
  AddOption(sub, "--num-features", &a.num_features, "libsvm: number of features (default: the largest index)",
            {1, std::numeric_limits<int32_t>::max()});
  SetAction(sub, [args, sub] { RunConvert(*sub, *args); });
}

}  // namespace tessel::tools
