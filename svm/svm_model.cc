// LIBSVM model files written (svm_save_model; svm_model_read.cc reads them) and one-vs-one prediction with voting
// (svm_predict_values), plus the tessel sidecar that records the training dimension.
#include "svm/svm_model.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "core/output_guard.h"
#include "core/parallel.h"

namespace tessel::svm {

kernels::SparseRowsView SvmModel::SupportVectors() const { return {sv_indptr, sv_indices, sv_values, num_features}; }

void SvmModel::Validate() const {
  TESSEL_CHECK(nr_class >= 1, "SVM model: nr_class is {}; a C-SVC model has at least 1 class", nr_class);
  const auto pairs = static_cast<size_t>(nr_class) * static_cast<size_t>(nr_class - 1) / 2;
  const bool classes = IsClassification(type);
  TESSEL_CHECK(classes || nr_class == 2, "SVM model: nr_class is {}; a {} model has nr_class 2", nr_class,
               SvmTypeName(type));
  TESSEL_CHECK(labels.size() == (classes ? static_cast<size_t>(nr_class) : 0), "SVM model: {} labels for {} classes",
               labels.size(), classes ? nr_class : 0);
  {
    std::vector<int32_t> sorted = labels;
    std::sort(sorted.begin(), sorted.end());
    const auto dup = std::adjacent_find(sorted.begin(), sorted.end());
    TESSEL_CHECK(dup == sorted.end(), "SVM model: label {} appears twice; every class needs its own label", *dup);
  }
  TESSEL_CHECK(rho.size() == pairs, "SVM model: {} rho values for {} class pairs", rho.size(), pairs);
  TESSEL_CHECK(prob_a.empty() || prob_a.size() == pairs, "SVM model: {} probA values for {} class pairs", prob_a.size(),
               pairs);
  TESSEL_CHECK(prob_b.empty() || prob_b.size() == pairs, "SVM model: {} probB values for {} class pairs", prob_b.size(),
               pairs);
  if (IsRegression(type)) {
    TESSEL_CHECK(prob_b.empty(),
                 "SVM model: a regression model has a probB line; its probability model is probA alone (the Laplace "
                 "scale), as svm-train writes it");
    TESSEL_CHECK(prob_a.empty() || prob_a[0] >= 0, "SVM model: the Laplace scale probA {} must not be negative",
                 prob_a.empty() ? 0.0 : prob_a[0]);
  } else {
    TESSEL_CHECK(prob_a.empty() == prob_b.empty(), "SVM model: probA and probB come together ({} and {} values)",
                 prob_a.size(), prob_b.size());
  }
  TESSEL_CHECK(type != SvmType::kOneClass || prob_a.empty(), "SVM model: a one_class model has no probA");
  TESSEL_CHECK(nr_sv.size() == (classes ? static_cast<size_t>(nr_class) : 0),
               "SVM model: nr_sv has {} entries for {} classes", nr_sv.size(), classes ? nr_class : 0);
  int64_t sum = 0;
  for (const int32_t n : nr_sv) {
    TESSEL_CHECK(n >= 0, "SVM model: nr_sv holds {}; support-vector counts are 0 or more", n);
    sum += n;
  }
  TESSEL_CHECK(!classes || sum == total_sv(), "SVM model: nr_sv adds up to {} but there are {} support vectors", sum,
               total_sv());
  TESSEL_CHECK(sv_coef.size() == static_cast<size_t>((nr_class - 1) * total_sv()),
               "SVM model: {} coefficients for {} classes and {} support vectors", sv_coef.size(), nr_class,
               total_sv());
  TESSEL_CHECK(sv_indices.size() == sv_values.size() && !sv_indptr.empty() && sv_indptr.front() == 0 &&
                   sv_indptr.back() == static_cast<int64_t>(sv_indices.size()),
               "SVM model: support-vector arrays disagree");
  // Rows as the kernels read them: offsets ascending and within the arrays (checked before a row is read), feature
  // ids ascending within a row, non-negative and below num_features.
  for (int64_t r = 0; r < total_sv(); ++r) {
    TESSEL_CHECK(sv_indptr[r] <= sv_indptr[r + 1] && sv_indptr[r + 1] <= static_cast<int64_t>(sv_indices.size()),
                 "SVM model: support vector {} has a negative length or runs past the arrays", r);
    for (int64_t e = sv_indptr[r]; e < sv_indptr[r + 1]; ++e) {
      TESSEL_CHECK(sv_indices[e] >= 0 && (e == sv_indptr[r] || sv_indices[e] > sv_indices[e - 1]),
                   "SVM model: the feature ids of support vector {} are not ascending non-negative ids", r);
      TESSEL_CHECK(sv_indices[e] < num_features,
                   "SVM model: support vector {} has feature id {} but num_features is {} (the training data's "
                   "feature count must exceed every support vector's feature id)",
                   r, sv_indices[e], num_features);
    }
  }
  TESSEL_CHECK(num_features >= 0 && num_features <= kMaxModelFeatures,
               "SVM model: num_features {} is outside [0, {}] (feature ids are 32-bit)", num_features,
               kMaxModelFeatures);
  TESSEL_CHECK(sv_rows.empty() || static_cast<int64_t>(sv_rows.size()) == total_sv(),
               "SVM model: {} training rows for {} support vectors", sv_rows.size(), total_sv());
  for (const int64_t r : sv_rows) TESSEL_CHECK(r >= 0, "SVM model: a support vector's training row is {}", r);
  // Every number finite: one NaN or infinity would make every prediction the same.
  const auto finite = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
  };
  TESSEL_CHECK(finite(rho) && finite(prob_a) && finite(prob_b), "SVM model: a rho, probA or probB value is not finite");
  TESSEL_CHECK(finite(sv_coef), "SVM model: a support-vector coefficient is not finite");
  TESSEL_CHECK(finite(sv_values), "SVM model: a support-vector feature value is not finite");
  ValidateKernel();
}

