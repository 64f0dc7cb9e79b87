// `tessel generate csbm|rmat`: synthetic node datasets (datasets/generators.h) written in the native format.
// Reports the drawn and kept edge counts, degrees and timings on stderr, or as JSON on stdout with --json.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/log.h"
#include "core/parallel.h"
#include "datasets/generators.h"
#include "datasets/native_format.h"
#include "datasets/split.h"
#include "datasets/stats.h"
#include "tools/cli_params.h"
#include "tools/commands.h"

namespace tessel::tools {
namespace {

namespace ds = datasets;

// Options every generator shares.
struct Common {
  std::string output;
  bool force = false;
  uint64_t seed = 1;
  std::string split = "0.6,0.2,0.2";
  int threads = 0;
  bool json = false;
};

void AddCommon(CLI::App* sub, Common& c) {
  AddOption(sub, "--output,-o", &c.output, "Dataset folder to write (native format)")->required();
  sub->add_flag("--force", c.force,
                "Replace an existing tessel dataset folder (never another folder or file, or a device)");
  AddOption(sub, "--seed", &c.seed, "Seed of every random draw (same seed, same dataset)")->capture_default_str();
  AddOption(sub, "--split", &c.split, "Train,val,test fractions of the labelled nodes, summing to 1")
      ->capture_default_str();
  AddOption(sub, "--threads", &c.threads, "Worker threads (0 = all); the output does not depend on it",
            {0, kMaxThreads})
      ->capture_default_str();
  sub->add_flag("--json", c.json, "Print a JSON summary on stdout");
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Fails before any work when the output cannot be written (exists without --force, or is not a dataset).
void CheckOutput(const Common& c) { ds::CheckOutputFolder(c.output, ds::WriteOptions{.overwrite = c.force}); }

// Writes `data`, then reports. `extra` holds generator-specific fields (drawn edges, homophily, ...).
void WriteAndReport(const ds::NodeDataset& data, const Common& c, double generate_s, const ds::BuildStats& build,
                    nlohmann::ordered_json extra) {
  log::Info("{}: writing {} nodes, {} adjacency entries to {}", data.name, data.num_nodes(), NumEntries(data.graph),
            c.output);
  const auto t0 = std::chrono::steady_clock::now();
  ds::WriteNodeDataset(data, c.output, ds::WriteOptions{.overwrite = c.force});
  const double write_s = Seconds(t0);

  const ds::DegreeStats deg =
      std::visit([](const auto& g) { return ds::ComputeDegreeStats(g.indptr().Host()); }, data.graph);
  nlohmann::ordered_json j;
  j["generator"] = data.name;
  j["output"] = std::filesystem::absolute(c.output).string();
  j["seed"] = c.seed;
  j["num_nodes"] = data.num_nodes();
  j["edges_drawn"] = build.input_edges;
  j["self_loops_removed"] = build.self_loops_removed;
  j["duplicate_entries_removed"] = build.duplicates_removed;
  j["adjacency_entries"] = build.entries;
  j["undirected_edges"] = build.entries / 2;
  j["degree"] = {{"mean", deg.mean}, {"median", deg.median}, {"max", deg.max}, {"isolated", deg.isolated}};
  j["feature_dim"] = data.features.empty() ? 0 : data.features.dim;
  j["num_classes"] = data.num_classes;
  j["split"] = {{"train", data.train.size()}, {"val", data.val.size()}, {"test", data.test.size()}};
  j.update(extra);
  j["seconds"] = {{"generate", generate_s}, {"write", write_s}};
  log::Info(
      "{}: {} undirected edges kept of {} drawn ({} duplicate entries, {} self-loops removed); degree mean {:.2f}, "
      "max {}; generated in {:.2f} s, written in {:.2f} s",
      data.name, build.entries / 2, build.input_edges, build.duplicates_removed, build.self_loops_removed, deg.mean,
      deg.max, generate_s, write_s);
  if (c.json) std::printf("%s\n", j.dump(2).c_str());
}

// The options bind to these; the action keeps them alive.
struct CsbmState {
  Common common;
  ds::CsbmOptions options;
};
struct RmatState {
  Common common;
  ds::RmatOptions options;
  int scale = 16;
  double edge_factor = 16;
  bool no_permute = false;
};

void RunCsbm(CsbmState& s) {
  ds::CsbmOptions& o = s.options;
  o.seed = s.common.seed;
  o.split = ds::ParseSplitFractions(s.common.split);
  ds::ValidateCsbmOptions(o);
  CheckOutput(s.common);
  ThreadLimit limit(s.common.threads);
  log::Info("csbm: {} nodes, {} classes, mean degree {}, homophily {}, degree exponent {}, {} features, seed {}",
            o.num_nodes, o.num_classes, o.avg_degree, o.homophily, o.degree_exponent, o.feature_dim, o.seed);
  const auto t0 = std::chrono::steady_clock::now();
  ds::CsbmDetails details;
  const ds::NodeDataset data = ds::GenerateCsbm(o, &details);
  const double generate_s = Seconds(t0);
  nlohmann::ordered_json extra;
  extra["homophily_target"] = o.homophily;
  extra["homophily_measured"] = ds::EdgeHomophily(data);
  extra["class_sizes"] = details.class_sizes;
  WriteAndReport(data, s.common, generate_s, details.build, std::move(extra));
}

void RunRmat(RmatState& s, const CLI::App& sub) {
  ds::RmatOptions& o = s.options;
  if (sub.count("--nodes") == 0) {
    TESSEL_CHECK(s.scale >= 1 && s.scale <= 62, "--scale must be in [1, 62], got {}", s.scale);
    o.num_nodes = int64_t{1} << s.scale;
  }
  if (sub.count("--edges") == 0) {
    const double m = s.edge_factor * static_cast<double>(o.num_nodes);
    TESSEL_CHECK(std::isfinite(s.edge_factor) && s.edge_factor > 0 && m < 9e18,
                 "--edge-factor must be > 0 with nodes x edge-factor below 2^63, got {}", s.edge_factor);
    o.num_edges = std::llround(m);
  }
  o.permute = !s.no_permute;
  o.seed = s.common.seed;
  o.split = ds::ParseSplitFractions(s.common.split);
  ds::ValidateRmatOptions(o);
  CheckOutput(s.common);
  ThreadLimit limit(s.common.threads);
  log::Info("rmat: {} nodes, {} edges drawn, a={} b={} c={} d={}, noise {}, seed {}", o.num_nodes, o.num_edges, o.a,
            o.b, o.c, o.d, o.noise, o.seed);
  const auto t0 = std::chrono::steady_clock::now();
  ds::BuildStats build;
  const ds::NodeDataset data = ds::GenerateRmat(o, &build);
  const double generate_s = Seconds(t0);
  WriteAndReport(data, s.common, generate_s, build, nlohmann::ordered_json::object());
}

void RegisterCsbm(CLI::App* group) {
  auto state = std::make_shared<CsbmState>();
  ds::CsbmOptions& o = state->options;
  CLI::App* sub = group->add_subcommand(
      "csbm",
      "Contextual stochastic block model: classes as communities, homophily, heavy-tailed degrees, "
      "Gaussian class features");
  AddCommon(sub, state->common);
  AddOption(sub, "--nodes,-n", &o.num_nodes, "Number of nodes")->capture_default_str();
  AddOption(sub, "--classes", &o.num_classes, "Number of classes (= communities), 2..nodes")->capture_default_str();
  AddOption(sub, "--avg-degree", &o.avg_degree, "Target mean degree; nodes * avg-degree / 2 edges are drawn")
      ->capture_default_str();
  AddOption(sub, "--homophily", &o.homophily, "Probability that an edge stays inside its source's class, 0..1")
      ->capture_default_str();
  AddOption(sub, "--degree-exponent", &o.degree_exponent,
            "Power-law exponent of the degrees (> 2, e.g. 2.5); 0 = no degree correction")
      ->capture_default_str();
  AddOption(sub, "--class-concentration", &o.class_concentration,
            "Dirichlet concentration of the class sizes (small = unequal); 0 = equal sizes")
      ->capture_default_str();
  AddOption(sub, "--features", &o.feature_dim, "Feature dimension (0 = none)")->capture_default_str();
  AddOption(sub, "--signal", &o.signal, "Length of each class mean vector")->capture_default_str();
  AddOption(sub, "--noise", &o.noise, "Standard deviation of the Gaussian feature noise")->capture_default_str();
  SetAction(sub, [state] { RunCsbm(*state); });
}

void RegisterRmat(CLI::App* group) {
  auto state = std::make_shared<RmatState>();
  ds::RmatOptions& o = state->options;
  CLI::App* sub = group->add_subcommand(
      "rmat", "R-MAT power-law graph (Graph500 parameters by default); optional random features and labels");
  AddCommon(sub, state->common);
  CLI::Option* scale_opt = AddOption(sub, "--scale", &state->scale, "2^scale nodes (unless --nodes is given)", {1, 62})
                               ->capture_default_str();
  CLI::Option* ef_opt =
      AddOption(sub, "--edge-factor", &state->edge_factor, "Edges drawn per node (unless --edges is given)")
          ->capture_default_str();
  AddOption(sub, "--nodes,-n", &o.num_nodes, "Number of nodes (any count >= 2) instead of --scale")
      ->excludes(scale_opt);
  AddOption(sub, "--edges,-m", &o.num_edges, "Number of edges drawn, before dedupe, instead of --edge-factor")
      ->excludes(ef_opt);
  AddOption(sub, "-a", &o.a, "Probability of the top-left quadrant")->capture_default_str();
  AddOption(sub, "-b", &o.b, "Probability of the top-right quadrant")->capture_default_str();
  AddOption(sub, "-c", &o.c, "Probability of the bottom-left quadrant")->capture_default_str();
  AddOption(sub, "-d", &o.d, "Probability of the bottom-right quadrant; a + b + c + d = 1")->capture_default_str();
  AddOption(sub, "--noise", &o.noise, "Per-level noise (NSKG), 0..min(b, c, (a+d)/2); smooths the degrees")
      ->capture_default_str();
  sub->add_flag("--no-permute", state->no_permute, "Keep R-MAT's ids (degree then falls with the id)");
  AddOption(sub, "--features", &o.feature_dim, "Standard-normal feature dimension (0 = none)")->capture_default_str();
  AddOption(sub, "--classes", &o.num_classes, "Uniform random labels over this many classes, with a split (0 = none)")
      ->capture_default_str();
  SetAction(sub, [state, sub] { RunRmat(*state, *sub); });
}

}  // namespace

void RegisterGenerate(CLI::App& app) {
  CLI::App* group = GroupCommand(app, "generate", "Make a synthetic dataset (CSBM or R-MAT) in the native format");
  RegisterCsbm(group);
  RegisterRmat(group);
}

}  // namespace tessel::tools
