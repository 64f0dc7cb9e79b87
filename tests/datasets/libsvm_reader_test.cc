// ReadLibsvm: a hand-checked tiny file (plain, .gz, .bz2), comments and blank lines, every malformed case (with
// file:line), many-block parses against a serial oracle, and the shared SVM data sets against their READMEs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "datasets/readers.h"
#include "datasets/text_input.h"

namespace tessel::datasets {
namespace {
namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

template <typename Fn>
std::string ErrorOf(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a tessel::Error";
  return "";
}

std::map<double, int64_t> LabelCounts(const SparseRowDataset& ds) {
  std::map<double, int64_t> counts;
  for (double y : ds.labels.Host()) ++counts[y];
  return counts;
}

int64_t MaxIndex(const SparseRowDataset& ds) {
  int64_t m = -1;
  for (int32_t j : ds.indices.Host()) m = std::max<int64_t>(m, j);
  return m + 1;
}

class LibsvmReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_libsvm_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return dir_ / name;
  }
  std::string BadFileError(const std::string& text, int64_t num_features = -1) {
    const fs::path p = Write("bad.svm", text);
    return ErrorOf([&] { ReadLibsvm(p, num_features); });
  }
  std::string At(int line) const { return (dir_ / "bad.svm").string() + ":" + std::to_string(line) + ": "; }
  fs::path dir_;
};

void ExpectTiny(const SparseRowDataset& ds) {
  // "+1 1:0.5 3:-2 # a comment", "-1 2:1e-3", blank, "# a comment line", "3.5 ", "0 4:7 10:1".
  ASSERT_EQ(ds.num_rows, 4);
  EXPECT_EQ(ds.num_features, 10);
  EXPECT_THAT(ds.labels.ToVector(), ElementsAre(1.0, -1.0, 3.5, 0.0));
  EXPECT_THAT(ds.indptr.ToVector(), ElementsAre(0, 2, 3, 3, 5));
  EXPECT_THAT(ds.indices.ToVector(), ElementsAre(0, 2, 1, 3, 9));
  EXPECT_THAT(ds.values.ToVector(), ElementsAre(0.5, -2.0, 1e-3, 7.0, 1.0));
}

TEST_F(LibsvmReaderTest, TinyFileByHandInEveryCompression) {
  const fs::path data = fs::path(TESSEL_TEST_DATA) / "libsvm";
  for (const char* name : {"tiny.svm", "tiny.svm.gz", "tiny.svm.bz2"}) {
    SCOPED_TRACE(name);
    const SparseRowDataset ds = ReadLibsvm(data / name);
    EXPECT_EQ(ds.name, "tiny.svm");
    ExpectTiny(ds);
  }
}

TEST_F(LibsvmReaderTest, DeclaredFeatureCountIsKept) {
  const SparseRowDataset ds = ReadLibsvm(fs::path(TESSEL_TEST_DATA) / "libsvm/tiny.svm", 12);
  EXPECT_EQ(ds.num_features, 12);
  EXPECT_EQ(ds.NonZeros(), 5);
  EXPECT_EQ(ReadLibsvm(fs::path(TESSEL_TEST_DATA) / "libsvm/tiny.svm", 10).num_features, 10);
}

TEST_F(LibsvmReaderTest, CrlfSignsAndNoTrailingNewline) {
  const SparseRowDataset ds = ReadLibsvm(Write("a.svm", "+1\t1:+2 2:-0.5\r\n-1 3:1E2\r\n2 1:1"));
  EXPECT_THAT(ds.labels.ToVector(), ElementsAre(1.0, -1.0, 2.0));
  EXPECT_THAT(ds.values.ToVector(), ElementsAre(2.0, -0.5, 100.0, 1.0));
  EXPECT_THAT(ds.indices.ToVector(), ElementsAre(0, 1, 2, 0));
}

