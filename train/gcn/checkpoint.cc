// Checkpoint I/O: tensors.bin is a sequence of (int64 rows, int64 cols, rows*cols float32) records in the
// order params, moments, best_params, with counts in checkpoint.json and an XXH3 checksum of the file.
#include "train/gcn/checkpoint.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "core/checksum.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/output_guard.h"
#include "train/gcn/data.h"

namespace tessel::train::gcn {
namespace {

void Append(std::string* out, const kernels::Matrix& m) {
  const int64_t shape[2] = {m.rows, m.cols};
  out->append(reinterpret_cast<const char*>(shape), sizeof(shape));
  auto v = m.View();
  out->append(reinterpret_cast<const char*>(v.data()), v.size_bytes());
}

kernels::Matrix Read(const std::string& bytes, size_t* pos, const std::filesystem::path& file) {
  int64_t shape[2];
  TESSEL_CHECK(*pos + sizeof(shape) <= bytes.size(), "{}: truncated (checkpoint damaged; delete it to start over)",
               file.string());
  std::memcpy(shape, bytes.data() + *pos, sizeof(shape));
  *pos += sizeof(shape);
  // rows x cols values must fit in what is left of the file; compared by division so that a damaged shape cannot
  // overflow the product (found by tests/fuzz/fuzz_checkpoint.cc).
  const auto left = static_cast<uint64_t>((bytes.size() - *pos) / sizeof(float));
  TESSEL_CHECK(shape[0] >= 0 && shape[1] >= 0 &&
                   (shape[1] == 0 || static_cast<uint64_t>(shape[0]) <= left / static_cast<uint64_t>(shape[1])),
               "{}: bad tensor shape {}x{} at byte {} (only {} values left in the file; checkpoint damaged, delete it "
               "to start over)",
               file.string(), shape[0], shape[1], *pos - sizeof(shape), left);
  const auto n = static_cast<size_t>(shape[0] * shape[1]);
  std::vector<float> v(n);
  if (n > 0) std::memcpy(v.data(), bytes.data() + *pos, n * sizeof(float));
  *pos += n * sizeof(float);
  return kernels::Matrix(shape[0], shape[1], std::move(v));
}

}  // namespace

void SaveCheckpoint(const std::filesystem::path& dir, const TrainState& state) {
  std::string bytes;
  for (const auto& m : state.params) Append(&bytes, m);
  for (const auto& m : state.moments) Append(&bytes, m);
  for (const auto& m : state.best_params) Append(&bytes, m);
  nlohmann::json j = {{"format_version", kCheckpointVersion},
                      {"kind", "tessel-gcn-checkpoint"},
                      {"config", state.config},
                      {"epochs_done", state.epochs_done},
                      {"best_epoch", state.best_epoch},
                      {"best_val_acc", state.best_val_acc},
                      {"epochs_since_best", state.epochs_since_best},
                      {"adam_steps", state.adam_steps},
                      {"epoch_steps_done", state.epoch_steps_done},
                      {"epoch_steps", state.epoch_steps},
                      {"ranks", state.ranks},
                      {"just_in_time", state.just_in_time},
                      {"num_params", state.params.size()},
                      {"num_moments", state.moments.size()},
                      {"num_best_params", state.best_params.size()},
                      {"tensors_checksum", ChecksumHex(bytes.data(), bytes.size())}};
  // Defence in depth (the commands check before training): only a checkpoint or an empty folder is ever replaced.
  CheckOutputPath(dir, OutputKind::kCheckpointFolder, /*force=*/true, "--checkpoint");
  AtomicDirectory out(dir, /*overwrite=*/true);
  WriteFileAtomic(out.path() / "tensors.bin", std::string_view(bytes));
  WriteFileAtomic(out.path() / "checkpoint.json", j.dump(2) + "\n");
  out.Commit();
}

bool SaveCheckpointLocked(const std::filesystem::path& dir, const TrainState& state, bool only_if_newer) {
  std::filesystem::path parent = dir.parent_path();
  if (parent.empty()) parent = ".";
  const FolderLock lock(parent, fmt::format("{} (the checkpoint's folder)", parent.string()));
  if (only_if_newer && std::filesystem::exists(dir / "checkpoint.json")) {
    try {
      if (LoadCheckpoint(dir).adam_steps >= state.adam_steps) return false;
    } catch (const Error&) {  // unreadable: replaced by this state
    }
  }
  SaveCheckpoint(dir, state);
  return true;
}

namespace {

// The last words of every complaint about a checkpoint's contents.
std::string DamagedFix(const std::filesystem::path& dir) {
  return fmt::format("checkpoint {} damaged; delete it to start over", dir.string());
}

// An integer field in [lo, hi], read as 64 bits (a larger number, a fraction or a string is refused, never wrapped).
int64_t Counter(const nlohmann::json& j, const char* key, int64_t lo, int64_t hi, const std::filesystem::path& file,
                const std::string& fix) {
  if (!j.contains(key)) throw Error::InFile(file.string(), fmt::format("missing field \"{}\" ({})", key, fix));
  const nlohmann::json& v = j.at(key);
  const bool huge =
      v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (!v.is_number_integer() || huge) {
    throw Error::InFile(file.string(), fmt::format("\"{}\" is {}, not an integer ({})", key, v.dump(), fix));
  }
  const auto x = v.get<int64_t>();
  if (x < lo || x > hi) {
    throw Error::InFile(file.string(), fmt::format("\"{}\" is {}, outside [{}, {}] ({})", key, x, lo, hi, fix));
  }
  return x;
}

bool SameShape(const kernels::Matrix& a, const kernels::Matrix& b) { return a.rows == b.rows && a.cols == b.cols; }

// Throws naming the tensor and its first NaN or infinite value.
void CheckFinite(const kernels::Matrix& m, const std::string& name, const std::filesystem::path& file,
                 const std::string& fix) {
  const auto v = m.View();
  for (size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) {
      throw Error::InFile(
          file.string(), fmt::format("tensor {} ({}x{}) holds {} at row {}, column {} ({})", name, m.rows, m.cols, v[i],
                                     static_cast<int64_t>(i) / m.cols, static_cast<int64_t>(i) % m.cols, fix));
    }
  }
}

// config.feature_scaling: present when the configuration's scaling needs fitted statistics (always from version 2
// on), of that scaling, one finite mean and positive scale per input column.
void CheckScaling(const nlohmann::json& config, int64_t version, const std::filesystem::path& file,
                  const std::string& fix) {
  std::string norm = "none";  // TrainConfig's default, for a configuration written without the key
  if (config.contains("normalize_features")) {
    const nlohmann::json& n = config.at("normalize_features");
    if (!n.is_string()) {
      throw Error::InFile(file.string(), fmt::format("\"config.normalize_features\" is {} ({})", n.dump(), fix));
    }
    norm = n.get<std::string>();
  }
  if (!config.contains("feature_scaling")) {
    if (version >= 2 || norm == FeatureNormName(FeatureNorm::kStandard)) {
      throw Error::InFile(file.string(),
                          fmt::format("\"config.feature_scaling\" is missing: the training data's feature scaling "
                                      "({}) cannot be refitted on other data ({})",
                                      norm, fix));
    }
    return;
  }
  FeatureScaling scaling;
  try {
    scaling = FeatureScaling::FromJson(config.at("feature_scaling"));
  } catch (const Error& e) {
    throw Error::InFile(file.string(), fmt::format("\"config.feature_scaling\": {} ({})", e.what(), fix));
  } catch (const nlohmann::json::exception& e) {
    throw Error::InFile(file.string(), fmt::format("\"config.feature_scaling\" is malformed: {} ({})", e.what(), fix));
  }
  if (FeatureNormName(scaling.norm) != norm) {
    throw Error::InFile(file.string(),
                        fmt::format("\"config.feature_scaling\" is for {} scaling but \"config.normalize_features\" is "
                                    "{} ({})",
                                    FeatureNormName(scaling.norm), norm, fix));
  }
  if (scaling.norm == FeatureNorm::kStandard && config.contains("in_dim") && config.at("in_dim").is_number_integer() &&
      static_cast<int64_t>(scaling.mean.size()) != config.at("in_dim").get<int64_t>()) {
    throw Error::InFile(file.string(),
                        fmt::format("\"config.feature_scaling\" holds {} columns but \"config.in_dim\" is {} ({})",
                                    scaling.mean.size(), config.at("in_dim").dump(), fix));
  }
}

}  // namespace

