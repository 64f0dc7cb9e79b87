// libFuzzer target: the native dataset folder (datasets/native_format.h). Two small valid folders (a node dataset
// and a sparse-rows dataset) are written once; each input restores one of them and replaces one file: the first
// byte picks the folder (bit 0), checksum verification (bit 1) and whether the rest is manifest.json (bit 2 clear)
// or, after a second byte that picks the array file, that file's bytes. Then PeekKind, ReadManifest,
// VerifyChecksums and the load with validation.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "datasets/native_format.h"
#include "datasets/readers.h"
#include "tests/fuzz/fuzz_util.h"

namespace fs = std::filesystem;

namespace {

using namespace tessel;

struct Template {
  fs::path dir;                              // the working copy the loaders read
  std::map<std::string, std::string> files;  // file name -> bytes of the valid folder
  std::vector<std::string> arrays;           // the file names other than manifest.json
};

Template Capture(const fs::path& valid, const fs::path& work) {
  Template t;
  t.dir = work;
  fs::create_directories(work);
  for (const auto& entry : fs::directory_iterator(valid)) {
    const std::string name = entry.path().filename().string();
    t.files[name] = fuzz::ReadFile(entry.path());
    if (name != "manifest.json") t.arrays.push_back(name);
  }
  return t;
}

const Template* Templates() {
  static const std::vector<Template> templates = [] {
    const fs::path& scratch = fuzz::ScratchDir("native");
    fuzz::WriteFile(scratch / "in.content", "p1 1 0 1 A\np2 0 1 0 B\np3 1 1 0 A\np4 0 0 1 B\n");
    fuzz::WriteFile(scratch / "in.cites", "p1 p2\np2 p3\np3 p4\np4 p1\n");
    datasets::NodeDataset node = datasets::ReadLinqs(scratch / "in.content", scratch / "in.cites");
    node.train = Buffer<int64_t>(std::vector<int64_t>{0, 1});
    node.val = Buffer<int64_t>(std::vector<int64_t>{2});
    node.test = Buffer<int64_t>(std::vector<int64_t>{3});
    datasets::WriteNodeDataset(node, scratch / "valid-node");
    fuzz::WriteFile(scratch / "in.svm", "1 1:0.5 3:1\n-1 2:0.25\n1 1:1 2:1 4:-2\n");
    datasets::WriteSparseRowDataset(datasets::ReadLibsvm(scratch / "in.svm"), scratch / "valid-rows");
    std::vector<Template> out{Capture(scratch / "valid-node", scratch / "node"),
                              Capture(scratch / "valid-rows", scratch / "rows")};
    for (uint8_t kind = 0; kind < 2; ++kind) {
      const Template& t = out[kind];
      for (uint8_t verify = 0; verify < 2; ++verify) {
        const char mode = static_cast<char>(kind | (verify << 1));
        fuzz::MaybeWriteSeed(fmt::format("seed-{}-manifest", int{mode}),
                             std::string(1, mode) + t.files.at("manifest.json"));
        for (size_t i = 0; i < t.arrays.size(); ++i) {
          fuzz::MaybeWriteSeed(
              fmt::format("seed-{}-{}", int{mode}, t.arrays[i]),
              std::string(1, static_cast<char>(mode | 4)) + static_cast<char>(i) + t.files.at(t.arrays[i]));
        }
      }
    }
    return out;
  }();
  return templates.data();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Template* templates = Templates();
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  const bool sparse_rows = (mode & 1) != 0;
  const Template& t = templates[sparse_rows ? 1 : 0];
  std::string_view rest = fuzz::AsText(data + 1, size - 1);
  std::string target = "manifest.json";
  if ((mode & 4) != 0) {
    if (rest.empty()) return 0;
    target = t.arrays[static_cast<uint8_t>(rest[0]) % t.arrays.size()];
    rest.remove_prefix(1);
  }
  for (const auto& [name, bytes] : t.files) fuzz::WriteFile(t.dir / name, name == target ? rest : bytes);
  datasets::LoadOptions options;
  options.verify_checksums = (mode & 2) != 0;
  return fuzz::Run([&] {
    (void)datasets::PeekKind(t.dir);
    (void)datasets::ReadManifest(t.dir);
    (void)datasets::VerifyChecksums(t.dir);
    if (sparse_rows) {
      const datasets::SparseRowDataset ds = datasets::LoadSparseRowDataset(t.dir, options);
      (void)ds;
    } else {
      const datasets::NodeDataset ds = datasets::LoadNodeDataset(t.dir, options);
      (void)ds;
    }
  });
}
