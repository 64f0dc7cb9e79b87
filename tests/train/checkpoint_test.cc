// GCN checkpoints (train/gcn/checkpoint.h): a save/load round trip including empty tensors, a damaged
// tensors.bin whose tensor shape overflows 64 bits refused with the file named (found by
// tests/fuzz/fuzz_checkpoint.cc), and one test per class of forged checkpoint LoadCheckpoint must refuse even with
// a matching checksum: counters out of range, non-finite values, moment and best-weight counts, shapes, and the
// feature scaling (every refusal names the checkpoint, the field or tensor, and the fix).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/checksum.h"
#include "core/error.h"
#include "train/gcn/checkpoint.h"

namespace tessel::train::gcn {
namespace {
namespace fs = std::filesystem;

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_ckpt_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A consistent state: 4 epochs, the best after epoch 3, two Adam moments per parameter.
  static TrainState State() {
    TrainState s;
    s.config = {{"hidden", 2}, {"epochs", 10}, {"normalize_features", "none"}, {"feature_scaling", {{"norm", "none"}}}};
    s.epochs_done = 4;
    s.best_epoch = 3;
    s.best_val_acc = 0.75;
    s.epochs_since_best = 1;
    s.adam_steps = 4;
    s.params.emplace_back(2, 2, std::vector<float>{1, 2, 3, 4});
    s.params.emplace_back(0, 3);  // an empty tensor: no values in the file
    s.moments.emplace_back(2, 2, std::vector<float>{0.5f, 0, 0, -1});
    s.moments.emplace_back(2, 2, std::vector<float>{0.25f, 0, 0, 1});
    s.moments.emplace_back(0, 3);
    s.moments.emplace_back(0, 3);
    for (const auto& p : s.params) s.best_params.push_back(p.Clone());
    return s;
  }
  // Rewrites one field of checkpoint.json (the tensors and their checksum stay valid).
  void SetField(const std::string& key, const nlohmann::json& value) {
    std::ifstream in(dir_ / "checkpoint.json");
    nlohmann::json j = nlohmann::json::parse(in);
    in.close();
    j[key] = value;
    std::ofstream(dir_ / "checkpoint.json", std::ios::trunc) << j.dump(2);
  }
  // Saves `s` and returns LoadCheckpoint's error ("" when it loads).
  std::string ErrorOfLoad() const {
    try {
      LoadCheckpoint(dir_);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  // The refusal names the checkpoint, `needle` (a field or tensor) and the fix.
  void ExpectRefused(const std::string& needle) const {
    const std::string what = ErrorOfLoad();
    EXPECT_NE(what.find(needle), std::string::npos) << "expected '" << needle << "' in: " << what;
    EXPECT_NE(what.find(dir_.string()), std::string::npos) << what;
    EXPECT_NE(what.find("delete it"), std::string::npos) << what;
  }
  // Replaces tensors.bin and the checksum that guards it.
  void WriteTensors(const std::string& bytes) {
    std::ofstream(dir_ / "tensors.bin", std::ios::binary | std::ios::trunc) << bytes;
    std::ifstream in(dir_ / "checkpoint.json");
    nlohmann::json j = nlohmann::json::parse(in);
    j["tensors_checksum"] = ChecksumHex(bytes.data(), bytes.size());
    std::ofstream(dir_ / "checkpoint.json", std::ios::trunc) << j.dump(2);
  }
  fs::path dir_;
};

TEST_F(CheckpointTest, RoundTripKeepsEmptyTensors) {
  SaveCheckpoint(dir_, State());
  const TrainState s = LoadCheckpoint(dir_);
  ASSERT_EQ(s.params.size(), 2u);
  EXPECT_EQ(s.params[0].data.ToVector(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(s.params[1].rows, 0);
  EXPECT_EQ(s.params[1].cols, 3);
  ASSERT_EQ(s.moments.size(), 4u);
  EXPECT_EQ(s.moments[0].data.ToVector(), (std::vector<float>{0.5f, 0, 0, -1}));
  EXPECT_EQ(s.epochs_done, 4);
  EXPECT_EQ(s.best_epoch, 3);
  EXPECT_EQ(s.epochs_since_best, 1);
  EXPECT_EQ(s.best_params.size(), 2u);
}

TEST_F(CheckpointTest, OverflowingShapeIsRefused) {
  SaveCheckpoint(dir_, State());
  // The first tensor claims 2^62 x 4 values: rows * cols overflows int64.
  const int64_t shape[2] = {int64_t{1} << 62, 4};
  std::string bytes(reinterpret_cast<const char*>(shape), sizeof(shape));
  bytes += std::string(160, '\0');  // room for the 8 tensors checkpoint.json counts
  WriteTensors(bytes);
  try {
    LoadCheckpoint(dir_);
    FAIL() << "a tensor shape larger than the file was accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bad tensor shape 4611686018427387904x4"), std::string::npos) << what;
    EXPECT_NE(what.find((dir_ / "tensors.bin").string()), std::string::npos) << what;
    EXPECT_NE(what.find("delete it to start over"), std::string::npos) << what;
  }
}

// Counters are read as 64-bit integers and range-checked: nothing wraps (2^40 is not 0), nothing negative, no epoch
// past the run's --epochs, and the best epoch, the epochs since it and the Adam steps agree with the epochs done.
TEST_F(CheckpointTest, CountersOutOfRangeAreRefused) {
  const std::vector<std::pair<std::string, nlohmann::json>> cases = {
      {"epochs_done", int64_t{2147483647}},
      {"epochs_done", int64_t{1} << 40},
      {"epochs_done", -5},
      {"epochs_done", 11},  // past the run's 10 epochs
      {"epochs_done", "three"},
      {"epochs_done", 3.5},
      {"epochs_done", uint64_t{18446744073709551615ULL}},
      {"best_epoch", 5},
      {"best_epoch", -1},
      {"epochs_since_best", 3},
      {"adam_steps", -7},
      {"adam_steps", 3},  // fewer steps than epochs
      {"best_val_acc", "NaN"},
      {"best_val_acc", 1.5},
      {"best_val_acc", nullptr},
      {"num_params", -1},
      {"format_version", int64_t{1} << 40},
  };
  for (const auto& [key, value] : cases) {
    SCOPED_TRACE(key + " = " + value.dump());
    fs::remove_all(dir_);
    SaveCheckpoint(dir_, State());
    SetField(key, value);
    const std::string what = ErrorOfLoad();
    EXPECT_NE(what.find(key), std::string::npos) << what;
    EXPECT_NE(what.find(dir_.string()), std::string::npos) << what;
  }
  // No best epoch yet: the accuracy must be the "none" value -1, and there are no best weights.
  fs::remove_all(dir_);
  TrainState s = State();
  s.best_epoch = 0;
  s.epochs_since_best = 4;
  s.best_val_acc = -1;
  s.best_params.clear();
  SaveCheckpoint(dir_, s);
  EXPECT_EQ(ErrorOfLoad(), "");
  SetField("best_val_acc", 0.5);
  ExpectRefused("best_val_acc");
}

TEST_F(CheckpointTest, NonFiniteValuesAreRefused) {
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity()};
  for (int where = 0; where < 3; ++where) {
    for (const float v : bad) {
      fs::remove_all(dir_);
      TrainState s = State();
      std::vector<kernels::Matrix>& list = where == 0 ? s.params : where == 1 ? s.moments : s.best_params;
      std::vector<float> values = list[0].data.ToVector();
      values[3] = v;
      list[0] = kernels::Matrix(2, 2, values);
      SaveCheckpoint(dir_, s);
      const char* name = where == 0 ? "params[0]" : where == 1 ? "moments[0]" : "best_params[0]";
      SCOPED_TRACE(name);
      ExpectRefused(std::string("tensor ") + name);
      EXPECT_NE(ErrorOfLoad().find("row 1, column 1"), std::string::npos) << ErrorOfLoad();
    }
  }
}

// Adam keeps two moments (m, v) per parameter, shaped as the parameter; the best weights are one per parameter
// once an epoch was evaluated.
TEST_F(CheckpointTest, MomentAndBestCountsAndShapesMustMatchTheParameters) {
  {
    TrainState s = State();
    s.moments.pop_back();
    SaveCheckpoint(dir_, s);
    ExpectRefused("num_moments");
  }
  {
    fs::remove_all(dir_);
    TrainState s = State();
    s.moments.push_back(s.params[0].Clone());
    SaveCheckpoint(dir_, s);
    ExpectRefused("num_moments");
  }
  {
    fs::remove_all(dir_);
    TrainState s = State();
    s.best_params.pop_back();
    SaveCheckpoint(dir_, s);
    ExpectRefused("num_best_params");
  }
  {
    fs::remove_all(dir_);
    TrainState s = State();
    s.moments[1] = kernels::Matrix(4, 1, std::vector<float>{0, 0, 0, 0});  // the right size, not the shape
    SaveCheckpoint(dir_, s);
    ExpectRefused("moments[1] (Adam v of params[0]) is 4x1");
  }
  {
    fs::remove_all(dir_);
    TrainState s = State();
    s.best_params[1] = kernels::Matrix(3, 0);
    SaveCheckpoint(dir_, s);
    ExpectRefused("best_params[1] is 3x0");
  }
}

// The parameters must have the shapes of the model the configuration describes, checked before the model uses
// them (an SpMM shape error is no way to learn that a checkpoint is damaged).
TEST_F(CheckpointTest, ShapesAreCheckedAgainstTheModel) {
  SaveCheckpoint(dir_, State());
  const TrainState s = LoadCheckpoint(dir_);
  EXPECT_NO_THROW(CheckCheckpointShapes(dir_, s, {{"layer0.weight", 2, 2}, {"layer0.bias", 0, 3}}));
  const auto refusal = [&](const std::vector<TensorShape>& model) {
    try {
      CheckCheckpointShapes(dir_, s, model);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string what = refusal({{"layer0.weight", 2, 3}, {"layer0.bias", 0, 3}});
  EXPECT_NE(what.find("params[0] (layer0.weight) is 2x2 but the model of its configuration needs 2x3"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find((dir_ / "tensors.bin").string()), std::string::npos) << what;
  EXPECT_NE(what.find("delete it"), std::string::npos) << what;
  what = refusal({{"layer0.weight", 2, 2}});
  EXPECT_NE(what.find("holds 2 parameter tensors but the model of its configuration has 1"), std::string::npos) << what;
}

// The feature scaling the configuration needs is part of the checkpoint: missing or malformed, the checkpoint is
// refused rather than refitted on whatever data comes next.
TEST_F(CheckpointTest, FeatureScalingMustBePresentAndWellFormed) {
  const nlohmann::json standard = {{"norm", "standard"}, {"mean", {0.5, -1.0}}, {"scale", {2.0, 1.0}}};
  const auto with_config = [&](const std::function<void(nlohmann::json&)>& edit) {
    fs::remove_all(dir_);
    TrainState s = State();
    s.config["normalize_features"] = "standard";
    s.config["in_dim"] = 2;
    s.config["feature_scaling"] = standard;
    edit(s.config);
    SaveCheckpoint(dir_, s);
  };
  with_config([](nlohmann::json&) {});
  EXPECT_EQ(ErrorOfLoad(), "");
  with_config([](nlohmann::json& c) { c.erase("feature_scaling"); });
  ExpectRefused("\"config.feature_scaling\" is missing");
  with_config([](nlohmann::json& c) { c["feature_scaling"]["scale"][1] = -1.0; });
  ExpectRefused("config.feature_scaling");
  with_config([](nlohmann::json& c) { c["feature_scaling"]["mean"][0] = nullptr; });  // NaN as JSON writes it
  ExpectRefused("config.feature_scaling");
  with_config([](nlohmann::json& c) { c["feature_scaling"]["mean"] = {1.0}; });
  ExpectRefused("config.feature_scaling");
  with_config([](nlohmann::json& c) { c["in_dim"] = 3; });
  ExpectRefused("holds 2 columns but \"config.in_dim\" is 3");
  with_config([](nlohmann::json& c) { c["normalize_features"] = "l1"; });
  ExpectRefused("is for standard scaling but \"config.normalize_features\" is l1");
  // From version 2 on every checkpoint records its scaling, none and l1 included.
  with_config([](nlohmann::json& c) {
    c["normalize_features"] = "l1";
    c.erase("feature_scaling");
  });
  ExpectRefused("\"config.feature_scaling\" is missing");
  // Version 1 recorded it for standard scaling only: l1 without it still loads.
  SetField("format_version", 1);
  EXPECT_EQ(ErrorOfLoad(), "");
}

}  // namespace
}  // namespace tessel::train::gcn

namespace tessel::train::gcn {
namespace {

// Version 3: where in an epoch the state was taken, by how many ranks, and whether just in time; checked like the
// other counters.
TEST_F(CheckpointTest, MidEpochFieldsRoundTripAndAreChecked) {
  TrainState s = State();
  s.epoch_steps_done = 3;
  s.epoch_steps = 5;
  s.adam_steps = 4 * 5 + 3;
  s.ranks = 4;
  s.just_in_time = true;
  SaveCheckpoint(dir_, s);
  const TrainState back = LoadCheckpoint(dir_);
  EXPECT_EQ(back.epoch_steps_done, 3);
  EXPECT_EQ(back.epoch_steps, 5);
  EXPECT_EQ(back.adam_steps, 23);
  EXPECT_EQ(back.ranks, 4);
  EXPECT_TRUE(back.just_in_time);
  SetField("epoch_steps_done", 6);  // more than the epoch has
  ExpectRefused("epoch_steps_done");
  SetField("epoch_steps_done", 3);
  SetField("adam_steps", 4 + 2);  // fewer Adam steps than the epochs and steps done
  ExpectRefused("epoch_steps_done");
  SetField("adam_steps", 23);
  SetField("ranks", -1);
  ExpectRefused("ranks");
  SetField("ranks", 4);
  SetField("just_in_time", "yes");
  ExpectRefused("just_in_time");
  SetField("just_in_time", false);
  SetField("format_version", 2);  // version 2 has no such fields: read as an epoch boundary
  const TrainState v2 = LoadCheckpoint(dir_);
  EXPECT_EQ(v2.epoch_steps_done, 0);
  EXPECT_EQ(v2.ranks, 0);
}

// The just-in-time writers: a state with fewer Adam steps than the checkpoint there is not written over it (every
// surviving rank writes; the newest stays), a newer one is, and the scheduled writer replaces whatever is there.
TEST_F(CheckpointTest, LockedWriterKeepsTheNewestState) {
  TrainState s = State();
  s.adam_steps = 10;
  EXPECT_TRUE(SaveCheckpointLocked(dir_, s, /*only_if_newer=*/true));
  s.adam_steps = 8;
  EXPECT_FALSE(SaveCheckpointLocked(dir_, s, /*only_if_newer=*/true));
  EXPECT_EQ(LoadCheckpoint(dir_).adam_steps, 10);
  s.adam_steps = 12;
  EXPECT_TRUE(SaveCheckpointLocked(dir_, s, /*only_if_newer=*/true));
  EXPECT_EQ(LoadCheckpoint(dir_).adam_steps, 12);
  s.adam_steps = 6;
  EXPECT_TRUE(SaveCheckpointLocked(dir_, s, /*only_if_newer=*/false));
  EXPECT_EQ(LoadCheckpoint(dir_).adam_steps, 6);
  // A checkpoint whose tensors are damaged is replaced by the state.
  std::ofstream(dir_ / "tensors.bin", std::ios::binary | std::ios::trunc) << "junk";
  s.adam_steps = 7;
  EXPECT_TRUE(SaveCheckpointLocked(dir_, s, /*only_if_newer=*/true));
  EXPECT_EQ(LoadCheckpoint(dir_).adam_steps, 7);
}

}  // namespace
}  // namespace tessel::train::gcn
