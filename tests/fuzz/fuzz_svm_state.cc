// libFuzzer target: LoadSvmCheckpoint (svm/dist_checkpoint.h), the distributed SVM's resumable state. With the first
// byte even, the rest is DIR/svm_state.bin as it is; odd, the rest is the file without its last 8 bytes and the
// target appends the right checksum (so the header and alpha parsers are reached, not only the checksum).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/checksum.h"
#include "svm/dist_checkpoint.h"
#include "tests/fuzz/fuzz_util.h"

namespace fs = std::filesystem;

namespace {

using namespace tessel;

// svm_state.bin's trailer: core/checksum.h's Checksum64 of the bytes before it, little-endian.
std::string WithChecksum(std::string_view body) {
  const uint64_t h = Checksum64(body.data(), body.size());
  char tail[8];
  std::memcpy(tail, &h, 8);
  std::string out;
  out.reserve(body.size() + 8);
  out.append(body);
  out.append(tail, 8);
  return out;
}

const fs::path& Dir() {
  static const fs::path dir = [] {
    const fs::path& scratch = fuzz::ScratchDir("svm_state");
    svm::SvmCheckpoint s;
    s.settings = R"({"-c/--cost":"1.0","--data":"x"})";
    s.ranks = 4;
    s.just_in_time = true;
    s.problems.push_back({3, 10, true, {0.0, 0.5, 1.0}});
    s.problems.push_back({2, 7, false, {0.25, 0.0}});
    svm::SaveSvmCheckpoint(scratch / "valid", s, false);
    const std::string valid = fuzz::ReadFile(scratch / "valid" / "svm_state.bin");
    std::string seed(1, '\0');  // the whole file as it is
    seed.append(valid);
    fuzz::MaybeWriteSeed("seed-file", seed);
    seed.assign(1, '\1');  // the file without its checksum
    seed.append(valid, 0, valid.size() - 8);
    fuzz::MaybeWriteSeed("seed-body", seed);
    return scratch / "work";
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path& dir = Dir();
  if (size < 1) return 0;
  fs::create_directories(dir);
  const std::string_view rest = fuzz::AsText(data + 1, size - 1);
  if ((data[0] & 1) == 0) {
    fuzz::WriteFile(dir / "svm_state.bin", rest);
  } else {
    fuzz::WriteFile(dir / "svm_state.bin", WithChecksum(rest));
  }
  return fuzz::Run([&] {
    const svm::SvmCheckpoint s = svm::LoadSvmCheckpoint(dir);
    (void)s;
  });
}