TEST_F(LibsvmReaderTest, MalformedLinesNameTheLine) {
  EXPECT_THAT(BadFileError("1 1:1\n-1 2 3:1\n"), HasSubstr(At(2) + "'2' has no ':'"));
  EXPECT_THAT(BadFileError("1 1:1 3:1 3:2\n"), HasSubstr(At(1) + "feature index 3 comes after index 3"));
  EXPECT_THAT(BadFileError("1 1:1\n\n1 4:1 2:1\n"), HasSubstr(At(3) + "feature index 2 comes after index 4"));
  EXPECT_THAT(BadFileError("1 0:1\n"), HasSubstr(At(1) + "feature index 0 in '0:1' is below 1"));
  EXPECT_THAT(BadFileError("1 -3:1\n"), HasSubstr(At(1) + "feature index -3 in '-3:1' is below 1"));
  EXPECT_THAT(BadFileError("1 1:1\nyes 1:1\n"), HasSubstr(At(2) + "label 'yes' is not a number"));
  EXPECT_THAT(BadFileError("nan 1:1\n"), HasSubstr(At(1) + "label 'nan' is not finite"));
  EXPECT_THAT(BadFileError("1 a:1\n"), HasSubstr(At(1) + "feature index 'a' in 'a:1' is not an integer"));
  EXPECT_THAT(BadFileError("1 :1\n"), HasSubstr(At(1) + "feature index '' in ':1' is not an integer"));
  EXPECT_THAT(BadFileError("1 1:x\n"), HasSubstr(At(1) + "value 'x' of feature 1 is not a number"));
  EXPECT_THAT(BadFileError("1 1:\n"), HasSubstr(At(1) + "value '' of feature 1 is not a number"));
  EXPECT_THAT(BadFileError("1 1:inf\n"), HasSubstr(At(1) + "value 'inf' of feature 1 is not finite"));
  EXPECT_THAT(BadFileError("1 1:1#x\n"), HasSubstr(At(1) + "value '1#x' of feature 1 is not a number"));
  EXPECT_THAT(BadFileError("1 1:1 2:2:2\n"), HasSubstr(At(1) + "value '2:2' of feature 2 is not a number"));
  EXPECT_THAT(BadFileError("1 1:1\n1 3:1 5:1\n", 4),
              HasSubstr(At(2) + "feature index 5 is above the number of features, 4"));
  EXPECT_THAT(BadFileError("1 3000000000:1\n"), HasSubstr(At(1) + "feature index 3000000000 does not fit"));
  // Long tokens are quoted by their first 40 characters and their length.
  const std::string e = BadFileError("1 1:" + std::string(30000000, '9') + "x\n");
  EXPECT_THAT(e, HasSubstr(At(1) + "value '" + std::string(40, '9') + "... (30000001 characters)' of feature 1"));
  EXPECT_LT(e.size(), 400U);
}

TEST_F(LibsvmReaderTest, EmptyInputIsAnError) {
  EXPECT_THAT(BadFileError(""), HasSubstr("bad.svm: no data lines"));
  EXPECT_THAT(BadFileError("# header only\n\n"), HasSubstr("bad.svm: no data lines"));
  EXPECT_THAT(ErrorOf([&] { ReadLibsvm(dir_ / "missing.svm"); }), HasSubstr("missing.svm: no such file"));
}

// Serial oracle: a plain istream parse of well-formed text.
SparseRowDataset Oracle(const std::string& text) {
  SparseRowDataset ds;
  std::vector<int64_t> ptr{0};
  std::vector<int32_t> idx;
  std::vector<double> val, lab;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string tok;
    if (!(ls >> tok) || tok[0] == '#') continue;
    lab.push_back(std::stod(tok));
    while (ls >> tok && tok[0] != '#') {
      const size_t c = tok.find(':');
      idx.push_back(std::stoi(tok.substr(0, c)) - 1);
      val.push_back(std::stod(tok.substr(c + 1)));
    }
    ptr.push_back(static_cast<int64_t>(idx.size()));
  }
  ds.num_rows = static_cast<int64_t>(lab.size());
  ds.indptr = Buffer<int64_t>(std::move(ptr));
  ds.indices = Buffer<int32_t>(std::move(idx));
  ds.values = Buffer<double>(std::move(val));
  ds.labels = Buffer<double>(std::move(lab));
  return ds;
}

