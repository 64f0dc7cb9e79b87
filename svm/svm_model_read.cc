// Reading LIBSVM model files (svm_load_model, ours or svm-train's) and tessel's sidecar: the header, the support
// vectors, the checks that tell a damaged file, each error naming the file and line.
#include "svm/svm_model.h"

#include <algorithm>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "datasets/text_input.h"

namespace tessel::svm {
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

// What the header said besides the model's own fields: the keys it gave and the facts the checks after it need.
struct Header {
  bool seen_sv = false;
  bool have_type = false;
  bool have_gamma = false;
  int64_t total_sv = -1;
  int64_t nr_sv_line = 0;
  std::vector<std::string> seen_keys;
};

// The values of one header line `key ...` (its key already read from `fields`) into *m and *h; fails on a value
// out of range, a missing or extra value, a list before nr_class or an unknown key.
void ParseHeaderKey(const datasets::LineCursor& cur, std::string_view key, datasets::Fields* fields, Header* h,
                    SvmModel* m) {
  // A single value: "gamma 0.5" (a second value would be silently ignored otherwise).
  const auto value = [&] {
    std::string_view val;
    std::string_view extra;
    if (!fields->Next(&val)) cur.Fail("{} needs a value{}", key, kDamaged);
    if (fields->Next(&extra)) {
      cur.Fail("{} takes one value, found '{}' after '{}'{}", key, datasets::Excerpt(extra), datasets::Excerpt(val),
               kDamaged);
    }
    return val;
  };
  const bool list = key == "rho" || key == "label" || key == "probA" || key == "probB" || key == "nr_sv";
  if (list && m->nr_class == 0)
    cur.Fail("'{}' comes before nr_class: the header gives nr_class first (as svm-train writes it){}", key, kDamaged);
  const auto pairs = static_cast<size_t>(m->nr_class) * static_cast<size_t>(std::max(m->nr_class - 1, 0)) / 2;
  if (key == "svm_type") {
    const std::string_view val = value();
    bool known = false;
    for (const auto& [type, name] : EnumNames<SvmType>::kNames) {
      if (val != name) continue;
      m->type = type;
      known = true;
    }
    if (!known)
      cur.Fail("unknown svm_type '{}': LIBSVM's are c_svc, nu_svc, one_class, epsilon_svr and nu_svr{}",
               datasets::Excerpt(val), kDamaged);
    h->have_type = true;
  } else if (key == "kernel_type") {
    const std::string_view val = value();
    if (val == "precomputed") cur.Fail("precomputed kernels are not supported");
    try {
      m->kernel.type = kernels::ParseSvmKernel(val);
    } catch (const Error& e) {
      cur.Fail("{}", e.what());
    }
  } else if (key == "degree") {
    const int64_t d = cur.ParseInt(value(), "degree");
    if (d < 0 || d > std::numeric_limits<int32_t>::max())
      cur.Fail("degree {} is out of range: the polynomial degree is 0 to {} (svm-train -d){}", d,
               std::numeric_limits<int32_t>::max(), kDamaged);
    m->kernel.degree = static_cast<int>(d);
  } else if (key == "gamma") {
    m->kernel.gamma = cur.ParseDouble(value(), "gamma");
    if (m->kernel.gamma < 0) cur.Fail("gamma {} must not be negative (svm-train -g){}", m->kernel.gamma, kDamaged);
    h->have_gamma = true;
  } else if (key == "coef0") {
    m->kernel.coef0 = cur.ParseDouble(value(), "coef0");
  } else if (key == "nr_class") {
    const int64_t n = cur.ParseInt(value(), "nr_class");
    if (n < 1 || n > 1000000)
      cur.Fail("nr_class {} is out of range: a C-SVC model has 1 to 1000000 classes{}", n, kDamaged);
    m->nr_class = static_cast<int32_t>(n);
  } else if (key == "total_sv") {
    h->total_sv = cur.ParseInt(value(), "total_sv");
    if (h->total_sv < 0) cur.Fail("total_sv {} is negative{}", h->total_sv, kDamaged);
  } else if (key == "rho") {
    m->rho = ParseList<double>(cur, fields, "rho", pairs, "one per pair of classes");
  } else if (key == "label") {
    m->labels = ParseList<int32_t>(cur, fields, "label", static_cast<size_t>(m->nr_class), "one per class",
                                   std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                                   "class labels are 32-bit integers");
    std::vector<int32_t> sorted = m->labels;  // sorted: nr_class may be large
    std::sort(sorted.begin(), sorted.end());
    if (const auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end())
      cur.Fail("label {} appears twice: every class has its own label{}", *dup, kDamaged);
  } else if (key == "probA") {
    m->prob_a = ParseList<double>(cur, fields, "probA", pairs, "one per pair of classes");
  } else if (key == "probB") {
    m->prob_b = ParseList<double>(cur, fields, "probB", pairs, "one per pair of classes");
  } else if (key == "nr_sv") {
    m->nr_sv = ParseList<int32_t>(cur, fields, "nr_sv", static_cast<size_t>(m->nr_class), "one count per class", 0,
                                  std::numeric_limits<int32_t>::max(), "support-vector counts are 0 to 2147483647");
    h->nr_sv_line = cur.line_number();
  } else {
    cur.Fail(
        "unknown key '{}' in the model header (expected svm_type, kernel_type, degree, gamma, coef0, "
        "nr_class, total_sv, rho, label, probA, probB, nr_sv or SV)",
        datasets::Excerpt(key));
  }
}

// The header's lines up to and including "SV" (blank lines skipped), each key at most once.
Header ReadHeader(datasets::LineCursor& cur, SvmModel* m) {
  Header h;
  std::string_view line;
  while (cur.Next(&line)) {
    datasets::Fields fields(line);
    std::string_view key;
    if (!fields.Next(&key)) continue;
    if (key == "SV") {
      h.seen_sv = true;
      break;
    }
    if (std::find(h.seen_keys.begin(), h.seen_keys.end(), key) != h.seen_keys.end())
      cur.Fail("'{}' appears twice in the header{}", key, kDamaged);
    h.seen_keys.emplace_back(key);
    ParseHeaderKey(cur, key, &fields, &h, m);
  }
  return h;
}

// The header as a whole: an svm_type and an SV line, every key the model's type needs (and no classes for one-class
// and the regressions), nr_sv adding up to total_sv, probA with probB, and gamma for the kernels that use it.
void CheckHeader(const std::string& name, const Header& h, const SvmModel& m) {
  if (!h.have_type)
    throw Error::InFile(name,
                        "not an SVM model: no 'svm_type' line (a LIBSVM model file from svm-train or `tessel train "
                        "svm` is expected)");
  if (!h.seen_sv) throw Error::InFile(name, "no 'SV' line: the model file is truncated");
  std::string missing;
  const bool classes = IsClassification(m.type);
  for (const char* key : {"nr_class", "total_sv", "rho", "label", "nr_sv"})
    if ((classes || std::string_view(key) != "label") && (classes || std::string_view(key) != "nr_sv") &&
        std::find(h.seen_keys.begin(), h.seen_keys.end(), key) == h.seen_keys.end())
      missing += fmt::format("{}{}", missing.empty() ? "" : ", ", key);
  if (!missing.empty()) throw Error::InFile(name, fmt::format("the header lacks {}{}", missing, kDamaged));
  if (!classes && (!m.labels.empty() || !m.nr_sv.empty()))
    throw Error::InFile(name, fmt::format("a {} model has no classes, but the header gives {}{}", SvmTypeName(m.type),
                                          m.labels.empty() ? "nr_sv" : "label", kDamaged));
  int64_t sv_sum = 0;
  for (const int32_t n : m.nr_sv) sv_sum += n;
  if (classes && sv_sum != h.total_sv) {
    throw Error::AtLine(name, h.nr_sv_line,
                        fmt::format("nr_sv adds up to {} but total_sv is {}{}", sv_sum, h.total_sv, kDamaged));
  }
  if (!IsRegression(m.type) && m.prob_a.empty() != m.prob_b.empty())
    throw Error::InFile(name, fmt::format("the header has {} without {}{}", m.prob_a.empty() ? "probB" : "probA",
                                          m.prob_a.empty() ? "probA" : "probB", kDamaged));
  // svm-train always writes gamma for these kernels; without it every kernel value would use gamma 0.
  if (m.kernel.type != kernels::SvmKernelType::kLinear && !h.have_gamma) {
    throw Error::InFile(name, fmt::format("kernel_type {} needs a 'gamma' line in the header (the model file is "
                                          "damaged: retrain, or add the gamma it was trained with)",
                                          kernels::SvmKernelName(m.kernel.type)));
  }
}

// The total_sv lines after "SV", each nr_class - 1 coefficients then ascending index:value pairs, into the model's
// rows and sv_coef. Returns the largest 0-based feature id (-1 when no support vector has a feature).
int64_t ReadSupportVectors(datasets::LineCursor& cur, int64_t total_sv, SvmModel* m) {
  const int32_t ncoef = m->nr_class - 1;
  std::vector<std::vector<double>> coef(static_cast<size_t>(ncoef));
  int64_t max_id = -1;
  std::string_view line;
  for (int64_t s = 0; s < total_sv; ++s) {
    if (!cur.Next(&line)) throw Error::InFile(cur.name(), fmt::format("{} support vectors, {} expected", s, total_sv));
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
            datasets::Excerpt(tok), ncoef, kDamaged);
      }
      const int64_t idx = cur.ParseInt(tok.substr(0, colon), "feature index");
      if (idx <= prev) cur.Fail("feature index {} must be at least 1 and above the previous one ({})", idx, prev);
      if (idx > kMaxModelFeatures) cur.Fail("feature index {} is too large (at most {})", idx, kMaxModelFeatures);
      prev = idx;
      m->sv_indices.push_back(static_cast<int32_t>(idx - 1));
      m->sv_values.push_back(cur.ParseDouble(tok.substr(colon + 1), "feature value"));
      max_id = std::max(max_id, idx - 1);
    }
    m->sv_indptr.push_back(static_cast<int64_t>(m->sv_indices.size()));
  }
  for (const auto& c : coef) m->sv_coef.insert(m->sv_coef.end(), c.begin(), c.end());
  return max_id;
}

