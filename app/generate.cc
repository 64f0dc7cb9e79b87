#include "app/generate.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/log.h"
#include "core/parallel.h"
#include "datasets/native_format.h"
#include "datasets/split.h"
#include "datasets/stats.h"

namespace tessel::app {
namespace {

namespace ds = datasets;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Fails before any work when the output cannot be written (exists without --force, or is not a dataset).
void CheckOutput(const GenerateCommon& c) { ds::CheckOutputFolder(c.output, ds::WriteOptions{.overwrite = c.force}); }

// Writes `data`, then reports on the log; returns the --json summary ("" without --json). `extra` holds
// generator-specific fields (drawn edges, homophily, ...).
std::string WriteAndReport(const ds::NodeDataset& data, const GenerateCommon& c, double generate_s,
                           const ds::BuildStats& build, nlohmann::ordered_json extra) {
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
  return c.json ? j.dump(2) + "\n" : std::string();
}

}  // namespace

std::string GenerateCsbm(const GenerateCsbmOptions& options) {
  ds::CsbmOptions o = options.csbm;
  o.seed = options.common.seed;
  o.split = ds::ParseSplitFractions(options.common.split);
  ds::ValidateCsbmOptions(o);
  CheckOutput(options.common);
  ThreadLimit limit(options.common.threads.threads);
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
  return WriteAndReport(data, options.common, generate_s, details.build, std::move(extra));
}

std::string GenerateRmat(const GenerateRmatOptions& options) {
  const Given& given = options.given;
  // --nodes and --scale both say how many nodes, --edges and --edge-factor how many edges: one of each.
  TESSEL_CHECK(!(given("nodes") && given("scale")),
               "--nodes {} and --scale {} both give the node count; give one (--nodes for any count, --scale for "
               "2^scale)",
               options.rmat.num_nodes, options.scale);
  TESSEL_CHECK(!(given("edges") && given("edge_factor")),
               "--edges {} and --edge-factor {} both give the edges drawn; give one (--edges for a count, "
               "--edge-factor for edges per node)",
               options.rmat.num_edges, options.edge_factor);
  ds::RmatOptions o = options.rmat;
  if (!given("nodes")) {
    TESSEL_CHECK(options.scale >= 1 && options.scale <= 62, "--scale must be in [1, 62], got {}", options.scale);
    o.num_nodes = int64_t{1} << options.scale;
    o.nodes_given_as = fmt::format("--scale {}", options.scale);  // messages name the option the user gave
  }
  if (!given("edges")) {
    const double m = options.edge_factor * static_cast<double>(o.num_nodes);
    TESSEL_CHECK(std::isfinite(options.edge_factor) && options.edge_factor > 0 && m < 9e18,
                 "--edge-factor must be > 0 with nodes x edge-factor below 2^63, got {}", options.edge_factor);
    o.num_edges = std::llround(m);
    o.edges_given_as = fmt::format("--edge-factor {}", options.edge_factor);
  }
  o.permute = !options.no_permute;
  o.seed = options.common.seed;
  o.split = ds::ParseSplitFractions(options.common.split);
  ds::ValidateRmatOptions(o);
  CheckOutput(options.common);
  ThreadLimit limit(options.common.threads.threads);
  log::Info("rmat: {} nodes, {} edges drawn, a={} b={} c={} d={}, noise {}, seed {}", o.num_nodes, o.num_edges, o.a,
            o.b, o.c, o.d, o.noise, o.seed);
  const auto t0 = std::chrono::steady_clock::now();
  ds::BuildStats build;
  const ds::NodeDataset data = ds::GenerateRmat(o, &build);
  const double generate_s = Seconds(t0);
  return WriteAndReport(data, options.common, generate_s, build, nlohmann::ordered_json::object());
}

}  // namespace tessel::app