TEST_F(LibsvmReaderTest, ManyBlocksAgreeWithASerialOracle) {
  // ~30,000 lines (several parallel blocks) with blank and comment lines and empty rows mixed in.
  std::string text;
  uint64_t x = 12345;
  for (int i = 0; i < 30000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    if (x % 97 == 0) text += "\n";
    if (x % 89 == 0) fmt::format_to(std::back_inserter(text), "# comment {}\n", i);
    fmt::format_to(std::back_inserter(text), "{}", static_cast<int>(x >> 60) - 8);
    int64_t j = 0;
    for (int k = 0; k < static_cast<int>((x >> 20) % 7); ++k) {
      j += 1 + static_cast<int64_t>((x >> (8 * k)) % 40);
      fmt::format_to(std::back_inserter(text), " {}:{}", j, static_cast<double>((x >> (3 * k)) % 1000) / 8.0 - 60);
    }
    text += (x % 3 == 0) ? " # tail\n" : "\n";
  }
  const SparseRowDataset ds = ReadLibsvm(Write("big.svm", text));
  const SparseRowDataset want = Oracle(text);
  ASSERT_EQ(ds.num_rows, want.num_rows);
  EXPECT_EQ(ds.num_features, MaxIndex(want));
  EXPECT_EQ(ds.labels.ToVector(), want.labels.ToVector());
  EXPECT_EQ(ds.indptr.ToVector(), want.indptr.ToVector());
  EXPECT_EQ(ds.indices.ToVector(), want.indices.ToVector());
  EXPECT_EQ(ds.values.ToVector(), want.values.ToVector());
}

TEST_F(LibsvmReaderTest, FirstBadLineInFileOrderIsReported) {
  std::string text;
  for (int i = 1; i <= 20000; ++i) {
    if (i == 9001) {
      text += "1 2:1 1:1\n";
    } else if (i == 17000) {
      text += "1 1:x\n";
    } else {
      text += "1 1:1 2:1\n";
    }
  }
  EXPECT_THAT(BadFileError(text), HasSubstr(At(9001) + "feature index 1 comes after index 2"));
}

// ---- The shared data sets: counts and label counts from each README; usps and mnist value for value
// against the original ESL and IDX files they were converted from.

fs::path Svm(const std::string& rel) { return fs::path(TESSEL_SHARED_DATA) / "svm" / rel; }

TEST(LibsvmRealData, HeartScale) {
  if (!fs::exists(Svm("heart_scale/heart_scale"))) GTEST_SKIP() << "no " << Svm("heart_scale/heart_scale");
  const SparseRowDataset ds = ReadLibsvm(Svm("heart_scale/heart_scale"));
  EXPECT_EQ(ds.num_rows, 270);
  EXPECT_EQ(ds.num_features, 13);
  EXPECT_EQ(LabelCounts(ds), (std::map<double, int64_t>{{-1, 150}, {1, 120}}));
  for (double v : ds.values.Host()) EXPECT_TRUE(v >= -1 && v <= 1) << v;
}

TEST(LibsvmRealData, A9a) {
  if (!fs::exists(Svm("a9a/a9a"))) GTEST_SKIP() << "no " << Svm("a9a/a9a");
  const SparseRowDataset train = ReadLibsvm(Svm("a9a/a9a"));
  EXPECT_EQ(train.num_rows, 32561);
  EXPECT_EQ(train.num_features, 123);
  EXPECT_EQ(LabelCounts(train), (std::map<double, int64_t>{{-1, 24720}, {1, 7841}}));
  const auto ones = train.values.Host();
  EXPECT_TRUE(std::all_of(ones.begin(), ones.end(), [](double v) { return v == 1.0; }));
  const SparseRowDataset test = ReadLibsvm(Svm("a9a/a9a.t"));
  EXPECT_EQ(test.num_rows, 16281);
  EXPECT_EQ(test.num_features, 122);  // the README's warning: the test file never uses feature 123
  EXPECT_EQ(LabelCounts(test), (std::map<double, int64_t>{{-1, 12435}, {1, 3846}}));
  EXPECT_EQ(ReadLibsvm(Svm("a9a/a9a.t"), 123).num_features, 123);
}

TEST(LibsvmRealData, W8a) {
  if (!fs::exists(Svm("w8a/w8a"))) GTEST_SKIP() << "no " << Svm("w8a/w8a");
  const SparseRowDataset ds = ReadLibsvm(Svm("w8a/w8a"));
  EXPECT_EQ(ds.num_rows, 49749);
  EXPECT_EQ(ds.num_features, 300);
  EXPECT_EQ(LabelCounts(ds), (std::map<double, int64_t>{{-1, 48270}, {1, 1479}}));
}

