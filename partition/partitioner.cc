// Partitioner front end: option names and validation, balance constraints, and the random and hash baselines;
// METIS itself is in metis_partitioner.cc.
#include "partition/partitioner.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <numeric>
#include <optional>
#include <variant>

#include "core/error.h"
#include "core/file_io.h"
#include "core/name_table.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "partition/metis_partitioner.h"

namespace tessel::partition {
namespace {

constexpr uint64_t kRandomPartitionPurpose = 0x7061727469746e31ULL;  // "partitn1": the stream of --method random

// Each option's names, indexed by the enumeration's value (every one of these enumerations counts from 0).
constexpr std::array<std::string_view, 4> kMethodNames{"metis", "random", "hash", "file"};
constexpr std::array<std::string_view, 2> kObjectiveNames{"cut", "vol"};
constexpr std::array<std::string_view, 3> kConstraintNames{"nodes", "edges", "train"};
constexpr std::array<std::string_view, 3> kAlgorithmNames{"auto", "kway", "recursive"};
constexpr std::array<std::string_view, 2> kDistAlgorithmNames{"coarsen", "parmetis"};
static_assert(kMethodNames.size() == static_cast<size_t>(Method::kFile) + 1);
static_assert(kObjectiveNames.size() == static_cast<size_t>(Objective::kVolume) + 1);
static_assert(kConstraintNames.size() == static_cast<size_t>(Constraint::kTrain) + 1);
static_assert(kAlgorithmNames.size() == static_cast<size_t>(MetisAlgorithm::kRecursive) + 1);

template <typename E, size_t N>
E ParseName(std::string_view name, const std::array<std::string_view, N>& names, std::string_view what) {
  if (const std::optional<E> v = ValueNamed<E>(names, name)) return *v;
  std::string accepted;
  for (const std::string_view n : names) {
    if (!accepted.empty()) accepted += ", ";
    accepted += n;
  }
  throw Error(fmt::format("unknown {} '{}'; accepted: {}", what, name, accepted));
}

// Random permutation (Fisher-Yates on one seeded stream) dealt round-robin: part sizes differ by at most one.
std::vector<int32_t> RandomAssignment(int64_t n, int32_t k, uint64_t seed) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  Rng rng(StreamKey{.seed = seed, .purpose = kRandomPartitionPurpose});
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(i) + 1));
    std::swap(order[i], order[j]);
  }
  std::vector<int32_t> part(static_cast<size_t>(n));
  parallel_for<int64_t>(0, n, 1 << 16, [&](int64_t i) { part[order[i]] = static_cast<int32_t>(i % k); });
  return part;
}

std::vector<int32_t> HashAssignment(int64_t n, int32_t k) {
  std::vector<int32_t> part(static_cast<size_t>(n));
  parallel_for<int64_t>(0, n, 1 << 16, [&](int64_t u) { part[u] = HashPart(u, k); });
  return part;
}

constexpr std::string_view kAssignmentFormat = "write one part id per node, in node order (node 0 on line 1)";

}  // namespace

std::vector<int32_t> ReadAssignmentFile(const std::string& path, int64_t num_nodes, int32_t num_parts) {
  CheckInputIsFile(path, "--assignment");
  const std::string text = ReadFileToString(path);
  std::vector<int32_t> part(static_cast<size_t>(num_nodes));
  std::vector<int64_t> count(static_cast<size_t>(num_parts), 0);
  size_t pos = 0;
  int64_t line = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view item(text.data() + pos, end - pos);
    if (!item.empty() && item.back() == '\r') item.remove_suffix(1);
    ++line;
    if (line > num_nodes) {
      throw Error::AtLine(path, line,
                          fmt::format("more lines than the dataset's {} nodes; {}", num_nodes, kAssignmentFormat));
    }
    int64_t p = -1;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), p);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size()) {
      throw Error::AtLine(path, line,
                          fmt::format("'{}' is not a part id (an integer in [0, {})); {}", item.substr(0, 40),
                                      num_parts, kAssignmentFormat));
    }
    if (p < 0) {
      throw Error::AtLine(path, line,
                          fmt::format("part {} of node {} is negative; part ids are 0 .. {} (--parts {})", p, line - 1,
                                      num_parts - 1, num_parts));
    }
    if (p >= num_parts) {
      throw Error::AtLine(path, line,
                          fmt::format("part {} of node {} is outside [0, {}); pass --parts {} or more, or "
                                      "number the parts from 0",
                                      p, line - 1, num_parts, p + 1));
    }
    part[static_cast<size_t>(line - 1)] = static_cast<int32_t>(p);
    ++count[static_cast<size_t>(p)];
    pos = end + 1;
  }
  if (line < num_nodes) {
    throw Error::InFile(path,
                        fmt::format("{} lines for the dataset's {} nodes; {}", line, num_nodes, kAssignmentFormat));
  }
  for (int32_t p = 0; p < num_parts; ++p) {
    if (count[static_cast<size_t>(p)] == 0) {
      throw Error::InFile(path, fmt::format("part {} of --parts {} has no node; every part needs one: pass the "
                                            "number of parts the file uses, numbered 0..K-1 without gaps",
                                            p, num_parts));
    }
  }
  return part;
}

