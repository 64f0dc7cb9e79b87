// libFuzzer target: ReadIdx. The input is "<images>" kSeparator "<labels>" (tests/fuzz/fuzz_util.h).
#include <cstddef>
#include <cstdint>

#include "datasets/readers.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  const auto& dir = fuzz::ScratchDir("idx");
  const auto parts = fuzz::SplitParts(fuzz::AsText(data, size), 2);
  fuzz::WriteFile(dir / "images.idx", parts[0]);
  fuzz::WriteFile(dir / "labels.idx", parts[1]);
  return fuzz::Run([&] {
    const datasets::SparseRowDataset ds = datasets::ReadIdx(dir / "images.idx", dir / "labels.idx");
    (void)ds;
  });
}
