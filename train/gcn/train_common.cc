// Pieces of the GCN trainer (train_common.h): stream keys, shuffle, best-weight tracking with early stopping,
// checkpoint capture and resume.
#include "train/gcn/train_common.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/device.h"
#include "core/error.h"
#include "core/log.h"
#include "core/params_json.h"
#include "train/gcn/trainer.h"

namespace tessel::train::gcn {

StreamKey TrainKey(const Context& ctx, int epoch, int64_t batch, uint64_t purpose) {
  return StreamKey{.seed = ctx.seed,
                   .rank = static_cast<uint64_t>(ctx.rank),
                   .epoch = static_cast<uint64_t>(epoch),
                   .batch = static_cast<uint64_t>(batch),
                   .purpose = purpose};
}

void ShuffleSeeds(const Context& ctx, int epoch, std::vector<int64_t>& order) {
  Rng shuffle(TrainKey(ctx, epoch, 0, kPurposeShuffle));
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[shuffle.UniformInt(i)]);
}

void CheckLoss(int epoch, double loss) {
  TESSEL_CHECK(std::isfinite(loss), "epoch {}: the loss is {} (lower --lr, or check the features)", epoch, loss);
}

bool BestWeights::Update(int epoch_done, double epoch_val_acc, const std::vector<Param>& current, int patience) {
  if (epoch_val_acc > val_acc) {
    val_acc = epoch_val_acc;
    epoch = epoch_done;
    epochs_since = 0;
    params.clear();
    for (const Param& p : current) params.push_back(p.value.Clone());
  } else {
    epochs_since = epoch_done - epoch;  // one more than before when every epoch is evaluated
  }
  return patience > 0 && epochs_since >= patience;
}

void BestWeights::Restore(std::vector<Param>& current) const {
  if (params.size() != current.size()) return;
  for (size_t i = 0; i < current.size(); ++i) current[i].value = params[i].Clone();
}

bool CheckpointDue(const TrainConfig& c, int epoch, bool stop) {
  return !c.checkpoint_dir.empty() && (epoch % c.checkpoint_every == 0 || epoch == c.epochs || stop);
}

nlohmann::json CheckpointConfig(nlohmann::json config, const FeatureScaling& scaling) {
  // Always written (checkpoint version 2), so that a checkpoint whose scaling is missing is refused rather than
  // refitted on other data.
  config["feature_scaling"] = scaling.ToJson();
  return config;
}

TrainState CaptureState(nlohmann::json config, int epochs_done, const BestWeights& best, const GcnModel& model,
                        const Adam& adam) {
  TrainState s;
  s.config = std::move(config);
  s.epochs_done = epochs_done;
  s.best_epoch = best.epoch;
  s.best_val_acc = best.val_acc;
  s.epochs_since_best = best.epochs_since;
  s.adam_steps = adam.steps();
  for (const Param& p : model.params()) s.params.push_back(p.value.Clone());
  for (const Matrix& m : const_cast<Adam&>(adam).moments()) s.moments.push_back(m.Clone());
  for (const Matrix& m : best.params) s.best_params.push_back(m.Clone());
  return s;
}

int64_t FirstStep(const ResumePoint& r, int64_t steps) {
  if (r.epoch_steps_done <= 0 || r.epoch_steps <= 0) return 0;
  if (r.epoch_steps == steps) return r.epoch_steps_done;
  return std::min(steps, r.epoch_steps_done * steps / r.epoch_steps);
}