void SvmModel::ValidateKernel() const {
  // LIBSVM's svm_check_parameter for the model's kernel, and finite numbers.
  const auto t = kernel.type;
  TESSEL_CHECK(t == kernels::SvmKernelType::kLinear || t == kernels::SvmKernelType::kPolynomial ||
                   t == kernels::SvmKernelType::kRbf || t == kernels::SvmKernelType::kSigmoid,
               "SVM model: kernel_type {} is not linear, polynomial, rbf or sigmoid", static_cast<int>(t));
  TESSEL_CHECK(std::isfinite(kernel.gamma) && kernel.gamma >= 0, "SVM model: gamma {} must be a finite number >= 0",
               kernel.gamma);
  TESSEL_CHECK(std::isfinite(kernel.coef0), "SVM model: coef0 {} is not finite", kernel.coef0);
  TESSEL_CHECK(t != kernels::SvmKernelType::kPolynomial || kernel.degree >= 0,
               "SVM model: degree {} of the polynomial kernel must not be negative", kernel.degree);
  // svm-train and tessel leave gamma 0 (1/num_features) only for data without features: then no support vector
  // has one. With features, gamma 0 makes every RBF value 1 and every polynomial or sigmoid one a constant.
  TESSEL_CHECK(t == kernels::SvmKernelType::kLinear || kernel.gamma > 0 || sv_indices.empty(),
               "SVM model: gamma 0 with kernel_type {} and support vectors that have features (training sets "
               "gamma to 1/num_features; a model with gamma 0 is damaged)",
               kernels::SvmKernelName(t));
}

std::string SidecarPath(const std::filesystem::path& model_path) { return model_path.string() + ".json"; }

void CheckSvmModelOutput(const std::filesystem::path& path, bool force, std::string_view flag,
                         std::span<const std::filesystem::path> inputs) {
  if (path.empty()) return;
  const std::filesystem::path model[1] = {path};
  const std::filesystem::path side[1] = {SidecarPath(path)};
  CheckOutputPath(path, OutputKind::kFile, force, flag, inputs, side);
  CheckOutputPath(side[0], OutputKind::kFile, force, fmt::format("{}'s sidecar", flag), inputs, model);
}

