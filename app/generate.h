// `tessel generate csbm|rmat`: synthetic node datasets (datasets/generators.h) written in the native format. Every
// option declared once here: GenerateCommon holds those both generators share, each generator's options struct
// lists it first and then its own.
#pragma once

#include <cstdint>
#include <string>

#include "app/given.h"
#include "app/run_options.h"
#include "core/params.h"
#include "datasets/generators.h"

namespace tessel::app {

// The options every generator shares.
struct GenerateCommon {
  std::string output;
  bool force = false;
  uint64_t seed = 1;
  std::string split = "0.6,0.2,0.2";
  ThreadOptions threads;
  bool json = false;

  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(ParamInfo{"output", "Dataset folder to write (native format)"}.Flags("--output,-o").Required(), c.output);
    v(ParamInfo{"force", "Replace an existing tessel dataset folder (never another folder or file, or a device)"},
      c.force);
    v(ParamInfo{"seed", "Seed of every random draw (same seed, same dataset)"}, c.seed);
    v(ParamInfo{"split", "Train,val,test fractions of the labelled nodes, summing to 1"}, c.split);
    ThreadOptions::Params(c.threads, v);
    v(ParamInfo{"json", "Print a JSON summary on stdout"}.Cli(), c.json);
  }
};

// `tessel generate csbm`: contextual stochastic block model.
struct GenerateCsbmOptions {
  GenerateCommon common;
  datasets::CsbmOptions csbm;  // its seed and split come from `common`
  Given given;

  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    GenerateCommon::Params(c.common, v);
    v(ParamInfo{"nodes", "Number of nodes"}.Flags("--nodes,-n"), c.csbm.num_nodes);
    v(ParamInfo{"classes", "Number of classes (= communities), 2..nodes"}, c.csbm.num_classes);
    v(ParamInfo{"avg_degree", "Target mean degree; nodes * avg-degree / 2 edges are drawn"}, c.csbm.avg_degree);
    v(ParamInfo{"homophily", "Probability that an edge stays inside its source's class, 0..1"}, c.csbm.homophily);
    v(ParamInfo{"degree_exponent", "Power-law exponent of the degrees (> 2, e.g. 2.5); 0 = no degree correction"},
      c.csbm.degree_exponent);
    v(ParamInfo{"class_concentration", "Dirichlet concentration of the class sizes (small = unequal); 0 = equal sizes"},
      c.csbm.class_concentration);
    v(ParamInfo{"features", "Feature dimension (0 = none)"}, c.csbm.feature_dim);
    v(ParamInfo{"signal", "Length of each class mean vector"}, c.csbm.signal);
    v(ParamInfo{"noise", "Standard deviation of the Gaussian feature noise"}, c.csbm.noise);
  }
};

// R-MAT's options with the node and edge counts of the default --scale 16 and --edge-factor 16.
inline datasets::RmatOptions DefaultRmat() {
  datasets::RmatOptions o;
  o.num_nodes = int64_t{1} << 16;
  o.num_edges = int64_t{16} << 16;
  return o;
}

// `tessel generate rmat`: R-MAT power-law graph. The node count is 2^scale unless --nodes is given, the edges drawn
// nodes x edge-factor unless --edges is given (given: which of them the caller gave).
struct GenerateRmatOptions {
  GenerateCommon common;
  int scale = 16;
  double edge_factor = 16;
  // Its seed and split come from `common`; nodes and edges shown as what the default scale and edge factor give.
  datasets::RmatOptions rmat = DefaultRmat();
  bool no_permute = false;
  Given given;

  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    GenerateCommon::Params(c.common, v);
    v(ParamInfo{"scale", "2^scale nodes (unless --nodes is given)"}.Range(1, 62), c.scale);
    v(ParamInfo{"edge_factor", "Edges drawn per node (unless --edges is given)"}, c.edge_factor);
    v(ParamInfo{"nodes", "Number of nodes (any count >= 2) instead of --scale"}.Flags("--nodes,-n"), c.rmat.num_nodes);
    v(ParamInfo{"edges", "Number of edges drawn, before dedupe, instead of --edge-factor"}.Flags("--edges,-m"),
      c.rmat.num_edges);
    v(ParamInfo{"a", "Probability of the top-left quadrant"}.Flags("-a"), c.rmat.a);
    v(ParamInfo{"b", "Probability of the top-right quadrant"}.Flags("-b"), c.rmat.b);
    v(ParamInfo{"c", "Probability of the bottom-left quadrant"}.Flags("-c"), c.rmat.c);
    v(ParamInfo{"d", "Probability of the bottom-right quadrant; a + b + c + d = 1"}.Flags("-d"), c.rmat.d);
    v(ParamInfo{"noise", "Per-level noise (NSKG), 0..min(b, c, (a+d)/2); smooths the degrees"}, c.rmat.noise);
    v(ParamInfo{"no_permute", "Keep R-MAT's ids (degree then falls with the id)"}, c.no_permute);
    v(ParamInfo{"features", "Standard-normal feature dimension (0 = none)"}, c.rmat.feature_dim);
    v(ParamInfo{"classes", "Uniform random labels over this many classes, with a split (0 = none)"},
      c.rmat.num_classes);
  }
};

// Each generates, writes the dataset folder and logs what it drew and kept; returns what the command prints on
// stdout: with --json the summary (edges drawn and kept, degrees, timings, ...), else nothing.
std::string GenerateCsbm(const GenerateCsbmOptions& options);
std::string GenerateRmat(const GenerateRmatOptions& options);

}  // namespace tessel::app
