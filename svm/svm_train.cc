// One-vs-one C-SVC training with LIBSVM's semantics (svm_group_classes, weighted C, svm_train_one, the
// model's SV grouping and sv_coef layout) and the parameter checks of svm_check_parameter.
#include "svm/svm_train.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>

#include <tbb/global_control.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/log.h"
#include "core/parallel.h"
#include "core/progress.h"
#include "svm/class_rows.h"

namespace tessel::svm {

ClassGroups GroupClasses(const datasets::SparseRowDataset& data, ClassOrder order) {
  const auto y = data.labels.Host();
  ClassGroups g;
  g.row_class.resize(static_cast<size_t>(data.num_rows));
  for (int64_t r = 0; r < data.num_rows; ++r) {
    const double v = y[r];
    TESSEL_CHECK(std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 2147483647.0,
                 "{}: the label {} of row {} is not an integer class id; C-SVC needs integer labels",
                 data.name.empty() ? "data" : data.name, v, r + 1);
    const auto label = static_cast<int32_t>(v);
    size_t c = 0;
    while (c < g.labels.size() && g.labels[c] != label) ++c;
    if (c == g.labels.size()) {
      g.labels.push_back(label);
      g.count.push_back(0);
    }
    ++g.count[c];
    g.row_class[r] = static_cast<int32_t>(c);
  }
  if (order == ClassOrder::kSorted) {
    // scikit-learn's svm_group_classes: labels ascending, rows of a class still in data order.
    std::vector<int32_t> by_label(g.labels.size());
    std::iota(by_label.begin(), by_label.end(), 0);
    std::sort(by_label.begin(), by_label.end(), [&](int32_t a, int32_t b) { return g.labels[a] < g.labels[b]; });
    std::vector<int32_t> position(g.labels.size());
    ClassGroups sorted;
    for (size_t k = 0; k < by_label.size(); ++k) {
      position[by_label[k]] = static_cast<int32_t>(k);
      sorted.labels.push_back(g.labels[by_label[k]]);
      sorted.count.push_back(g.count[by_label[k]]);
    }
    for (auto& c : g.row_class) c = position[c];
    g.labels = std::move(sorted.labels);
    g.count = std::move(sorted.count);
    return g;
  }
  // LIBSVM: for -1/+1 data where -1 comes first, +1 becomes class 0 (the positive side of the binary SVM).
  if (g.labels.size() == 2 && g.labels[0] == -1 && g.labels[1] == 1) {
    std::swap(g.labels[0], g.labels[1]);
    std::swap(g.count[0], g.count[1]);
    for (auto& c : g.row_class) c = 1 - c;
  }
  return g;
}

std::string TrainReport::ToJson() const {
  nlohmann::json j;
  j["gamma"] = gamma;
  j["iterations"] = iterations;
  j["kernel_evaluations"] = kernel_evaluations;
  j["seconds"] = seconds;
  auto& arr = j["pairs"] = nlohmann::json::array();
  for (const auto& p : pairs) {
    const auto& r = p.result;
    arr.push_back({{"labels", {p.label_i, p.label_j}},
                   {"samples", p.samples},
                   {"obj", r.obj},
                   {"rho", r.rho},
                   {"gap", r.gap},
                   {"iterations", r.iterations},
                   {"kernel_evaluations", r.kernel_evaluations},
                   {"shrink_checks", r.shrink_checks},
                   {"reconstructions", r.reconstructions},
                   {"bound_changes", r.bound_changes},
                   {"min_active", r.min_active},
                   {"cache_hits", r.cache_hits},
                   {"cache_misses", r.cache_misses},
                   {"nr_sv", r.nr_sv},
                   {"nr_bsv", r.nr_bsv},
                   {"seconds", r.seconds}});
  }
  return j.dump();
}

std::vector<SolverResult> SolvePairsConcurrently(std::span<const PairTask> tasks,
                                                 const std::function<SolverResult(const PairTask&)>& solve) {
  const auto num_tasks = static_cast<int64_t>(tasks.size());
  if (num_tasks == 0) return {};
  const auto workers =
      static_cast<int64_t>(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
  const int64_t concurrent = std::clamp<int64_t>(workers, 1, num_tasks);
  std::vector<SolverResult> results(tasks.size());
  const auto run = [&](int64_t t) {
    PairTask task = tasks[t];
    task.options.cache_bytes /= concurrent;
    results[t] = solve(task);
  };
  if (concurrent == 1) {
    for (int64_t t = 0; t < num_tasks; ++t) run(t);
    return results;
  }
  // Largest pairs first, each worker taking the next pair when it is free (a list schedule): a large pair started
  // last would leave the other workers idle at the end. Pair size (samples) stands in for its cost.
  std::vector<int64_t> order(tasks.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return tasks[a].sub.size() > tasks[b].sub.size(); });
  std::atomic<int64_t> next{0};
  parallel_for<int64_t>(0, concurrent, 1, [&](int64_t /*worker*/) {
    for (int64_t k = next.fetch_add(1); k < num_tasks; k = next.fetch_add(1)) run(order[static_cast<size_t>(k)]);
  });
  return results;
}

namespace {

// The rows of each class, read off the pairs: pair (i, j) lists class i's rows (y = +1), then class j's (y = -1).
std::vector<std::vector<int32_t>> ClassMembers(std::span<const PairTask> tasks) {
  int32_t classes = 0;
  for (const PairTask& t : tasks) classes = std::max({classes, t.class_i + 1, t.class_j + 1});
  std::vector<std::vector<int32_t>> members(static_cast<size_t>(classes));
  std::vector<char> seen(static_cast<size_t>(classes), 0);
  for (const PairTask& t : tasks) {
    for (size_t k = 0; k < t.sub.size(); ++k) {
      const int32_t c = t.y[k] > 0 ? t.class_i : t.class_j;
      if (seen[static_cast<size_t>(c)] == 0) members[static_cast<size_t>(c)].push_back(t.sub[k]);
    }
    seen[static_cast<size_t>(t.class_i)] = 1;
    seen[static_cast<size_t>(t.class_j)] = 1;
  }
  return members;
}

}  // namespace

SvmModel TrainSvm(const datasets::SparseRowDataset& data, const SvmParams& params, TrainReport* report,
                  const BinarySolver& solver) {
  return TrainOneVsOne(data, params, report, [&solver](std::span<const PairTask> tasks) {
    if (tasks.empty()) return std::vector<SolverResult>{};
    // Every pair reads the same rows with the same kernel: norms, dense and bit rows are computed once.
    const kernels::SvmKernelRows shared(*tasks[0].rows, tasks[0].kernel);
    // With more than two classes the pairs also share their rows' own-class halves (class_rows.h), when those
    // fit in half the cache: the pairs' own caches then share the other half.
    std::unique_ptr<ClassRowCache> class_rows;
    std::vector<PairTask> with_budget(tasks.begin(), tasks.end());
    if (tasks.size() > 1) {
      const std::vector<std::vector<int32_t>> members = ClassMembers(tasks);
      const int64_t bytes = ClassRowCache::Bytes(members);
      if (2 * bytes <= tasks[0].options.cache_bytes) {
        class_rows = std::make_unique<ClassRowCache>(tasks[0].rows->num_rows(), members);
        for (PairTask& t : with_budget) t.options.cache_bytes -= bytes;
      }
    }
    return SolvePairsConcurrently(with_budget, [&solver, &shared, &tasks, &class_rows](const PairTask& t) {
      TESSEL_CHECK(t.rows == tasks[0].rows, "TrainSvm: the pairs read different rows");
      kernels::SvmKernelRows kernel = shared.Share();
      BinaryProblem problem{&kernel, t.sub, t.y, t.Cp, t.Cn};
      problem.class_rows = class_rows.get();
      return solver ? solver(problem, t.options) : SolveBinary(problem, t.options);
    });
  });
}

namespace {

// Kernel values must fit the float kernel cache (LIBSVM's Qfloat): a value beyond it becomes infinite and the
// working-set selection then reads outside its arrays. By Cauchy-Schwarz |x.z| <= the largest squared row norm,
// which the diagonal reaches, so that norm bounds every kernel value.
void CheckKernelRange(const datasets::SparseRowDataset& data, const kernels::SvmKernelParams& k) {
  const auto indptr = data.indptr.Host();
  const auto values = data.values.Host();
  double max_sq = 0;
  int64_t row = 0;
  for (int64_t r = 0; r < data.num_rows; ++r) {
    double sq = 0;
    for (int64_t e = indptr[r]; e < indptr[r + 1]; ++e) sq += values[e] * values[e];
    if (!(sq <= max_sq)) {  // an infinite norm too
      max_sq = sq;
      row = r;
    }
  }
  double bound = max_sq;  // linear
  if (k.type == kernels::SvmKernelType::kPolynomial) {
    bound = std::pow(k.gamma * max_sq + std::abs(k.coef0), k.degree);
  } else if (k.type == kernels::SvmKernelType::kRbf) {
    bound = 4 * max_sq;  // |x - z|^2 <= 4 max |x|^2 must stay finite (the value itself lies in [0, 1])
  } else if (k.type == kernels::SvmKernelType::kSigmoid) {
    bound = k.gamma * max_sq + std::abs(k.coef0);  // finite inside tanh
  }
  const double limit = k.type == kernels::SvmKernelType::kLinear || k.type == kernels::SvmKernelType::kPolynomial
                           ? static_cast<double>(std::numeric_limits<float>::max())
                           : std::numeric_limits<double>::max();
  if (std::isfinite(bound) && std::abs(bound) <= limit) return;
  std::string params;  // the parameters this kernel uses
  if (k.type == kernels::SvmKernelType::kPolynomial) {
    params = fmt::format(" (gamma {:g}, coef0 {:g}, degree {}; or lower those)", k.gamma, k.coef0, k.degree);
  } else if (k.type == kernels::SvmKernelType::kSigmoid) {
    params = fmt::format(" (gamma {:g}, coef0 {:g}; or lower those)", k.gamma, k.coef0);
  }
  throw Error(
      fmt::format("{}: row {} has squared norm {:g}, so {} kernel values{} reach {:g}, beyond the {} range of "
                  "the kernel; scale the features (svm-scale)",
                  data.name.empty() ? "data" : data.name, row + 1, max_sq, kernels::SvmKernelName(k.type), params,
                  bound, limit < std::numeric_limits<double>::max() ? "float" : "double"));
}

}  // namespace

SvmModel TrainOneVsOne(const datasets::SparseRowDataset& data, const SvmParams& params, TrainReport* report,
                       const PairsSolver& solve_pairs) {
  const auto start_time = std::chrono::steady_clock::now();
  params.Validate();
  TESSEL_CHECK(data.num_rows > 0, "{}: no training rows", data.name.empty() ? "data" : data.name);
  TESSEL_CHECK(data.num_rows < (int64_t{1} << 31), "{}: {} rows exceed the solver's 32-bit row ids", data.name,
               data.num_rows);
  const ClassGroups groups = GroupClasses(data, params.class_order);
  const auto nr_class = static_cast<int32_t>(groups.labels.size());
  TESSEL_CHECK(nr_class >= 2,
               "{}: the training data has a single class (label {}); C-SVC needs samples of at least two classes",
               data.name.empty() ? "data" : data.name, groups.labels[0]);

  const auto indices = data.indices.Host();
  int64_t max_index = 0;  // LIBSVM's max_index: the largest 1-based feature id in the training data
  for (const int32_t f : indices) max_index = std::max<int64_t>(max_index, int64_t{f} + 1);
  SvmParams p = params;
  if (p.kernel.gamma == 0 && max_index > 0) p.kernel.gamma = 1.0 / static_cast<double>(max_index);
  CheckKernelRange(data, p.kernel);

  std::vector<double> weighted_c(static_cast<size_t>(nr_class), p.C);
  for (const auto& w : p.weights) {
    size_t c = 0;
    while (c < groups.labels.size() && groups.labels[c] != w.label) ++c;
    // svm-train only warns; a weight that silently does nothing is a typo tessel reports.
    TESSEL_CHECK(c < groups.labels.size(),
                 "-w: class label {} does not occur in the training data (its labels: {}); weight one of those",
                 w.label, fmt::join(groups.labels, ", "));
    weighted_c[c] *= w.weight;
  }

  // Rows grouped by class, each group in data order (LIBSVM's perm).
  std::vector<std::vector<int32_t>> members(static_cast<size_t>(nr_class));
  for (int64_t r = 0; r < data.num_rows; ++r) members[groups.row_class[r]].push_back(static_cast<int32_t>(r));

  const kernels::SparseRowsView rows{data.indptr.Host(), indices, data.values.Host(),
                                     std::max(data.num_features, max_index)};
  // Binary problems in LIBSVM's pair order.
  std::vector<std::pair<int32_t, int32_t>> tasks;
  for (int32_t i = 0; i < nr_class; ++i)
    for (int32_t j = i + 1; j < nr_class; ++j) tasks.emplace_back(i, j);
  const auto num_tasks = static_cast<int64_t>(tasks.size());
  SolverOptions opts;
  opts.eps = p.eps;
  opts.shrinking = p.shrinking;
  opts.cache_bytes = static_cast<int64_t>(p.cache_mb * 1024 * 1024);
  opts.max_iterations = p.max_iterations;
  std::vector<std::vector<int32_t>> subs(tasks.size());
  std::vector<std::vector<int8_t>> ys(tasks.size());
  std::vector<PairTask> pair_tasks;
  for (size_t t = 0; t < tasks.size(); ++t) {
    const auto [i, j] = tasks[t];
    subs[t] = members[i];
    subs[t].insert(subs[t].end(), members[j].begin(), members[j].end());
    ys[t].assign(members[i].size(), 1);
    ys[t].resize(subs[t].size(), -1);
    pair_tasks.push_back({i, j, &rows, p.kernel, subs[t], ys[t], weighted_c[i], weighted_c[j], opts});
  }
  std::vector<SolverResult> results;
  {
    Progress progress(fmt::format("svm: solving {} binary problem(s) of {} rows", tasks.size(), data.num_rows));
    results = solve_pairs(pair_tasks);
  }
  TESSEL_CHECK(results.size() == tasks.size(), "TrainOneVsOne: {} results for {} pairs", results.size(), tasks.size());
  for (size_t t = 0; t < tasks.size(); ++t) {
    const SolverResult& res = results[t];
    TESSEL_CHECK(res.alpha.size() == subs[t].size(), "TrainOneVsOne: pair {} has {} coefficients for {} samples", t,
                 res.alpha.size(), subs[t].size());
    log::Info("svm: classes {} vs {}: obj = {:.6f}, rho = {:.6f}, nSV = {}, nBSV = {}, iterations = {}",
              groups.labels[tasks[t].first], groups.labels[tasks[t].second], res.obj, res.rho, res.nr_sv, res.nr_bsv,
              res.iterations);
  }

  TrainReport rep;
  rep.gamma = p.kernel.gamma;
  // nonzero[r]: row r is a support vector of some pair (LIBSVM's nonzero[]).
  std::vector<char> nonzero(static_cast<size_t>(data.num_rows), 0);
  std::vector<std::vector<double>> pair_alpha;
  for (int64_t t = 0; t < num_tasks; ++t) {
    const auto [i, j] = tasks[t];
    SolverResult& res = results[t];
    size_t s = 0;
    for (const int32_t c : {i, j})
      for (const int32_t r : members[c])
        if (res.alpha[s++] != 0) nonzero[r] = 1;
    pair_alpha.push_back(std::move(res.alpha));
    res.alpha.clear();
    rep.iterations += res.iterations;
    rep.kernel_evaluations += res.kernel_evaluations;
    rep.pairs.push_back({groups.labels[i], groups.labels[j], static_cast<int64_t>(s), std::move(res)});
  }

  SvmModel m;
  m.kernel = p.kernel;
  m.nr_class = nr_class;
  m.labels = groups.labels;
  m.num_features = std::max(data.num_features, max_index);
  m.num_features_known = true;
  for (const auto& r : rep.pairs) m.rho.push_back(r.result.rho);
  // Support vectors grouped by class in label order; nz_start[c] = first SV of class c.
  std::vector<int64_t> nz_start(static_cast<size_t>(nr_class), 0);
  std::vector<int64_t> sv_pos(static_cast<size_t>(data.num_rows), -1);
  const auto indptr = data.indptr.Host();
  const auto values = data.values.Host();
  for (int32_t c = 0; c < nr_class; ++c) {
    nz_start[c] = m.total_sv();
    int32_t n = 0;
    for (const int32_t r : members[c]) {
      if (!nonzero[r]) continue;
      sv_pos[r] = m.total_sv();
      m.sv_rows.push_back(r);
      for (int64_t e = indptr[r]; e < indptr[r + 1]; ++e) {
        m.sv_indices.push_back(indices[e]);
        m.sv_values.push_back(values[e]);
      }
      m.sv_indptr.push_back(static_cast<int64_t>(m.sv_indices.size()));
      ++n;
    }
    m.nr_sv.push_back(n);
  }
  const int64_t l = m.total_sv();
  m.sv_coef.assign(static_cast<size_t>((nr_class - 1) * l), 0.0);
  size_t pair = 0;
  for (int32_t i = 0; i < nr_class; ++i) {
    for (int32_t j = i + 1; j < nr_class; ++j) {
      const auto& a = pair_alpha[pair++];
      size_t s = 0;
      for (const int32_t r : members[i]) {
        if (nonzero[r]) m.sv_coef[static_cast<size_t>((j - 1) * l + sv_pos[r])] = a[s];
        ++s;
      }
      for (const int32_t r : members[j]) {
        if (nonzero[r]) m.sv_coef[static_cast<size_t>(i * l + sv_pos[r])] = a[s];
        ++s;
      }
    }
  }
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
  if (report != nullptr) *report = std::move(rep);
  return m;
}

}  // namespace tessel::svm