namespace {

// One list line of the model file's header: the key, then each value after a space, reals as LIBSVM's %.17g.
template <typename T>
void WriteHeaderRow(fmt::memory_buffer& out, std::string_view key, const std::vector<T>& values) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "{}", key);
  for (const T v : values) {
    if constexpr (std::is_floating_point_v<T>) {
      fmt::format_to(it, " {:.17g}", v);
    } else {
      fmt::format_to(it, " {}", v);
    }
  }
  fmt::format_to(it, "\n");
}

}  // namespace

void SaveSvmModel(const SvmModel& model, const std::filesystem::path& path, const std::string& extra_json) {
  model.Validate();
  const auto& k = model.kernel;
  fmt::memory_buffer out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "svm_type {}\nkernel_type {}\n", SvmTypeName(model.type), kernels::SvmKernelName(k.type));
  if (k.type == kernels::SvmKernelType::kPolynomial) fmt::format_to(it, "degree {}\n", k.degree);
  if (k.type != kernels::SvmKernelType::kLinear) fmt::format_to(it, "gamma {:.17g}\n", k.gamma);
  if (k.type == kernels::SvmKernelType::kPolynomial || k.type == kernels::SvmKernelType::kSigmoid)
    fmt::format_to(it, "coef0 {:.17g}\n", k.coef0);
  fmt::format_to(it, "nr_class {}\ntotal_sv {}\n", model.nr_class, model.total_sv());
  WriteHeaderRow(out, "rho", model.rho);
  if (IsClassification(model.type)) WriteHeaderRow(out, "label", model.labels);
  if (!model.prob_a.empty()) WriteHeaderRow(out, "probA", model.prob_a);
  if (!model.prob_b.empty()) WriteHeaderRow(out, "probB", model.prob_b);
  if (IsClassification(model.type)) WriteHeaderRow(out, "nr_sv", model.nr_sv);
  fmt::format_to(it, "SV\n");
  const int64_t l = model.total_sv();
  for (int64_t s = 0; s < l; ++s) {
    for (int32_t c = 0; c + 1 < model.nr_class; ++c) fmt::format_to(it, "{:.17g} ", model.sv_coef[c * l + s]);
    for (int64_t e = model.sv_indptr[s]; e < model.sv_indptr[s + 1]; ++e)
      fmt::format_to(it, "{}:{:.8g} ", int64_t{model.sv_indices[e]} + 1, model.sv_values[e]);
    fmt::format_to(it, "\n");
  }
  WriteFileAtomic(path, std::string_view(out.data(), out.size()));

  nlohmann::json side;
  side["format"] = "tessel-svm-model-sidecar";
  side["version"] = 1;
  side["num_features"] = model.num_features;
  side["training"] = nlohmann::json::parse(extra_json);
  try {
    WriteFileAtomic(SidecarPath(path), side.dump(2) + "\n");
  } catch (const Error&) {
    std::error_code ec;  // a failed save leaves no model behind (the sidecar carries its feature count)
    std::filesystem::remove(path, ec);
    throw;
  }
}

double PredictRow(const SvmModel& model, std::span<const int32_t> indices, std::span<const double> values,
                  std::vector<double>* decision_values) {
  const int64_t l = model.total_sv();
  const auto svs = model.SupportVectors();
  std::vector<double> kvalue(static_cast<size_t>(l));
  for (int64_t s = 0; s < l; ++s)
    kvalue[s] = kernels::KernelValue(model.kernel, indices, values, svs.RowIndices(s), svs.RowValues(s));
  if (!IsClassification(model.type)) {  // LIBSVM: one coefficient row, one rho
    double sum = 0;
    for (int64_t s = 0; s < l; ++s) sum += model.sv_coef[static_cast<size_t>(s)] * kvalue[static_cast<size_t>(s)];
    sum -= model.rho[0];
    if (decision_values != nullptr) decision_values->assign(1, sum);
    if (model.type == SvmType::kOneClass) return sum > 0 ? 1 : -1;
    return sum;
  }
  const int32_t n = model.nr_class;
  std::vector<int64_t> start(static_cast<size_t>(n), 0);
  for (int32_t c = 1; c < n; ++c) start[c] = start[c - 1] + model.nr_sv[c - 1];
  std::vector<int32_t> vote(static_cast<size_t>(n), 0);
  if (decision_values != nullptr) decision_values->clear();
  int64_t p = 0;
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t j = i + 1; j < n; ++j) {
      double sum = 0;
      const double* coef1 = model.sv_coef.data() + static_cast<int64_t>(j - 1) * l;
      const double* coef2 = model.sv_coef.data() + static_cast<int64_t>(i) * l;
      for (int64_t k = 0; k < model.nr_sv[i]; ++k) sum += coef1[start[i] + k] * kvalue[start[i] + k];
      for (int64_t k = 0; k < model.nr_sv[j]; ++k) sum += coef2[start[j] + k] * kvalue[start[j] + k];
      sum -= model.rho[p];
      if (decision_values != nullptr) decision_values->push_back(sum);
      if (sum > 0)
        ++vote[i];
      else
        ++vote[j];
      ++p;
    }
  }
  int32_t best = 0;
  for (int32_t c = 1; c < n; ++c)
    if (vote[c] > vote[best]) best = c;
  return model.labels[best];
}

