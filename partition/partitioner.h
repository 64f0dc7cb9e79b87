// Partitioners: METIS (multi-constraint k-way or recursive bisection), random and hash, each turning a node
// dataset into an assignment vector node -> part. Options are explicit so the same inputs give the same parts.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/rng.h"
#include "datasets/dataset.h"

namespace tessel::partition {

// metis: METIS_PartGraphKway / METIS_PartGraphRecursive (Karypis & Kumar 1998) with balance constraints.
// random: a seeded random permutation dealt round-robin (node counts equal to within one).
// hash: part = Mix64(node id) mod K, computable by anyone from the id alone; the seed is not used.
// file: the parts given in a text file (PartitionOptions::assignment_file, ReadAssignmentFile), e.g. another
//   system's partition (DistDGL's), so the same parts can be compared across engines; one process only.
enum class Method { kMetis, kRandom, kHash, kFile };
// What METIS minimises: the edge cut or the total communication volume (k-way only).
enum class Objective { kCut, kVolume };
// Balance constraints (METIS vertex weights): 1 per node, the node's degree, 1 per training node (DistDGL).
enum class Constraint { kNodes, kEdges, kTrain };
// auto: for K <= kRecursiveMaxParts with the cut objective recursive bisection (with several balance constraints,
// both it and k-way, keeping k-way's parts where they cut 5% less), else k-way.
enum class MetisAlgorithm { kAuto, kKway, kRecursive };

inline constexpr int32_t kRecursiveMaxParts = 8;

// How `mpirun -np K tessel partition --method metis` assigns parts (partition/dist_coarsen.cc):
// coarsen (the default): the ranks cluster all rows together by size-constrained label propagation over every edge
//   (multilevel, distributed), the cluster graph (at most a share of the block's entries, or a million) is
//   partitioned by serial METIS on rank 0, projected back and refined by distributed label propagation: memory
//   bounded by the rank's share of the graph, any communicator, deterministic (issue 51).
// parmetis: ParMETIS_V3_PartKway of PT-Scotch on the whole graph (MPI only; about 290 bytes per adjacency entry).
enum class DistAlgorithm { kCoarsen, kParMetis };
std::string_view DistAlgorithmName(DistAlgorithm algorithm);
DistAlgorithm ParseDistAlgorithm(std::string_view name);

std::string_view MethodName(Method method);
std::string_view ObjectiveName(Objective objective);
std::string_view ConstraintName(Constraint constraint);
std::string_view MetisAlgorithmName(MetisAlgorithm algorithm);
// Parsers throw tessel::Error naming the accepted values.
Method ParseMethod(std::string_view name);
Objective ParseObjective(std::string_view name);
MetisAlgorithm ParseMetisAlgorithm(std::string_view name);
// "nodes,edges,train" (any non-empty subset, no repeats) -> constraints in the given order.
std::vector<Constraint> ParseBalance(std::string_view list);
std::string BalanceString(const std::vector<Constraint>& balance);

struct PartitionOptions {
  Method method = Method::kMetis;
  int32_t num_parts = 2;
  // Empty: nodes and edges, plus train when the dataset has a training split (DistDGL's choice).
  std::vector<Constraint> balance;
  Objective objective = Objective::kCut;
  MetisAlgorithm metis_algorithm = MetisAlgorithm::kAuto;
  uint64_t seed = 0;
  double imbalance = 1.05;  // largest allowed part weight / average part weight, per constraint (METIS ubvec)
  DistAlgorithm dist_algorithm = DistAlgorithm::kCoarsen;  // distributed runs only
  std::string assignment_file;                             // Method::kFile only: one part id per node, in node order
};

// Checks the options against the dataset: 1 <= K <= nodes, imbalance in (1, 3], train balance only with a
// training split, --assignment with --method file and only then. Throws tessel::Error saying what is wrong and how
// to fix it.
void ValidateOptions(const datasets::NodeDataset& data, const PartitionOptions& options);
// The part of ValidateOptions that needs no dataset: --assignment given with --method file and only then, and a
// file. Lets a command refuse before it loads the dataset.
void CheckAssignmentOption(const PartitionOptions& options);
// The balance list actually used: the default filled in, and for METIS without constraints whose total weight
// is zero (edges of an edgeless graph), which METIS cannot balance.
std::vector<Constraint> ResolveBalance(const datasets::NodeDataset& data, const PartitionOptions& options);

struct Assignment {
  std::vector<int32_t> part;  // node -> part in [0, K)
  std::vector<Constraint> balance;
  std::string algorithm;         // "kway", "recursive", "random", "hash", "file" or "single" (K = 1, not file)
  int64_t metis_objective = -1;  // METIS's own edge cut or volume; -1 when METIS did not run
  int8_t symmetric = -1;         // 1/0 when METIS checked the graph's symmetry, -1 when nobody did
  double prepare_seconds = 0;    // building METIS's input (symmetrise, weights, idx_t copies)
  double metis_seconds = 0;      // inside METIS_PartGraph* only (wall clock)
  double metis_cpu_seconds = 0;  // process CPU time inside METIS (METIS is serial: its own CPU time)
};

// The hash method's part of a node: SplitMix64(node id) mod K, computable by anyone from the id alone.
inline int32_t HashPart(int64_t node, int32_t num_parts) {
  return static_cast<int32_t>(Mix64(static_cast<uint64_t>(node)) % static_cast<uint64_t>(num_parts));
}

// Reads an assignment file: exactly `num_nodes` lines, line i+1 holding node i's part, an integer in [0, K), every
// part holding at least one node (a trailing newline and '\r\n' line ends are accepted; nothing else). Throws
// tessel::Error naming the file, the line and the fix.
std::vector<int32_t> ReadAssignmentFile(const std::string& path, int64_t num_nodes, int32_t num_parts);

// Validates the options and computes the assignment. Deterministic: equal inputs give equal results. Throws when a
// part gets no node (CheckNoEmptyPart).
Assignment ComputeAssignment(const datasets::NodeDataset& data, const PartitionOptions& options);

// Throws tessel::Error when a part holds no node (each part is a training rank's; METIS and the hash leave parts
// empty when K nears the node count), naming how many and the fix.
void CheckNoEmptyPart(std::span<const int64_t> nodes_per_part, Method method);

// Vertex weights of one constraint for every node (1, out-degree, or 1 for training nodes).
std::vector<int64_t> ConstraintWeights(const datasets::NodeDataset& data, Constraint constraint);

}  // namespace tessel::partition
