// libFuzzer target: ReadLibsvm. An input starting with '!' is read with a declared feature count (8) after it.
#include <cstddef>
#include <cstdint>

#include "datasets/readers.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  const auto path = fuzz::ScratchDir("libsvm") / "input.svm";
  int64_t num_features = -1;
  if (size > 0 && data[0] == '!') {
    num_features = 8;
    ++data;
    --size;
  }
  fuzz::WriteFile(path, fuzz::AsText(data, size));
  return fuzz::Run([&] {
    const datasets::SparseRowDataset ds = datasets::ReadLibsvm(path, num_features);
    (void)ds;
  });
}