std::string_view MethodName(Method method) { return NameAt(kMethodNames, method, "unknown"); }
std::string_view ObjectiveName(Objective objective) { return NameAt(kObjectiveNames, objective, "unknown"); }
std::string_view ConstraintName(Constraint constraint) { return NameAt(kConstraintNames, constraint, "unknown"); }
std::string_view MetisAlgorithmName(MetisAlgorithm algorithm) { return NameAt(kAlgorithmNames, algorithm, "unknown"); }

Method ParseMethod(std::string_view name) { return ParseName<Method>(name, kMethodNames, "partition method"); }
Objective ParseObjective(std::string_view name) {
  return ParseName<Objective>(name, kObjectiveNames, "METIS objective");
}
MetisAlgorithm ParseMetisAlgorithm(std::string_view name) {
  return ParseName<MetisAlgorithm>(name, kAlgorithmNames, "METIS algorithm");
}
std::string_view DistAlgorithmName(DistAlgorithm algorithm) {
  return NameAt(kDistAlgorithmNames, algorithm, "unknown");
}
DistAlgorithm ParseDistAlgorithm(std::string_view name) {
  return ParseName<DistAlgorithm>(name, kDistAlgorithmNames, "distributed partitioner");
}

std::vector<Constraint> ParseBalance(std::string_view list) {
  std::vector<Constraint> out;
  size_t pos = 0;
  while (pos <= list.size()) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    const std::string_view item = list.substr(pos, comma - pos);
    TESSEL_CHECK(!item.empty(), "balance list '{}' has an empty item; write e.g. nodes,edges,train", list);
    const Constraint c = ParseName<Constraint>(item, kConstraintNames, "balance constraint");
    TESSEL_CHECK(std::find(out.begin(), out.end(), c) == out.end(), "balance list '{}' names '{}' twice", list, item);
    out.push_back(c);
    pos = comma + 1;
  }
  return out;
}

std::string BalanceString(const std::vector<Constraint>& balance) {
  std::string s;
  for (Constraint c : balance) {
    if (!s.empty()) s += ',';
    s += ConstraintName(c);
  }
  return s;
}

void CheckAssignmentOption(const PartitionOptions& options) {
  TESSEL_CHECK(options.method != Method::kFile || !options.assignment_file.empty(),
               "--method file needs --assignment FILE: one part id per node, in node order");
  TESSEL_CHECK(options.method == Method::kFile || options.assignment_file.empty(),
               "--assignment {} is read only with --method file; add --method file or drop --assignment",
               options.assignment_file);
  if (options.method == Method::kFile) CheckInputIsFile(options.assignment_file, "--assignment");
}

