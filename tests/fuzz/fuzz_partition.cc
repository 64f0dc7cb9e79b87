// libFuzzer target: the partition folder (partition/partition_format.h). A small valid 2-part folder is written
// once; each input restores it and replaces one file: the first byte sets checksum verification (bit 0) and
// validation (bit 1), the second picks the file (partitions.json, a part manifest or an array), the rest is its
// bytes. Then ReadPartitionsJson, LoadPart for both ranks, VerifyPartition and the `tessel info` summary.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "datasets/readers.h"
#include "partition/partition_format.h"
#include "tests/fuzz/fuzz_util.h"

namespace fs = std::filesystem;

namespace {

using namespace tessel;

struct Template {
  fs::path dir;
  std::vector<std::pair<std::string, std::string>> files;  // relative path -> bytes, sorted
};

const Template& Folder() {
  static const Template t = [] {
    const fs::path& scratch = fuzz::ScratchDir("partition");
    fuzz::WriteFile(scratch / "in.content", "p1 1 0 1 A\np2 0 1 0 B\np3 1 1 0 A\np4 0 0 1 B\np5 1 0 0 A\n");
    fuzz::WriteFile(scratch / "in.cites", "p1 p2\np2 p3\np3 p4\np4 p5\np5 p1\np1 p3\n");
    datasets::NodeDataset node = datasets::ReadLinqs(scratch / "in.content", scratch / "in.cites");
    node.train = Buffer<int64_t>(std::vector<int64_t>{0, 1});
    node.val = Buffer<int64_t>(std::vector<int64_t>{2});
    node.test = Buffer<int64_t>(std::vector<int64_t>{3, 4});
    partition::PartitionOptions options;
    options.method = partition::Method::kRandom;
    options.num_parts = 2;
    options.seed = 1;
    partition::PartitionToFolder(node, options, scratch / "valid", false);
    Template out;
    out.dir = scratch / "work";
    std::map<std::string, std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(scratch / "valid")) {
      if (!entry.is_regular_file()) continue;
      const fs::path rel = fs::relative(entry.path(), scratch / "valid");
      files[rel.string()] = fuzz::ReadFile(entry.path());
      fs::create_directories((out.dir / rel).parent_path());
    }
    out.files.assign(files.begin(), files.end());
    for (size_t i = 0; i < out.files.size(); ++i) {
      std::string name = out.files[i].first;
      for (char& c : name) c = c == '/' ? '_' : c;
      fuzz::MaybeWriteSeed("seed-" + name, std::string{'\3', static_cast<char>(i)} + out.files[i].second);
    }
    return out;
  }();
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Template& t = Folder();
  if (size < 2) return 0;
  partition::LoadPartOptions options;
  options.verify_checksums = (data[0] & 1) != 0;
  options.validate = (data[0] & 2) != 0;
  const size_t target = data[1] % t.files.size();
  const std::string_view rest = fuzz::AsText(data + 2, size - 2);
  for (size_t i = 0; i < t.files.size(); ++i) {
    fuzz::WriteFile(t.dir / t.files[i].first, i == target ? rest : std::string_view(t.files[i].second));
  }
  return fuzz::Run([&] {
    (void)partition::ReadPartitionsJson(t.dir);
    (void)partition::IsPartitionFolder(t.dir);
    for (int32_t rank = 0; rank < 2; ++rank) {
      try {
        const partition::LocalPart part = partition::LoadPart(t.dir, rank, options);
        (void)part;
      } catch (const Error&) {
      }
    }
    (void)partition::VerifyPartition(t.dir);
    (void)partition::FormatPartitionSummary(partition::DescribePartition(t.dir));
  });
}