// What follows the support vectors: nothing but blank lines, and a final newline.
void CheckFileEnd(const datasets::TextFile& file, datasets::LineCursor& cur, int64_t total_sv) {
  // svm-train and tessel end every line with a newline; a file that ends inside a line was cut (a support vector
  // cut after a complete "index:value" would otherwise load with features missing).
  if (!file.text().empty() && file.text().back() != '\n') {
    throw Error::InFile(file.name(),
                        "the file ends inside a line (no final newline): it looks truncated, since svm-train and "
                        "tessel end every line with one (retrain or copy the model again; add the newline only if "
                        "the last line is complete)");
  }
  std::string_view line;
  while (cur.Next(&line)) {  // total_sv must count every support vector line
    datasets::Fields fields(line);
    std::string_view tok;
    if (fields.Next(&tok))
      cur.Fail("more support vectors than total_sv = {} (the header and the rows disagree)", total_sv);
  }
}

// The sidecar beside `path`, when there is one (ReadSidecar); it must be a regular file.
void ReadSidecarIfPresent(const std::filesystem::path& path, const std::string& model_name, int64_t min_features,
                          SvmModel* m) {
  const std::string side = SidecarPath(path);
  std::error_code ec;
  const auto side_status = std::filesystem::status(side, ec);
  if (!std::filesystem::exists(side_status)) return;
  if (!std::filesystem::is_regular_file(side_status)) {
    throw Error::InFile(side, fmt::format("the sidecar of {} is not a regular file (remove it, or restore the "
                                          "JSON file that `tessel train svm` wrote)",
                                          model_name));
  }
  ReadSidecar(side, model_name, min_features, m);
}

}  // namespace

SvmModel LoadSvmModel(const std::filesystem::path& path) {
  const auto file = datasets::TextFile::Open(path);
  datasets::LineCursor cur(file);
  SvmModel m;
  m.kernel.gamma = 0;
  const Header header = ReadHeader(cur, &m);
  CheckHeader(file.name(), header, m);
  const int64_t max_id = ReadSupportVectors(cur, header.total_sv, &m);
  CheckFileEnd(file, cur, header.total_sv);
  m.num_features = max_id + 1;
  ReadSidecarIfPresent(path, file.name(), max_id + 1, &m);
  try {
    m.Validate();
  } catch (const Error& e) {
    throw Error::InFile(file.name(), fmt::format("{}{}", e.what(), kDamaged));
  }
  return m;
}

}  // namespace tessel::svm