ResumePoint ResumeIfAsked(const TrainConfig& c, const nlohmann::json& config, BestWeights* best, GcnModel* model,
                          Adam* adam) {
  if (!c.resume || !std::filesystem::exists(c.checkpoint_dir / "checkpoint.json")) return {};
  TrainState s = LoadCheckpoint(c.checkpoint_dir);
  const std::string dir = c.checkpoint_dir.string();
  TESSEL_CHECK(s.epochs_done <= c.epochs,
               "--resume: the checkpoint in {} has {} epochs done, more than --epochs {}; pass --epochs {} or more to "
               "continue it, or delete it (or use a new --checkpoint folder) to start over",
               dir, s.epochs_done, c.epochs, s.epochs_done);
  nlohmann::json want = config;
  nlohmann::json have = s.config;
  // Version 1 checkpoints stored the feature scaling for standard scaling only (LoadCheckpoint requires it there).
  if (!have.contains("feature_scaling") && want.contains("feature_scaling") &&
      want["feature_scaling"].value("norm", "") != FeatureNormName(FeatureNorm::kStandard)) {
    want.erase("feature_scaling");
  }
  // None of these changes what a step computes.
  for (const char* key : {"epochs", "patience", "eval_every", "overlap", "device_sampling", "features_on", "network"}) {
    want.erase(key);
    have.erase(key);
  }
  // Parameters added after the checkpoint was written count as their defaults there.
  nlohmann::json defaults = TrainConfig{}.ToJson(true);
  for (auto it = defaults.begin(); it != defaults.end(); ++it) {
    if (!have.contains(it.key()) && want.contains(it.key()) && want[it.key()] == it.value()) want.erase(it.key());
  }
  if (want != have) {
    // Name the settings that differ (not the whole configuration: the feature scaling alone can be megabytes).
    std::string diff;
    const auto shown = [](const nlohmann::json& j, const std::string& key) {
      if (!j.contains(key)) return std::string("unset");
      std::string text = j.at(key).dump();
      return text.size() > 60 ? text.substr(0, 57) + "..." : text;
    };
    nlohmann::json keys = have;
    keys.update(want);
    for (auto it = keys.begin(); it != keys.end(); ++it) {
      if (want.contains(it.key()) && have.contains(it.key()) && want[it.key()] == have[it.key()]) continue;
      diff += fmt::format("{}{}: {} in the checkpoint, {} now", diff.empty() ? "" : "; ", it.key(),
                          shown(have, it.key()), shown(want, it.key()));
    }
    throw Error(fmt::format(
        "--resume: the checkpoint in {} was trained with different settings ({}); train with the same options (and "
        "dataset), or use a new --checkpoint folder",
        dir, diff));
  }
  auto& params = model->params();
  std::vector<TensorShape> shapes;
  for (const Param& p : params) shapes.push_back({p.name, p.value.rows, p.value.cols});
  CheckCheckpointShapes(c.checkpoint_dir, s, shapes);
  for (size_t i = 0; i < params.size(); ++i) params[i].value = std::move(s.params[i]);
  adam->Restore(s.adam_steps, std::move(s.moments));
  best->params = std::move(s.best_params);
  best->epoch = s.best_epoch;
  best->val_acc = s.best_val_acc;
  best->epochs_since = s.epochs_since_best;
  const ResumePoint at{.resumed = true,
                       .epochs_done = s.epochs_done,
                       .epoch_steps_done = s.epoch_steps_done,
                       .epoch_steps = s.epoch_steps,
                       .adam_steps = s.adam_steps,
                       .ranks = s.ranks,
                       .just_in_time = s.just_in_time};
  if (s.epoch_steps_done > 0) {
    log::Info("resuming from {} inside epoch {}: {} of its {} steps done on {} rank(s){}", c.checkpoint_dir.string(),
              s.epochs_done + 1, s.epoch_steps_done, s.epoch_steps, s.ranks,
              s.just_in_time ? " (just-in-time state of a failed job)" : "");
  } else {
    log::Info("resuming from {} after epoch {}", c.checkpoint_dir.string(), s.epochs_done);
  }
  return at;
}

TrainConfig CheckedCheckpointConfig(const std::filesystem::path& dir, const TrainState& s) {
  const std::string json_file = (dir / "checkpoint.json").string();
  TrainConfig c;
  try {
    c = TrainConfig::FromJson(s.config);
    c.model.Validate();
    // Every value the training run had to pass (counts, rates), not only the model's: a damaged one is named here.
    c.Validate(ParamsToJson(c.dist) != ParamsToJson(DistOptions{}));
  } catch (const Error& e) {
    throw Error::InFile(json_file, fmt::format("\"config\": {} (checkpoint {} damaged; delete it and train again)",
                                               e.what(), dir.string()));
  } catch (const nlohmann::json::exception& e) {
    throw Error::InFile(json_file, fmt::format("\"config\" is malformed: {} (checkpoint {} damaged; delete it and "
                                               "train again)",
                                               e.what(), dir.string()));
  }
  // The tensors must be those of the configuration's model before that model (sized by the configuration) is built.
  std::vector<TensorShape> shapes;
  for (int l = 0; l < c.model.layers; ++l) {  // GcnModel's parameters, in its order
    const int64_t in = l == 0 ? c.model.in_dim : c.model.hidden;
    const int64_t out = l == c.model.layers - 1 ? c.model.num_classes : c.model.hidden;
    shapes.push_back({fmt::format("layer{}.weight", l), in, out});
    if (c.model.kind == ModelKind::kSage) shapes.push_back({fmt::format("layer{}.weight_self", l), in, out});
    if (c.model.bias) shapes.push_back({fmt::format("layer{}.bias", l), 1, out});
    if (shapes.size() > s.params.size()) break;  // already too many: no need to list a forged number of layers
  }
  CheckCheckpointShapes(dir, s, shapes);
  if (s.config.contains("feature_scaling")) {  // the training data's scaling (version 1: only for standard scaling)
    const FeatureScaling scaling = FeatureScaling::FromJson(s.config.at("feature_scaling"));
    TESSEL_CHECK(scaling.norm == c.normalize_features,
                 "{}: the checkpoint's feature scaling ({}) is not its "
                 "configuration's ({}); the checkpoint is damaged",
                 dir.string(), FeatureNormName(scaling.norm), FeatureNormName(c.normalize_features));
    TESSEL_CHECK(scaling.norm != FeatureNorm::kStandard || static_cast<int64_t>(scaling.mean.size()) == c.model.in_dim,
                 "{}: \"config.feature_scaling\" holds {} columns but the model takes {} (checkpoint {} damaged; "
                 "delete it and train again)",
                 json_file, scaling.mean.size(), c.model.in_dim, dir.string());
  }
  return c;
}

}  // namespace tessel::train::gcn
