// libFuzzer target: LoadSvmModel (LIBSVM C-SVC model text). The input is "<model>" kSeparator "<sidecar json>"
// (tests/fuzz/fuzz_util.h); without a separator there is no sidecar file.
#include <cstddef>
#include <cstdint>

#include "datasets/readers.h"
#include "svm/svm_model.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  const auto path = fuzz::ScratchDir("svm_model") / "input.model";
  const std::string_view input = fuzz::AsText(data, size);
  const bool has_sidecar = input.find(fuzz::kSeparator) != std::string_view::npos;
  const auto parts = fuzz::SplitParts(input, 2);
  fuzz::WriteFile(path, parts[0]);
  fuzz::WriteOrRemove(svm::SidecarPath(path), parts[1], has_sidecar);
  return fuzz::Run([&] {
    const svm::SvmModel model = svm::LoadSvmModel(path);
    model.Validate();
    // A loaded model must predict without reading outside its arrays.
    const int32_t indices[2] = {0, 3};
    const double values[2] = {1.0, -0.5};
    (void)svm::PredictRow(model, indices, values);
    // Prediction's check that model and data share a feature (ids billions beyond the data's are refused).
    static const datasets::SparseRowDataset rows = [] {
      const auto file = fuzz::ScratchDir("svm_model") / "rows.txt";
      fuzz::WriteFile(file, "1 1:1 4:-0.5\n-1 2:0.25\n");
      return datasets::ReadLibsvm(file);
    }();
    svm::CheckModelMeetsData(model, rows, path.string());
  });
}
