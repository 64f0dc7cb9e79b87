// LIBSVM model files (svm_save_model / svm_load_model for C-SVC) and one-vs-one prediction with voting
// (svm_predict_values), plus the tessel sidecar that records the training dimension.
#include "svm/svm_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "core/output_guard.h"
#include "core/parallel.h"
#include "datasets/text_input.h"

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
    TESSEL_CHECK(prob_b.empty(), "SVM model: a regression model has probA (the Laplace scale) but no probB");
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

namespace {

// The end of every message about a model file whose contents contradict themselves.
constexpr std::string_view kDamaged = " (the model file is damaged: retrain, or restore the file)";

// A header list ("rho 0.1 -0.2", "label 1 -1") of exactly `expected` values (`per` says what each one is for);
// integers must lie in [lo, hi] (`range` describes them).
template <typename T>
std::vector<T> ParseList(const datasets::LineCursor& cur, datasets::Fields* fields, std::string_view key,
                         size_t expected, std::string_view per, int64_t lo = std::numeric_limits<int32_t>::min(),
                         int64_t hi = std::numeric_limits<int32_t>::max(), std::string_view range = "") {
  std::vector<T> out;
  std::string_view tok;
  while (fields->Next(&tok)) {
    if constexpr (std::is_integral_v<T>) {
      const int64_t v = cur.ParseInt(tok, key);
      if (v < lo || v > hi) cur.Fail("'{}' holds {}: {}{}", key, v, range, kDamaged);
      out.push_back(static_cast<T>(v));
    } else {
      out.push_back(cur.ParseDouble(tok, key));
    }
  }
  if (out.size() != expected)
    cur.Fail("'{}' has {} values but nr_class needs {} ({}){}", key, out.size(), expected, per, kDamaged);
  return out;
}

// The sidecar PATH.json written beside a model: every field checked (type, range, agreement with the model file).
void ReadSidecar(const std::string& side, const std::string& model_name, int64_t min_features, SvmModel* m) {
  const auto fail = [&](std::string_view what) {
    throw Error::InFile(side, fmt::format("{}; this sidecar of {} is damaged or belongs to another model (restore "
                                          "it, or delete it to use the model without it)",
                                          what, model_name));
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(ReadFileToString(side));
  } catch (const nlohmann::json::exception& e) {
    fail(fmt::format("not valid JSON ({})", e.what()));
  }
  if (!j.is_object()) fail("not a JSON object");
  if (!j.contains("format") || !j["format"].is_string() || j["format"].get<std::string>() != "tessel-svm-model-sidecar")
    fail("field 'format' is not \"tessel-svm-model-sidecar\"");
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int64_t>() != 1)
    fail(fmt::format("field 'version' is {}, this tessel reads version 1",
                     j.contains("version") ? j["version"].dump() : std::string("missing")));
  if (!j.contains("num_features") || !j["num_features"].is_number_integer())
    fail(fmt::format("field 'num_features' is {}; an integer is needed",
                     j.contains("num_features") ? j["num_features"].dump() : std::string("missing")));
  const auto& nf = j["num_features"];
  const bool too_big = nf.is_number_unsigned() ? nf.get<uint64_t>() > static_cast<uint64_t>(kMaxModelFeatures)
                                               : nf.get<int64_t>() > kMaxModelFeatures;
  const int64_t n = too_big ? kMaxModelFeatures + 1 : nf.get<int64_t>();
  if (n < 0 || too_big)
    fail(fmt::format("field 'num_features' is {}; it must be in [0, {}]", nf.dump(), kMaxModelFeatures));
  if (n < min_features)
    fail(fmt::format("field 'num_features' is {} but the support vectors use feature index {}", n, min_features));
  if (j.contains("training") && !j["training"].is_object()) fail("field 'training' is not a JSON object");
  m->num_features = n;
  m->num_features_known = true;
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
  int64_t nr_sv_line = 0;
  std::vector<std::string> seen_keys;
  std::string_view line;
  while (cur.Next(&line)) {
    datasets::Fields fields(line);
    std::string_view key;
    if (!fields.Next(&key)) continue;
    if (key == "SV") {
      seen_sv = true;
      break;
    }
    if (std::find(seen_keys.begin(), seen_keys.end(), key) != seen_keys.end())
      cur.Fail("'{}' appears twice in the header{}", key, kDamaged);
    seen_keys.emplace_back(key);
    // A single value: "gamma 0.5" (a second value would be silently ignored otherwise).
    const auto value = [&] {
      std::string_view val;
      std::string_view extra;
      if (!fields.Next(&val)) cur.Fail("{} needs a value{}", key, kDamaged);
      if (fields.Next(&extra)) cur.Fail("{} takes one value, found '{}' after '{}'{}", key, extra, val, kDamaged);
      return val;
    };
    const bool list = key == "rho" || key == "label" || key == "probA" || key == "probB" || key == "nr_sv";
    if (list && m.nr_class == 0)
      cur.Fail("'{}' comes before nr_class: the header gives nr_class first (as svm-train writes it){}", key, kDamaged);
    const auto pairs = static_cast<size_t>(m.nr_class) * static_cast<size_t>(std::max(m.nr_class - 1, 0)) / 2;
    if (key == "svm_type") {
      const std::string_view val = value();
      bool known = false;
      for (const auto& [type, name] : EnumNames<SvmType>::kNames) {
        if (val != name) continue;
        m.type = type;
        known = true;
      }
      if (!known)
        cur.Fail("unknown svm_type '{}': LIBSVM's are c_svc, nu_svc, one_class, epsilon_svr and nu_svr{}", val,
                 kDamaged);
      have_type = true;
    } else if (key == "kernel_type") {
      const std::string_view val = value();
      if (val == "precomputed") cur.Fail("precomputed kernels are not supported");
      try {
        m.kernel.type = kernels::ParseSvmKernel(val);
      } catch (const Error& e) {
        cur.Fail("{}", e.what());
      }
    } else if (key == "degree") {
      const int64_t d = cur.ParseInt(value(), "degree");
      if (d < 0 || d > std::numeric_limits<int32_t>::max())
        cur.Fail("degree {} is out of range: the polynomial degree is 0 to {} (svm-train -d){}", d,
                 std::numeric_limits<int32_t>::max(), kDamaged);
      m.kernel.degree = static_cast<int>(d);
    } else if (key == "gamma") {
      m.kernel.gamma = cur.ParseDouble(value(), "gamma");
      if (m.kernel.gamma < 0) cur.Fail("gamma {} must not be negative (svm-train -g){}", m.kernel.gamma, kDamaged);
      have_gamma = true;
    } else if (key == "coef0") {
      m.kernel.coef0 = cur.ParseDouble(value(), "coef0");
    } else if (key == "nr_class") {
      const int64_t n = cur.ParseInt(value(), "nr_class");
      if (n < 1 || n > 1000000)
        cur.Fail("nr_class {} is out of range: a C-SVC model has 1 to 1000000 classes{}", n, kDamaged);
      m.nr_class = static_cast<int32_t>(n);
    } else if (key == "total_sv") {
      total_sv = cur.ParseInt(value(), "total_sv");
      if (total_sv < 0) cur.Fail("total_sv {} is negative{}", total_sv, kDamaged);
    } else if (key == "rho") {
      m.rho = ParseList<double>(cur, &fields, "rho", pairs, "one per pair of classes");
    } else if (key == "label") {
      m.labels = ParseList<int32_t>(cur, &fields, "label", static_cast<size_t>(m.nr_class), "one per class",
                                    std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                                    "class labels are 32-bit integers");
      std::vector<int32_t> sorted = m.labels;  // sorted: nr_class may be large
      std::sort(sorted.begin(), sorted.end());
      if (const auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end())
        cur.Fail("label {} appears twice: every class has its own label{}", *dup, kDamaged);
    } else if (key == "probA") {
      m.prob_a = ParseList<double>(cur, &fields, "probA", pairs, "one per pair of classes");
    } else if (key == "probB") {
      m.prob_b = ParseList<double>(cur, &fields, "probB", pairs, "one per pair of classes");
    } else if (key == "nr_sv") {
      m.nr_sv = ParseList<int32_t>(cur, &fields, "nr_sv", static_cast<size_t>(m.nr_class), "one count per class", 0,
                                   std::numeric_limits<int32_t>::max(), "support-vector counts are 0 to 2147483647");
      nr_sv_line = cur.line_number();
    } else {
      cur.Fail(
          "unknown key '{}' in the model header (expected svm_type, kernel_type, degree, gamma, coef0, "
          "nr_class, total_sv, rho, label, probA, probB, nr_sv or SV)",
          key);
    }
  }
  if (!have_type)
    throw Error::InFile(file.name(),
                        "not an SVM model: no 'svm_type' line (a LIBSVM model file from svm-train or `tessel train "
                        "svm` is expected)");
  if (!seen_sv) throw Error::InFile(file.name(), "no 'SV' line: the model file is truncated");
  std::string missing;
  const bool classes = IsClassification(m.type);
  for (const char* key : {"nr_class", "total_sv", "rho", "label", "nr_sv"})
    if ((classes || std::string_view(key) != "label") && (classes || std::string_view(key) != "nr_sv") &&
        std::find(seen_keys.begin(), seen_keys.end(), key) == seen_keys.end())
      missing += fmt::format("{}{}", missing.empty() ? "" : ", ", key);
  if (!missing.empty()) throw Error::InFile(file.name(), fmt::format("the header lacks {}{}", missing, kDamaged));
  if (!classes && (!m.labels.empty() || !m.nr_sv.empty()))
    throw Error::InFile(file.name(), fmt::format("a {} model has no classes, but the header gives {}{}",
                                                 SvmTypeName(m.type), m.labels.empty() ? "nr_sv" : "label", kDamaged));
  int64_t sv_sum = 0;
  for (const int32_t n : m.nr_sv) sv_sum += n;
  if (classes && sv_sum != total_sv) {
    throw Error::AtLine(file.name(), nr_sv_line,
                        fmt::format("nr_sv adds up to {} but total_sv is {}{}", sv_sum, total_sv, kDamaged));
  }
  if (!IsRegression(m.type) && m.prob_a.empty() != m.prob_b.empty())
    throw Error::InFile(file.name(), fmt::format("the header has {} without {}{}", m.prob_a.empty() ? "probB" : "probA",
                                                 m.prob_a.empty() ? "probA" : "probB", kDamaged));
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
      if (!fields.Next(&tok) || tok.find(':') != std::string_view::npos)
        cur.Fail("support vector has {} coefficients, {} expected (nr_class - 1){}", c, ncoef, kDamaged);
      coef[c].push_back(cur.ParseDouble(tok, "coefficient"));
    }
    int64_t prev = 0;
    while (fields.Next(&tok)) {
      const size_t colon = tok.find(':');
      if (colon == std::string_view::npos) {
        cur.Fail(
            "'{}' is not index:value (a support vector has nr_class - 1 = {} coefficients, then index:value "
            "pairs){}",
            tok, ncoef, kDamaged);
      }
      const int64_t idx = cur.ParseInt(tok.substr(0, colon), "feature index");
      if (idx <= prev) cur.Fail("feature index {} must be at least 1 and above the previous one ({})", idx, prev);
      if (idx > kMaxModelFeatures) cur.Fail("feature index {} is too large (at most {})", idx, kMaxModelFeatures);
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
  std::error_code ec;
  const auto side_status = std::filesystem::status(side, ec);
  if (std::filesystem::exists(side_status)) {
    if (!std::filesystem::is_regular_file(side_status)) {
      throw Error::InFile(side, fmt::format("the sidecar of {} is not a regular file (remove it, or restore the "
                                            "JSON file that `tessel train svm` wrote)",
                                            file.name()));
    }
    ReadSidecar(side, file.name(), max_id + 1, &m);
  }
  try {
    m.Validate();
  } catch (const Error& e) {
    throw Error::InFile(file.name(), fmt::format("{}{}", e.what(), kDamaged));
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
