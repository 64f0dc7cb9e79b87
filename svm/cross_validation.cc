// LIBSVM's svm_cross_validation (svm.cpp 3.24) and svm-train's do_cross_validation summary.
#include "svm/cross_validation.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <tbb/global_control.h>

#include "core/error.h"
#include "core/log.h"
#include "core/parallel.h"

namespace tessel::svm {

std::string CrossValidationResult::Summary(SvmType type) const {
  if (IsRegression(type)) {
    return fmt::format(
        "Cross Validation Mean squared error = {:g}\nCross Validation Squared correlation coefficient = {:g}\n",
        mean_squared_error, squared_correlation);
  }
  return fmt::format("Cross Validation Accuracy = {:g}%\n", accuracy);
}

CrossValidationResult CrossValidate(const datasets::SparseRowDataset& data, const SvmParams& params, int folds,
                                    const BinarySolver& solver, ShuffleRand* shared_rand, const FitRunner* fits,
                                    std::string_view asked_by) {
  params.Validate();
  const std::string who = asked_by.empty() ? fmt::format("-v {}", folds) : std::string(asked_by);
  TESSEL_CHECK(folds >= 2, "{}: cross-validation needs at least 2 folds", who);
  const int64_t l = data.num_rows;
  TESSEL_CHECK(l >= 1, "{}: no rows to cross-validate", data.name.empty() ? "data" : data.name);
  CrossValidationResult out;
  if (folds > l) {
    log::Warn("{}: more folds than the {} rows; leave-one-out cross-validation instead (as svm-train)", who, l);
    folds = static_cast<int>(l);
  }
  out.folds = folds;
  ShuffleRand local(params.random_seed);
  ShuffleRand& rand = shared_rand != nullptr ? *shared_rand : local;
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
        const int64_t j = i + rand.Below(count - i);
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
      const int64_t j = i + rand.Below(l - i);
      std::swap(perm[i], perm[j]);
    }
    for (int64_t i = 0; i <= folds; ++i) fold_start[i] = i * l / folds;
  }

  // Folds run several at once when there are threads for them; each gets an equal share of the cache. With -b 1
  // they run in order: each fold's probability fit draws from LIBSVM's one rand() in turn.
  const auto workers =
      static_cast<int64_t>(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
  const int64_t concurrent = params.probability != 0 ? 1 : std::clamp<int64_t>(workers, 1, folds);
  SvmParams fold_params = params;
  fold_params.cache_mb = params.cache_mb / static_cast<double>(concurrent);
  out.target.assign(static_cast<size_t>(l), 0.0);
  const auto labels = data.labels.Host();
  const auto indptr = data.indptr.Host();
  const auto indices = data.indices.Host();
  const auto values = data.values.Host();
  const bool spread = fits != nullptr && fits->run && params.probability == 0;
  // A fold's predictions for its held-out rows, in fold order.
  const auto run_fold = [&](int64_t f) {
    const int64_t begin = fold_start[f];
    const int64_t end = fold_start[f + 1];
    std::vector<int32_t> rows;
    std::vector<double> labs;
    for (int64_t k = 0; k < l; ++k) {
      if (k >= begin && k < end) continue;
      rows.push_back(perm[k]);
      labs.push_back(labels[perm[k]]);
    }
    if (IsClassification(params.type) &&
        std::all_of(labs.begin(), labs.end(), [&](double y) { return y == labs[0]; })) {
      // A fold whose training rows hold one class (a rare class, stratified away): LIBSVM's model of one class
      // predicts that class for every row, without a solve or a rand() draw; svm-train reports the accuracy so.
      return std::vector<double>(static_cast<size_t>(end - begin), labs[0]);
    }
    const SvmModel model = TrainSvm(datasets::SelectRows<int32_t>(data, rows, labs), fold_params, nullptr,
                                    spread ? fits->solver : solver, &rand, spread ? nullptr : fits);
    const bool probabilities = params.probability != 0 && IsClassification(params.type);
    std::vector<double> p;
    std::vector<double> predicted;
    for (int64_t j = begin; j < end; ++j) {
      const int32_t r = perm[j];
      const auto b = static_cast<size_t>(indptr[r]);
      const auto n = static_cast<size_t>(indptr[r + 1] - indptr[r]);
      predicted.push_back(probabilities ? PredictRowProbability(model, indices.subspan(b, n), values.subspan(b, n), &p)
                                        : PredictRow(model, indices.subspan(b, n), values.subspan(b, n)));
    }
    return predicted;
  };
  const auto keep = [&](int64_t f, const std::vector<double>& predicted) {
    TESSEL_CHECK(static_cast<int64_t>(predicted.size()) == fold_start[f + 1] - fold_start[f],
                 "-v: fold {} predicted {} rows of {}", f, predicted.size(), fold_start[f + 1] - fold_start[f]);
    for (int64_t j = fold_start[f]; j < fold_start[f + 1]; ++j)
      out.target[perm[j]] = predicted[static_cast<size_t>(j - fold_start[f])];
  };
  if (spread) {
    const std::vector<std::vector<double>> all = fits->run(folds, run_fold);
    TESSEL_CHECK(static_cast<int64_t>(all.size()) == folds, "-v: {} results for {} folds", all.size(), folds);
    for (int64_t f = 0; f < folds; ++f) keep(f, all[f]);
  } else if (concurrent == 1) {
    for (int64_t f = 0; f < folds; ++f) keep(f, run_fold(f));
  } else {
    parallel_for<int64_t>(0, folds, 1, [&](int64_t f) { keep(f, run_fold(f)); });  // no fold draws without -b 1
  }

  const PredictionScore score = ScorePredictions(out.target, labels);  // svm-train's do_cross_validation
  out.accuracy = score.accuracy;
  out.mean_squared_error = score.mean_squared_error;
  out.squared_correlation = score.squared_correlation;
  return out;
}

}  // namespace tessel::svm
