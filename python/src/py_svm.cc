// LIBSVM's formulations in Python (the engine of tessel.SVC, NuSVC, SVR, NuSVR and OneClassSVM): training on CSR
// arrays through app::TrainSvmRows (the options of `train svm`, the formulation included, as JSON from tessel/svm.py),
// the model as a dict of numpy arrays (so estimators pickle without C++ state), decision values and predictions (votes,
// the one-class sign or the regression value) for new rows, and LIBSVM model files both ways.
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <pybind11/stl.h>
#include <nlohmann/json.hpp>

#include "app/options_json.h"
#include "app/run_options.h"
#include "app/train_svm.h"
#include "core/error.h"
#include "core/parallel.h"
#include "python/src/py_common.h"
#include "python/src/py_modules.h"
#include "svm/svm_model.h"
#include "svm/svm_ops.h"
#include "svm/svm_train.h"

namespace tessel::python {
namespace {

template <typename T>
py::array_t<T> ToArray(const std::vector<T>& v) {
  py::array_t<T> out(static_cast<py::ssize_t>(v.size()));
  if (!v.empty()) std::memcpy(out.mutable_data(), v.data(), v.size() * sizeof(T));
  return out;
}

// A model array of the dict: integers (in T's range) for integer T, numbers for double; never a silent wrap.
template <typename T>
std::vector<T> ToVector(const py::handle& h, const char* key) {
  const py::array raw = py::array::ensure(h);
  TESSEL_CHECK(raw, "SVM model: '{}' is not an array", key);
  const char kind = raw.dtype().kind();
  if constexpr (std::is_integral_v<T>) {
    TESSEL_CHECK(kind == 'i' || kind == 'u', "SVM model: '{}' has dtype kind '{}'; integers are needed", key, kind);
    const auto a = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(raw);
    TESSEL_CHECK(a, "SVM model: '{}' is not an integer array", key);
    std::vector<T> out;
    out.reserve(static_cast<size_t>(a.size()));
    for (py::ssize_t i = 0; i < a.size(); ++i) {
      const int64_t v = a.data()[i];
      bool fits = kind != 'u' || v >= 0;  // a uint64 above 2^63 arrives negative
      if constexpr (sizeof(T) < sizeof(int64_t))
        fits = fits && v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max();
      TESSEL_CHECK(fits, "SVM model: '{}' holds {}, outside the range of its {}-bit entries", key, v, 8 * sizeof(T));
      out.push_back(static_cast<T>(v));
    }
    return out;
  } else {
    TESSEL_CHECK(kind == 'b' || kind == 'i' || kind == 'u' || kind == 'f',
                 "SVM model: '{}' has dtype kind '{}'; numbers are needed", key, kind);
    const auto a = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(raw);
    TESSEL_CHECK(a, "SVM model: '{}' is not a numeric array", key);
    return std::vector<T>(a.data(), a.data() + a.size());
  }
}

// A scalar of the dict as T, with the key in the message instead of pybind11's cast error.
template <typename T>
T ToScalar(const py::handle& h, const char* key) {
  try {
    return h.cast<T>();
  } catch (const py::cast_error&) {
    throw Error(fmt::format("SVM model: '{}' is {}; {} is needed", key, py::repr(h).cast<std::string>(),
                            std::is_same_v<T, std::string> ? "a string"
                            : std::is_integral_v<T>        ? "an integer in range"
                                                           : "a number"));
  }
}

py::dict ModelToDict(const svm::SvmModel& m) {
  py::dict d;
  d["svm_type"] = std::string(svm::SvmTypeName(m.type));
  d["kernel"] = std::string(EnumName(m.kernel.type));
  d["degree"] = m.kernel.degree;
  d["gamma"] = m.kernel.gamma;
  d["coef0"] = m.kernel.coef0;
  d["labels"] = ToArray(m.labels);
  d["rho"] = ToArray(m.rho);
  d["nr_sv"] = ToArray(m.nr_sv);
  d["sv_rows"] = ToArray(m.sv_rows);
  d["sv_indptr"] = ToArray(m.sv_indptr);
  d["sv_indices"] = ToArray(m.sv_indices);
  d["sv_values"] = ToArray(m.sv_values);
  py::array_t<double> coef = ToArray(m.sv_coef);
  d["sv_coef"] = coef.reshape({static_cast<py::ssize_t>(std::max(m.nr_class - 1, 0)), m.total_sv()});
  d["num_features"] = m.num_features;
  d["prob_a"] = ToArray(m.prob_a);  // -b 1 / probability=True: Platt's A per pair (regression: the Laplace scale)
  d["prob_b"] = ToArray(m.prob_b);
  return d;
}

svm::SvmModel ModelFromDict(const py::dict& d) {
  svm::SvmModel m;
  for (const char* key : {"kernel", "degree", "gamma", "coef0", "labels", "rho", "nr_sv", "sv_indptr", "sv_indices",
                          "sv_values", "sv_coef", "num_features"})
    TESSEL_CHECK(d.contains(key), "SVM model: '{}' is missing", key);
  // A dict without svm_type is a C-SVC's (pickled before the other formulations existed).
  if (d.contains("svm_type"))
    m.type = ParseEnum<svm::SvmType>(ToScalar<std::string>(d["svm_type"], "svm_type"), "svm_type");
  m.kernel.type = ParseEnum<kernels::SvmKernelType>(ToScalar<std::string>(d["kernel"], "kernel"), "kernel");
  m.kernel.degree = ToScalar<int>(d["degree"], "degree");
  m.kernel.gamma = ToScalar<double>(d["gamma"], "gamma");
  m.kernel.coef0 = ToScalar<double>(d["coef0"], "coef0");
  m.labels = ToVector<int32_t>(d["labels"], "labels");
  // One-class and the regressions have no labels and LIBSVM's nr_class 2 (one coefficient row, one rho).
  m.nr_class = svm::IsClassification(m.type) ? static_cast<int32_t>(m.labels.size()) : 2;
  m.rho = ToVector<double>(d["rho"], "rho");
  m.nr_sv = ToVector<int32_t>(d["nr_sv"], "nr_sv");
  m.sv_indptr = ToVector<int64_t>(d["sv_indptr"], "sv_indptr");
  m.sv_indices = ToVector<int32_t>(d["sv_indices"], "sv_indices");
  m.sv_values = ToVector<double>(d["sv_values"], "sv_values");
  m.sv_coef = ToVector<double>(d["sv_coef"], "sv_coef");
  m.num_features = ToScalar<int64_t>(d["num_features"], "num_features");
  m.num_features_known = true;
  if (d.contains("prob_a")) m.prob_a = ToVector<double>(d["prob_a"], "prob_a");
  if (d.contains("prob_b")) m.prob_b = ToVector<double>(d["prob_b"], "prob_b");
  m.Validate();
  return m;
}

datasets::SparseRowDataset Rows(const I64& indptr, const I32& indices, const F64& values, const F64& labels,
                                int64_t num_features) {
  datasets::SparseRowDataset d = CopyRows(indptr, indices, values, labels, num_features, svm::kMaxModelFeatures);
  if (labels.size() == 0) d.labels = Buffer<double>(static_cast<size_t>(d.num_rows));  // no targets: zeros
  d.Validate();
  return d;
}

// The estimators' fit: app::TrainSvmRows (the one-process run of `tessel train svm`, its set-up and checks included)
// on CSR arrays, with the options of `train svm` as their Python keywords in JSON (the formulation's parameters,
// threads, device, solver, working_set), the class weights, scikit-learn's class order and random_state's seed.
py::tuple Fit(const I64& indptr, const I32& indices, const F64& values, const F64& labels, int64_t num_features,
              const std::string& options_json, const std::vector<std::pair<int32_t, double>>& weights,
              bool sorted_classes, int64_t random_seed, bool verbose) {
  app::TrainSvmOptions options;
  nlohmann::json in;
  try {
    in = nlohmann::json::parse(options_json);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("options_json: not valid JSON ({})", e.what()));
  }
  app::OptionsFromJson(in, &options);
  for (const auto& [label, weight] : weights) options.params.weights.push_back({label, weight});
  options.params.class_order = sorted_classes ? svm::ClassOrder::kSorted : svm::ClassOrder::kFirstAppearance;
  options.params.random_seed = random_seed;
  options.verbose = verbose;
  datasets::SparseRowDataset data = Rows(indptr, indices, values, labels, num_features);
  svm::TrainReport report;
  svm::SvmModel model = RunReleased([&] { return app::TrainSvmRows(options, data, &report); });
  return py::make_tuple(ModelToDict(model), report.ToJson().dump());
}

// fn(row, its feature ids, its values) for every row of `data`, in parallel on `threads` workers without the GIL.
template <class Fn>
void ForEachRow(const datasets::SparseRowDataset& data, int threads, Fn fn) {
  RunReleased([&] {
    ThreadLimit limit(threads);
    svm::ForEachRow(data, fn);
  });
}

// The rows to predict, named X in messages, after checking that they share features with the model (the model
// file it was loaded from is named, when it was).
datasets::SparseRowDataset PredictRows(const py::dict& model_dict, const svm::SvmModel& model, const I64& indptr,
                                       const I32& indices, const F64& values, int64_t num_features) {
  datasets::SparseRowDataset data = Rows(indptr, indices, values, F64(0), num_features);
  data.name = "X";
  const std::string source =
      model_dict.contains("source") ? ToScalar<std::string>(model_dict["source"], "source") : "the model";
  svm::CheckModelMeetsData(model, data, source);
  return data;
}

// Decision values [rows x pairs] (LIBSVM's order; one column for one-class and the regressions) and LIBSVM's
// prediction of CSR rows: the voted class, the one-class sign (+1/-1) or the regression value.
py::tuple Decision(const py::dict& model_dict, const I64& indptr, const I32& indices, const F64& values,
                   int64_t num_features, int threads) {
  TESSEL_CHECK(threads >= 0, "threads={} must be 0 (all cores) or positive", threads);
  const svm::SvmModel model = ModelFromDict(model_dict);
  const datasets::SparseRowDataset data = PredictRows(model_dict, model, indptr, indices, values, num_features);
  const auto pairs = static_cast<int64_t>(model.nr_class) * (model.nr_class - 1) / 2;
  py::array_t<double> dec({data.num_rows, pairs});
  py::array_t<double> pred(data.num_rows);
  double* dv = dec.mutable_data();
  double* pv = pred.mutable_data();
  ForEachRow(data, threads, [&](int64_t r, std::span<const int32_t> idx, std::span<const double> val) {
    std::vector<double> d;
    pv[r] = svm::PredictRow(model, idx, val, &d);
    for (int64_t k = 0; k < pairs; ++k) dv[r * pairs + k] = d[static_cast<size_t>(k)];
  });
  return py::make_tuple(dec, pred);
}

// LIBSVM's svm_predict_probability of CSR rows: [rows x classes] probabilities in the model's class order.
py::array_t<double> Probability(const py::dict& model_dict, const I64& indptr, const I32& indices, const F64& values,
                                int64_t num_features, int threads) {
  TESSEL_CHECK(threads >= 0, "threads={} must be 0 (all cores) or positive", threads);
  const svm::SvmModel model = ModelFromDict(model_dict);
  TESSEL_CHECK(svm::IsClassification(model.type) && model.HasProbability(),
               "predict_proba: the model has no probability estimates (fit with probability=True)");
  const datasets::SparseRowDataset data = PredictRows(model_dict, model, indptr, indices, values, num_features);
  std::vector<std::vector<double>> probs;
  RunReleased([&] {
    ThreadLimit limit(threads);
    (void)svm::PredictSvmProbability(model, data, &probs);
  });
  const int64_t k = model.nr_class;
  py::array_t<double> out({data.num_rows, k});
  double* ov = out.mutable_data();
  for (int64_t r = 0; r < data.num_rows; ++r)
    for (int64_t c = 0; c < k; ++c) ov[r * k + c] = probs[static_cast<size_t>(r)][static_cast<size_t>(c)];
  return out;
}

void Save(const py::dict& model_dict, const std::string& path, bool force) {
  const svm::SvmModel model = ModelFromDict(model_dict);
  svm::CheckSvmModelOutput(path, force, "path", {});
  RunReleased([&] { svm::SaveSvmModel(model, path); });
}

py::dict Load(const std::string& path) {
  const svm::SvmModel model = RunReleased([&] { return svm::LoadSvmModel(path); });
  return ModelToDict(model);
}

}  // namespace

void RegisterSvm(py::module_& m) {
  m.def(
      "svm_params", [] { return app::DescribeOptions(svm::SvmParams{}).dump(); },
      "The parameters of `tessel train svm` (name, help, default) as JSON");
  m.def("svm_fit", &Fit, py::arg("indptr"), py::arg("indices"), py::arg("values"), py::arg("labels"),
        py::arg("num_features"), py::arg("options_json"), py::arg("weights"), py::arg("sorted_classes"),
        py::arg("random_seed"), py::arg("verbose"));
  m.def("svm_decision", &Decision, py::arg("model"), py::arg("indptr"), py::arg("indices"), py::arg("values"),
        py::arg("num_features"), py::arg("threads"));
  m.def("svm_probability", &Probability, py::arg("model"), py::arg("indptr"), py::arg("indices"), py::arg("values"),
        py::arg("num_features"), py::arg("threads"));
  m.def("svm_save", &Save, py::arg("model"), py::arg("path"), py::arg("force"));
  m.def("svm_load", &Load, py::arg("path"));
}

}  // namespace tessel::python
