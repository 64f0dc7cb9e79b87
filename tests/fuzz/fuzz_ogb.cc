// libFuzzer target: ReadOgbNodeFolder. The input is the raw CSV files of one folder joined by kSeparator
// (tests/fuzz/fuzz_util.h), in the order of kFiles; an empty part other than raw/edge.csv is an absent file.
#include <cstddef>
#include <cstdint>

#include "datasets/readers.h"
#include "tests/fuzz/fuzz_util.h"

namespace fs = std::filesystem;

namespace {
constexpr const char* kFiles[] = {"raw/edge.csv",          "raw/node-feat.csv", "raw/node-label.csv",
                                  "raw/num-node-list.csv", "split/s/train.csv", "split/s/valid.csv",
                                  "split/s/test.csv"};
constexpr size_t kNumFiles = sizeof(kFiles) / sizeof(kFiles[0]);
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  static const fs::path root = [] {
    const fs::path r = fuzz::ScratchDir("ogb") / "ogbn-fuzz";
    fs::create_directories(r / "raw");
    fs::create_directories(r / "split" / "s");
    return r;
  }();
  const auto parts = fuzz::SplitParts(fuzz::AsText(data, size), kNumFiles);
  for (size_t i = 0; i < kNumFiles; ++i) fuzz::WriteOrRemove(root / kFiles[i], parts[i], i == 0 || !parts[i].empty());
  return fuzz::Run([&] {
    const datasets::NodeDataset ds = datasets::ReadOgbNodeFolder(root);
    (void)ds;
  });
}
