// libFuzzer target: ReadEdgeList (SNAP text and CSV). The first byte picks the options (delimiter, header,
// one-based ids, weights, a declared node count); the rest is the file.
#include <cstddef>
#include <cstdint>

#include "datasets/readers.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  const auto path = fuzz::ScratchDir("edgelist") / "input.edges";
  datasets::EdgeListOptions options;
  if (size > 0) {
    const uint8_t b = data[0];
    constexpr char kDelims[4] = {0, ',', ' ', '\t'};
    options.delimiter = kDelims[b & 3];
    if ((b >> 2) & 1) options.header = ((b >> 3) & 1) != 0;
    options.one_based = ((b >> 4) & 1) != 0;
    options.weighted = ((b >> 5) & 1) != 0;
    options.num_nodes = ((b >> 6) & 1) != 0 ? (b >> 7) * 8 + 3 : -1;
    ++data;
    --size;
  }
  fuzz::WriteFile(path, fuzz::AsText(data, size));
  return fuzz::Run([&] {
    datasets::EdgeList edges = datasets::ReadEdgeList(path, options);
    (void)edges;
  });
}
