// LIBSVM's svm_cross_validation (svm.cpp 3.24) and svm-train's do_cross_validation summary.
#include "svm/cross_validation.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include <fmt/format.h>
#include <tbb/global_control.h>

#include "core/error.h"
#include "core/log.h"
#include "core/parallel.h"

namespace tessel::svm {

GlibcRand::GlibcRand(uint32_t seed) {
  // glibc's __srandom_r: state[i] = 16807 state[i - 1] mod (2^31 - 1) by Schrage's method, then 310 discarded draws.
  int32_t word = static_cast<int32_t>(seed == 0 ? 1 : seed);
  state_[0] = word;
  for (int i = 1; i < 31; ++i) {
    const int32_t hi = word / 127773;
    const int32_t lo = word % 127773;
    word = 16807 * lo - 2836 * hi;
    if (word < 0) word += 2147483647;
    state_[i] = word;
  }
  for (int i = 0; i < 310; ++i) (void)Next();
}

int32_t GlibcRand::Next() {
  // glibc's __random_r: the front word gains the rear word (mod 2^32); the lowest bit is dropped.
  const uint32_t val = static_cast<uint32_t>(state_[front_]) + static_cast<uint32_t>(state_[rear_]);
  state_[front_] = static_cast<int32_t>(val);
  front_ = front_ + 1 == 31 ? 0 : front_ + 1;
  rear_ = rear_ + 1 == 31 ? 0 : rear_ + 1;
  return static_cast<int32_t>(val >> 1);
}

std::string CrossValidationResult::Summary(SvmType type) const {
  if (IsRegression(type)) {
    return fmt::format(
        "Cross Validation Mean squared error = {}\nCross Validation Squared correlation coefficient = {}\n",
        fmt::format("{:g}", mean_squared_error), fmt::format("{:g}", squared_correlation));
  }
  return fmt::format("Cross Validation Accuracy = {:g}%\n", accuracy);
}

namespace {

// The rows perm[0, begin) and perm[end, l) as a dataset, in that order (LIBSVM's subprob).
datasets::SparseRowDataset Subset(const datasets::SparseRowDataset& data, std::span<const int32_t> perm, int64_t begin,
                                  int64_t end) {
  const auto indptr = data.indptr.Host();
  const auto indices = data.indices.Host();
  const auto values = data.values.Host();
  const auto labels = data.labels.Host();
  std::vector<int64_t> ptr{0};
  std::vector<int32_t> idx;
  std::vector<double> val;
  std::vector<double> lab;
  const auto l = static_cast<int64_t>(perm.size());
  for (int64_t k = 0; k < l; ++k) {
    if (k >= begin && k < end) continue;
    const int32_t r = perm[static_cast<size_t>(k)];
    idx.insert(idx.end(), indices.begin() + indptr[r], indices.begin() + indptr[r + 1]);
    val.insert(val.end(), values.begin() + indptr[r], values.begin() + indptr[r + 1]);
    ptr.push_back(static_cast<int64_t>(idx.size()));
    lab.push_back(labels[r]);
  }
  datasets::SparseRowDataset sub;
  sub.name = data.name;
  sub.num_rows = static_cast<int64_t>(lab.size());
  sub.num_features = data.num_features;
  sub.indptr = Buffer<int64_t>(std::move(ptr));
  sub.indices = Buffer<int32_t>(std::move(idx));
  sub.values = Buffer<double>(std::move(val));
  sub.labels = Buffer<double>(std::move(lab));
  return sub;
}

}  // namespace

CrossValidationResult CrossValidate(const datasets::SparseRowDataset& data, const SvmParams& params, int folds,
                                    const BinarySolver& solver) {
  params.Validate();
  TESSEL_CHECK(folds >= 2, "-v {}: cross-validation needs at least 2 folds", folds);
  const int64_t l = data.num_rows;
  TESSEL_CHECK(l >= 1, "{}: no rows to cross-validate", data.name.empty() ? "data" : data.name);
  CrossValidationResult out;
  if (folds > l) {
    log::Warn("-v {}: more folds than the {} rows; leave-one-out cross-validation instead (as svm-train)", folds, l);
    folds = static_cast<int>(l);
  }
  out.folds = folds;
  GlibcRand rand;
  std::vector<int32_t> perm(static_cast<size_t>(l));
  std::vector<int64_t> fold_start(static_cast<size_t>(folds) + 1);
  if (IsClassification(params.type) && folds < l) {
    // Stratified: each class's rows (LIBSVM's svm_group_classes order) shuffled, then dealt to the folds.
    const ClassGroups groups = GroupClasses(data, ClassOrder::kFirstAppearance);
    const auto nr_class = static_cast<int64_t>(groups.labels.size());
    std::vector<int64_t> start(static_cast<size_t>(nr_class), 0);
    for (int64_t c = 1; c < nr_class; ++c) start[c] = start[c - 1] + groups.count[c - 1];
    std::vector<int32_t> index(static_cast<size_t>(l));
    {
      std::vector<int64_t> at = start;
      for (int64_t r = 0; r < l; ++r) index[at[groups.row_class[r]]++] = static_cast<int32_t>(r);
    }
    for (int64_t c = 0; c < nr_class; ++c) {
      const int64_t count = groups.count[c];
      for (int64_t i = 0; i < count; ++i) {
        const int64_t j = i + rand.Next() % (count - i);
        std::swap(index[start[c] + j], index[start[c] + i]);
      }
    }
    std::vector<int64_t> fold_count(static_cast<size_t>(folds), 0);
    for (int64_t i = 0; i < folds; ++i)
      for (int64_t c = 0; c < nr_class; ++c)
        fold_count[i] += (i + 1) * groups.count[c] / folds - i * groups.count[c] / folds;
    for (int64_t i = 1; i <= folds; ++i) fold_start[i] = fold_start[i - 1] + fold_count[i - 1];
    std::vector<int64_t> fill(fold_start.begin(), fold_start.end() - 1);
    for (int64_t c = 0; c < nr_class; ++c) {
      for (int64_t i = 0; i < folds; ++i) {
        const int64_t begin = start[c] + i * groups.count[c] / folds;
        const int64_t end = start[c] + (i + 1) * groups.count[c] / folds;
        for (int64_t j = begin; j < end; ++j) perm[fill[i]++] = index[j];
      }
    }
  } else {
    for (int64_t i = 0; i < l; ++i) perm[i] = static_cast<int32_t>(i);
    for (int64_t i = 0; i < l; ++i) {
      const int64_t j = i + rand.Next() % (l - i);
      std::swap(perm[i], perm[j]);
    }
    for (int64_t i = 0; i <= folds; ++i) fold_start[i] = i * l / folds;
  }

  // Folds run several at once when there are threads for them; each gets an equal share of the cache.
  const auto workers =
      static_cast<int64_t>(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
  const int64_t concurrent = std::clamp<int64_t>(workers, 1, folds);
  SvmParams fold_params = params;
  fold_params.cache_mb = params.cache_mb / static_cast<double>(concurrent);
  out.target.assign(static_cast<size_t>(l), 0.0);
  const auto labels = data.labels.Host();
  const auto indptr = data.indptr.Host();
  const auto indices = data.indices.Host();
  const auto values = data.values.Host();
  parallel_for<int64_t>(0, folds, 1, [&](int64_t f) {
    const int64_t begin = fold_start[f];
    const int64_t end = fold_start[f + 1];
    const SvmModel model = TrainSvm(Subset(data, perm, begin, end), fold_params, nullptr, solver);
    for (int64_t j = begin; j < end; ++j) {
      const int32_t r = perm[j];
      const auto b = static_cast<size_t>(indptr[r]);
      const auto n = static_cast<size_t>(indptr[r + 1] - indptr[r]);
      out.target[r] = PredictRow(model, indices.subspan(b, n), values.subspan(b, n));
    }
  });

  // svm-train's do_cross_validation sums, in row order.
  int64_t correct = 0;
  double error = 0;
  double sum_p = 0;
  double sum_t = 0;
  double sum_pp = 0;
  double sum_tt = 0;
  double sum_pt = 0;
  for (int64_t r = 0; r < l; ++r) {
    const double p = out.target[r];
    const double t = labels[r];
    correct += p == t;
    error += (p - t) * (p - t);
    sum_p += p;
    sum_t += t;
    sum_pp += p * p;
    sum_tt += t * t;
    sum_pt += p * t;
  }
  const auto n = static_cast<double>(l);
  out.accuracy = 100.0 * static_cast<double>(correct) / n;
  out.mean_squared_error = error / n;
  const double num = n * sum_pt - sum_p * sum_t;
  out.squared_correlation = num * num / ((n * sum_pp - sum_p * sum_p) * (n * sum_tt - sum_t * sum_t));
  return out;
}

}  // namespace tessel::svm
