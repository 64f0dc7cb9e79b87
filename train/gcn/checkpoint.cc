// Checkpoint I/O: tensors.bin is a sequence of (int64 rows, int64 cols, rows*cols float32) records in the
// order params, moments, best_params, with counts in checkpoint.json and an XXH3 checksum of the file.
#include "train/gcn/checkpoint.h"

#include <cstring>
#include <string>

#include "core/checksum.h"
#include "core/error.h"
#include "core/file_io.h"

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
                      {"num_params", state.params.size()},
                      {"num_moments", state.moments.size()},
                      {"num_best_params", state.best_params.size()},
                      {"tensors_checksum", ChecksumHex(bytes.data(), bytes.size())}};
  AtomicDirectory out(dir, /*overwrite=*/true);
  WriteFileAtomic(out.path() / "tensors.bin", std::string_view(bytes));
  WriteFileAtomic(out.path() / "checkpoint.json", j.dump(2) + "\n");
  out.Commit();
}

TrainState LoadCheckpoint(const std::filesystem::path& dir) {
  const auto json_path = dir / "checkpoint.json";
  TESSEL_CHECK(std::filesystem::exists(json_path),
               "{}: not a GCN checkpoint (no checkpoint.json); train with "
               "--checkpoint DIR first",
               dir.string());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(ReadFileToString(json_path));
  } catch (const nlohmann::json::exception& e) {
    throw Error::InFile(json_path.string(), fmt::format("not valid JSON ({})", e.what()));
  }
  try {
    TESSEL_CHECK(j.at("kind") == "tessel-gcn-checkpoint", "{}: not a GCN checkpoint", json_path.string());
    TESSEL_CHECK(j.at("format_version").get<int>() == kCheckpointVersion,
                 "{}: checkpoint version {} (this tessel "
                 "reads {})",
                 json_path.string(), j.at("format_version").get<int>(), kCheckpointVersion);
    TrainState s;
    s.config = j.at("config");
    s.epochs_done = j.at("epochs_done").get<int>();
    s.best_epoch = j.at("best_epoch").get<int>();
    s.best_val_acc = j.at("best_val_acc").get<double>();
    s.epochs_since_best = j.at("epochs_since_best").get<int>();
    s.adam_steps = j.at("adam_steps").get<int64_t>();
    const auto tensors = dir / "tensors.bin";
    const std::string bytes = ReadFileToString(tensors);
    TESSEL_CHECK(ChecksumHex(bytes.data(), bytes.size()) == j.at("tensors_checksum").get<std::string>(),
                 "{}: checksum mismatch (checkpoint damaged; delete it to start over)", tensors.string());
    size_t pos = 0;
    for (size_t i = 0; i < j.at("num_params").get<size_t>(); ++i) s.params.push_back(Read(bytes, &pos, tensors));
    for (size_t i = 0; i < j.at("num_moments").get<size_t>(); ++i) s.moments.push_back(Read(bytes, &pos, tensors));
    for (size_t i = 0; i < j.at("num_best_params").get<size_t>(); ++i) {
      s.best_params.push_back(Read(bytes, &pos, tensors));
    }
    TESSEL_CHECK(pos == bytes.size(), "{}: {} unexpected trailing bytes", tensors.string(), bytes.size() - pos);
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw Error::InFile(json_path.string(), fmt::format("missing or malformed field ({})", e.what()));
  }
}

}  // namespace tessel::train::gcn