TEST(LibsvmRealData, Letter) {
  if (!fs::exists(Svm("letter/letter.scale"))) GTEST_SKIP() << "no " << Svm("letter/letter.scale");
  const SparseRowDataset ds = ReadLibsvm(Svm("letter/letter.scale"));
  EXPECT_EQ(ds.num_rows, 15000);
  EXPECT_EQ(ds.num_features, 16);
  const auto counts = LabelCounts(ds);
  ASSERT_EQ(counts.size(), 26u);
  EXPECT_EQ(counts.begin()->first, 1);
  EXPECT_EQ(counts.rbegin()->first, 26);
  EXPECT_EQ(ReadLibsvm(Svm("letter/letter.scale.t")).num_rows, 5000);
}

TEST(LibsvmRealData, UspsMatchesTheEslOriginal) {
  if (!fs::exists(Svm("usps/usps.esl.gz"))) GTEST_SKIP() << "no " << Svm("usps/usps.esl.gz");
  const SparseRowDataset ds = ReadLibsvm(Svm("usps/usps.esl.gz"));
  ASSERT_EQ(ds.num_rows, 7291);
  EXPECT_EQ(ds.num_features, 256);
  // zip.train.gz: "digit v1 .. v256" dense rows; the LIBSVM file prints the non-zeros with %g (6 digits).
  const TextFile zip = TextFile::Open(Svm("usps/zip.train.gz"));
  LineCursor cur(zip);
  std::string_view line;
  auto ptr = ds.indptr.Host();
  auto idx = ds.indices.Host();
  auto val = ds.values.Host();
  for (int64_t r = 0; r < ds.num_rows; ++r) {
    ASSERT_TRUE(cur.NextContent(&line));
    Fields fields(line);
    std::string_view tok;
    ASSERT_TRUE(fields.Next(&tok));
    ASSERT_EQ(ds.labels[r], cur.ParseDouble(tok, "digit")) << "row " << r;
    std::vector<double> dense(256, 0.0);
    for (int64_t k = ptr[r]; k < ptr[r + 1]; ++k) dense[idx[k]] = val[k];
    int mismatches = 0;
    for (int j = 0; j < 256; ++j) {
      ASSERT_TRUE(fields.Next(&tok));
      const double want = cur.ParseDouble(tok, "pixel");
      mismatches += std::abs(dense[j] - want) > 1e-5 * std::max(1.0, std::abs(want)) ? 1 : 0;
    }
    ASSERT_EQ(mismatches, 0) << "row " << r;
  }
  EXPECT_FALSE(cur.NextContent(&line));
}

TEST(LibsvmRealData, MnistTestMatchesTheIdxOriginal) {
  if (!fs::exists(Svm("mnist/mnist.t.gz"))) GTEST_SKIP() << "no " << Svm("mnist/mnist.t.gz");
  const SparseRowDataset ds = ReadLibsvm(Svm("mnist/mnist.t.gz"));
  ASSERT_EQ(ds.num_rows, 10000);
  EXPECT_EQ(ds.num_features, 778);
  // IDX: 16-byte header then 28x28 bytes per image; labels: 8-byte header then one byte per image.
  const TextFile images = TextFile::Open(Svm("mnist/t10k-images-idx3-ubyte.gz"));
  const TextFile labels = TextFile::Open(Svm("mnist/t10k-labels-idx1-ubyte.gz"));
  ASSERT_EQ(images.text().size(), 16u + 10000u * 784u);
  ASSERT_EQ(labels.text().size(), 8u + 10000u);
  auto ptr = ds.indptr.Host();
  auto idx = ds.indices.Host();
  auto val = ds.values.Host();
  for (int64_t r = 0; r < ds.num_rows; ++r) {
    ASSERT_EQ(ds.labels[r], static_cast<unsigned char>(labels.text()[8 + r])) << "row " << r;
    std::vector<double> dense(784, 0.0);
    for (int64_t k = ptr[r]; k < ptr[r + 1]; ++k) dense[idx[k]] = val[k];
    std::vector<double> want(784);
    for (int j = 0; j < 784; ++j) want[j] = static_cast<unsigned char>(images.text()[16 + r * 784 + j]);
    ASSERT_TRUE(dense == want) << "row " << r;
  }
}

}  // namespace
}  // namespace tessel::datasets
