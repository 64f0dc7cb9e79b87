// libFuzzer target: ReadNodeTable. The input is edges, features, labels, train, val and test joined by kSeparator
// (tests/fuzz/fuzz_util.h); an empty part other than the edges is an absent file.
#include <cstddef>
#include <cstdint>

#include "datasets/readers.h"
#include "tests/fuzz/fuzz_util.h"

namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  const auto& dir = fuzz::ScratchDir("nodetable");
  const auto parts = fuzz::SplitParts(fuzz::AsText(data, size), 6);
  datasets::NodeTablePaths paths;
  fs::path* const fields[6] = {&paths.edges, &paths.features, &paths.labels, &paths.train, &paths.val, &paths.test};
  const char* const names[6] = {"t.edges.txt", "t.features.txt", "t.labels.txt",
                                "t.train.txt", "t.val.txt",      "t.test.txt"};
  for (int i = 0; i < 6; ++i) {
    if (i == 0 || !parts[i].empty()) {
      *fields[i] = dir / names[i];
      fuzz::WriteFile(*fields[i], parts[i]);
    }
  }
  return fuzz::Run([&] {
    const datasets::NodeDataset ds = datasets::ReadNodeTable(paths);
    (void)ds;
  });
}