void ValidateOptions(const datasets::NodeDataset& data, const PartitionOptions& options) {
  const int64_t n = data.num_nodes();
  TESSEL_CHECK(options.num_parts >= 1, "--parts is {}; it must be at least 1", options.num_parts);
  TESSEL_CHECK(options.num_parts <= n, "--parts is {} but the dataset has only {} nodes; use at most {} parts",
               options.num_parts, n, n);
  TESSEL_CHECK(options.imbalance > 1.0 && options.imbalance <= 3.0,
               "--imbalance is {}; it must be in (1, 3] (1.05 allows parts 5% above the average)", options.imbalance);
  const bool wants_train =
      std::find(options.balance.begin(), options.balance.end(), Constraint::kTrain) != options.balance.end();
  TESSEL_CHECK(!wants_train || !data.train.empty(),
               "--balance train: dataset '{}' has no training split; drop 'train' from --balance or convert the "
               "dataset with a split",
               data.name);
  TESSEL_CHECK(!(options.method == Method::kMetis && options.objective == Objective::kVolume &&
                 options.metis_algorithm == MetisAlgorithm::kRecursive),
               "--objective vol needs METIS k-way; use --metis-algorithm kway (or auto)");
  CheckAssignmentOption(options);
}

std::vector<int64_t> ConstraintWeights(const datasets::NodeDataset& data, Constraint constraint) {
  const int64_t n = data.num_nodes();
  std::vector<int64_t> w(static_cast<size_t>(n), constraint == Constraint::kNodes ? 1 : 0);
  if (constraint == Constraint::kEdges) {
    std::visit(
        [&](const auto& g) {
          auto p = g.indptr().Host();
          parallel_for<int64_t>(0, n, 1 << 16, [&](int64_t u) { w[u] = p[u + 1] - p[u]; });
        },
        data.graph);
  } else if (constraint == Constraint::kTrain) {
    for (int64_t u : data.train.Host()) w[u] = 1;
  }
  return w;
}

std::vector<Constraint> ResolveBalance(const datasets::NodeDataset& data, const PartitionOptions& options) {
  std::vector<Constraint> balance = options.balance;
  if (balance.empty()) {
    balance = {Constraint::kNodes, Constraint::kEdges};
    if (!data.train.empty()) balance.push_back(Constraint::kTrain);
  }
  if (options.method == Method::kMetis) {
    // METIS divides by each constraint's total weight: leave out the ones that are zero everywhere.
    std::erase_if(balance, [&](Constraint c) {
      return (c == Constraint::kEdges && datasets::NumEntries(data.graph) == 0) ||
             (c == Constraint::kTrain && data.train.empty());
    });
    if (balance.empty()) balance = {Constraint::kNodes};
  }
  return balance;
}

Assignment ComputeAssignment(const datasets::NodeDataset& data, const PartitionOptions& options) {
  ValidateOptions(data, options);
  const int64_t n = data.num_nodes();
  const int32_t k = options.num_parts;
  Assignment out;
  out.balance = ResolveBalance(data, options);
  if (options.method == Method::kFile) {  // checked even for K = 1
    out.part = ReadAssignmentFile(options.assignment_file, n, k);
    out.algorithm = "file";
    return out;
  }
  if (k == 1) {
    out.part.assign(static_cast<size_t>(n), 0);
    out.algorithm = "single";
    return out;
  }
  switch (options.method) {
    case Method::kMetis:
      out = detail::MetisAssignment(data, options, out.balance);
      break;
    case Method::kRandom:
      out.part = RandomAssignment(n, k, options.seed);
      out.algorithm = "random";
      break;
    case Method::kHash:
      out.part = HashAssignment(n, k);
      out.algorithm = "hash";
      break;
    case Method::kFile:
      break;  // read above
  }
  std::vector<int64_t> nodes_per_part(static_cast<size_t>(k), 0);
  for (const int32_t p : out.part) {
    if (p >= 0 && p < k) ++nodes_per_part[static_cast<size_t>(p)];
  }
  CheckNoEmptyPart(nodes_per_part, options.method);
  return out;
}

void CheckNoEmptyPart(std::span<const int64_t> nodes_per_part, Method method) {
  const auto empty = std::count(nodes_per_part.begin(), nodes_per_part.end(), 0);
  if (empty == 0) return;
  // Each part is a training rank's: an empty one has nothing to train on. --method file refuses the same.
  throw Error(
      fmt::format("--parts {}: {} of the parts got no node ({} nodes, --method {}); every part needs one, as "
                  "each is a training rank's: use fewer parts (a few nodes per part at the least)",
                  nodes_per_part.size(), empty,
                  std::accumulate(nodes_per_part.begin(), nodes_per_part.end(), int64_t{0}), MethodName(method)));
}

}  // namespace tessel::partition
