// LIBSVM model files (svm_save_model / svm_load_model for C-SVC) and one-vs-one prediction with voting
// (svm_predict_values), plus the tessel sidecar that records the training dimension.
#include "train/svm/svm_model.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "core/parallel.h"
#include "datasets/text_input.h"

namespace tessel::train::svm {

kernels::SparseRowsView SvmModel::SupportVectors() const { return {sv_indptr, sv_indices, sv_values, num_features}; }

void SvmModel::Validate() const {
  TESSEL_CHECK(nr_class >= 1, "SVM model: nr_class is {}", nr_class);
  const auto pairs = static_cast<size_t>(nr_class) * static_cast<size_t>(nr_class - 1) / 2;
  TESSEL_CHECK(labels.size() == static_cast<size_t>(nr_class), "SVM model: {} labels for {} classes", labels.size(),
               nr_class);
  TESSEL_CHECK(rho.size() == pairs, "SVM model: {} rho values for {} class pairs", rho.size(), pairs);
  TESSEL_CHECK(nr_sv.size() == static_cast<size_t>(nr_class), "SVM model: nr_sv has {} entries for {} classes",
               nr_sv.size(), nr_class);
  int64_t sum = 0;
  for (const int32_t n : nr_sv) sum += n;
  TESSEL_CHECK(sum == total_sv(), "SVM model: nr_sv adds up to {} but there are {} support vectors", sum, total_sv());
  TESSEL_CHECK(sv_coef.size() == static_cast<size_t>((nr_class - 1) * total_sv()),
               "SVM model: {} coefficients for {} classes and {} support vectors", sv_coef.size(), nr_class,
               total_sv());
  TESSEL_CHECK(sv_indices.size() == sv_values.size() && !sv_indptr.empty() && sv_indptr.front() == 0 &&
                   sv_indptr.back() == static_cast<int64_t>(sv_indices.size()),
               "SVM model: support-vector arrays disagree");
  // Rows as the kernels read them: offsets ascending, feature ids ascending within a row and non-negative.
  for (int64_t r = 0; r < total_sv(); ++r) {
    TESSEL_CHECK(sv_indptr[r] <= sv_indptr[r + 1], "SVM model: support vector {} has a negative length", r);
    for (int64_t e = sv_indptr[r]; e < sv_indptr[r + 1]; ++e) {
      TESSEL_CHECK(sv_indices[e] >= 0 && (e == sv_indptr[r] || sv_indices[e] > sv_indices[e - 1]),
                   "SVM model: the feature ids of support vector {} are not ascending non-negative ids", r);
    }
  }
  TESSEL_CHECK(sv_rows.empty() || static_cast<int64_t>(sv_rows.size()) == total_sv(),
               "SVM model: {} training rows for {} support vectors", sv_rows.size(), total_sv());
}

std::string SidecarPath(const std::filesystem::path& model_path) { return model_path.string() + ".json"; }

void SaveSvmModel(const SvmModel& model, const std::filesystem::path& path, const std::string& extra_json) {
  model.Validate();
  const auto& k = model.kernel;
  fmt::memory_buffer out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "svm_type c_svc\nkernel_type {}\n", kernels::SvmKernelName(k.type));
  if (k.type == kernels::SvmKernelType::kPolynomial) fmt::format_to(it, "degree {}\n", k.degree);
  if (k.type != kernels::SvmKernelType::kLinear) fmt::format_to(it, "gamma {:.17g}\n", k.gamma);
  if (k.type == kernels::SvmKernelType::kPolynomial || k.type == kernels::SvmKernelType::kSigmoid)
    fmt::format_to(it, "coef0 {:.17g}\n", k.coef0);
  fmt::format_to(it, "nr_class {}\ntotal_sv {}\nrho", model.nr_class, model.total_sv());
  for (const double r : model.rho) fmt::format_to(it, " {:.17g}", r);
  fmt::format_to(it, "\nlabel");
  for (const int32_t l : model.labels) fmt::format_to(it, " {}", l);
  fmt::format_to(it, "\n");
  if (!model.prob_a.empty()) {
    fmt::format_to(it, "probA");
    for (const double v : model.prob_a) fmt::format_to(it, " {:.17g}", v);
    fmt::format_to(it, "\n");
  }
  if (!model.prob_b.empty()) {
    fmt::format_to(it, "probB");
    for (const double v : model.prob_b) fmt::format_to(it, " {:.17g}", v);
    fmt::format_to(it, "\n");
  }
  fmt::format_to(it, "nr_sv");
  for (const int32_t n : model.nr_sv) fmt::format_to(it, " {}", n);
  fmt::format_to(it, "\nSV\n");
  const int64_t l = model.total_sv();
  for (int64_t s = 0; s < l; ++s) {
    for (int32_t c = 0; c + 1 < model.nr_class; ++c) fmt::format_to(it, "{:.17g} ", model.sv_coef[c * l + s]);
    for (int64_t e = model.sv_indptr[s]; e < model.sv_indptr[s + 1]; ++e)
      fmt::format_to(it, "{}:{:.8g} ", model.sv_indices[e] + 1, model.sv_values[e]);
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

namespace {

template <typename T>
std::vector<T> ParseList(const datasets::LineCursor& cur, datasets::Fields* fields, std::string_view key,
                         size_t expected) {
  std::vector<T> out;
  std::string_view tok;
  while (fields->Next(&tok)) {
    if constexpr (std::is_integral_v<T>) {
      out.push_back(static_cast<T>(cur.ParseInt(tok, key)));
    } else {
      out.push_back(cur.ParseDouble(tok, key));
    }
  }
  if (expected != 0 && out.size() != expected)
    cur.Fail("'{}' has {} values but nr_class needs {}", key, out.size(), expected);
  return out;
}

}  // namespace

SvmModel LoadSvmModel(const std::filesystem::path& path) {
  const auto file = datasets::TextFile::Open(path);
  datasets::LineCursor cur(file);
  SvmModel m;
  m.kernel.gamma = 0;
  bool seen_sv = false;
  bool have_type = false;
  bool have_gamma = false;
  int64_t total_sv = -1;
  std::string_view line;
  while (cur.Next(&line)) {
    datasets::Fields fields(line);
    std::string_view key;
    if (!fields.Next(&key)) continue;
    std::string_view val;
    const auto pairs =
        static_cast<size_t>(std::max(m.nr_class, 1)) * static_cast<size_t>(std::max(m.nr_class - 1, 0)) / 2;
    if (key == "svm_type") {
      if (!fields.Next(&val)) cur.Fail("svm_type needs a value");
      if (val != "c_svc") cur.Fail("svm_type '{}' is not supported: tessel reads C-SVC models (svm-train -s 0)", val);
      have_type = true;
    } else if (key == "kernel_type") {
      if (!fields.Next(&val)) cur.Fail("kernel_type needs a value");
      if (val == "precomputed") cur.Fail("precomputed kernels are not supported");
      try {
        m.kernel.type = kernels::ParseSvmKernel(val);
      } catch (const Error& e) {
        cur.Fail("{}", e.what());
      }
    } else if (key == "degree") {
      if (!fields.Next(&val)) cur.Fail("degree needs a value");
      m.kernel.degree = static_cast<int>(cur.ParseInt(val, "degree"));
    } else if (key == "gamma") {
      if (!fields.Next(&val)) cur.Fail("gamma needs a value");
      m.kernel.gamma = cur.ParseDouble(val, "gamma");
      have_gamma = true;
    } else if (key == "coef0") {
      if (!fields.Next(&val)) cur.Fail("coef0 needs a value");
      m.kernel.coef0 = cur.ParseDouble(val, "coef0");
    } else if (key == "nr_class") {
      if (!fields.Next(&val)) cur.Fail("nr_class needs a value");
      const int64_t n = cur.ParseInt(val, "nr_class");
      if (n < 1 || n > 1000000) cur.Fail("nr_class {} is out of range", n);
      m.nr_class = static_cast<int32_t>(n);
    } else if (key == "total_sv") {
      if (!fields.Next(&val)) cur.Fail("total_sv needs a value");
      total_sv = cur.ParseInt(val, "total_sv");
      if (total_sv < 0) cur.Fail("total_sv {} is negative", total_sv);
    } else if (key == "rho") {
      if (m.nr_class == 0) cur.Fail("rho before nr_class");
      m.rho = ParseList<double>(cur, &fields, "rho", pairs);
    } else if (key == "label") {
      m.labels = ParseList<int32_t>(cur, &fields, "label", static_cast<size_t>(m.nr_class));
    } else if (key == "probA") {
      m.prob_a = ParseList<double>(cur, &fields, "probA", pairs);
    } else if (key == "probB") {
      m.prob_b = ParseList<double>(cur, &fields, "probB", pairs);
    } else if (key == "nr_sv") {
      m.nr_sv = ParseList<int32_t>(cur, &fields, "nr_sv", static_cast<size_t>(m.nr_class));
    } else if (key == "SV") {
      seen_sv = true;
      break;
    } else {
      cur.Fail(
          "unknown key '{}' in the model header (expected svm_type, kernel_type, degree, gamma, coef0, "
          "nr_class, total_sv, rho, label, probA, probB, nr_sv or SV)",
          key);
    }
  }
  if (!have_type) throw Error::InFile(file.name(), "not an SVM model: no 'svm_type' line");
  if (!seen_sv) throw Error::InFile(file.name(), "no 'SV' line: the model file is truncated");
  if (m.nr_class < 1 || total_sv < 0 || m.labels.empty() || m.nr_sv.empty())
    throw Error::InFile(file.name(), "the header lacks nr_class, total_sv, label or nr_sv");
  // svm-train always writes gamma for these kernels; without it every kernel value would use gamma 0.
  if (m.kernel.type != kernels::SvmKernelType::kLinear && !have_gamma) {
    throw Error::InFile(file.name(), fmt::format("kernel_type {} needs a 'gamma' line in the header (the model file is "
                                                 "damaged: retrain, or add the gamma it was trained with)",
                                                 kernels::SvmKernelName(m.kernel.type)));
  }
  const int32_t ncoef = m.nr_class - 1;
  std::vector<std::vector<double>> coef(static_cast<size_t>(ncoef));
  int64_t max_id = -1;
  for (int64_t s = 0; s < total_sv; ++s) {
    if (!cur.Next(&line)) throw Error::InFile(file.name(), fmt::format("{} support vectors, {} expected", s, total_sv));
    datasets::Fields fields(line);
    std::string_view tok;
    for (int32_t c = 0; c < ncoef; ++c) {
      if (!fields.Next(&tok)) cur.Fail("support vector has {} coefficients, {} expected", c, ncoef);
      coef[c].push_back(cur.ParseDouble(tok, "coefficient"));
    }
    int64_t prev = 0;
    while (fields.Next(&tok)) {
      const size_t colon = tok.find(':');
      if (colon == std::string_view::npos) cur.Fail("'{}' is not index:value", tok);
      const int64_t idx = cur.ParseInt(tok.substr(0, colon), "feature index");
      if (idx <= prev) cur.Fail("feature index {} must be at least 1 and above the previous one ({})", idx, prev);
      if (idx > (int64_t{1} << 31)) cur.Fail("feature index {} is too large", idx);
      prev = idx;
      m.sv_indices.push_back(static_cast<int32_t>(idx - 1));
      m.sv_values.push_back(cur.ParseDouble(tok.substr(colon + 1), "feature value"));
      max_id = std::max(max_id, idx - 1);
    }
    m.sv_indptr.push_back(static_cast<int64_t>(m.sv_indices.size()));
  }
  // svm-train and tessel end every line with a newline; a file that ends inside a line was cut (a support vector
  // cut after a complete "index:value" would otherwise load with features missing).
  if (!file.text().empty() && file.text().back() != '\n') {
    throw Error::InFile(file.name(),
                        "the file ends inside a line (no final newline): it looks truncated, since svm-train and "
                        "tessel end every line with one (retrain or copy the model again; add the newline only if "
                        "the last line is complete)");
  }
  while (cur.Next(&line)) {  // total_sv must count every support vector line
    datasets::Fields fields(line);
    std::string_view tok;
    if (fields.Next(&tok))
      cur.Fail("more support vectors than total_sv = {} (the header and the rows disagree)", total_sv);
  }
  for (const auto& c : coef) m.sv_coef.insert(m.sv_coef.end(), c.begin(), c.end());
  m.num_features = max_id + 1;
  const std::string side = SidecarPath(path);
  if (std::filesystem::exists(side)) {
    try {
      const auto j = nlohmann::json::parse(ReadFileToString(side));
      m.num_features = std::max(m.num_features, j.at("num_features").get<int64_t>());
      m.num_features_known = true;
    } catch (const nlohmann::json::exception& e) {
      throw Error::InFile(side, fmt::format("bad sidecar: {} (delete it to use the model without it)", e.what()));
    }
  }
  try {
    m.Validate();
  } catch (const Error& e) {
    throw Error::InFile(file.name(), e.what());
  }
  return m;
}

double PredictRow(const SvmModel& model, std::span<const int32_t> indices, std::span<const double> values,
                  std::vector<double>* decision_values) {
  const int64_t l = model.total_sv();
  const auto svs = model.SupportVectors();
  std::vector<double> kvalue(static_cast<size_t>(l));
  for (int64_t s = 0; s < l; ++s)
    kvalue[s] = kernels::KernelValue(model.kernel, indices, values, svs.RowIndices(s), svs.RowValues(s));
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

int64_t RowsBeyondModelFeatures(const SvmModel& model, const datasets::SparseRowDataset& data) {
  const auto rows = data.Rows();
  int64_t count = 0;
  for (int64_t r = 0; r < rows.num_rows(); ++r) {
    const auto idx = rows.RowIndices(r);
    count += !idx.empty() && idx.back() >= model.num_features ? 1 : 0;  // ids ascend within a row
  }
  return count;
}

std::vector<double> PredictSvm(const SvmModel& model, const datasets::SparseRowDataset& data) {
  const auto indptr = data.indptr.Host();
  const auto indices = data.indices.Host();
  const auto values = data.values.Host();
  std::vector<double> out(static_cast<size_t>(data.num_rows));
  parallel_for<int64_t>(0, data.num_rows, 8, [&](int64_t r) {
    const auto b = static_cast<size_t>(indptr[r]);
    const auto n = static_cast<size_t>(indptr[r + 1] - indptr[r]);
    out[r] = PredictRow(model, indices.subspan(b, n), values.subspan(b, n));
  });
  return out;
}

}  // namespace tessel::train::svm
