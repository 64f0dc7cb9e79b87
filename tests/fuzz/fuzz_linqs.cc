// libFuzzer target: ReadLinqs. The input is "<.content>" kSeparator "<.cites>" (tests/fuzz/fuzz_util.h).
#include <cstddef>
#include <cstdint>

#include "datasets/readers.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  const auto& dir = fuzz::ScratchDir("linqs");
  const auto parts = fuzz::SplitParts(fuzz::AsText(data, size), 2);
  fuzz::WriteFile(dir / "input.content", parts[0]);
  fuzz::WriteFile(dir / "input.cites", parts[1]);
  return fuzz::Run([&] {
    const datasets::NodeDataset ds = datasets::ReadLinqs(dir / "input.content", dir / "input.cites");
    (void)ds;
  });
}
