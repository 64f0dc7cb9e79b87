// libFuzzer target: ReadMetisGraph (METIS .graph with optional vertex sizes, vertex and edge weights).
#include <cstddef>
#include <cstdint>

#include "datasets/readers.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  const auto path = fuzz::ScratchDir("metis") / "input.graph";
  fuzz::WriteFile(path, fuzz::AsText(data, size));
  return fuzz::Run([&] {
    const datasets::MetisGraph g = datasets::ReadMetisGraph(path);
    (void)g;
  });
}
