// SvmModel (LIBSVM's svm_model: for C-SVC and nu-SVC one-vs-one coefficients, rho, labels and support vectors
// grouped by class; for one-class and the regressions one coefficient row and one rho), its text file in LIBSVM's
// format both ways (svm-predict reads ours, we read svm-train's), and prediction (voting, or the decision value).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/parallel.h"
#include "datasets/dataset.h"
#include "kernels/svm_kernel.h"
#include "svm/svm_params.h"

namespace tessel::svm {

// fn(row, its feature ids, its values) for every row of `data`, in parallel (grain 8 rows): the row loop of
// prediction, here and in the Python binding.
template <class Fn>
void ForEachRow(const datasets::SparseRowDataset& data, Fn fn) {
  const CsrView<int32_t, double> rows = data.Rows();
  parallel_for<int64_t>(0, data.num_rows, 8, [&](int64_t r) { fn(r, rows.RowIndices(r), rows.RowValues(r)); });
}

struct SvmModel {
  SvmType type = SvmType::kCSvc;
  kernels::SvmKernelParams kernel;
  int32_t nr_class = 0;         // one-class and the regressions: 2 (LIBSVM's convention), no labels or nr_sv
  std::vector<int32_t> labels;  // class order: first appearance in the training data (-1/+1 pairs: +1 first)
  std::vector<double> rho;      // one per pair (i, j), i < j, in LIBSVM's order
  std::vector<int32_t> nr_sv;   // support vectors per class; the SVs are grouped by class in label order
  // -b 1: Platt's sigmoid per pair, P(class i | decision f) = 1 / (1 + exp(A f + B)) (classification: probA and
  // probB, one each per pair); the regressions' Laplace scale sigma (probA alone, one value).
  std::vector<double> prob_a;
  std::vector<double> prob_b;

  bool HasProbability() const { return IsRegression(type) ? prob_a.size() == 1 : !prob_a.empty() && !prob_b.empty(); }
  // Support vectors as CSR rows with 0-based feature ids.
  std::vector<int64_t> sv_indptr{0};
  std::vector<int32_t> sv_indices;
  std::vector<double> sv_values;
  // The training row of each support vector (0-based; scikit-learn's support_); empty for a model read from a file.
  std::vector<int64_t> sv_rows;
  // (nr_class - 1) rows of total_sv() coefficients, row-major (LIBSVM's sv_coef).
  std::vector<double> sv_coef;
  // Features of the training data (1 + largest 0-based id); from the sidecar file, else the SVs' largest id.
  int64_t num_features = 0;
  bool num_features_known = false;  // true when the training dimension was recorded (not inferred)

  int64_t total_sv() const { return static_cast<int64_t>(sv_indptr.size()) - 1; }
  kernels::SparseRowsView SupportVectors() const;
  // Throws unless the arrays agree with nr_class and total_sv, counts are non-negative, labels distinct, every
  // number finite and the kernel's parameters in range (ValidateKernel).
  void Validate() const;
  // LIBSVM's svm_check_parameter for the model's kernel: gamma >= 0 (> 0 when a support vector has features),
  // degree >= 0 for polynomial kernels, finite gamma and coef0.
  void ValidateKernel() const;
};

// Feature ids are 32-bit: a model's num_features is at most 2^31.
inline constexpr int64_t kMaxModelFeatures = int64_t{1} << 31;

// Writes `path` in LIBSVM's text format (svm_save_model: %.17g numbers, %.8g feature values) and the sidecar
// `path.json` with the training dimension and `extra_json` (training statistics), both atomically.
void SaveSvmModel(const SvmModel& model, const std::filesystem::path& path, const std::string& extra_json = "{}");
// The output guard (core/output_guard.h) for a model `path` and its sidecar `path.json`, both outputs: neither may
// be, contain or lie inside one of `inputs` (or the other), a device or a folder; existing files are replaced only
// with `force`. `flag` names the option ("--model") or the Python argument ("path"). Call before any work.
void CheckSvmModelOutput(const std::filesystem::path& path, bool force, std::string_view flag,
                         std::span<const std::filesystem::path> inputs);
// Reads a LIBSVM C-SVC model (ours or svm-train's); errors name the file and line. Reads `path.json` when present.
SvmModel LoadSvmModel(const std::filesystem::path& path);
std::string SidecarPath(const std::filesystem::path& model_path);

// The prediction for one row (LIBSVM's svm_predict): classification, the label by one-vs-one decision values and
// voting (ties to the earlier class); one-class, +1 or -1 by the sign of the decision value; regression, the
// decision value itself. `decision_values` (optional) receives the nr_class (nr_class - 1) / 2 values (one).
double PredictRow(const SvmModel& model, std::span<const int32_t> indices, std::span<const double> values,
                  std::vector<double>* decision_values = nullptr);

// LIBSVM's svm_predict_probability for a classification model with probA/probB: the pairs' sigmoids, clipped to
// [1e-7, 1 - 1e-7], coupled into class probabilities (two classes: the pair's; more: Wu, Lin and Weng's method 2,
// LIBSVM's multiclass_probability) in the model's class order, and the label of the most probable class (the
// first on ties; it can differ from the vote's).
double PredictRowProbability(const SvmModel& model, std::span<const int32_t> indices, std::span<const double> values,
                             std::vector<double>* probabilities);

// Predicts every row in parallel. Features the model was not trained on enter the kernel as given (svm-predict's
// behaviour: they add to |x|^2 for RBF and meet zeros in the support vectors); PredictSvm(ctx, ...) warns.
std::vector<double> PredictSvm(const SvmModel& model, const datasets::SparseRowDataset& data);

// PredictRowProbability of every row in parallel: the labels, and each row's class probabilities in *probabilities
// (one vector per row, the model's class order).
std::vector<double> PredictSvmProbability(const SvmModel& model, const datasets::SparseRowDataset& data,
                                          std::vector<std::vector<double>>* probabilities);

// svm-predict's (and svm-train -v's) summary of predictions against the targets, its sums taken in row order: the
// accuracy (% of rows predicted exactly), the mean squared error and the squared correlation coefficient.
struct PredictionScore {
  int64_t correct = 0;
  double accuracy = 0;
  double mean_squared_error = 0;
  double squared_correlation = 0;
};
PredictionScore ScorePredictions(std::span<const double> predicted, std::span<const double> targets);

// Rows of `data` with a feature id at or beyond the model's num_features (the training dimension from the sidecar,
// else one past the support vectors' largest feature id).
int64_t RowsBeyondModelFeatures(const SvmModel& model, const datasets::SparseRowDataset& data);

// Refuses to predict `data` with a model that shares no feature with it: every support vector's feature ids lie
// beyond the largest id any row of the data uses (a model for other data, or ids damaged by billions), so the
// kernel never meets a feature of the data. `model_name` names the model file in the message. Models without
// features in their support vectors, and data without features, pass.
void CheckModelMeetsData(const SvmModel& model, const datasets::SparseRowDataset& data, std::string_view model_name);

}  // namespace tessel::svm
