// Graph partitioning with METIS 5 (Karypis & Kumar, "A Fast and High Quality Multilevel Scheme for Partitioning
// Irregular Graphs", SIAM J. Sci. Comput. 1998; multi-constraint: "Multilevel Algorithms for Multi-Constraint
// Graph Partitioning", SC 1998). Problem: split the nodes into K parts of (per constraint) equal vertex weight
// while minimising the edge cut or the communication volume. Encoding: METIS's CSR (xadj/adjncy in idx_t) of the
// symmetrised graph without self-loops, ncon interleaved vertex weights per node, ubvec = the allowed imbalance.
// Follows DGL src/graph/metis_partition.cc; this is the only file that includes metis.h.
#include "partition/metis_partitioner.h"

#include <metis.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <limits>
#include <utility>
#include <variant>

#include "core/build_config.h"
#include "core/error.h"
#include "core/log.h"
#include "core/parallel.h"
#include "datasets/graph_builder.h"
#include "partition/partition_stats.h"

namespace tessel::partition::detail {
namespace {

static_assert(sizeof(idx_t) * 8 == TESSEL_METIS_IDX_WIDTH, "metis.h disagrees with the IDXTYPEWIDTH CMake found");
static_assert(sizeof(idx_t) == 4 || sizeof(idx_t) == 8, "METIS idx_t must be 32 or 64 bits");

constexpr int64_t kIdxMax = std::numeric_limits<idx_t>::max();
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

// Fails clearly when `count` does not fit METIS's idx_t.
void CheckFitsIdx(int64_t count, std::string_view what) {
  TESSEL_CHECK(count <= kIdxMax,
               "METIS cannot take this graph: {} is {}, more than its {}-bit idx_t holds ({}); partition it "
               "distributed with 64-bit ParMETIS (mpirun -np R tessel partition ..., docs/partition.md), or use "
               "--method random or hash",
               what, count, sizeof(idx_t) * 8, kIdxMax);
}

// The METIS view of a graph: symmetric, no self-loops, no duplicate entries.
struct MetisCsr {
  std::vector<idx_t> xadj;
  std::vector<idx_t> adjncy;
};

// Copies a graph that is already symmetric with sorted unique rows, dropping self-loops.
template <typename IdT>
MetisCsr CopyWithoutSelfLoops(const datasets::CsrGraph<IdT>& g) {
  const int64_t n = g.num_nodes();
  std::vector<int64_t> offsets(static_cast<size_t>(n) + 1, 0);
  parallel_for<int64_t>(0, n, 4096, [&](int64_t u) {
    int64_t count = 0;
    for (IdT v : g.Neighbors(u)) count += static_cast<int64_t>(v) != u;
    offsets[u + 1] = count;
  });
  for (int64_t u = 0; u < n; ++u) offsets[u + 1] += offsets[u];
  CheckFitsIdx(offsets[n], "the number of adjacency entries (both directions, no self-loops)");
  MetisCsr csr;
  csr.xadj.resize(static_cast<size_t>(n) + 1);
  csr.adjncy.resize(static_cast<size_t>(offsets[n]));
  parallel_for<int64_t>(0, n + 1, 1 << 16, [&](int64_t u) { csr.xadj[u] = static_cast<idx_t>(offsets[u]); });
  parallel_for<int64_t>(0, n, 4096, [&](int64_t u) {
    int64_t k = offsets[u];
    for (IdT v : g.Neighbors(u)) {
      if (static_cast<int64_t>(v) != u) csr.adjncy[k++] = static_cast<idx_t>(v);
    }
  });
  return csr;
}

template <typename IdT>
MetisCsr BuildMetisCsr(const datasets::CsrGraph<IdT>& g, bool* symmetric) {
  const auto t0 = Clock::now();
  *symmetric = StructurallySymmetric(g);
  log::Debug("partition: symmetry check {:.2f} s", Seconds(t0));
  if (*symmetric && g.RowsSortedUnique()) return CopyWithoutSelfLoops(g);
  // Directed or duplicated input: symmetrise through the one cleaning path (GraphBuilder).
  log::Info("partition: the graph is not symmetric or has repeated entries; symmetrising a copy for METIS");
  datasets::EdgeList edges;
  edges.num_nodes = g.num_nodes();
  edges.src.resize(static_cast<size_t>(g.num_entries()));
  edges.dst.resize(static_cast<size_t>(g.num_entries()));
  auto indptr = g.indptr().Host();
  parallel_for<int64_t>(0, g.num_nodes(), 4096, [&](int64_t u) {
    int64_t k = indptr[u];
    for (IdT v : g.Neighbors(u)) {
      edges.src[k] = u;
      edges.dst[k++] = static_cast<int64_t>(v);
    }
  });
  const datasets::CsrGraph64 sym = datasets::GraphBuilder(datasets::BuildOptions{}).Build<int64_t>(edges);
  return CopyWithoutSelfLoops(sym);
}

std::string MetisFailure(int status, std::string_view function, int64_t n, int64_t entries, size_t ncon,
                         int32_t parts) {
  switch (status) {
    case METIS_ERROR_INPUT:
      return fmt::format(
          "{} rejected its input (METIS_ERROR_INPUT) for {} nodes, {} adjacency entries, {} balance constraint(s) "
          "and {} parts; with several constraints on a small or skewed graph no balanced split may exist: try fewer "
          "constraints (--balance nodes), a larger --imbalance or fewer parts",
          function, n, entries, ncon, parts);
    case METIS_ERROR_MEMORY:
      return fmt::format(
          "{} ran out of memory (METIS_ERROR_MEMORY) on {} nodes and {} adjacency entries; free memory or run on a "
          "larger machine",
          function, n, entries);
    case METIS_ERROR:
      return fmt::format(
          "{} failed (METIS_ERROR: an internal error) on {} nodes, {} adjacency entries and {} parts; try another "
          "--seed or --metis-algorithm",
          function, n, entries, parts);
    default:
      return fmt::format("{} returned the unknown status {}", function, status);
  }
}

constexpr int kMaxMetisRuns = 3;

// The largest part weight / average part weight over all constraints, and the constraint where it occurs.
std::pair<double, size_t> WorstImbalance(const std::vector<idx_t>& part, const std::vector<idx_t>& vwgt, size_t ncon,
                                         int32_t k) {
  std::vector<int64_t> sums(static_cast<size_t>(k) * ncon, 0);
  std::vector<int64_t> totals(ncon, 0);
  for (size_t u = 0; u < part.size(); ++u) {
    TESSEL_CHECK(part[u] >= 0 && part[u] < k, "METIS put node {} into part {}, outside [0, {})", u,
                 static_cast<int64_t>(part[u]), k);
    for (size_t c = 0; c < ncon; ++c) {
      sums[static_cast<size_t>(part[u]) * ncon + c] += vwgt[u * ncon + c];
      totals[c] += vwgt[u * ncon + c];
    }
  }
  std::pair<double, size_t> worst{0.0, 0};
  for (size_t c = 0; c < ncon; ++c) {
    if (totals[c] == 0) continue;
    for (int32_t p = 0; p < k; ++p) {
      const double x =
          static_cast<double>(sums[static_cast<size_t>(p) * ncon + c]) * k / static_cast<double>(totals[c]);
      if (x > worst.first) worst = {x, c};
    }
  }
  return worst;
}

// One METIS algorithm's parts (its own retries included) and the time spent inside METIS.
struct MetisRun {
  std::vector<idx_t> part;
  idx_t objval = 0;
  bool balanced = true;  // every constraint within the requested imbalance
  double seconds = 0;
  double cpu_seconds = 0;
};

// METIS_PartGraphKway or METIS_PartGraphRecursive on the prepared input. METIS treats ubvec as a target, not a
// bound: when a constraint ends above the requested imbalance, run again with the tolerance halved (at most
// kMaxMetisRuns runs; each run is deterministic).
MetisRun RunMetis(MetisAlgorithm algorithm, MetisCsr& csr, std::vector<idx_t>& vwgt,
                  const std::vector<Constraint>& balance, int32_t k, const PartitionOptions& options) {
  const size_t ncon = balance.size();
  // Recursive bisection applies ubvec to every bisection, so the imbalances of the ceil(log2 K) levels
  // multiply: give each level the log2 K-th root to keep the final parts within the requested imbalance.
  double ub = options.imbalance;
  if (algorithm == MetisAlgorithm::kRecursive) {
    int levels = 0;
    while ((int64_t{1} << levels) < k) ++levels;
    ub = std::pow(ub, 1.0 / std::max(levels, 1));
  }
  std::vector<real_t> ubvec(ncon, static_cast<real_t>(ub));
  idx_t metis_options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(metis_options);
  metis_options[METIS_OPTION_SEED] = static_cast<idx_t>(options.seed % static_cast<uint64_t>(kIdxMax));
  metis_options[METIS_OPTION_OBJTYPE] = options.objective == Objective::kVolume ? METIS_OBJTYPE_VOL : METIS_OBJTYPE_CUT;
  metis_options[METIS_OPTION_NUMBERING] = 0;
  metis_options[METIS_OPTION_CONTIG] = 0;
  metis_options[METIS_OPTION_DBGLVL] = 0;

  const idx_t n = static_cast<idx_t>(csr.xadj.size() - 1);
  MetisRun r;
  r.part.assign(static_cast<size_t>(n), 0);
  idx_t nvtxs = n;
  idx_t idx_ncon = static_cast<idx_t>(ncon);
  idx_t nparts = static_cast<idx_t>(k);
  const bool kway = algorithm == MetisAlgorithm::kKway;
  const char* function = kway ? "METIS_PartGraphKway" : "METIS_PartGraphRecursive";
  log::Info("partition: {} into {} parts ({} objective, imbalance {}, seed {})", function, k,
            ObjectiveName(options.objective), options.imbalance, options.seed);
  for (int run = 1;; ++run) {
    const auto metis_start = Clock::now();
    const std::clock_t metis_cpu_start = std::clock();
    const int status =
        kway ? METIS_PartGraphKway(&nvtxs, &idx_ncon, csr.xadj.data(), csr.adjncy.data(), vwgt.data(), nullptr, nullptr,
                                   &nparts, nullptr, ubvec.data(), metis_options, &r.objval, r.part.data())
             : METIS_PartGraphRecursive(&nvtxs, &idx_ncon, csr.xadj.data(), csr.adjncy.data(), vwgt.data(), nullptr,
                                        nullptr, &nparts, nullptr, ubvec.data(), metis_options, &r.objval,
                                        r.part.data());
    r.seconds += Seconds(metis_start);
    r.cpu_seconds += static_cast<double>(std::clock() - metis_cpu_start) / CLOCKS_PER_SEC;
    if (status != METIS_OK) {
      throw Error(MetisFailure(status, function, n, static_cast<int64_t>(csr.adjncy.size()), ncon, k));
    }
    const auto [worst, c] = WorstImbalance(r.part, vwgt, ncon, k);
    if (worst <= options.imbalance + 1e-9) break;
    if (run == kMaxMetisRuns) {
      r.balanced = false;
      log::Warn("partition: METIS left '{}' at imbalance {:.4f}, above the requested {} after {} runs",
                ConstraintName(balance[c]), worst, options.imbalance, run);
      break;
    }
    log::Info("partition: METIS left '{}' at imbalance {:.4f} > {}; running again with a tighter tolerance",
              ConstraintName(balance[c]), worst, options.imbalance);
    for (real_t& u : ubvec) u = 1 + (u - 1) / 2;
  }
  log::Info("partition: {} done in {:.2f} s (objective {})", function, r.seconds, static_cast<int64_t>(r.objval));
  return r;
}

}  // namespace

Assignment MetisAssignment(const datasets::NodeDataset& data, const PartitionOptions& options,
                           const std::vector<Constraint>& balance) {
  const auto start = Clock::now();
  const int64_t n = data.num_nodes();
  CheckFitsIdx(n, "the number of nodes");
  const int32_t k = options.num_parts;
  MetisAlgorithm algorithm = options.metis_algorithm;
  // auto with several constraints, K <= kRecursiveMaxParts and the cut objective runs both algorithms (below).
  const bool both = algorithm == MetisAlgorithm::kAuto && k <= kRecursiveMaxParts &&
                    options.objective == Objective::kCut && balance.size() > 1;
  if (algorithm == MetisAlgorithm::kAuto) {
    algorithm = (k <= kRecursiveMaxParts && options.objective == Objective::kCut) ? MetisAlgorithm::kRecursive
                                                                                  : MetisAlgorithm::kKway;
  }
  TESSEL_CHECK(!(algorithm == MetisAlgorithm::kRecursive && options.objective == Objective::kVolume),
               "--objective vol needs METIS k-way; use --metis-algorithm kway (or auto)");

  log::Info("partition: building the METIS input ({} nodes, {} adjacency entries, constraints {})", n,
            datasets::NumEntries(data.graph), BalanceString(balance));
  bool symmetric = false;
  MetisCsr csr = std::visit([&](const auto& g) { return BuildMetisCsr(g, &symmetric); }, data.graph);
  log::Debug("partition: METIS adjacency ready after {:.2f} s", Seconds(start));
  const auto ncon = balance.size();
  std::vector<idx_t> vwgt(static_cast<size_t>(n) * ncon);
  for (size_t c = 0; c < ncon; ++c) {
    const std::vector<int64_t> w = ConstraintWeights(data, balance[c]);
    std::atomic<int64_t> total{0};
    parallel_for_chunks<int64_t>(0, n, 1 << 16, [&](int64_t b, int64_t e) {
      int64_t local = 0;
      for (int64_t u = b; u < e; ++u) {
        vwgt[static_cast<size_t>(u) * ncon + c] = static_cast<idx_t>(w[u]);
        local += w[u];
      }
      total += local;
    });
    CheckFitsIdx(total.load(), fmt::format("the total '{}' weight", ConstraintName(balance[c])));
  }
  log::Debug("partition: METIS vertex weights ready after {:.2f} s", Seconds(start));

  Assignment out;
  out.balance = balance;
  out.symmetric = symmetric ? 1 : 0;
  out.prepare_seconds = Seconds(start);
  MetisRun best = RunMetis(algorithm, csr, vwgt, balance, k, options);
  out.algorithm = algorithm == MetisAlgorithm::kKway ? "kway" : "recursive";
  if (both) {
    // METIS's multi-constraint bisection can cut far more than its k-way on the same input (CSBM 200k, nodes +
    // edges + train, K = 2: 576,181 edges against 211,943, and which one wins changes with the seed and the graph:
    // Facebook K = 4 cuts 13,550 against 17,050), so auto keeps the smaller cut of the two, a result within the
    // imbalance before one above it. k-way must cut kKwayMargin less to replace bisection: a near tie keeps the
    // long-standing default (Cora, K = 3: 268 against 269 edges, but with k-way's parts the training ranks take a
    // fourth step an epoch and GcnTrainerOnParts.CompressionCutsBytesAndKeepsAccuracy's run learnt 0.57, not 0.82).
    MetisRun other = RunMetis(MetisAlgorithm::kKway, csr, vwgt, balance, k, options);
    best.seconds += other.seconds;
    best.cpu_seconds += other.cpu_seconds;
    constexpr double kKwayMargin = 0.95;
    const bool better_balance = other.balanced && !best.balanced;
    const bool same_balance = other.balanced == best.balanced;
    if (better_balance ||
        (same_balance && static_cast<double>(other.objval) < kKwayMargin * static_cast<double>(best.objval))) {
      other.seconds = best.seconds;
      other.cpu_seconds = best.cpu_seconds;
      best = std::move(other);
      out.algorithm = "kway";
    }
  }
  out.metis_seconds = best.seconds;
  out.metis_cpu_seconds = best.cpu_seconds;
  const std::vector<idx_t>& part = best.part;
  const idx_t nparts = static_cast<idx_t>(k);
  const char* function = out.algorithm == "kway" ? "METIS_PartGraphKway" : "METIS_PartGraphRecursive";
  out.part.assign(static_cast<size_t>(n), 0);
  std::atomic<int64_t> bad{-1};
  parallel_for<int64_t>(0, n, 1 << 16, [&](int64_t u) {
    if (part[u] < 0 || part[u] >= nparts) bad.store(u);
    out.part[u] = static_cast<int32_t>(part[u]);
  });
  TESSEL_CHECK(bad.load() < 0, "{} put node {} into part {}, outside [0, {})", function, bad.load(),
               static_cast<int64_t>(part[bad.load()]), k);
  out.metis_objective = static_cast<int64_t>(best.objval);
  return out;
}

std::vector<int32_t> MetisPartCsr(const std::vector<int64_t>& xadj, const std::vector<int64_t>& adjncy,
                                  const std::vector<int64_t>& adjwgt, const std::vector<int64_t>& vwgt, int32_t k,
                                  double imbalance, uint64_t seed) {
  const auto n = static_cast<int64_t>(vwgt.size());
  TESSEL_CHECK(static_cast<int64_t>(xadj.size()) == n + 1 && adjncy.size() == adjwgt.size(),
               "coarse graph: {} offsets, {} entries, {} edge weights for {} vertices", xadj.size(), adjncy.size(),
               adjwgt.size(), n);
  CheckFitsIdx(static_cast<int64_t>(adjncy.size()), "the coarse graph's adjacency entries");
  std::vector<int32_t> out(static_cast<size_t>(n), 0);
  if (k <= 1 || n == 0) return out;
  const auto copy = [](const std::vector<int64_t>& v) { return std::vector<idx_t>(v.begin(), v.end()); };
  std::vector<idx_t> x = copy(xadj), a = copy(adjncy), ew = copy(adjwgt), vw = copy(vwgt);
  const bool kway = k > kRecursiveMaxParts;
  double ub = imbalance;
  if (!kway) {
    int levels = 0;
    while ((int64_t{1} << levels) < k) ++levels;
    ub = std::pow(ub, 1.0 / std::max(levels, 1));
  }
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = static_cast<idx_t>(seed % static_cast<uint64_t>(kIdxMax));
  options[METIS_OPTION_NUMBERING] = 0;
  options[METIS_OPTION_NCUTS] = 4;  // a small graph: the best of four
  idx_t nv = static_cast<idx_t>(n);
  idx_t ncon = 1;
  idx_t nparts = k;
  idx_t objval = 0;
  std::vector<idx_t> part(static_cast<size_t>(n), 0);
  for (int run = 1;; ++run) {
    real_t ubvec = static_cast<real_t>(ub);
    const int status = kway ? METIS_PartGraphKway(&nv, &ncon, x.data(), a.data(), vw.data(), nullptr, ew.data(),
                                                  &nparts, nullptr, &ubvec, options, &objval, part.data())
                            : METIS_PartGraphRecursive(&nv, &ncon, x.data(), a.data(), vw.data(), nullptr, ew.data(),
                                                       &nparts, nullptr, &ubvec, options, &objval, part.data());
    if (status != METIS_OK) {
      throw Error(MetisFailure(status, kway ? "METIS_PartGraphKway" : "METIS_PartGraphRecursive", n,
                               static_cast<int64_t>(a.size()), 1, k));
    }
    if (WorstImbalance(part, vw, 1, k).first <= imbalance + 1e-9 || run == 3) break;
    ub = 1 + (ub - 1) / 2;
  }
  for (size_t u = 0; u < part.size(); ++u) out[u] = static_cast<int32_t>(part[u]);
  return out;
}

}  // namespace tessel::partition::detail