namespace {

// LIBSVM's sigmoid_predict: 1 / (1 + exp(f A + B)) written to avoid cancellation.
double SigmoidPredict(double decision_value, double a, double b) {
  const double f = decision_value * a + b;
  if (f >= 0) return std::exp(-f) / (1.0 + std::exp(-f));
  return 1.0 / (1 + std::exp(f));
}

// LIBSVM's multiclass_probability (Wu, Lin, Weng 2004, method 2): p from the pairwise r[i][j] = P(i | i or j).
void MulticlassProbability(int32_t k, const std::vector<std::vector<double>>& r, std::vector<double>* p_out) {
  std::vector<double>& p = *p_out;
  p.assign(static_cast<size_t>(k), 1.0 / k);
  std::vector<std::vector<double>> q(static_cast<size_t>(k), std::vector<double>(static_cast<size_t>(k), 0.0));
  std::vector<double> qp(static_cast<size_t>(k));
  for (int32_t t = 0; t < k; ++t) {
    q[t][t] = 0;
    for (int32_t j = 0; j < t; ++j) {
      q[t][t] += r[j][t] * r[j][t];
      q[t][j] = q[j][t];
    }
    for (int32_t j = t + 1; j < k; ++j) {
      q[t][t] += r[j][t] * r[j][t];
      q[t][j] = -r[j][t] * r[t][j];
    }
  }
  const int max_iter = std::max(100, k);
  const double eps = 0.005 / k;
  for (int iter = 0; iter < max_iter; ++iter) {
    double pqp = 0;
    for (int32_t t = 0; t < k; ++t) {
      qp[t] = 0;
      for (int32_t j = 0; j < k; ++j) qp[t] += q[t][j] * p[j];
      pqp += p[t] * qp[t];
    }
    double max_error = 0;
    for (int32_t t = 0; t < k; ++t) max_error = std::max(max_error, std::fabs(qp[t] - pqp));
    if (max_error < eps) break;
    for (int32_t t = 0; t < k; ++t) {
      const double diff = (-qp[t] + pqp) / q[t][t];
      p[t] += diff;
      pqp = (pqp + diff * (diff * q[t][t] + 2 * qp[t])) / (1 + diff) / (1 + diff);
      for (int32_t j = 0; j < k; ++j) {
        qp[j] = (qp[j] + diff * q[t][j]) / (1 + diff);
        p[j] /= (1 + diff);
      }
    }
  }
}

}  // namespace

double PredictRowProbability(const SvmModel& model, std::span<const int32_t> indices, std::span<const double> values,
                             std::vector<double>* probabilities) {
  TESSEL_CHECK(IsClassification(model.type) && model.HasProbability(),
               "the model has no probability estimates (train it with -b 1)");
  std::vector<double> dec;
  (void)PredictRow(model, indices, values, &dec);
  const int32_t n = model.nr_class;
  constexpr double kMinProb = 1e-7;
  std::vector<std::vector<double>> pairwise(static_cast<size_t>(n), std::vector<double>(static_cast<size_t>(n), 0.0));
  size_t k = 0;
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t j = i + 1; j < n; ++j, ++k) {
      pairwise[i][j] =
          std::min(std::max(SigmoidPredict(dec[k], model.prob_a[k], model.prob_b[k]), kMinProb), 1 - kMinProb);
      pairwise[j][i] = 1 - pairwise[i][j];
    }
  }
  std::vector<double>& p = *probabilities;
  if (n == 2) {
    p = {pairwise[0][1], pairwise[1][0]};
  } else {
    MulticlassProbability(n, pairwise, &p);
  }
  int32_t best = 0;
  for (int32_t c = 1; c < n; ++c)
    if (p[c] > p[best]) best = c;
  return model.labels[best];
}

