// One-vs-one C-SVC and nu-SVC training with LIBSVM's semantics (svm_group_classes, weighted C, svm_train_one, the
// model's SV grouping and sv_coef layout) and the parameter checks of svm_check_parameter; TrainSvm hands one-class
// and the regressions to svm_train_one.cc.
#include "svm/svm_train.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <utility>

#include <tbb/global_control.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/log.h"
#include "core/parallel.h"
#include "core/progress.h"
#include "svm/class_rows.h"
#include "svm/cross_validation.h"
#include "svm/probability.h"
#include "svm/train_common.h"

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

nlohmann::json TrainReport::ToJson(int64_t max_pairs) const {
  nlohmann::json j;
  j["gamma"] = gamma;
  j["iterations"] = iterations;
  j["kernel_evaluations"] = kernel_evaluations;
  j["seconds"] = seconds;
  j["pairs_total"] = pairs.size();
  const size_t listed = max_pairs < 0 ? pairs.size() : std::min(pairs.size(), static_cast<size_t>(max_pairs));
  auto& arr = j["pairs"] = nlohmann::json::array();
  for (size_t k = 0; k < listed; ++k) {
    const PairReport& p = pairs[k];
    nlohmann::json pair = {{"labels", {p.label_i, p.label_j}}, {"samples", p.samples}};
    ForEachResultStat(p.result, [&pair](const char* name, const auto& value) { pair[name] = value; });
    if (const RoundCounts& d = p.result.device; d.rounds > 0) {
      const device::Counters& c = d.loop;
      const std::pair<const char*, int64_t> totals[] = {{"launches", c.launches},
                                                        {"synchronizations", c.synchronizations},
                                                        {"uploads", c.h2d_copies},
                                                        {"downloads", c.d2h_copies},
                                                        {"allocations", c.allocations}};
      nlohmann::json& dev =
          pair["device"] = {{"rounds", d.rounds},
                            {"allocations_after_first_round", d.after_first_round.allocations},
                            {"max_round", {{"launches", d.max_round_launches}, {"downloads", d.max_round_downloads}}}};
      for (const auto& [name, total] : totals) {
        dev[name] = total;
        dev["per_round"][name] = static_cast<double>(total) / static_cast<double>(d.rounds);
      }
    }
    arr.push_back(std::move(pair));
  }
  return j;
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

PreparedTraining PrepareTraining(const datasets::SparseRowDataset& data, const SvmParams& params) {
  params.Validate();
  TESSEL_CHECK(data.num_rows > 0, "{}: no training rows", data.name.empty() ? "data" : data.name);
  TESSEL_CHECK(data.num_rows < (int64_t{1} << 31), "{}: {} rows exceed the solver's 32-bit row ids", data.name,
               data.num_rows);
  const auto indices = data.indices.Host();
  int64_t max_index = 0;  // LIBSVM's max_index: the largest 1-based feature id in the training data
  for (const int32_t f : indices) max_index = std::max<int64_t>(max_index, int64_t{f} + 1);
  PreparedTraining out;
  out.p = params;
  if (out.p.kernel.gamma == 0 && max_index > 0) out.p.kernel.gamma = 1.0 / static_cast<double>(max_index);
  CheckKernelRange(data, out.p.kernel);
  out.num_features = std::max(data.num_features, max_index);
  out.rows = {data.indptr.Host(), indices, data.values.Host(), out.num_features};
  out.opts.eps = out.p.eps;
  out.opts.shrinking = out.p.shrinking;
  out.opts.cache_bytes = static_cast<int64_t>(out.p.cache_mb * 1024 * 1024);
  out.opts.max_iterations = out.p.max_iterations;
  return out;
}

namespace {

constexpr int kProbabilityFolds = 5;  // LIBSVM's svm_binary_svc_probability

// LIBSVM's svm_binary_svc_probability for one pair (its samples `sub` with labels y, shuffled by `perm`): 5-fold
// decision values, each fold from a C-SVC (or nu-SVC) trained on the other folds with C = 1 weighted by the pair's
// Cp and Cn, then Platt's sigmoid fitted to them.
void PairSigmoid(const datasets::SparseRowDataset& data, std::span<const int32_t> sub, std::span<const int8_t> y,
                 std::span<const int32_t> perm, const SvmParams& p, double cp, double cn, double* a, double* b) {
  const auto l = static_cast<int64_t>(sub.size());
  std::vector<double> dec(static_cast<size_t>(l), 0.0);
  std::vector<double> labels(y.begin(), y.end());
  const auto indptr = data.indptr.Host();
  const auto indices = data.indices.Host();
  const auto values = data.values.Host();
  for (int64_t i = 0; i < kProbabilityFolds; ++i) {
    const int64_t begin = i * l / kProbabilityFolds;
    const int64_t end = (i + 1) * l / kProbabilityFolds;
    std::vector<int32_t> rows;
    std::vector<double> labs;
    for (int64_t j = 0; j < l; ++j) {
      if (j >= begin && j < end) continue;
      rows.push_back(sub[perm[j]]);
      labs.push_back(y[perm[j]]);
    }
    const auto positives = std::count_if(labs.begin(), labs.end(), [](double v) { return v > 0; });
    const auto negatives = static_cast<int64_t>(labs.size()) - positives;
    if (positives == 0 || negatives == 0) {
      const double constant = positives > 0 ? 1 : negatives > 0 ? -1 : 0;
      for (int64_t j = begin; j < end; ++j) dec[perm[j]] = constant;
      continue;
    }
    SvmParams sp = p;
    sp.probability = 0;
    sp.C = 1.0;
    sp.weights = {{1, cp}, {-1, cn}};
    sp.class_order = p.class_order;  // scikit-learn's fork sorts the fits' classes too (-1 first)
    const SvmModel model = TrainSvm(datasets::SelectRows<int32_t>(data, rows, labs), sp);
    std::vector<double> d;
    for (int64_t j = begin; j < end; ++j) {
      const int32_t r = sub[perm[j]];
      const auto at = static_cast<size_t>(indptr[r]);
      const auto n = static_cast<size_t>(indptr[r + 1] - indptr[r]);
      (void)PredictRow(model, indices.subspan(at, n), values.subspan(at, n), &d);
      dec[perm[j]] = d[0] * model.labels[0];  // the +1 class's side, as LIBSVM
    }
  }
  SigmoidTrain(dec, labels, a, b);
}

// Whether one of the five folds of a pair shuffled by `perm` trains a model (its training part holds both labels):
// LIBSVM's svm_binary_svc_probability fills the folds without one by a constant.
bool AnyFoldTrains(std::span<const int32_t> perm, std::span<const int8_t> y) {
  const auto l = static_cast<int64_t>(perm.size());
  const auto positives = std::count_if(y.begin(), y.end(), [](int8_t v) { return v > 0; });
  for (int64_t i = 0; i < kProbabilityFolds; ++i) {
    int64_t held_pos = 0;
    for (int64_t j = i * l / kProbabilityFolds; j < (i + 1) * l / kProbabilityFolds; ++j)
      held_pos += y[perm[j]] > 0 ? 1 : 0;
    const int64_t held = (i + 1) * l / kProbabilityFolds - i * l / kProbabilityFolds;
    if (positives - held_pos > 0 && (l - positives) - (held - held_pos) > 0) return true;
  }
  return false;
}

// LIBSVM's solve_nu_svc start for one pair: a = min(1, what is left of nu l / 2) per label, in sample order.
std::vector<double> NuSvcStart(double nu, std::span<const int8_t> y) {
  const auto l = static_cast<double>(y.size());
  double sum_pos = nu * l / 2;
  double sum_neg = nu * l / 2;
  std::vector<double> a(y.size());
  for (size_t k = 0; k < y.size(); ++k) {
    double& left = y[k] > 0 ? sum_pos : sum_neg;
    a[k] = std::min(1.0, left);
    left -= a[k];
  }
  return a;
}

// The one-vs-one decomposition of a training run: the classes with their C (LIBSVM's weighted_C) and rows, and the
// binary problems in LIBSVM's pair order with the arrays their PairTasks view.
struct OneVsOne {
  ClassGroups groups;
  std::vector<double> weighted_c;
  std::vector<std::vector<int32_t>> members;         // each class's rows in data order (LIBSVM's perm)
  std::vector<std::pair<int32_t, int32_t>> classes;  // each pair's classes i < j
  std::vector<std::vector<int32_t>> subs;
  std::vector<std::vector<int8_t>> ys;
  std::vector<std::vector<double>> alpha0s;
  std::vector<double> zeros;
  std::vector<PairTask> tasks;

  int32_t nr_class() const { return static_cast<int32_t>(groups.labels.size()); }
  int32_t label_i(size_t t) const { return groups.labels[classes[t].first]; }
  int32_t label_j(size_t t) const { return groups.labels[classes[t].second]; }
};

// C times each class's -w weight; a weight for a label that the data lacks is an error.
std::vector<double> WeightedC(const SvmParams& p, const ClassGroups& groups) {
  std::vector<double> weighted_c(groups.labels.size(), p.C);
  for (const auto& w : p.weights) {
    size_t c = 0;
    while (c < groups.labels.size() && groups.labels[c] != w.label) ++c;
    // svm-train only warns; a weight that silently does nothing is a typo tessel reports.
    TESSEL_CHECK(c < groups.labels.size(),
                 "-w: class label {} does not occur in the training data (its labels: {}); weight one of those",
                 w.label, fmt::join(groups.labels, ", "));
    weighted_c[c] *= w.weight;
  }
  return weighted_c;
}

// The classes, their C and rows, and the pairs' problems (nu-SVC's checked feasible for nu, as LIBSVM's
// svm_check_parameter, and started as its solve_nu_svc).
void SetUpOneVsOne(const datasets::SparseRowDataset& data, const PreparedTraining& prep, ClassOrder order,
                   OneVsOne* o) {
  const SvmParams& p = prep.p;
  const bool nu = p.type == SvmType::kNuSvc;
  o->groups = GroupClasses(data, order);
  const int32_t nr_class = o->nr_class();
  TESSEL_CHECK(nr_class >= 2,
               "{}: the training data has a single class (label {}); C-SVC needs samples of at least two classes",
               data.name.empty() ? "data" : data.name, o->groups.labels[0]);
  o->weighted_c = WeightedC(p, o->groups);
  o->members.resize(static_cast<size_t>(nr_class));
  for (int64_t r = 0; r < data.num_rows; ++r) o->members[o->groups.row_class[r]].push_back(static_cast<int32_t>(r));
  for (int32_t i = 0; i < nr_class; ++i)
    for (int32_t j = i + 1; j < nr_class; ++j) o->classes.emplace_back(i, j);
  if (nu) {  // LIBSVM's svm_check_parameter: every pair must be feasible for nu
    for (const auto& [i, j] : o->classes) {
      const auto n1 = static_cast<double>(o->members[i].size());
      const auto n2 = static_cast<double>(o->members[j].size());
      TESSEL_CHECK(p.nu * (n1 + n2) / 2 <= std::min(n1, n2),
                   "-n: nu = {} is infeasible for classes {} and {} ({} and {} samples): nu-SVC needs nu <= "
                   "2 min / (sum) = {:.6g} for every pair of classes",
                   p.nu, o->groups.labels[i], o->groups.labels[j], n1, n2, 2 * std::min(n1, n2) / (n1 + n2));
    }
  }
  const size_t pairs = o->classes.size();
  o->subs.resize(pairs);
  o->ys.resize(pairs);
  o->alpha0s.resize(pairs);
  o->zeros.assign(static_cast<size_t>(data.num_rows), 0.0);
  for (size_t t = 0; t < pairs; ++t) {
    const auto [i, j] = o->classes[t];
    std::vector<int32_t>& sub = o->subs[t];
    sub = o->members[i];
    sub.insert(sub.end(), o->members[j].begin(), o->members[j].end());
    o->ys[t].assign(o->members[i].size(), 1);
    o->ys[t].resize(sub.size(), -1);
    o->tasks.push_back({i, j, &prep.rows, p.kernel, sub, o->ys[t], o->weighted_c[i], o->weighted_c[j], prep.opts});
    if (nu) {  // solve_nu_svc: C = 1 for both labels (the weights do not apply), p = 0, Solver_NU
      o->alpha0s[t] = NuSvcStart(p.nu, o->ys[t]);
      PairTask& task = o->tasks.back();
      task.Cp = 1;
      task.Cn = 1;
      task.p = std::span<const double>(o->zeros).first(sub.size());
      task.alpha0 = o->alpha0s[t];
      task.nu = true;
    }
  }
}

// -b 1: each pair's Platt sigmoid, the pairs' shuffles drawn in pair order from LIBSVM's one rand() (it fits
// them before solving each pair; the solves draw nothing), the fits themselves then in parallel.
void FitPairSigmoids(const datasets::SparseRowDataset& data, const SvmParams& p, const OneVsOne& o, ShuffleRand* rand,
                     const FitRunner* fits, std::vector<double>* prob_a, std::vector<double>* prob_b) {
  const auto num_tasks = static_cast<int64_t>(o.tasks.size());
  ShuffleRand local(p.random_seed);
  ShuffleRand& rnd = rand != nullptr ? *rand : local;
  std::vector<std::vector<int32_t>> perms(o.tasks.size());
  for (size_t t = 0; t < o.tasks.size(); ++t) {
    const auto l = static_cast<int64_t>(o.subs[t].size());
    perms[t].resize(static_cast<size_t>(l));
    std::iota(perms[t].begin(), perms[t].end(), 0);
    for (int64_t i = 0; i < l; ++i) std::swap(perms[t][i], perms[t][i + rnd.Below(l - i)]);
    if (AnyFoldTrains(perms[t], o.ys[t])) rnd.Restart();  // scikit-learn's fork: a fold's svm_train reseeds
  }
  prob_a->resize(o.tasks.size());
  prob_b->resize(o.tasks.size());
  Progress progress(fmt::format("svm: fitting the probabilities of {} pair(s) (5-fold)", o.tasks.size()));
  const auto fit = [&](int64_t t) {
    std::vector<double> ab(2);
    PairSigmoid(data, o.subs[t], o.ys[t], perms[t], p, o.weighted_c[o.classes[t].first],
                o.weighted_c[o.classes[t].second], &ab[0], &ab[1]);
    return ab;
  };
  if (fits != nullptr && fits->run) {
    const std::vector<std::vector<double>> ab = fits->run(num_tasks, fit);
    TESSEL_CHECK(static_cast<int64_t>(ab.size()) == num_tasks, "-b 1: {} fits for {} pairs", ab.size(), num_tasks);
    for (int64_t t = 0; t < num_tasks; ++t) {
      TESSEL_CHECK(ab[t].size() == 2, "-b 1: pair {}'s fit has {} values", t, ab[t].size());
      (*prob_a)[t] = ab[t][0];
      (*prob_b)[t] = ab[t][1];
    }
  } else {
    parallel_for<int64_t>(0, num_tasks, 1, [&](int64_t t) {
      const std::vector<double> ab = fit(t);
      (*prob_a)[t] = ab[0];
      (*prob_b)[t] = ab[1];
    });
  }
}

// Each pair's result checked and logged; nu-SVC's scaled back by r (solve_nu_svc's end).
void FinishPairs(const OneVsOne& o, bool nu, std::vector<SolverResult>* results) {
  TESSEL_CHECK(results->size() == o.tasks.size(), "TrainOneVsOne: {} results for {} pairs", results->size(),
               o.tasks.size());
  for (size_t t = 0; t < o.tasks.size(); ++t) {
    SolverResult& res = (*results)[t];
    TESSEL_CHECK(res.alpha.size() == o.subs[t].size(), "TrainOneVsOne: pair {} has {} coefficients for {} samples", t,
                 res.alpha.size(), o.subs[t].size());
    if (nu) {  // solve_nu_svc's end: a y / r, rho / r, obj / r^2 (the equivalent C-SVC with C = 1 / r)
      const double r = res.r;
      TESSEL_CHECK(r > 0 && std::isfinite(r), "nu-SVC: classes {} and {} ended with r = {} (no margin); lower -n",
                   o.label_i(t), o.label_j(t), r);
      for (size_t k = 0; k < res.alpha.size(); ++k) {
        const double y = o.ys[t][k];
        res.alpha[k] = (res.alpha[k] * y) * (y / r);
      }
      res.rho /= r;
      res.obj /= r * r;
      log::Info("svm: classes {} vs {}: C = {:.6f}", o.label_i(t), o.label_j(t), 1 / r);
    }
    log::Info("svm: classes {} vs {}: obj = {:.6f}, rho = {:.6f}, nSV = {}, nBSV = {}, iterations = {}", o.label_i(t),
              o.label_j(t), res.obj, res.rho, res.nr_sv, res.nr_bsv, res.iterations);
  }
}

// LIBSVM's model from the pairs' coefficients (`pair_alpha`, each in its pair's sample order): the rows that are a
// support vector of some pair (`nonzero`, LIBSVM's nonzero[]) grouped by class in label order, and sv_coef's
// (nr_class - 1) rows.
void AddSupportVectors(const datasets::SparseRowDataset& data, const OneVsOne& o, std::span<const char> nonzero,
                       std::span<const std::vector<double>> pair_alpha, SvmModel* m) {
  const int32_t nr_class = o.nr_class();
  std::vector<int64_t> sv_pos(static_cast<size_t>(data.num_rows), -1);
  const auto indptr = data.indptr.Host();
  const auto indices = data.indices.Host();
  const auto values = data.values.Host();
  for (int32_t c = 0; c < nr_class; ++c) {
    int32_t n = 0;
    for (const int32_t r : o.members[c]) {
      if (!nonzero[r]) continue;
      sv_pos[r] = m->total_sv();
      m->sv_rows.push_back(r);
      for (int64_t e = indptr[r]; e < indptr[r + 1]; ++e) {
        m->sv_indices.push_back(indices[e]);
        m->sv_values.push_back(values[e]);
      }
      m->sv_indptr.push_back(static_cast<int64_t>(m->sv_indices.size()));
      ++n;
    }
    m->nr_sv.push_back(n);
  }
  const int64_t l = m->total_sv();
  m->sv_coef.assign(static_cast<size_t>((nr_class - 1) * l), 0.0);
  size_t pair = 0;
  for (int32_t i = 0; i < nr_class; ++i) {
    for (int32_t j = i + 1; j < nr_class; ++j) {
      const auto& a = pair_alpha[pair++];
      size_t s = 0;
      for (const int32_t r : o.members[i]) {
        if (nonzero[r]) m->sv_coef[static_cast<size_t>((j - 1) * l + sv_pos[r])] = a[s];
        ++s;
      }
      for (const int32_t r : o.members[j]) {
        if (nonzero[r]) m->sv_coef[static_cast<size_t>(i * l + sv_pos[r])] = a[s];
        ++s;
      }
    }
  }
}

}  // namespace

SvmModel TrainOneVsOne(const datasets::SparseRowDataset& data, const SvmParams& params, TrainReport* report,
                       const PairsSolver& solve_pairs, ShuffleRand* rand, const FitRunner* fits) {
  const auto start_time = std::chrono::steady_clock::now();
  TESSEL_CHECK(IsClassification(params.type), "TrainOneVsOne: {} has no classes (TrainSvm trains it as one problem)",
               SvmTypeName(params.type));
  const PreparedTraining prep = PrepareTraining(data, params);
  const SvmParams& p = prep.p;
  OneVsOne o;
  SetUpOneVsOne(data, prep, params.class_order, &o);
  std::vector<double> prob_a;
  std::vector<double> prob_b;
  if (p.probability != 0) FitPairSigmoids(data, p, o, rand, fits, &prob_a, &prob_b);
  std::vector<SolverResult> results;
  {
    Progress progress(fmt::format("svm: solving {} binary problem(s) of {} rows", o.tasks.size(), data.num_rows));
    results = solve_pairs(o.tasks);
  }
  FinishPairs(o, p.type == SvmType::kNuSvc, &results);

  TrainReport rep;
  rep.gamma = p.kernel.gamma;
  // nonzero[r]: row r is a support vector of some pair (LIBSVM's nonzero[]).
  std::vector<char> nonzero(static_cast<size_t>(data.num_rows), 0);
  std::vector<std::vector<double>> pair_alpha;
  for (size_t t = 0; t < o.tasks.size(); ++t) {
    const auto [i, j] = o.classes[t];
    SolverResult& res = results[t];
    size_t s = 0;
    for (const int32_t c : {i, j})
      for (const int32_t r : o.members[c])
        if (res.alpha[s++] != 0) nonzero[r] = 1;
    pair_alpha.push_back(std::move(res.alpha));
    res.alpha.clear();
    rep.iterations += res.iterations;
    rep.kernel_evaluations += res.kernel_evaluations;
    rep.pairs.push_back({o.label_i(t), o.label_j(t), static_cast<int64_t>(s), std::move(res)});
  }

  SvmModel m;
  m.type = p.type;
  m.kernel = p.kernel;
  m.nr_class = o.nr_class();
  m.labels = o.groups.labels;
  m.prob_a = std::move(prob_a);
  m.prob_b = std::move(prob_b);
  m.num_features = prep.num_features;
  m.num_features_known = true;
  for (const auto& r : rep.pairs) m.rho.push_back(r.result.rho);
  AddSupportVectors(data, o, nonzero, pair_alpha, &m);
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
  if (report != nullptr) *report = std::move(rep);
  return m;
}

SvmModel TrainSvm(const datasets::SparseRowDataset& data, const SvmParams& params, TrainReport* report,
                  const BinarySolver& solver, ShuffleRand* rand, const FitRunner* fits) {
  if (!IsClassification(params.type)) return TrainOneProblem(data, params, report, solver, rand, fits);
  return TrainOneVsOne(
      data, params, report,
      [&solver](std::span<const PairTask> tasks) {
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
          BinaryProblem problem = t.Problem(&kernel);
          problem.class_rows = class_rows.get();
          return solver ? solver(problem, t.options) : SolveBinary(problem, t.options);
        });
      },
      rand, fits);
}

}  // namespace tessel::svm
