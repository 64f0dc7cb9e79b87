// TrainConfig's rules and its JSON echo (train_config.h).
#include "train/gcn/train_config.h"

#include <utility>

#include "core/error.h"
#include "core/output_guard.h"
#include "core/params_json.h"
#include "sampling/neighbor_sampler.h"

namespace tessel::train::gcn {

void CheckCheckpointTarget(const TrainConfig& c, bool force, std::span<const std::filesystem::path> inputs,
                           std::span<const std::filesystem::path> other_outputs, std::string_view flag) {
  if (c.checkpoint_dir.empty()) return;
  // Never the run's input, never a device, never a folder of other files or another kind (not even with --resume,
  // which would write there, or --force); existence alone is judged below.
  CheckOutputPath(c.checkpoint_dir, OutputKind::kCheckpointFolder, /*force=*/true, flag, inputs, other_outputs);
  // A checkpoint is another run's state: replaced only when asked, as every other output is.
  const bool cli = flag.starts_with("--");
  TESSEL_CHECK(c.resume || force || !HoldsOutputOf(c.checkpoint_dir, OutputKind::kCheckpointFolder),
               "{} {}: already holds a checkpoint; pass {} to continue it, {} to replace it, or choose another folder",
               flag, c.checkpoint_dir.string(), cli ? "--resume" : "resume=True", cli ? "--force" : "force=True");
}

void RefuseDistributedOptions(std::string_view flags) {
  TESSEL_CHECK(flags.empty(),
               "options that apply to distributed training only were given ({}); add --partitions DIR (made by "
               "`tessel partition`) or drop them",
               flags);
}

void TrainConfig::Validate(bool partitioned) const {
  TESSEL_CHECK(epochs >= 1, "--epochs must be >= 1, got {}", epochs);
  TESSEL_CHECK(model.layers >= 1, "--layers must be >= 1, got {}", model.layers);
  TESSEL_CHECK(model.hidden >= 1, "--hidden must be >= 1, got {}", model.hidden);
  TESSEL_CHECK(model.dropout >= 0.0F && model.dropout < 1.0F, "--dropout must be in [0, 1), got {}", model.dropout);
  TESSEL_CHECK(batch_size >= 0, "--batch-size must be >= 0 (0 = full graph), got {}", batch_size);
  TESSEL_CHECK(patience >= 0, "--patience must be >= 0 (0 = off), got {}", patience);
  TESSEL_CHECK(eval_every >= 0, "--eval-every must be >= 0 (0 = after the last epoch only), got {}", eval_every);
  TESSEL_CHECK(patience == 0 || eval_every > 0,
               "--patience {} needs evaluations during training, but --eval-every 0 evaluates after the last epoch "
               "only: give --eval-every N or drop --patience",
               patience);
  TESSEL_CHECK(checkpoint_every >= 1, "--checkpoint-every must be >= 1, got {}", checkpoint_every);
  TESSEL_CHECK(!resume || !checkpoint_dir.empty(), "--resume needs --checkpoint DIR");
  if (partitioned) {
    TESSEL_CHECK(dist.feature_cache >= DistOptions::kCacheFromBudget,
                 "--feature-cache must be -2 (sized by --feature-cache-budget), -1 (the whole halo), 0 (none) or a "
                 "row count, got {}",
                 dist.feature_cache);
    TESSEL_CHECK(dist.feature_cache_budget_mib >= -1 && dist.feature_cache_budget_mib <= (int64_t{1} << 40),
                 "--feature-cache-budget must be -1 (half of the rank's own feature bytes), 0 (no cache) or a size "
                 "in MiB, got {}",
                 dist.feature_cache_budget_mib);
    TESSEL_CHECK(dist.eval_fanouts.empty() || dist.eval_fanouts.size() == fanouts.size(),
                 "--eval-fanouts gives {} fanouts but --fanouts gives {} (one per layer); leave it out for 4x the "
                 "training fanouts",
                 dist.eval_fanouts.size(), fanouts.size());
    for (int f : dist.eval_fanouts) {
      TESSEL_CHECK(f == -1 || f >= 1, "--eval-fanouts: {} is not a fanout (-1 = all neighbours, or >= 1)", f);
    }
    dist.skew.Validate();
    // auto: chosen at set-up from --network's link and the codecs' measured cost (comm/auto_compress.h).
    for (const auto& [value, flag] :
         {std::pair{&dist.grad_compress, "--grad-compress"}, std::pair{&dist.feature_compress, "--feature-compress"}}) {
      TESSEL_CHECK(!value->automatic || dist.network,
                   "{} auto picks the codec the time model finds fastest on the link: give the link with --network "
                   "BANDWIDTH,LATENCY (e.g. 1Gbit,20us), or name a codec",
                   flag);
    }
    const comm::CompressSpec& f = dist.feature_compress.spec;
    TESSEL_CHECK(comm::TakesRows(f.method),
                 "--feature-compress {}: feature rows take {} ({} applies to gradients: --grad-compress)",
                 dist.feature_compress.Text(), comm::RowCodecForms(), comm::CompressMethodName(f.method));
    TESSEL_CHECK(f.block == 0, "--feature-compress {}: feature rows keep one scale per row; drop the block size",
                 dist.feature_compress.Text());
    TESSEL_CHECK(dist.grad_staleness == 0 || dist.grad_staleness == 1,
                 "--grad-staleness must be 0 (synchronous) or 1 (pipelined, one step stale), got {}",
                 dist.grad_staleness);
    TESSEL_CHECK(features_on != FeaturePlacement::kHost,
                 "--features-on host applies to one process; a partitioned run keeps its rows on the device and "
                 "fetches the rest each step (docs/gpu.md): drop it");
  } else {
    const nlohmann::json mine = ParamsToJson(dist);
    const nlohmann::json defaults = ParamsToJson(DistOptions{});
    RefuseDistributedOptions(DistFlags(dist, [&](const ParamInfo& p) {
      const std::string name(p.name);
      return mine.at(name) != defaults.at(name);
    }));
  }
  TESSEL_CHECK(partitioned || batch_size > 0 || features_on != FeaturePlacement::kHost,
               "--features-on host needs sampled steps (--batch-size N): a full-batch step reads every feature row "
               "(its dropout and the weight gradient's transpose would put them on the device whole); use "
               "--batch-size or --features-on device");
  if (partitioned || batch_size > 0) {
    TESSEL_CHECK(static_cast<int>(fanouts.size()) == model.layers,
                 "--fanouts gives {} fanouts but the model has {} layers ({}give one per layer, input layer first, "
                 "for example --fanouts 10,25 for 2 layers; -1 = all neighbours)",
                 fanouts.size(), model.layers, partitioned ? "distributed training always samples: " : "");
    sampling::SamplerOptions{fanouts, replace, sampling::Aggregation::kGcn}.Validate();
    // A fanout beyond any real degree only asks for huge sampling buffers (with --replace, that many picks a node).
    constexpr int kMaxFanout = 1 << 16;
    for (const int f : fanouts) {
      TESSEL_CHECK(f <= kMaxFanout,
                   "--fanouts {}: at most {} neighbours are sampled per node; use -1 for all neighbours, or a "
                   "smaller fanout",
                   f, kMaxFanout);
    }
  }
  adam.Validate();
}

nlohmann::json TrainConfig::ToJson(bool partitioned) const {
  nlohmann::json j = ParamsToJson(*this);
  if (partitioned) {
    j.update(ParamsToJson(dist));
    j["distributed"] = true;
  }
  return j;
}

TrainConfig TrainConfig::FromJson(const nlohmann::json& j) {
  TrainConfig c;
  ParamsFromJson(j, &c);
  ParamsFromJson(j, &c.dist);
  if (!j.contains("normalize_features") && j.contains("row_normalize")) {
    // Written before --normalize-features: a bool, true meaning L1 rows.
    c.normalize_features = j.at("row_normalize").get<bool>() ? FeatureNorm::kL1 : FeatureNorm::kNone;
  }
  return c;
}

}  // namespace tessel::train::gcn