PredictionScore ScorePredictions(std::span<const double> predicted, std::span<const double> targets) {
  TESSEL_CHECK(predicted.size() == targets.size(), "ScorePredictions: {} predictions, {} targets", predicted.size(),
               targets.size());
  PredictionScore s;
  if (targets.empty()) return s;
  double error = 0;
  double sum_p = 0;
  double sum_t = 0;
  double sum_pp = 0;
  double sum_tt = 0;
  double sum_pt = 0;
  for (size_t r = 0; r < targets.size(); ++r) {
    const double p = predicted[r];
    const double t = targets[r];
    s.correct += p == t;
    error += (p - t) * (p - t);
    sum_p += p;
    sum_t += t;
    sum_pp += p * p;
    sum_tt += t * t;
    sum_pt += p * t;
  }
  const auto n = static_cast<double>(targets.size());
  s.accuracy = 100.0 * static_cast<double>(s.correct) / n;
  s.mean_squared_error = error / n;
  const double num = n * sum_pt - sum_p * sum_t;
  s.squared_correlation = num * num / ((n * sum_pp - sum_p * sum_p) * (n * sum_tt - sum_t * sum_t));
  return s;
}

int64_t RowsBeyondModelFeatures(const SvmModel& model, const datasets::SparseRowDataset& data) {
  const auto rows = data.Rows();
  int64_t count = 0;
  for (int64_t r = 0; r < rows.num_rows(); ++r) {
    const auto idx = rows.RowIndices(r);
    count += !idx.empty() && idx.back() >= model.num_features ? 1 : 0;  // ids ascend within a row
  }
  return count;
}

void CheckModelMeetsData(const SvmModel& model, const datasets::SparseRowDataset& data, std::string_view model_name) {
  if (model.sv_indices.empty()) return;
  const auto [lowest, highest] = std::minmax_element(model.sv_indices.begin(), model.sv_indices.end());
  const auto rows = data.Rows();
  int64_t data_highest = -1;
  for (int64_t r = 0; r < rows.num_rows(); ++r) {
    const auto idx = rows.RowIndices(r);
    if (!idx.empty()) data_highest = std::max<int64_t>(data_highest, idx.back());  // ids ascend within a row
  }
  if (data_highest < 0 || *lowest <= data_highest) return;
  throw Error(fmt::format(
      "{}: its support vectors use feature ids {} to {}, all beyond the largest feature id of {} ({}): the model "
      "and the data share no feature; predict with the data the model was trained for, or check the model's "
      "feature ids (damaged?)",
      model_name, int64_t{*lowest} + 1, int64_t{*highest} + 1, data.name.empty() ? "the data" : data.name,
      data_highest + 1));
}

std::vector<double> PredictSvm(const SvmModel& model, const datasets::SparseRowDataset& data) {
  std::vector<double> out(static_cast<size_t>(data.num_rows));
  ForEachRow(data, [&](int64_t r, std::span<const int32_t> idx, std::span<const double> val) {
    out[r] = PredictRow(model, idx, val);
  });
  return out;
}

std::vector<double> PredictSvmProbability(const SvmModel& model, const datasets::SparseRowDataset& data,
                                          std::vector<std::vector<double>>* probabilities) {
  std::vector<double> out(static_cast<size_t>(data.num_rows));
  probabilities->assign(static_cast<size_t>(data.num_rows), {});
  ForEachRow(data, [&](int64_t r, std::span<const int32_t> idx, std::span<const double> val) {
    out[r] = PredictRowProbability(model, idx, val, &(*probabilities)[static_cast<size_t>(r)]);
  });
  return out;
}

}  // namespace tessel::svm
