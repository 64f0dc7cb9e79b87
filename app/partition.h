// `tessel partition DATASET --parts K --output DIR` and `tessel.partition`: METIS, random, hash or given (--method
// file --assignment FILE) partitions of a node dataset written as a partition folder (partition/partition_format.h);
// prints the statistics (text, or JSON with --json) and timings. Under `mpirun -np K` (K > 1) the ranks partition
// together, each reading only a block of the dataset (partition/dist_partition.h). Every option declared once here.
#pragma once

#include <cstdint>
#include <string>

#include "app/given.h"
#include "app/run_options.h"
#include "datasets/dataset.h"
#include "partition/partition_format.h"

namespace tessel::app {

struct PartitionOptions {
  std::string dataset;
  int32_t parts = 0;
  std::string output;
  std::string method = "metis";
  std::string assignment;
  std::string balance = "auto";
  std::string objective = "cut";
  std::string metis_algorithm = "auto";
  uint64_t seed = 0;
  double imbalance = 1.05;
  std::string dist_partitioner = "coarsen";
  bool force = false;
  ThreadOptions threads;
  bool json = false;
  Given given;

  template <typename Self, typename V>
  static void Params(Self& c, V&& v) {
    v(ParamInfo{"dataset", "Native node dataset folder (from tessel convert or tessel generate)"}
          .Flags("dataset")
          .Cli()
          .Required(),
      c.dataset);
    v(ParamInfo{"parts", "Number of parts K, 1..nodes (one per training rank)"}.Flags("--parts,-k").Required().Range(1),
      c.parts);
    v(ParamInfo{"output", "Partition folder to write"}.Flags("--output,-o").Required(), c.output);
    v(ParamInfo{"method",
                "metis, random (balanced random; one process only), hash (hash of the node id) or file (the parts "
                "in --assignment; one process only)"},
      c.method);
    v(ParamInfo{"assignment",
                "With --method file: a text file of one part id in [0, K) per node, in node order (node 0 on line 1), "
                "every part used, e.g. DistDGL's node map"},
      c.assignment);
    v(ParamInfo{"balance",
                "METIS balance constraints, a comma list of nodes, edges, train; auto = nodes,edges plus train when "
                "the dataset has a training split. Under mpirun one constraint (auto = nodes)"},
      c.balance);
    v(ParamInfo{"objective", "What METIS minimises: cut (edge cut) or vol (communication volume)"}, c.objective);
    v(ParamInfo{"metis_algorithm",
                "auto (K <= 8 with the cut objective: recursive bisection, with several balance constraints k-way "
                "instead where it cuts 5% less; else k-way), kway or recursive"},
      c.metis_algorithm);
    v(ParamInfo{"seed", "Seed of METIS and of --method random (same seed, same files)"}, c.seed);
    v(ParamInfo{"imbalance", "Largest allowed part weight / average, per balance constraint, in (1, 3]"}, c.imbalance);
    v(ParamInfo{"dist_partitioner",
                "Under mpirun with --method metis: coarsen (the ranks cluster the rows by label propagation over every "
                "edge, METIS on rank 0 partitions the small cluster graph, label propagation refines; memory bounded "
                "by the rank's share of the graph) or parmetis (PT-Scotch's ParMETIS_V3_PartKway; about 290 bytes "
                "per adjacency entry), docs/partition.md"},
      c.dist_partitioner);
    v(ParamInfo{"force",
                "Replace an existing partition folder (never another folder or file, a device, or the input "
                "dataset)"},
      c.force);
    ThreadOptions::Params(c.threads, v);
    v(ParamInfo{"json", "Print the statistics, timings and peak memory as JSON on stdout"}.Cli(), c.json);
  }
};

// Partitions `data` (held by the caller) into the --output folder.
partition::PartitionResult PartitionData(const PartitionOptions& options, const datasets::NodeDataset& data);

// `tessel partition`: one process, or every rank of an mpirun job; rank 0 prints the statistics to `say`.
void Partition(const PartitionOptions& options, const Printer& say);

// `tessel info PARTITION_DIR`: the statistics of partitions.json, and with `verify` every part loaded with its
// checksums and structure checked (throws naming the first part that failed).
void PartitionInfo(const std::string& path, bool json, bool verify, const Printer& say);

}  // namespace tessel::app
