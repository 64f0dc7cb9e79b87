// GCN checkpoints (train/gcn/checkpoint.h): a save/load round trip including empty tensors, and a damaged
// tensors.bin whose tensor shape overflows 64 bits refused with the file named (found by
// tests/fuzz/fuzz_checkpoint.cc).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
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
  static TrainState State() {
    TrainState s;
    s.config = {{"hidden", 2}};
    s.epochs_done = 4;
    s.adam_steps = 4;
    s.params.emplace_back(2, 2, std::vector<float>{1, 2, 3, 4});
    s.params.emplace_back(0, 3);  // an empty tensor: no values in the file
    s.moments.emplace_back(2, 2, std::vector<float>{0.5f, 0, 0, -1});
    return s;
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
  ASSERT_EQ(s.moments.size(), 1u);
  EXPECT_EQ(s.moments[0].data.ToVector(), (std::vector<float>{0.5f, 0, 0, -1}));
  EXPECT_EQ(s.epochs_done, 4);
}

TEST_F(CheckpointTest, OverflowingShapeIsRefused) {
  SaveCheckpoint(dir_, State());
  // The first tensor claims 2^62 x 4 values: rows * cols overflows int64.
  const int64_t shape[2] = {int64_t{1} << 62, 4};
  std::string bytes(reinterpret_cast<const char*>(shape), sizeof(shape));
  bytes += std::string(64, '\0');
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

}  // namespace
}  // namespace tessel::train::gcn
