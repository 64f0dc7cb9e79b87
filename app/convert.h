// `tessel convert --from FORMAT INPUT --output DIR`: a raw dataset (edge list, METIS, LINQS, node table, OGB,
// LIBSVM, IDX images) to a native dataset folder, with an optional seeded random split. Every option declared once
// here and checked up front, before the input is read.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "app/given.h"
#include "core/params.h"

namespace tessel::app {

struct ConvertOptions {
  std::string from;  // edgelist, metis, linqs, nodetable, ogb, libsvm or idx
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
  std::string edges;
  std::string features;
  std::string labels;
  std::string positive;  // LABEL,LABEL,...: a binary task (+1 for these classes, -1 for the rest)
  std::string negative;  // LABEL,...: -1 for these classes only, rows of other classes dropped
  std::string train;
  std::string val;
  std::string test;
  std::string ogb_split;
  int64_t num_features = -1;  // -1: the largest index
  Given given;

  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(ParamInfo{"from", "Input format: edgelist, metis, linqs, nodetable, ogb, libsvm or idx"}.Required(), c.from);
    v(ParamInfo{"input",
                "INPUT: a file (edgelist, metis, libsvm; idx: the images file, with --labels), a prefix or folder "
                "(linqs: PREFIX.content + PREFIX.cites), a prefix (nodetable: PREFIX.edges.txt, ...) or a folder (ogb)"}
          .Flags("input")
          .Required(),
      c.input);
    v(ParamInfo{"output", "Dataset folder to write"}.Flags("--output,-o").Required(), c.output);
    v(ParamInfo{"force",
                "Replace an existing tessel dataset folder (never another folder or file, a device, or an input of the "
                "run)"},
      c.force);
    v(ParamInfo{"name", "Dataset name stored in the manifest (default: from the input name)"}, c.name);
    v(ParamInfo{"split", "Random train,val,test fractions of the labelled nodes, e.g. 0.6,0.2,0.2"}, c.split);
    v(ParamInfo{"resplit", "With --split: replace the split the input already has"}, c.resplit);
    v(ParamInfo{"seed", "Seed of the random split"}, c.seed);
    v(ParamInfo{"directed", "Keep edge directions (default: symmetrise)"}, c.directed);
    v(ParamInfo{"keep_self_loops", "Keep (u, u) edges (default: drop them)"}, c.keep_self_loops);
    v(ParamInfo{"one_based", "Edge-list ids start at 1"}, c.one_based);
    v(ParamInfo{"weighted", "The edge list has a third column of weights"}, c.weighted);
    v(ParamInfo{"delimiter",
                "Edge-list field separator: one character, 'tab' or 'space' (default: comma if the first line has "
                "one, else whitespace)"},
      c.delimiter);
    v(ParamInfo{"edges", "nodetable: the edges file (instead of PREFIX.edges.txt)"}, c.edges);
    v(ParamInfo{"features", "nodetable: the features file (instead of PREFIX.features.txt)"}, c.features);
    v(ParamInfo{"labels",
                "nodetable: the labels file (instead of PREFIX.labels.txt); idx: the labels file of the images"},
      c.labels);
    v(ParamInfo{"positive", "libsvm, idx: a binary task, +1 for these class labels and -1 for the rest (e.g. 0,2,4,6)"},
      c.positive);
    v(ParamInfo{"negative",
                "libsvm, idx: with --positive, -1 for these class labels only; rows of other classes are dropped"},
      c.negative);
    v(ParamInfo{"train", "nodetable: the train list (instead of PREFIX.train.txt)"}, c.train);
    v(ParamInfo{"val", "nodetable: the validation list (instead of PREFIX.val.txt)"}, c.val);
    v(ParamInfo{"test", "nodetable: the test list (instead of PREFIX.test.txt)"}, c.test);
    v(ParamInfo{"ogb_split", "ogb: the folder under split/ (default: the only one)"}, c.ogb_split);
    v(ParamInfo{"num_features", "libsvm: number of features (default: -1, the largest index)"}.Range(
          1, std::numeric_limits<int32_t>::max()),
      c.num_features);
  }
};

// Reads, optionally splits and writes the dataset (progress on the log); returns the summary the command prints
// (what was converted, its size, features, classes and split).
std::string Convert(const ConvertOptions& options);

}  // namespace tessel::app
