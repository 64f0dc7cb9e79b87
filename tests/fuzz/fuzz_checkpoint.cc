// libFuzzer target: LoadCheckpoint (train/gcn/checkpoint.h). A small valid checkpoint is written once; each input
// restores it and replaces one file: with the first byte even, the rest is checkpoint.json; odd, the rest is
// tensors.bin and checkpoint.json gets its checksum (so the tensor parser is reached, not only the checksum).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/checksum.h"
#include "tests/fuzz/fuzz_util.h"
#include "train/gcn/checkpoint.h"

namespace fs = std::filesystem;

namespace {

using namespace tessel;

struct Template {
  fs::path dir;
  std::string json;
  std::string tensors;
};

const Template& Valid() {
  static const Template t = [] {
    const fs::path& scratch = fuzz::ScratchDir("checkpoint");
    train::gcn::TrainState s;
    s.config = {{"hidden", 4}, {"layers", 2}, {"epochs", 5}, {"feature_scaling", {{"norm", "none"}}}};
    s.epochs_done = 3;
    s.best_epoch = 2;
    s.best_val_acc = 0.5;
    s.epochs_since_best = 1;
    s.adam_steps = 3;
    s.params.emplace_back(2, 3, std::vector<float>{1, 2, 3, 4, 5, 6});
    s.params.emplace_back(3, 1, std::vector<float>{-1, 0, 1});
    for (const auto& p : s.params) {
      s.moments.push_back(p.Clone());
      s.moments.push_back(p.Clone());
      s.best_params.push_back(p.Clone());
    }
    train::gcn::SaveCheckpoint(scratch / "valid", s);
    Template out{scratch / "work", fuzz::ReadFile(scratch / "valid" / "checkpoint.json"),
                 fuzz::ReadFile(scratch / "valid" / "tensors.bin")};
    fuzz::MaybeWriteSeed("seed-json", std::string(1, '\0') + out.json);
    fuzz::MaybeWriteSeed("seed-tensors", std::string(1, '\1') + out.tensors);
    return out;
  }();
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Template& t = Valid();
  if (size < 1) return 0;
  fs::create_directories(t.dir);
  const std::string_view rest = fuzz::AsText(data + 1, size - 1);
  if ((data[0] & 1) == 0) {
    fuzz::WriteFile(t.dir / "checkpoint.json", rest);
    fuzz::WriteFile(t.dir / "tensors.bin", t.tensors);
  } else {
    nlohmann::json j = nlohmann::json::parse(t.json);
    j["tensors_checksum"] = ChecksumHex(rest.data(), rest.size());
    fuzz::WriteFile(t.dir / "checkpoint.json", j.dump(2));
    fuzz::WriteFile(t.dir / "tensors.bin", rest);
  }
  return fuzz::Run([&] {
    const train::gcn::TrainState s = train::gcn::LoadCheckpoint(t.dir);
    (void)s;
  });
}