TrainState LoadCheckpoint(const std::filesystem::path& dir) {
  const auto json_path = dir / "checkpoint.json";
  TESSEL_CHECK(std::filesystem::exists(json_path),
               "{}: not a GCN checkpoint (no checkpoint.json); train with "
               "--checkpoint DIR first",
               dir.string());
  const std::string fix = DamagedFix(dir);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(ReadFileToString(json_path));
  } catch (const nlohmann::json::exception& e) {
    throw Error::InFile(json_path.string(), fmt::format("not valid JSON ({}; {})", e.what(), fix));
  }
  const std::string file = json_path.string();
  try {
    TESSEL_CHECK(j.is_object() && j.contains("kind") && j.at("kind") == "tessel-gcn-checkpoint",
                 "{}: not a GCN checkpoint (\"kind\" is not \"tessel-gcn-checkpoint\"; {})", file, fix);
    const nlohmann::json& version_field = j.at("format_version");
    TESSEL_CHECK(version_field.is_number_integer(), "{}: \"format_version\" is {}, not an integer ({})", file,
                 version_field.dump(), fix);
    const auto version = version_field.get<int64_t>();
    TESSEL_CHECK(version >= 1 && version <= kCheckpointVersion,
                 "{}: \"format_version\" is {} (this tessel reads 1 to {}); use the tessel that wrote it, or delete "
                 "{} to start over",
                 file, version_field.dump(), kCheckpointVersion, dir.string());
    TrainState s;
    s.config = j.at("config");
    TESSEL_CHECK(s.config.is_object(), "{}: \"config\" is {}, not an object ({})", file, s.config.dump().substr(0, 40),
                 fix);
    // The run that wrote the checkpoint never went past its --epochs (a resume may raise it; ResumeIfAsked checks
    // the new one).
    int64_t max_epochs = std::numeric_limits<int32_t>::max();
    if (s.config.contains("epochs")) max_epochs = Counter(s.config, "epochs", 1, max_epochs, json_path, fix);
    const int64_t epochs_done = Counter(j, "epochs_done", 0, max_epochs, json_path, fix);
    const int64_t best_epoch = Counter(j, "best_epoch", 0, epochs_done, json_path, fix);
    // Every epoch without a better validation accuracy counts since the best one (or since the start).
    const int64_t since = Counter(j, "epochs_since_best", 0, epochs_done, json_path, fix);
    TESSEL_CHECK(since == epochs_done - best_epoch,
                 "{}: \"epochs_since_best\" is {} but epochs_done - best_epoch is {} - {} ({})", file, since,
                 epochs_done, best_epoch, fix);
    // At least one Adam step per epoch, and no epoch has 2^31 of them.
    constexpr int64_t kMaxStepsPerEpoch = int64_t{1} << 31;
    // (version 3 may be taken inside the epoch after epochs_done)
    s.adam_steps = Counter(j, "adam_steps", epochs_done, (epochs_done + (version >= 3 ? 1 : 0)) * kMaxStepsPerEpoch,
                           json_path, fix);
    const nlohmann::json& acc = j.at("best_val_acc");
    const double best_val_acc = acc.is_number() ? acc.get<double>() : std::nan("");
    TESSEL_CHECK(
        best_epoch > 0 ? std::isfinite(best_val_acc) && best_val_acc >= 0 && best_val_acc <= 1 : best_val_acc == -1.0,
        "{}: \"best_val_acc\" is {} but must be {} ({})", file, acc.dump(),
        best_epoch > 0 ? "an accuracy in [0, 1]" : "-1 (no best epoch yet)", fix);
    if (version >= 3) {  // mid-epoch state: never a whole epoch or more, within the Adam steps taken
      s.epoch_steps = Counter(j, "epoch_steps", 0, kMaxStepsPerEpoch, json_path, fix);
      s.epoch_steps_done = Counter(j, "epoch_steps_done", 0, s.epoch_steps, json_path, fix);
      TESSEL_CHECK(
          epochs_done + s.epoch_steps_done <= s.adam_steps && (s.epoch_steps_done == 0 || epochs_done < max_epochs),
          "{}: \"epoch_steps_done\" {} does not fit \"adam_steps\" {} and \"epochs_done\" {} ({})", file,
          s.epoch_steps_done, s.adam_steps, epochs_done, fix);
      s.ranks = static_cast<int>(Counter(j, "ranks", 0, std::numeric_limits<int32_t>::max(), json_path, fix));
      const nlohmann::json& jit = j.at("just_in_time");
      TESSEL_CHECK(jit.is_boolean(), "{}: \"just_in_time\" is {}, not true or false ({})", file, jit.dump(), fix);
      s.just_in_time = jit.get<bool>();
    }
    s.epochs_done = static_cast<int>(epochs_done);
    s.best_epoch = static_cast<int>(best_epoch);
    s.epochs_since_best = static_cast<int>(since);
    s.best_val_acc = best_val_acc;
    CheckScaling(s.config, version, json_path, fix);

    const auto tensors = dir / "tensors.bin";
    const nlohmann::json& sum = j.at("tensors_checksum");
    TESSEL_CHECK(sum.is_string(), "{}: \"tensors_checksum\" is {}, not a string of 16 hex digits ({})", file,
                 sum.dump().substr(0, 40), fix);
    const std::string bytes = ReadFileToString(tensors);
    TESSEL_CHECK(ChecksumHex(bytes.data(), bytes.size()) == sum.get<std::string>(), "{}: checksum mismatch ({})",
                 tensors.string(), fix);
    // Counts (no model has 2^30 tensors; the reads below stop at the end of the file whatever the counts say).
    constexpr int64_t most = int64_t{1} << 30;
    const int64_t num_params = Counter(j, "num_params", 0, most, json_path, fix);
    const int64_t num_moments = Counter(j, "num_moments", 0, most, json_path, fix);
    const int64_t num_best = Counter(j, "num_best_params", 0, most, json_path, fix);
    // Adam keeps two moments (m, v) per parameter from its first step on (optimizer.h); the best weights exist from
    // the first evaluated epoch on.
    TESSEL_CHECK(num_moments == 2 * num_params || (num_moments == 0 && s.adam_steps == 0),
                 "{}: \"num_moments\" is {} but Adam keeps 2 per parameter: {} for \"num_params\" {} ({})", file,
                 num_moments, 2 * num_params, num_params, fix);
    TESSEL_CHECK(num_best == (best_epoch > 0 ? num_params : 0),
                 "{}: \"num_best_params\" is {} but must be {} (\"num_params\" {}, \"best_epoch\" {}) ({})", file,
                 num_best, best_epoch > 0 ? num_params : 0, num_params, best_epoch, fix);
    size_t pos = 0;
    for (int64_t i = 0; i < num_params; ++i) s.params.push_back(Read(bytes, &pos, tensors));
    for (int64_t i = 0; i < num_moments; ++i) s.moments.push_back(Read(bytes, &pos, tensors));
    for (int64_t i = 0; i < num_best; ++i) s.best_params.push_back(Read(bytes, &pos, tensors));
    TESSEL_CHECK(pos == bytes.size(), "{}: {} unexpected trailing bytes ({})", tensors.string(), bytes.size() - pos,
                 fix);
    for (size_t i = 0; i < s.params.size(); ++i) CheckFinite(s.params[i], fmt::format("params[{}]", i), tensors, fix);
    for (size_t i = 0; i < s.moments.size(); ++i) {
      const kernels::Matrix& p = s.params[i / 2];
      const std::string name = fmt::format("moments[{}] (Adam {} of params[{}])", i, i % 2 == 0 ? "m" : "v", i / 2);
      TESSEL_CHECK(SameShape(s.moments[i], p), "{}: tensor {} is {}x{} but its parameter is {}x{} ({})",
                   tensors.string(), name, s.moments[i].rows, s.moments[i].cols, p.rows, p.cols, fix);
      CheckFinite(s.moments[i], name, tensors, fix);
    }
    for (size_t i = 0; i < s.best_params.size(); ++i) {
      const kernels::Matrix& p = s.params[i];
      const std::string name = fmt::format("best_params[{}]", i);
      TESSEL_CHECK(SameShape(s.best_params[i], p), "{}: tensor {} is {}x{} but params[{}] is {}x{} ({})",
                   tensors.string(), name, s.best_params[i].rows, s.best_params[i].cols, i, p.rows, p.cols, fix);
      CheckFinite(s.best_params[i], name, tensors, fix);
    }
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw Error::InFile(file, fmt::format("missing or malformed field ({}; {})", e.what(), fix));
  }
}

void CheckCheckpointShapes(const std::filesystem::path& dir, const TrainState& s,
                           const std::vector<TensorShape>& model) {
  const std::string file = (dir / "tensors.bin").string();
  TESSEL_CHECK(s.params.size() == model.size(),
               "{}: holds {} parameter tensors but the model of its configuration has {} ({})", file, s.params.size(),
               model.size(), DamagedFix(dir));
  for (size_t i = 0; i < model.size(); ++i) {
    TESSEL_CHECK(s.params[i].rows == model[i].rows && s.params[i].cols == model[i].cols,
                 "{}: tensor params[{}] ({}) is {}x{} but the model of its configuration needs {}x{} ({})", file, i,
                 model[i].name, s.params[i].rows, s.params[i].cols, model[i].rows, model[i].cols, DamagedFix(dir));
  }
}

}  // namespace tessel::train::gcn
