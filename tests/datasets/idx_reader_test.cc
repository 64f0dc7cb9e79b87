// The IDX reader (MNIST-style image and label files, plain or gzipped) and binary tasks: values, the left-out
// zero pixels, labels, and every malformed header or size named with the file; MakeBinaryTask's relabelling,
// dropping and refusals.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "datasets/readers.h"

namespace tessel::datasets {
namespace {
namespace fs = std::filesystem;

std::string Header(uint8_t dims, const std::vector<uint32_t>& sizes) {
  std::string h = {'\0', '\0', '\x08', static_cast<char>(dims)};
  for (const uint32_t v : sizes) {
    for (int s = 24; s >= 0; s -= 8) h.push_back(static_cast<char>((v >> s) & 0xff));
  }
  return h;
}

class IdxReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_idx_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path Write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
    return dir_ / name;
  }
  std::string ErrorOf(const fs::path& images, const fs::path& labels) {
    try {
      ReadIdx(images, labels);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
  // Three 2x2 images and their labels 7, 0, 3.
  fs::path Images() {
    return Write("img", Header(3, {3, 2, 2}) + std::string("\x00\xff\x00\x33", 4) + std::string(4, '\0') +
                            std::string("\x01\x02\x03\x04", 4));
  }
  fs::path Labels() { return Write("lab", Header(1, {3}) + std::string("\x07\x00\x03", 3)); }
  fs::path dir_;
};

TEST_F(IdxReaderTest, ReadsPixelsOverScaleAndLabels) {
  const SparseRowDataset d = ReadIdx(Images(), Labels());
  ASSERT_EQ(d.num_rows, 3);
  EXPECT_EQ(d.num_features, 4);
  EXPECT_EQ(d.indptr.ToVector(), (std::vector<int64_t>{0, 2, 2, 6}));  // zero pixels left out, an empty image kept
  EXPECT_EQ(d.indices.ToVector(), (std::vector<int32_t>{1, 3, 0, 1, 2, 3}));
  EXPECT_EQ(d.values.ToVector(), (std::vector<double>{1.0, 51.0 / 255, 1.0 / 255, 2.0 / 255, 3.0 / 255, 4.0 / 255}));
  EXPECT_EQ(d.labels.ToVector(), (std::vector<double>{7, 0, 3}));
  // The same files gzipped (recognised by their magic bytes).
  ASSERT_EQ(std::system(("gzip -k " + Images().string() + " " + Labels().string()).c_str()), 0);
  const SparseRowDataset z = ReadIdx(dir_ / "img.gz", dir_ / "lab.gz");
  EXPECT_EQ(z.values.ToVector(), d.values.ToVector());
  EXPECT_EQ(z.labels.ToVector(), d.labels.ToVector());
}

TEST_F(IdxReaderTest, MalformedFilesNameTheFileAndTheFix) {
  const fs::path img = Images();
  const fs::path lab = Labels();
  EXPECT_NE(ErrorOf(lab, img).find("did you swap"), std::string::npos);
  const fs::path truncated = Write("short", Header(3, {3, 2, 2}) + std::string(11, '\x01'));
  EXPECT_NE(ErrorOf(truncated, lab).find("truncated"), std::string::npos);
  EXPECT_NE(ErrorOf(truncated, lab).find(truncated.string()), std::string::npos);
  // Dimensions whose product overflows 64 bits (found by tests/fuzz/fuzz_idx.cc): refused before multiplying.
  const fs::path huge = Write("huge", Header(3, {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}) + std::string(8, '\x01'));
  EXPECT_NE(ErrorOf(huge, lab).find("promises more elements than the 8 bytes after it"), std::string::npos);
  EXPECT_NE(ErrorOf(huge, lab).find(huge.string()), std::string::npos);
  const fs::path text = Write("text", "1 1:0.5\n");
  EXPECT_NE(ErrorOf(text, lab).find("not an IDX file"), std::string::npos);
  const fs::path floats = Write("floats", std::string("\0\0\x0d\x03", 4) + Header(3, {1, 1, 1}).substr(4) + "abcd");
  EXPECT_NE(ErrorOf(floats, lab).find("not unsigned bytes"), std::string::npos);
  const fs::path four = Write("four", Header(1, {4}) + std::string(4, '\x01'));
  EXPECT_NE(ErrorOf(img, four).find("3 images but"), std::string::npos);
  EXPECT_NE(ErrorOf(Write("tiny", "ab"), lab).find("too short"), std::string::npos);
}

TEST_F(IdxReaderTest, BinaryTasks) {
  SparseRowDataset all = ReadIdx(Images(), Labels());
  MakeBinaryTask(all, {7, 3});
  EXPECT_EQ(all.labels.ToVector(), (std::vector<double>{1, -1, 1}));
  EXPECT_EQ(all.num_rows, 3);

  SparseRowDataset pair = ReadIdx(Images(), Labels());
  MakeBinaryTask(pair, {3}, {7});  // label 0's row is dropped
  EXPECT_EQ(pair.num_rows, 2);
  EXPECT_EQ(pair.labels.ToVector(), (std::vector<double>{-1, 1}));
  EXPECT_EQ(pair.indptr.ToVector(), (std::vector<int64_t>{0, 2, 6}));
  EXPECT_EQ(pair.indices.ToVector(), (std::vector<int32_t>{1, 3, 0, 1, 2, 3}));

  SparseRowDataset d = ReadIdx(Images(), Labels());
  EXPECT_THROW(MakeBinaryTask(d, {5}), Error);        // nobody positive
  EXPECT_THROW(MakeBinaryTask(d, {0, 3, 7}), Error);  // nobody negative
  EXPECT_THROW(MakeBinaryTask(d, {3}, {3}), Error);   // both sides
  EXPECT_THROW(MakeBinaryTask(d, {}), Error);
}

}  // namespace
}  // namespace tessel::datasets
